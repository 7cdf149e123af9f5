/* Convolution benchmark (JSON lines): the five convolutions of a LeNet-5
 * training step at batch 64 (conv1 forward and weight gradient, conv2
 * forward, input gradient and weight gradient), tensorgraph's kernels
 * (kernels/cpu/conv.h, on plain NCHW buffers) side by side with oneDNN's
 * (libdnnl, when CMake found it: the primitive in its own layouts, and
 * with the reorders from and to NCHW that a framework with NCHW tensors
 * pays), at 1 and 2 threads. ms are medians of 11 samples (~2 ms of
 * repeats each), with the best; "speedup" is oneDNN's median time over ours.
 * Each side runs as it would in a framework of its own: in a process of
 * its own (a child of this one), its thread count set before anything is
 * made, its threads waiting as they do by default (oneDNN's OpenMP threads
 * and tensorgraph's pool both spin a while after each region), samples
 * back to back after one untimed call. Two thread pools in one process
 * would take the cores from each other.
 *   bench_conv [--only conv1|conv2] [--samples N] */
#include "tg/tg.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/cpu.h"
#include "buffers.h"
#include "timing.h"

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

typedef struct bufs {
    tg__conv_geom g;
    float *x, *w, *b, *y;
} bufs;

/* 64-byte aligned, as tensorgraph's tensors are (TG_ALIGN) and as
 * oneDNN allocates its own layouts: malloc's 16-byte alignment would cut
 * every vector store of the NCHW output across two cache lines */
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
/* the time of one call in ms, averaged over reps calls after one untimed
 * call that wakes the side's threads (asleep after the pause) */
static double sample(runner *r, int reps)
{
    r->fn(r);
    double t0 = now_s();
    for (int i = 0; i < reps; i++)
        r->fn(r);
    return (now_s() - t0) / reps * 1e3;
}

/* which side a child process measures */
typedef enum side { SIDE_TG, SIDE_DNNL, SIDE_DNNL_REORDERS } side;
static const char *side_name[3] = {"tg", "onednn", "onednn-reorders"};

/* a child: one side, one layer, direction and thread count in a process of
 * its own (its thread pool the only one, its thread count set before any
 * primitive is made); prints "median best impl" in ms, or nothing when
 * the side is not available */
static int child(const layer *l, dir d, int threads, side sd, int samples)
{
    bufs u;
    const int64_t *xs = l->x, *ws = l->w;
    int64_t oh = xs[2] + 2 * l->pad - ws[2] + 1, ow = xs[3] + 2 * l->pad - ws[3] + 1;
    u.g = (tg__conv_geom){.n = xs[0], .c = xs[1], .h = xs[2], .w = xs[3], .o = ws[0],
                          .kh = ws[2], .kw = ws[3], .oh = oh, .ow = ow, .sh = 1, .sw = 1,
                          .ph = l->pad, .pw = l->pad, .dh = 1, .dw = 1, .groups = 1};
    int64_t ys[4] = {xs[0], ws[0], oh, ow};
    u.x = bench_rand_f32(xs[0] * xs[1] * xs[2] * xs[3], 1);
    u.w = bench_rand_f32(ws[0] * ws[1] * ws[2] * ws[3], 2);
    u.b = bench_rand_f32(ws[0], 3);
    u.y = bench_rand_f32(ys[0] * ys[1] * ys[2] * ys[3], 4);
    runner r = {.fn = run_tg, .u = &u, .d = d};
    const char *impl = "built-in";
    if (sd == SIDE_TG) {
        tg_set_num_threads(threads);
    } else {
#ifdef TG_HAVE_DNNL
        omp_set_num_threads(threads);
        static dn_conv dc; /* outlives this block: the runner points at it */
        if (!dn_conv_init(&dc, (dn_dir)d, xs, ws, ys, l->pad, l->pad, u.x, u.w, u.b, u.y))
            return 0;
        r = (runner){.fn = run_dn, .dc = &dc, .reorders = sd == SIDE_DNNL_REORDERS};
        impl = dc.impl;
#else
        return 0;
#endif
    }
    int reps = reps_for(&r);
    double *t = malloc((size_t)samples * sizeof *t);
    for (int k = 0; k < samples; k++)
        t[k] = sample(&r, reps);
    qsort(t, (size_t)samples, sizeof *t, cmp_double);
    printf("%.6f %.6f %s\n", t[samples / 2], t[0], impl);
    free(t);
#ifdef TG_HAVE_DNNL
    if (sd != SIDE_TG)
        dn_conv_free(r.dc);
#endif
    return 0;
}

/* runs a child and reads its answer; false when the side is unavailable */
static bool measure(const char *self, int li, dir d, int threads, side sd, int samples,
                    double *med, double *best, char *impl, size_t impl_size)
{
    char cmd[4096 + 64];
    snprintf(cmd, sizeof cmd, "'%s' --child %s %d %d %d %d", self, side_name[sd], li,
             (int)d, threads, samples);
    FILE *f = popen(cmd, "r");
    if (!f)
        return false;
    char name[128] = "";
    bool ok = fscanf(f, "%lf %lf %127s", med, best, name) == 3;
    pclose(f);
    snprintf(impl, impl_size, "%s", name);
    return ok;
}

static void bench(const char *self, int li, dir d, int threads, int samples)
{
    const layer *l = &layers[li];
    const int64_t *xs = l->x, *ws = l->w;
    int64_t oh = xs[2] + 2 * l->pad - ws[2] + 1, ow = xs[3] + 2 * l->pad - ws[3] + 1;
    double flop = 2.0 * (double)(xs[0] * ws[0] * ws[1] * ws[2] * ws[3] * oh * ow);
    double med[3], best[3];
    char impl[3][128];
    if (!measure(self, li, d, threads, SIDE_TG, samples, &med[0], &best[0], impl[0], 128))
        return;
    bool dn = measure(self, li, d, threads, SIDE_DNNL, samples, &med[1], &best[1], impl[1], 128) &&
              measure(self, li, d, threads, SIDE_DNNL_REORDERS, samples, &med[2], &best[2],
                      impl[2], 128);
    printf("{\"bench\":\"conv\",\"layer\":\"%s\",\"dir\":\"%s\",\"threads\":%d,"
           "\"isa\":\"%s\",\"tg_ms\":%.4f,\"tg_best_ms\":%.4f,\"tg_gflops\":%.1f",
           l->name, dir_name[d], threads, tg__isa_name(tg__cpu_isa()), med[0], best[0],
           flop / med[0] * 1e-6);
    if (dn)
        printf(",\"onednn_ms\":%.4f,\"onednn_best_ms\":%.4f,\"onednn_gflops\":%.1f,"
               "\"onednn_reorders_ms\":%.4f,\"speedup\":%.2f,\"speedup_vs_reorders\":%.2f,"
               "\"onednn_impl\":\"%s\"", med[1], best[1], flop / med[1] * 1e-6, med[2],
               med[1] / med[0], med[2] / med[0], impl[1]);
    printf("}\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc == 7 && strcmp(argv[1], "--child") == 0) {
        int sd = 0;
        while (sd < 3 && strcmp(argv[2], side_name[sd]) != 0)
            sd++;
        int li = atoi(argv[3]), d = atoi(argv[4]);
        if (sd == 3 || li < 0 || li > 1 || d < 0 || d > 2)
            return 2;
        return child(&layers[li], (dir)d, atoi(argv[5]), (side)sd, atoi(argv[6]));
    }
    const char *only = NULL;
    int samples = 11;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            samples = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 11;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "bench_conv: cannot find its own executable\n");
        return 1;
    }
    self[n] = 0;
    for (int li = 0; li < 2; li++) {
        if (only && strcmp(only, layers[li].name) != 0)
            continue;
        for (int d = 0; d < 3; d++)
            for (int t = 1; t <= 2 && layers[li].dirs[d]; t++)
                bench(self, li, (dir)d, t, samples);
    }
    return 0;
}
