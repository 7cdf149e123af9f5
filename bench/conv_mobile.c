/* Convolution forward benchmark on the layers of MobileNetV2 and
 * ResNet-18 at 224x224 (JSON lines): pointwise (1x1), depthwise (groups ==
 * channels, 3x3 stride 1 and 2), the MobileNets' stems (3x3 stride 2
 * from 3 channels) and dense 3x3, float32, through
 * tg__conv2d_forward (kernels/cpu/conv.h) on NCHW buffers, with the path
 * TG_CONV picks (auto, gemm, lanes, planes). ms is the median of the
 * samples (each at least ~20 ms of repeats after one untimed call),
 * best_ms the fastest. --cpu times the process's CPU time instead of the
 * wall clock (with --threads 1: what a layer costs on a shared, loaded
 * machine, where preemption inflates wall time).
 *   bench_conv_mobile [--batch B] [--threads T] [--samples N] [--only KIND] [--cpu]
 * KIND: pointwise, depthwise, stem or dense. TG_CPU lowers the dispatch level. */
#include "tg/tg.h"
#include "kernels/cpu/conv.h"
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct layer {
    const char *kind;
    int64_t c, hw, o, k, stride, groups;
} layer;

static const layer layers[] = {
    {"pointwise", 32, 112, 16, 1, 1, 1},    {"pointwise", 16, 112, 96, 1, 1, 1},
    {"pointwise", 144, 56, 24, 1, 1, 1},    {"pointwise", 24, 56, 144, 1, 1, 1},
    {"pointwise", 192, 28, 32, 1, 1, 1},    {"pointwise", 32, 28, 192, 1, 1, 1},
    {"pointwise", 384, 14, 64, 1, 1, 1},    {"pointwise", 64, 14, 384, 1, 1, 1},
    {"pointwise", 576, 14, 96, 1, 1, 1},    {"pointwise", 960, 7, 160, 1, 1, 1},
    {"pointwise", 160, 7, 960, 1, 1, 1},    {"pointwise", 320, 7, 1280, 1, 1, 1},
    {"depthwise", 32, 112, 32, 3, 1, 32},   {"depthwise", 96, 112, 96, 3, 2, 96},
    {"depthwise", 144, 56, 144, 3, 1, 144}, {"depthwise", 144, 56, 144, 3, 2, 144},
    {"depthwise", 192, 28, 192, 3, 1, 192}, {"depthwise", 384, 14, 384, 3, 1, 384},
    {"depthwise", 576, 14, 576, 3, 2, 576}, {"depthwise", 960, 7, 960, 3, 1, 960},
    {"depthwise", 72, 28, 72, 5, 2, 72},    {"depthwise", 288, 7, 288, 5, 1, 288},
    {"stem", 3, 224, 32, 3, 2, 1},          {"stem", 3, 224, 16, 3, 2, 1},
    {"dense", 64, 56, 64, 3, 1, 1},         {"dense", 128, 28, 128, 3, 1, 1},
    {"dense", 256, 14, 256, 3, 1, 1},       {"dense", 512, 7, 512, 3, 1, 1},
};

static float *rand_buf(int64_t n, unsigned seed)
{
    float *p = malloc((size_t)n * sizeof *p);
    for (int64_t i = 0; p && i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    return p;
}

static bool cpu_time;

static double clock_ms(void)
{
    if (!cpu_time)
        return now_ms();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static double time_layer(const tg__conv_geom *g, int samples, double *best)
{
    float *x = rand_buf(g->n * g->c * g->h * g->w, 1);
    float *w = rand_buf(g->o * (g->c / g->groups) * g->kh * g->kw, 2);
    float *b = rand_buf(g->o, 3), *y = malloc((size_t)(g->n * g->o * g->oh * g->ow) * 4);
    double *t = malloc((size_t)samples * sizeof *t), med = -1;
    if (!x || !w || !b || !y || !t ||
        tg__conv2d_forward(TG_FLOAT32, g, x, w, b, y) != TG_OK)
        goto out;
    for (int s = 0; s < samples; s++) {
        int reps = 0;
        double t0 = clock_ms(), t1;
        do {
            tg__conv2d_forward(TG_FLOAT32, g, x, w, b, y);
            reps++;
        } while ((t1 = clock_ms()) - t0 < 20);
        t[s] = (t1 - t0) / reps;
    }
    qsort(t, (size_t)samples, sizeof *t, cmp_double);
    med = t[samples / 2];
    *best = t[0];
out:
    free(x), free(w), free(b), free(y), free(t);
    return med;
}

int main(int argc, char **argv)
{
    int64_t batch = 1;
    int threads = 2, samples = 5;
    const char *only = NULL;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--cpu")) {
            cpu_time = true;
            i--;
        } else if (i + 1 >= argc)
            break;
        else if (!strcmp(argv[i], "--batch"))
            batch = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads"))
            threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--samples"))
            samples = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
    }
    tg_set_num_threads(threads);
    const char *mode = getenv("TG_CONV") ? getenv("TG_CONV") : "auto";
    for (size_t i = 0; i < sizeof layers / sizeof *layers; i++) {
        const layer *l = &layers[i];
        if (only && strcmp(only, l->kind))
            continue;
        int64_t p = l->k / 2, oh = (l->hw + 2 * p - l->k) / l->stride + 1;
        tg__conv_geom g = {.n = batch, .c = l->c, .h = l->hw, .w = l->hw, .o = l->o,
                           .kh = l->k, .kw = l->k, .oh = oh, .ow = oh, .sh = l->stride,
                           .sw = l->stride, .ph = p, .pw = p, .dh = 1, .dw = 1,
                           .groups = l->groups};
        double best = -1, ms = time_layer(&g, samples, &best);
        double gflop = 2.0 * (double)(batch * l->o * (l->c / l->groups) * l->k * l->k) *
                       (double)(oh * oh) / 1e9;
        printf("{\"bench\": \"conv_mobile\", \"kind\": \"%s\", \"c\": %lld, "
               "\"hw\": %lld, \"o\": %lld, \"k\": %lld, \"stride\": %lld, "
               "\"groups\": %lld, \"batch\": %lld, \"threads\": %d, \"mode\": \"%s\", "
               "\"clock\": \"%s\", "
               "\"ms\": %.4f, \"best_ms\": %.4f, \"gflops\": %.2f}\n",
               l->kind, (long long)l->c, (long long)l->hw, (long long)l->o, (long long)l->k,
               (long long)l->stride, (long long)l->groups, (long long)batch, threads, mode,
               cpu_time ? "cpu" : "wall",
               ms, best, ms > 0 ? gflop / ms * 1e3 : 0);
        fflush(stdout);
    }
    return 0;
}
