/* conv2d micro-benchmark (JSON lines) on the LeNet-5 layers at batch 64:
 * ms per forward, and per backward (weight and bias gradients, plus the
 * input gradient where LeNet needs it, i.e. conv2), at 1 and 2 threads;
 * median and minimum of 101 runs. */
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct layer {
    const char *name;
    int64_t x[4], w[4];
    int pad;
    bool input_grad;
} layer;

static void bench(const layer *l, int threads)
{
    enum { REPS = 101 };
    tg_set_num_threads(threads);
    tg_generator *g = tg_generator_new(1);
    tg_tensor *x = tg_rand_uniform(g, TG_FLOAT32, 4, l->x, -1, 1);
    tg_tensor *w = tg_rand_uniform(g, TG_FLOAT32, 4, l->w, -0.2, 0.2);
    tg_tensor *b = tg_zeros(TG_FLOAT32, 1, (int64_t[]){l->w[0]});
    tg_set_requires_grad(x, l->input_grad);
    tg_set_requires_grad(w, true);
    tg_set_requires_grad(b, true);
    tg_conv2d_opts o = {{1, 1}, {l->pad, l->pad}, {1, 1}, 1};
    double fwd[REPS], bwd[REPS];
    for (int r = 0; r < REPS; r++) {
        tg_scope_begin();
        double t0 = now_ms();
        tg_tensor *y = tg_conv2d(x, w, b, &o);
        double t1 = now_ms();
        tg_tensor *dy = tg_ones_like(y);
        tg_tensor *in[3] = {w, b, x}, *gr[3] = {NULL, NULL, NULL};
        double t2 = now_ms();
        tg_autograd_grad(1, &y, &dy, l->input_grad ? 3 : 2, in, gr, false, false);
        double t3 = now_ms();
        for (int i = 0; i < 3; i++)
            tg_release(gr[i]);
        tg_scope_end();
        fwd[r] = t1 - t0;
        bwd[r] = t3 - t2;
    }
    qsort(fwd, REPS, sizeof(double), cmp);
    qsort(bwd, REPS, sizeof(double), cmp);
    /* the median, and the minimum (what the code does on an idle machine) */
    printf("{\"bench\":\"conv2d\",\"layer\":\"%s\",\"batch\":%lld,\"threads\":%d,"
           "\"forward_ms\":%.3f,\"backward_ms\":%.3f,\"forward_min_ms\":%.3f,"
           "\"backward_min_ms\":%.3f}\n", l->name, (long long)l->x[0], threads,
           fwd[REPS / 2], bwd[REPS / 2], fwd[0], bwd[0]);
    tg_release(x);
    tg_release(w);
    tg_release(b);
    tg_generator_free(g);
}

int main(void)
{
    layer layers[2] = {
        {"conv1 1->6 5x5 pad 2 on 28x28", {64, 1, 28, 28}, {6, 1, 5, 5}, 2, false},
        {"conv2 6->16 5x5 on 14x14", {64, 6, 14, 14}, {16, 6, 5, 5}, 0, true}};
    for (int l = 0; l < 2; l++)
        for (int t = 1; t <= 2; t++)
            bench(&layers[l], t);
    return 0;
}
