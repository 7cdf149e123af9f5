/* Convolution forward benchmark on every convolution layer of ResNet-18
 * at 224x224 (JSON lines), float32, through tg__conv2d_forward
 * (kernels/cpu/conv.h) on NCHW buffers, with its bias and relu, against
 * the built-in sgemm's speed on a 512^3 product at the same thread count
 * (the "peak" a convolution's share is quoted against; as long as a
 * layer, so that on a busy machine its best sample is as likely to be
 * undisturbed), measured in the same run. Per layer: ms (median of the samples, each at least ~20 ms
 * of repeats after one untimed call, see --sample-ms), best_ms, GFLOP/s, share of the
 * sgemm peak (median over median, and best over best: on a shared
 * machine the best samples are the ones least disturbed) and the path
 * ("winograd": conv_wino.c, for the layers it takes, "dense": conv_dense.c's
 * implicit GEMM, "old": the paths before them, the cost-chosen direct
 * kernels or im2col + GEMM);
 * a summary line weighs the layers by how often ResNet-18 has them.
 *   bench_conv_resnet [--batch B] [--threads T] [--samples N] [--path winograd|dense|old|all]
 *                     [--tile K] [--sample-ms MS] [--only LAYER] [--chunk-kb KB] [--cpu]
 *                     [--frozen 0|1] [--cold]
 * (--tile: the dense path's tile shape K, not chosen per layer;
 * --chunk-kb: the memory the dense path's prepared images may take at
 * once, 32768 by default;
 * --sample-ms: each sample's length, 20 by default; 0: one call a sample,
 * so that on a busy machine the best of many samples is a call that ran
 * undisturbed;
 * --frozen: 1 (the default) gives the weights a frozen storage's serial,
 * as an ONNX model's initializers have (conv.h): the dense path may keep
 * them packed between calls; 0: weights as a training step has them;
 * --cpu: each sample's time is the process's CPU time, not wall time:
 * on a machine shared with other work, a figure preemption does not
 * inflate; with threads it includes the pool's spinning waits;
 * --cold: every sample one call, after an untimed pass over 96 MB that
 * evicts the layer's weights and image from the caches, as the rest of a
 * network does between two calls of a layer) 
 * TG_CPU lowers the dispatch level (TG_CPU=avx2: the AVX2 kernels). */
#include "tg/tg.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_dense.h"
#include "kernels/cpu/conv_wino.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/gemm.h"
#include "buffers.h"
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct layer {
    const char *name;
    int64_t c, hw, o, k, stride, count; /* count: layers of this shape in ResNet-18 */
} layer;

static const layer layers[] = {
    {"stem7x7s2", 3, 224, 64, 7, 2, 1},    {"l1_3x3", 64, 56, 64, 3, 1, 4},
    {"l2_3x3s2", 64, 56, 128, 3, 2, 1},    {"l2_down1x1s2", 64, 56, 128, 1, 2, 1},
    {"l2_3x3", 128, 28, 128, 3, 1, 3},     {"l3_3x3s2", 128, 28, 256, 3, 2, 1},
    {"l3_down1x1s2", 128, 28, 256, 1, 2, 1}, {"l3_3x3", 256, 14, 256, 3, 1, 3},
    {"l4_3x3s2", 256, 14, 512, 3, 2, 1},   {"l4_down1x1s2", 256, 14, 512, 1, 2, 1},
    {"l4_3x3", 512, 7, 512, 3, 1, 3},
};

typedef tg_status (*run_fn)(void *ctx);

/* median ms per call of fn over `samples` samples; best in *best */
static double sample_ms = 20;
/* --cpu: the process's CPU time rather than wall time (on a shared
 * machine, what preemption does not inflate; with threads, spinning
 * waits count) */
static bool cpu_time;

static double clock_ms(void) { return cpu_time ? process_cpu_ms() : now_ms(); }

/* --cold: before each call (untimed), a pass over this many bytes evicts
 * the weights and the image from the caches, as a whole network's other
 * layers do between two calls of one (ResNet-18's weights: 45 MB) */
#define COLD_BYTES ((size_t)96 << 20)
static char *cold_buf;

static void evict_caches(void)
{
    for (size_t i = 0; cold_buf && i < COLD_BYTES; i += 64)
        cold_buf[i]++;
}

static double time_it(run_fn fn, void *ctx, int samples, double *best)
{
    double *t = malloc((size_t)samples * sizeof *t), med = -1;
    if (!t || fn(ctx) != TG_OK)
        goto out;
    for (int s = 0; s < samples; s++) {
        int reps = 0;
        if (cold_buf)
            evict_caches();
        double t0 = clock_ms(), t1;
        do {
            fn(ctx);
            reps++;
        } while (!cold_buf && (t1 = clock_ms()) - t0 < sample_ms);
        t1 = cold_buf ? clock_ms() : t1;
        t[s] = (t1 - t0) / reps;
    }
    qsort(t, (size_t)samples, sizeof *t, cmp_double);
    med = t[samples / 2];
    *best = t[0];
out:
    free(t);
    return med;
}

typedef struct conv_ctx {
    tg__conv_geom g;
    float *x, *w, *b, *y;
} conv_ctx;

static tg_status run_conv(void *ctx)
{
    conv_ctx *c = ctx;
    return tg__conv2d_forward_relu(TG_FLOAT32, &c->g, c->x, c->w, c->b, true, c->y);
}

typedef struct gemm_ctx {
    float *a, *b, *c;
} gemm_ctx;

static tg_status run_gemm(void *ctx)
{
    gemm_ctx *g = ctx;
    return tg__sgemm(false, false, 512, 512, 512, 1, g->a, 512, g->b, 512, 0, g->c, 512);
}

/* GFLOP/s of the median sample, and of the best in *best */
static double sgemm_peak(int samples, double *best)
{
    gemm_ctx g = {bench_rand_f32(1 << 20, 7), bench_rand_f32(1 << 20, 8), bench_rand_f32(1 << 20, 9)};
    double bms = 0, ms = g.a && g.b && g.c ? time_it(run_gemm, &g, samples, &bms) : -1;
    free(g.a), free(g.b), free(g.c);
    *best = ms > 0 ? 2.0 * 512 * 512 * 512 / bms / 1e6 : 0;
    return ms > 0 ? 2.0 * 512 * 512 * 512 / ms / 1e6 : 0;
}

int main(int argc, char **argv)
{
    int64_t batch = 1;
    int threads = 2, samples = 5, frozen = 1;
    const char *path = "all", *only = NULL;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--cpu") || !strcmp(argv[i], "--cold")) {
            if (!strcmp(argv[i], "--cpu"))
                cpu_time = true;
            else if (!(cold_buf = calloc(COLD_BYTES, 1)))
                return fprintf(stderr, "bench_conv_resnet: out of memory\n"), 1;
            memmove(argv + i, argv + i + 1, sizeof *argv * (size_t)(argc - i));
            argc--, i--;
        }
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--batch"))
            batch = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads"))
            threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--samples"))
            samples = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--path"))
            path = argv[i + 1];
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
        else if (!strcmp(argv[i], "--sample-ms"))
            sample_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--tile"))
            tg__conv_dense_force_tile(atoi(argv[i + 1]));
        else if (!strcmp(argv[i], "--frozen"))
            frozen = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--chunk-kb"))
            tg__conv_dense_set_chunk_bytes((int64_t)atoll(argv[i + 1]) << 10);
    }
    tg_set_num_threads(threads);
    tg__gemm_set_mode(TG_GEMM_BUILTIN);
    double peak_best, peak = sgemm_peak(samples, &peak_best);
    const char *isa = tg__isa_name(tg__cpu_isa());
    printf("{\"bench\": \"conv_resnet\", \"what\": \"sgemm_peak\", \"isa\": \"%s\", "
           "\"threads\": %d, \"clock\": \"%s\", \"gflops\": %.1f, \"best_gflops\": %.1f}\n",
           isa, threads, cpu_time ? "cpu" : "wall", peak, peak_best);
    double total[3] = {0, 0, 0}, total_best[3] = {0, 0, 0}, flops = 0;
    static const char *const path_names[3] = {"old", "dense", "winograd"};
    for (size_t i = 0; i < sizeof layers / sizeof *layers; i++) {
        const layer *l = &layers[i];
        if (only && strcmp(only, l->name))
            continue;
        int64_t p = l->k / 2, oh = (l->hw + 2 * p - l->k) / l->stride + 1;
        conv_ctx c = {.g = {.n = batch, .c = l->c, .h = l->hw, .w = l->hw, .o = l->o,
                            .kh = l->k, .kw = l->k, .oh = oh, .ow = oh, .sh = l->stride,
                            .sw = l->stride, .ph = p, .pw = p, .dh = 1, .dw = 1,
                            .groups = 1,
                            /* as an ONNX model's initializers: a frozen
                             * storage's serial (packed forms kept) */
                            .w_serial = frozen ? 1000 + i : 0}};
        c.x = bench_rand_f32(batch * l->c * l->hw * l->hw, 1);
        c.w = bench_rand_f32(l->o * l->c * l->k * l->k, 2);
        c.b = bench_rand_f32(l->o, 3);
        c.y = malloc((size_t)(batch * l->o * oh * oh) * sizeof(float));
        double gflop = 2.0 * (double)(batch * l->o * l->c * l->k * l->k * oh * oh) / 1e9;
        flops += gflop * (double)l->count;
        tg__conv_wino_set_enabled(true);
        bool wino = tg__conv_wino_wanted(TG_FLOAT32, &c.g); /* else dense runs it */
        for (int kind = 2; kind >= 0; kind--) {
            bool dense = kind == 1;
            tg__conv_wino_set_enabled(kind == 2);
            tg__conv_dense_set_enabled(kind >= 1);
            if ((strcmp(path, "all") && strcmp(path, path_names[kind])) ||
                (kind == 2 && !wino))
                continue;
            char tile[96] = "";
            if (dense) {
                tg__dense_plan plan;
                tg__conv_dense_describe(TG_FLOAT32, &c.g, &plan);
                if (plan.over_out)
                    snprintf(tile, sizeof tile, ", \"tile\": \"%s %d channels x %d positions\"",
                             plan.isa, plan.mr, plan.row_positions);
                else
                    snprintf(tile, sizeof tile, ", \"tile\": \"%s %dx%d%s%.0d\"", plan.isa,
                             plan.mr, plan.nv, plan.tail_nv ? " tail x" : "", plan.tail_nv);
            }
            double best = -1, ms = c.x && c.w && c.b && c.y ? time_it(run_conv, &c, samples, &best) : -1;
            /* the network's total per path: a layer another path takes counts as it */
            for (int t = kind; t <= (kind == 1 && !wino ? 2 : kind); t++) {
                total[t] += ms * (double)l->count;
                total_best[t] += best * (double)l->count;
            }
            printf("{\"bench\": \"conv_resnet\", \"layer\": \"%s\", \"c\": %lld, \"hw\": %lld, "
                   "\"o\": %lld, \"k\": %lld, \"stride\": %lld, \"batch\": %lld, "
                   "\"threads\": %d, \"isa\": \"%s\", \"path\": \"%s\", \"ms\": %.4f, "
                   "\"best_ms\": %.4f, \"gflops\": %.1f, \"of_peak\": %.2f, "
                   "\"best_of_best_peak\": %.2f%s}\n",
                   l->name, (long long)l->c, (long long)l->hw, (long long)l->o,
                   (long long)l->k, (long long)l->stride, (long long)batch, threads, isa,
                   path_names[kind], ms, best, ms > 0 ? gflop / ms * 1e3 : 0,
                   ms > 0 && peak > 0 ? gflop / ms * 1e3 / peak : 0,
                   ms > 0 && peak_best > 0 ? gflop / best * 1e3 / peak_best : 0, tile);
            fflush(stdout);
        }
        tg__conv_dense_set_enabled(true);
        tg__conv_wino_set_enabled(true);
        free(c.x), free(c.w), free(c.b), free(c.y);
    }
    for (int kind = 2; kind >= 0; kind--)
        if (total[kind] > 0)
            printf("{\"bench\": \"conv_resnet\", \"what\": \"network_convs\", \"isa\": \"%s\", "
                   "\"batch\": %lld, \"threads\": %d, \"path\": \"%s\", \"ms\": %.2f, "
                   "\"best_ms\": %.2f, \"gflops\": %.1f, \"of_peak\": %.2f, "
                   "\"best_of_best_peak\": %.2f}\n",
                   isa, (long long)batch, threads, path_names[kind], total[kind],
                   total_best[kind], flops / total[kind] * 1e3,
                   peak > 0 ? flops / total[kind] * 1e3 / peak : 0,
                   peak_best > 0 ? flops / total_best[kind] * 1e3 / peak_best : 0);
    return 0;
}
