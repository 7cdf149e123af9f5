/* Convolution benchmark (JSON lines): the five convolutions of a LeNet-5
 * training step at batch 64 (conv1 forward and weight gradient, conv2
 * forward, input gradient and weight gradient), tensorgraph's kernels
 * (kernels/cpu/conv.h, on plain NCHW buffers) side by side with oneDNN's
 * (libdnnl, when CMake found it: the primitive in its own layouts, and
 * with the reorders from and to NCHW that a framework with NCHW tensors
 * pays), at 1 and 2 threads. Samples of each (~2 ms of repeats) are taken
 * in turn so that all see the same machine load; ms are medians of 11
 * samples, with the best; "speedup" is oneDNN's median time over ours.
 * oneDNN's OpenMP threads wait passively (OMP_WAIT_POLICY=passive unless
 * set): spinning, they take the cores from the other side.
 *   bench_conv [--only conv1|conv2] [--samples N] */
#include "tg/tg.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef TG_HAVE_DNNL
#include "onednn.h"
#endif

typedef enum dir { FWD, BWD_DATA, BWD_WEIGHTS } dir;
static const char *dir_name[3] = {"forward", "input-grad", "weight-grad"};

typedef struct layer {
    const char *name;
    int64_t x[4], w[4];
    int64_t pad;
    bool dirs[3]; /* which LeNet's step runs */
} layer;

static const layer layers[2] = {
    {"conv1", {64, 1, 28, 28}, {6, 1, 5, 5}, 2, {true, false, true}},
    {"conv2", {64, 6, 14, 14}, {16, 6, 5, 5}, 0, {true, true, true}},
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct bufs {
    tg__conv_geom g;
    float *x, *w, *b, *y;
} bufs;

static float *rand_buf(int64_t n, unsigned seed)
{
    float *p = malloc((size_t)n * sizeof *p);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
    }
    return p;
}

static void tg_run(const bufs *u, dir d)
{
    if (d == FWD)
        tg__conv2d_forward(TG_FLOAT32, &u->g, u->x, u->w, u->b, u->y);
    else if (d == BWD_DATA)
        tg__conv2d_grad_input(TG_FLOAT32, &u->g, u->y, u->w, u->x);
    else
        tg__conv2d_grad_weight(TG_FLOAT32, &u->g, u->y, u->x, u->w);
}

/* one call of an implementation under test */
typedef struct runner {
    void (*fn)(struct runner *r);
    const bufs *u;
    dir d;
#ifdef TG_HAVE_DNNL
    dn_conv *dc;
    bool reorders;
#endif
} runner;

static void run_tg(runner *r) { tg_run(r->u, r->d); }
#ifdef TG_HAVE_DNNL
static void run_dn(runner *r) { dn_conv_run(r->dc, r->reorders); }
#endif

/* the number of calls that take ~2 ms */
static int reps_for(runner *r)
{
    r->fn(r);
    double t0 = now_s();
    r->fn(r);
    double one = now_s() - t0;
    return one > 2e-3 ? 1 : (int)(2e-3 / (one > 1e-7 ? one : 1e-7)) + 1;
}

/* ms per call over `reps` calls */
static double sample(runner *r, int reps)
{
    double t0 = now_s();
    for (int i = 0; i < reps; i++)
        r->fn(r);
    return (now_s() - t0) / reps * 1e3;
}

static void bench(const layer *l, dir d, int threads, int samples)
{
    bufs u;
    const int64_t *xs = l->x, *ws = l->w;
    int64_t oh = xs[2] + 2 * l->pad - ws[2] + 1, ow = xs[3] + 2 * l->pad - ws[3] + 1;
    u.g = (tg__conv_geom){.n = xs[0], .c = xs[1], .h = xs[2], .w = xs[3], .o = ws[0],
                          .kh = ws[2], .kw = ws[3], .oh = oh, .ow = ow, .sh = 1, .sw = 1,
                          .ph = l->pad, .pw = l->pad, .dh = 1, .dw = 1, .groups = 1};
    int64_t ys[4] = {xs[0], ws[0], oh, ow};
    u.x = rand_buf(xs[0] * xs[1] * xs[2] * xs[3], 1);
    u.w = rand_buf(ws[0] * ws[1] * ws[2] * ws[3], 2);
    u.b = rand_buf(ws[0], 3);
    u.y = rand_buf(ys[0] * ys[1] * ys[2] * ys[3], 4);
    double flop = 2.0 * (double)(xs[0] * ws[0] * ws[1] * ws[2] * ws[3] * oh * ow);
    tg_set_num_threads(threads);
    double *t[3];
    for (int i = 0; i < 3; i++)
        t[i] = malloc((size_t)samples * sizeof(double));
    int n_impl = 1;
    const char *impl = "";
    runner rt = {.fn = run_tg, .u = &u, .d = d};
    int reps_tg = reps_for(&rt);
#ifdef TG_HAVE_DNNL
    dn_conv dc;
    bool have_dn = dn_conv_init(&dc, (dn_dir)d, xs, ws, ys, l->pad, l->pad, u.x, u.w,
                                u.b, u.y);
    runner rd = {.fn = run_dn, .dc = &dc}, rr = {.fn = run_dn, .dc = &dc, .reorders = true};
    int reps_dn = 1, reps_dr = 1;
    if (have_dn) {
        omp_set_num_threads(threads);
        reps_dn = reps_for(&rd);
        reps_dr = reps_for(&rr);
        n_impl = 3;
        impl = dc.impl;
    }
#endif
    for (int s = 0; s < samples; s++) {
        t[0][s] = sample(&rt, reps_tg);
#ifdef TG_HAVE_DNNL
        if (have_dn) {
            t[1][s] = sample(&rd, reps_dn);
            t[2][s] = sample(&rr, reps_dr);
            usleep(3000); /* OpenMP's threads spin a while after a region */
        }
#endif
    }
    double med[3], best[3];
    for (int i = 0; i < n_impl; i++) {
        qsort(t[i], (size_t)samples, sizeof(double), cmp_double);
        med[i] = t[i][samples / 2];
        best[i] = t[i][0];
    }
    printf("{\"bench\":\"conv\",\"layer\":\"%s\",\"dir\":\"%s\",\"threads\":%d,"
           "\"isa\":\"%s\",\"tg_ms\":%.4f,\"tg_best_ms\":%.4f,\"tg_gflops\":%.1f",
           l->name, dir_name[d], threads, tg__isa_name(tg__cpu_isa()), med[0], best[0],
           flop / med[0] * 1e-6);
    if (n_impl == 3)
        printf(",\"onednn_ms\":%.4f,\"onednn_best_ms\":%.4f,\"onednn_gflops\":%.1f,"
               "\"onednn_reorders_ms\":%.4f,\"speedup\":%.2f,\"speedup_vs_reorders\":%.2f,"
               "\"onednn_impl\":\"%s\"", med[1], best[1], flop / med[1] * 1e-6, med[2],
               med[1] / med[0], med[2] / med[0], impl);
    printf("}\n");
    fflush(stdout);
#ifdef TG_HAVE_DNNL
    if (have_dn)
        dn_conv_free(&dc);
#endif
    for (int i = 0; i < 3; i++)
        free(t[i]);
    free(u.x);
    free(u.w);
    free(u.b);
    free(u.y);
}

int main(int argc, char **argv)
{
#ifdef TG_HAVE_DNNL
    /* OpenMP's threads spin after each region by default, taking the
     * cores from everything else on a shared machine (our pool's threads
     * included): oneDNN runs with passive waiting, set before OpenMP
     * starts, so the process starts itself again */
    if (!getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "passive", 1);
        execv("/proc/self/exe", argv);
    }
#endif
    const char *only = NULL;
    int samples = 11;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            samples = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 11;
    }
    for (int li = 0; li < 2; li++) {
        if (only && strcmp(only, layers[li].name) != 0)
            continue;
        for (int d = 0; d < 3; d++)
            for (int t = 1; t <= 2 && layers[li].dirs[d]; t++)
                bench(&layers[li], (dir)d, t, samples);
    }
    return 0;
}
