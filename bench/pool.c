/* Pooling and reduction benchmark (JSON lines): the memory-bound ops of a
 * LeNet-5 training step at batch 64 around its two convolutions, at 1 and 2
 * threads: 2 x 2 max pooling and its gradient of conv1's output
 * [64, 6, 28, 28] and conv2's [64, 16, 10, 10] (kernels/cpu/pool.h), with
 * int64 argmax indices (max_pool2d) and with one-byte window offsets (what
 * the level-2 graph runs: max_pool2d_compact), 2 x 2 average pooling and
 * its gradient, and reductions of the same tensors: the bias gradients
 * (tg_sum over N, H, W), a sum over the last dim (rows), a sum over N
 * (columns), and max, min, mean, var, logsumexp and argmax over the last
 * dim (rows of 28 and 10); and first, max pooling's values alone (what
 * inference runs: max_pool2d_values) as ResNet-18 pools after its stem,
 * 3 x 3 windows at stride 2 with padding 1 over [1, 64, 112, 112] and
 * [8, 64, 112, 112] (shapes 0 and 1). us are medians of 11 samples
 * (~2 ms of repeats each, after one untimed call), with the best; GB/s
 * counts the bytes each op must read and write once; copy_gbps is a plain
 * copy of those bytes over the same threads (copy_probe.h) and of_copy the
 * op's share of it (copy time / op time). isa is the level the kernels
 * were dispatched to (TG_CPU lowers it: bench/isa_levels.sh). On one
 * thread op and copy are timed in the thread's CPU time (clock "cpu": a
 * shared machine's other processes do not inflate it), on two by the
 * wall clock.
 * --calls N runs each op N times untimed, without the copy probe, for an
 * instruction count (valgrind --tool=callgrind; run() is one call).
 * --shape 0 or 1 keeps one of the two shapes.
 *   bench_pool [--samples N] [--only OP] [--threads T] [--shape S] [--calls N] */
#include "tg/tg.h"
#include "core/threadpool.h"
#include "kernels/cpu/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "copy_probe.h"
#include "kernels/cpu/cpu.h"
#include "timing.h"

typedef enum what {
    VALUES, POOL, POOL_GRAD, POOL_C, POOL_C_GRAD, AVG, AVG_GRAD, BIAS_SUM, SUM_LAST, SUM_N, MAX_LAST,
    MIN_LAST, MEAN_LAST, VAR_LAST, LSE_LAST, ARGMAX_LAST, N_WHAT
} what;
static const char *what_name[N_WHAT] = {
    "max_pool2d_values", "max_pool2d", "max_pool2d_grad", "max_pool2d_compact", "max_pool2d_compact_grad",
    "avg_pool2d", "avg_pool2d_grad", "bias_grad_sum", "sum_last_dim", "sum_dim0", "max_last_dim",
    "min_last_dim", "mean_last_dim", "var_last_dim", "logsumexp_last_dim", "argmax_last_dim"};

typedef struct job {
    what k;
    int64_t shape[4]; /* the convolution's output */
    tg__pool_geom g;
    float *x, *y, *dx;
    int64_t *idx;
    uint8_t *off;
    tg_tensor *t;
} job;

/* the compact kernels over a range of planes (the op splits them so) */
static void compact_range(void *ctx, int64_t p0, int64_t p1)
{
    job *j = ctx;
    int64_t in_n = j->shape[2] * j->shape[3], out_n = j->g.OH * j->g.OW;
    if (j->k == POOL_C)
        tg__maxpool2x2c_planes_f32(j->x + p0 * in_n, p1 - p0, j->g.H, j->g.W, j->g.OH,
                                   j->g.OW, j->y + p0 * out_n, j->off + p0 * out_n);
    else
        tg__maxpool2x2c_grad_planes_f32(j->y + p0 * out_n, j->off + p0 * out_n, p1 - p0,
                                        j->g.OH, j->g.OW, j->dx + p0 * in_n);
}

/* noinline: the unit an instruction count (--calls) measures */
__attribute__((noinline)) static void run(job *j)
{
    int64_t planes = j->shape[0] * j->shape[1], in_n = j->shape[2] * j->shape[3];
    int64_t out_n = j->g.OH * j->g.OW;
    if (j->k == VALUES)
        tg__pool_run(TG_POOL_MAX_VALUES, &j->g, TG_FLOAT32, j->x, j->y, NULL, planes, in_n,
                     out_n);
    else if (j->k == POOL)
        tg__pool_run(TG_POOL_MAX, &j->g, TG_FLOAT32, j->x, j->y, j->idx, planes, in_n, out_n);
    else if (j->k == POOL_GRAD)
        tg__pool_run(TG_POOL_MAX_GRAD, &j->g, TG_FLOAT32, j->y, j->dx, j->idx, planes, out_n,
                   in_n);
    else if (j->k == POOL_C || j->k == POOL_C_GRAD)
        tg_parallel_for(planes, planes / 8 > 0 ? planes / 8 : 1, compact_range, j);
    else if (j->k == AVG)
        tg__pool_run(TG_POOL_AVG, &j->g, TG_FLOAT32, j->x, j->y, NULL, planes, in_n, out_n);
    else if (j->k == AVG_GRAD)
        tg__pool_run(TG_POOL_AVG_GRAD, &j->g, TG_FLOAT32, j->y, j->dx, NULL, planes, out_n, in_n);
    else if (j->k == BIAS_SUM)
        tg_release(tg_sum(j->t, 3, (const int[]){0, 2, 3}, false));
    else if (j->k == SUM_LAST)
        tg_release(tg_sum(j->t, 1, (const int[]){3}, false));
    else if (j->k == SUM_N)
        tg_release(tg_sum(j->t, 1, (const int[]){0}, false));
    else if (j->k == MAX_LAST)
        tg_release(tg_max(j->t, 1, (const int[]){3}, false));
    else if (j->k == MIN_LAST)
        tg_release(tg_min(j->t, 1, (const int[]){3}, false));
    else if (j->k == MEAN_LAST)
        tg_release(tg_mean(j->t, 1, (const int[]){3}, false));
    else if (j->k == VAR_LAST)
        tg_release(tg_var(j->t, 1, (const int[]){3}, 1, false));
    else if (j->k == LSE_LAST)
        tg_release(tg_logsumexp(j->t, 1, (const int[]){3}, false));
    else
        tg_release(tg_argmax(j->t, 3, false));
}

/* bytes read and written once */
static double bytes(const job *j)
{
    double in = (double)(j->shape[0] * j->shape[1] * j->shape[2] * j->shape[3]);
    double out = (double)(j->shape[0] * j->shape[1] * j->g.OH * j->g.OW);
    if (j->k == BIAS_SUM)
        return 4 * in;
    if (j->k == ARGMAX_LAST) /* int64 indices */
        return 4 * in + 8 * in / (double)j->shape[3];
    if (j->k >= SUM_LAST && j->k != SUM_N)
        return 4 * in + 4 * in / (double)j->shape[3];
    if (j->k == SUM_N)
        return 4 * in + 4 * in / (double)j->shape[0];
    if (j->k == POOL_C || j->k == POOL_C_GRAD)
        return 4 * in + 4 * out + out; /* x or dx, y or dy, the offsets */
    if (j->k == AVG || j->k == AVG_GRAD || j->k == VALUES)
        return 4 * in + 4 * out;
    return 4 * in + 4 * out + 8 * out; /* x or dx, y or dy, the indices */
}

/* the medians of `samples` timings of job j and its share of a copy, as a JSON line */
static void time_job(job *j, int threads, int samples)
{
    const int64_t *shape = j->shape;
    probe_clock_us = threads == 1 ? thread_cpu_us : now_us;
    double t0 = probe_clock_us();
    run(j);
    double one = (probe_clock_us() - t0) * 1e-6;
    int reps = one > 2e-3 ? 1 : (int)(2e-3 / (one > 1e-7 ? one : 1e-7)) + 1;
    double *t = malloc(sizeof(double) * (size_t)samples);
    for (int s = 0; s < samples; s++) {
        run(j);
        t0 = probe_clock_us();
        for (int r = 0; r < reps; r++)
            run(j);
        t[s] = (probe_clock_us() - t0) / reps;
    }
    qsort(t, (size_t)samples, sizeof *t, cmp_double);
    double med = t[samples / 2], cu = copy_us((int64_t)bytes(j));
    printf("{\"bench\":\"pool\",\"op\":\"%s\",\"shape\":[%lld,%lld,%lld,%lld],\"isa\":\"%s\","
           "\"threads\":%d,\"clock\":\"%s\",\"us\":%.2f,\"best_us\":%.2f,\"gb_s\":%.1f,\"copy_gb_s\":%.1f,"
           "\"of_copy\":%.2f}\n",
           what_name[j->k], (long long)shape[0], (long long)shape[1], (long long)shape[2],
           (long long)shape[3], tg__isa_name(tg__cpu_isa()), threads, threads == 1 ? "cpu" : "wall", med, t[0],
           bytes(j) / med * 1e-3, bytes(j) / cu * 1e-3, cu / med);
    free(t);
}

static int only_calls; /* --calls: run this many times, untimed */

static void bench(what k, const int64_t *shape, int threads, int samples)
{
    job j = {.k = k};
    memcpy(j.shape, shape, sizeof j.shape);
    j.g = (tg__pool_geom){.nd = 2, .in = {1, shape[2], shape[3]},
                          .out = {1, shape[2] / 2, shape[3] / 2}, .k = {1, 2, 2},
                          .s = {1, 2, 2}};
    if (k == VALUES) /* ResNet's: 3 x 3, stride 2, padding 1 (even planes: half the size) */
        j.g = (tg__pool_geom){.nd = 2, .in = {1, shape[2], shape[3]},
                              .out = {1, shape[2] / 2, shape[3] / 2}, .k = {1, 3, 3},
                              .s = {1, 2, 2}, .p = {0, 1, 1}};
    int64_t nin = shape[0] * shape[1] * shape[2] * shape[3], nout = nin / 4;
    j.x = malloc(sizeof(float) * (size_t)nin);
    j.dx = malloc(sizeof(float) * (size_t)nin);
    j.y = malloc(sizeof(float) * (size_t)nout);
    j.idx = malloc(sizeof(int64_t) * (size_t)nout);
    j.off = malloc((size_t)nout);
    unsigned seed = 1;
    for (int64_t i = 0; i < nin; i++) {
        seed = seed * 1103515245u + 12345u;
        j.x[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
    }
    j.t = tg_from_data(TG_FLOAT32, 4, shape, j.x);
    tg_set_num_threads(threads);
    /* the gradient reads the indices of a forward pass */
    int64_t planes = shape[0] * shape[1];
    tg__pool_run(TG_POOL_MAX, &j.g, TG_FLOAT32, j.x, j.y, j.idx, planes, nin / planes,
               nout / planes);
    tg__maxpool2x2c_planes_f32(j.x, planes, j.g.H, j.g.W, j.g.OH, j.g.OW, j.y, j.off);
    run(&j);
    if (only_calls > 0) {
        for (int c = 0; c < only_calls; c++)
            run(&j);
        printf("{\"bench\":\"pool\",\"op\":\"%s\",\"shape\":[%lld,%lld,%lld,%lld],"
               "\"isa\":\"%s\",\"threads\":%d,\"calls\":%d}\n",
               what_name[k], (long long)shape[0], (long long)shape[1], (long long)shape[2],
               (long long)shape[3], tg__isa_name(tg__cpu_isa()), threads, only_calls);
    } else {
        time_job(&j, threads, samples);
    }
    fflush(stdout);
    tg_release(j.t);
    free(j.x);
    free(j.dx);
    free(j.y);
    free(j.idx);
    free(j.off);
}

int main(int argc, char **argv)
{
    int samples = 11, only_threads = 0, only_shape = -1;
    const char *only = NULL;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            samples = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 11;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            only_threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc)
            only_shape = atoi(argv[++i]);
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            only_calls = atoi(argv[++i]);
    static const int64_t shapes[2][4] = {{64, 6, 28, 28}, {64, 16, 10, 10}};
    /* the values (inference): ResNet-18's pooling after the stem, batch 1 and 8 */
    static const int64_t resnet[2][4] = {{1, 64, 112, 112}, {8, 64, 112, 112}};
    for (int k = 0; k < N_WHAT; k++)
        for (int s = 0; s < 2; s++)
            for (int t = 1; t <= 2; t++)
                if ((!only || strcmp(only, what_name[k]) == 0) &&
                    (only_shape < 0 || only_shape == s) &&
                    (!only_threads || t == only_threads))
                    bench((what)k, k == VALUES ? resnet[s] : shapes[s], t, samples);
    return 0;
}
