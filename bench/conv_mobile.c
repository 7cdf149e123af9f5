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
 * --net mobilenet_v2 or mobilenet_v3_small times every convolution of
 * that network instead (each distinct layer once, times the number of
 * its copies) and ends with a line of the total.
 *   bench_conv_mobile [--batch B] [--threads T] [--samples N] [--only KIND] [--cpu]
 *                     [--net NAME] [--shape C,HW,O] [--frozen]
 * --shape times only the layers of C input channels, HW x HW inputs and
 * O outputs. --frozen tags the weights as frozen (an imported model's:
 * their packed form is kept between calls, as in tg__conv_pw_forward).
 * --calls N makes exactly N calls per layer and times nothing (for
 * callgrind's instruction counts; ms are then 0).
 * --act relu|relu6|hardswish applies that activation (after the bias) as
 * the convolution stores, as the fusion pass has it do in the MobileNets
 * (tg__conv2d_forward_act); the default is none.
 * KIND: pointwise, depthwise, stem, dense or squeeze. TG_CPU lowers the dispatch level. */
#include "tg/tg.h"
#include "kernels/cpu/conv.h"
#include "buffers.h"
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct layer {
    const char *kind;
    int64_t c, hw, o, k, stride, groups;
    int copies; /* in --net tables: how many times the network has it */
} layer;

static const layer layers[] = {
    {"pointwise", 32, 112, 16, 1, 1, 1, 1},    {"pointwise", 16, 112, 96, 1, 1, 1, 1},
    {"pointwise", 144, 56, 24, 1, 1, 1, 1},    {"pointwise", 24, 56, 144, 1, 1, 1, 1},
    {"pointwise", 192, 28, 32, 1, 1, 1, 1},    {"pointwise", 32, 28, 192, 1, 1, 1, 1},
    {"pointwise", 384, 14, 64, 1, 1, 1, 1},    {"pointwise", 64, 14, 384, 1, 1, 1, 1},
    {"pointwise", 576, 14, 96, 1, 1, 1, 1},    {"pointwise", 960, 7, 160, 1, 1, 1, 1},
    {"pointwise", 160, 7, 960, 1, 1, 1, 1},    {"pointwise", 320, 7, 1280, 1, 1, 1, 1},
    {"depthwise", 32, 112, 32, 3, 1, 32, 1},   {"depthwise", 96, 112, 96, 3, 2, 96, 1},
    {"depthwise", 144, 56, 144, 3, 1, 144, 1}, {"depthwise", 144, 56, 144, 3, 2, 144, 1},
    {"depthwise", 192, 28, 192, 3, 1, 192, 1}, {"depthwise", 384, 14, 384, 3, 1, 384, 1},
    {"depthwise", 576, 14, 576, 3, 2, 576, 1}, {"depthwise", 960, 7, 960, 3, 1, 960, 1},
    {"depthwise", 72, 28, 72, 5, 2, 72, 1},    {"depthwise", 288, 7, 288, 5, 1, 288, 1},
    {"stem", 3, 224, 32, 3, 2, 1, 1},          {"stem", 3, 224, 16, 3, 2, 1, 1},
    {"dense", 64, 56, 64, 3, 1, 1, 1},         {"dense", 128, 28, 128, 3, 1, 1, 1},
    {"dense", 256, 14, 256, 3, 1, 1, 1},       {"dense", 512, 7, 512, 3, 1, 1, 1},
};

/* torchvision's mobilenet_v2 at 224 x 224: the stem, then per inverted
 * residual block its expansion, depthwise and projection layers, and the
 * last 1x1 (input size hw of each layer) */
static const layer v2_layers[] = {
    {"stem", 3, 224, 32, 3, 2, 1, 1},        {"depthwise", 32, 112, 32, 3, 1, 32, 1},
    {"pointwise", 32, 112, 16, 1, 1, 1, 1},  {"pointwise", 16, 112, 96, 1, 1, 1, 1},
    {"depthwise", 96, 112, 96, 3, 2, 96, 1}, {"pointwise", 96, 56, 24, 1, 1, 1, 1},
    {"pointwise", 24, 56, 144, 1, 1, 1, 2},  {"depthwise", 144, 56, 144, 3, 1, 144, 1},
    {"pointwise", 144, 56, 24, 1, 1, 1, 1},  {"depthwise", 144, 56, 144, 3, 2, 144, 1},
    {"pointwise", 144, 28, 32, 1, 1, 1, 1},  {"pointwise", 32, 28, 192, 1, 1, 1, 3},
    {"depthwise", 192, 28, 192, 3, 1, 192, 2}, {"pointwise", 192, 28, 32, 1, 1, 1, 2},
    {"depthwise", 192, 28, 192, 3, 2, 192, 1}, {"pointwise", 192, 14, 64, 1, 1, 1, 1},
    {"pointwise", 64, 14, 384, 1, 1, 1, 4},  {"depthwise", 384, 14, 384, 3, 1, 384, 4},
    {"pointwise", 384, 14, 64, 1, 1, 1, 3},  {"pointwise", 384, 14, 96, 1, 1, 1, 1},
    {"pointwise", 96, 14, 576, 1, 1, 1, 3},  {"depthwise", 576, 14, 576, 3, 1, 576, 2},
    {"pointwise", 576, 14, 96, 1, 1, 1, 2},  {"depthwise", 576, 14, 576, 3, 2, 576, 1},
    {"pointwise", 576, 7, 160, 1, 1, 1, 1},  {"pointwise", 160, 7, 960, 1, 1, 1, 3},
    {"depthwise", 960, 7, 960, 3, 1, 960, 3}, {"pointwise", 960, 7, 160, 1, 1, 1, 2},
    {"pointwise", 960, 7, 320, 1, 1, 1, 1},  {"pointwise", 320, 7, 1280, 1, 1, 1, 1},
};

/* torchvision's mobilenet_v3_small at 224 x 224, its squeeze-excite
 * layers (kind squeeze: 1 x 1 on the pooled 1 x 1 planes) last */
static const layer v3s_layers[] = {
    {"stem", 3, 224, 16, 3, 2, 1, 1},        {"depthwise", 16, 112, 16, 3, 2, 16, 1},
    {"pointwise", 16, 56, 16, 1, 1, 1, 1},   {"pointwise", 16, 56, 72, 1, 1, 1, 1},
    {"depthwise", 72, 56, 72, 3, 2, 72, 1},  {"pointwise", 72, 28, 24, 1, 1, 1, 1},
    {"pointwise", 24, 28, 88, 1, 1, 1, 1},   {"depthwise", 88, 28, 88, 3, 1, 88, 1},
    {"pointwise", 88, 28, 24, 1, 1, 1, 1},   {"pointwise", 24, 28, 96, 1, 1, 1, 1},
    {"depthwise", 96, 28, 96, 5, 2, 96, 1},  {"pointwise", 96, 14, 40, 1, 1, 1, 1},
    {"pointwise", 40, 14, 240, 1, 1, 1, 2},  {"depthwise", 240, 14, 240, 5, 1, 240, 2},
    {"pointwise", 240, 14, 40, 1, 1, 1, 2},  {"pointwise", 40, 14, 120, 1, 1, 1, 1},
    {"depthwise", 120, 14, 120, 5, 1, 120, 1}, {"pointwise", 120, 14, 48, 1, 1, 1, 1},
    {"pointwise", 48, 14, 144, 1, 1, 1, 1},  {"depthwise", 144, 14, 144, 5, 1, 144, 1},
    {"pointwise", 144, 14, 48, 1, 1, 1, 1},  {"pointwise", 48, 14, 288, 1, 1, 1, 1},
    {"depthwise", 288, 14, 288, 5, 2, 288, 1}, {"pointwise", 288, 7, 96, 1, 1, 1, 1},
    {"pointwise", 96, 7, 576, 1, 1, 1, 3},   {"depthwise", 576, 7, 576, 5, 1, 576, 2},
    {"pointwise", 576, 7, 96, 1, 1, 1, 2},
    {"squeeze", 16, 1, 8, 1, 1, 1, 1},       {"squeeze", 8, 1, 16, 1, 1, 1, 1},
    {"squeeze", 96, 1, 24, 1, 1, 1, 1},      {"squeeze", 24, 1, 96, 1, 1, 1, 1},
    {"squeeze", 240, 1, 64, 1, 1, 1, 2},     {"squeeze", 64, 1, 240, 1, 1, 1, 2},
    {"squeeze", 120, 1, 32, 1, 1, 1, 1},     {"squeeze", 32, 1, 120, 1, 1, 1, 1},
    {"squeeze", 144, 1, 40, 1, 1, 1, 1},     {"squeeze", 40, 1, 144, 1, 1, 1, 1},
    {"squeeze", 288, 1, 72, 1, 1, 1, 1},     {"squeeze", 72, 1, 288, 1, 1, 1, 1},
    {"squeeze", 576, 1, 144, 1, 1, 1, 2},    {"squeeze", 144, 1, 576, 1, 1, 1, 2},
};

static bool cpu_time;
static bool frozen; /* --frozen: the weights tagged as an imported model's are */
static int fixed_calls; /* --calls N: exactly N untimed calls per layer (callgrind) */
static tg__conv_act act = {TG_CONV_ACT_NONE, 0, 0};

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
    float *x = bench_rand_f32(g->n * g->c * g->h * g->w, 1);
    float *w = bench_rand_f32(g->o * (g->c / g->groups) * g->kh * g->kw, 2);
    float *b = bench_rand_f32(g->o, 3), *y = malloc((size_t)(g->n * g->o * g->oh * g->ow) * 4);
    double *t = malloc((size_t)samples * sizeof *t), med = -1;
    tg__conv_geom tagged = *g;
    if (frozen) { /* a serial no storage has (they start at 1 and count up) */
        tagged.w_serial = UINT64_MAX - (uint64_t)(g->c * 4096 + g->o);
        g = &tagged;
    }
    if (!x || !w || !b || !y || !t ||
        tg__conv2d_forward_act(TG_FLOAT32, g, x, w, b, &act, y) != TG_OK)
        goto out;
    if (fixed_calls > 0) {
        for (int i = 1; i < fixed_calls; i++)
            tg__conv2d_forward_act(TG_FLOAT32, g, x, w, b, &act, y);
        med = *best = 0;
        goto out;
    }
    for (int s = 0; s < samples; s++) {
        int reps = 0;
        double t0 = clock_ms(), t1;
        do {
            tg__conv2d_forward_act(TG_FLOAT32, g, x, w, b, &act, y);
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
    const char *only = NULL, *net = NULL, *act_name = "none", *shape = NULL;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--cpu")) {
            cpu_time = true;
            i--;
        } else if (!strcmp(argv[i], "--frozen")) {
            frozen = true;
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
        else if (!strcmp(argv[i], "--net"))
            net = argv[i + 1];
        else if (!strcmp(argv[i], "--act"))
            act_name = argv[i + 1];
        else if (!strcmp(argv[i], "--shape"))
            shape = argv[i + 1];
        else if (!strcmp(argv[i], "--calls"))
            fixed_calls = atoi(argv[i + 1]);
    }
    if (!strcmp(act_name, "relu"))
        act.kind = TG_CONV_ACT_RELU;
    else if (!strcmp(act_name, "relu6"))
        act = (tg__conv_act){TG_CONV_ACT_CLAMP, 0, 6};
    else if (!strcmp(act_name, "hardswish"))
        act.kind = TG_CONV_ACT_HARDSWISH;
    else if (strcmp(act_name, "none")) {
        fprintf(stderr, "bench_conv_mobile: --act takes none, relu, relu6 or hardswish, "
                        "not '%s'\n", act_name);
        return 1;
    }
    const layer *table = layers;
    size_t n_layers = sizeof layers / sizeof *layers;
    if (net && !strcmp(net, "mobilenet_v2")) {
        table = v2_layers;
        n_layers = sizeof v2_layers / sizeof *v2_layers;
    } else if (net && !strcmp(net, "mobilenet_v3_small")) {
        table = v3s_layers;
        n_layers = sizeof v3s_layers / sizeof *v3s_layers;
    } else if (net) {
        fprintf(stderr, "bench_conv_mobile: --net takes mobilenet_v2 or mobilenet_v3_small, "
                        "not '%s'\n", net);
        return 1;
    }
    double total = 0;
    tg_set_num_threads(threads);
    const char *mode = getenv("TG_CONV") ? getenv("TG_CONV") : "auto";
    for (size_t i = 0; i < n_layers; i++) {
        const layer *l = &table[i];
        char dims[64];
        snprintf(dims, sizeof dims, "%lld,%lld,%lld", (long long)l->c, (long long)l->hw,
                 (long long)l->o);
        if ((only && strcmp(only, l->kind)) || (shape && strcmp(shape, dims)))
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
               "\"clock\": \"%s\", \"act\": \"%s\", \"copies\": %d, "
               "\"ms\": %.4f, \"best_ms\": %.4f, \"gflops\": %.2f}\n",
               l->kind, (long long)l->c, (long long)l->hw, (long long)l->o, (long long)l->k,
               (long long)l->stride, (long long)l->groups, (long long)batch, threads, mode,
               cpu_time ? "cpu" : "wall", act_name, l->copies > 0 ? l->copies : 1,
               ms, best, ms > 0 ? gflop / ms * 1e3 : 0);
        fflush(stdout);
        total += ms * (l->copies > 0 ? l->copies : 1);
    }
    if (net)
        printf("{\"bench\": \"conv_mobile_net\", \"net\": \"%s\", \"batch\": %lld, "
               "\"threads\": %d, \"clock\": \"%s\", \"act\": \"%s\", \"only\": \"%s\", "
               "\"ms\": %.4f}\n",
               net, (long long)batch, threads, cpu_time ? "cpu" : "wall", act_name,
               only ? only : "all",
               total);
    return 0;
}
