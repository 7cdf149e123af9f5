/* A MobileNet block's expansion (1x1) and depthwise (3x3 or 5x5) layers,
 * relu6 after each, float32, run one after the other through
 * tg__conv2d_forward_act (the pointwise and depthwise paths, the frozen
 * weights of an imported model) against both at once through
 * tg__conv_pwdw_forward (kernels/cpu/conv_pwdw.h), on MobileNetV2's and
 * V3-small's pairs at 224x224 (JSON lines: medians of the samples, each
 * at least ~20 ms of repeats after one untimed call; max_diff between
 * the two outputs, 0 when the bits are the same).
 *   bench_conv_pwdw [--batch B] [--threads T] [--samples N] */
#include "tg/tg.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_pwdw.h"
#include "buffers.h"
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair {
    const char *net;
    int64_t c, e, hw, k, stride; /* c -> e channels at hw x hw, then k x k depthwise */
} pair;

static const pair pairs[] = {
    {"mobilenet_v2", 16, 96, 112, 3, 2},  {"mobilenet_v2", 24, 144, 56, 3, 1},
    {"mobilenet_v2", 24, 144, 56, 3, 2},  {"mobilenet_v2", 32, 192, 28, 3, 1},
    {"mobilenet_v2", 32, 192, 28, 3, 2},  {"mobilenet_v2", 64, 384, 14, 3, 1},
    {"mobilenet_v2", 96, 576, 14, 3, 1},  {"mobilenet_v2", 96, 576, 14, 3, 2},
    {"mobilenet_v2", 160, 960, 7, 3, 1},  {"mobilenet_v3_small", 16, 72, 56, 3, 2},
    {"mobilenet_v3_small", 24, 88, 28, 3, 1}, {"mobilenet_v3_small", 24, 96, 28, 5, 2},
    {"mobilenet_v3_small", 40, 240, 14, 5, 1}, {"mobilenet_v3_small", 48, 144, 14, 5, 1},
    {"mobilenet_v3_small", 96, 576, 7, 5, 1},
};

typedef struct run {
    const tg__conv_geom *pw, *dw;
    const float *x, *w1, *b1, *w2, *b2;
    float *mid, *y;
    bool fused;
} run;

static const tg__conv_act relu6 = {TG_CONV_ACT_CLAMP, 0, 6};

static tg_status once(const run *r)
{
    if (r->fused)
        return tg__conv_pwdw_forward(TG_FLOAT32, r->pw, r->dw, r->x, r->w1, r->b1, &relu6,
                                     r->w2, r->b2, &relu6, r->y);
    tg_status s = tg__conv2d_forward_act(TG_FLOAT32, r->pw, r->x, r->w1, r->b1, &relu6,
                                         r->mid);
    return s != TG_OK ? s
                      : tg__conv2d_forward_act(TG_FLOAT32, r->dw, r->mid, r->w2, r->b2,
                                               &relu6, r->y);
}

static double time_run(const run *r, int samples)
{
    double t[64], t0, t1;
    if (once(r) != TG_OK)
        return -1;
    for (int s = 0; s < samples; s++) {
        int reps = 0;
        t0 = now_ms();
        do {
            once(r);
            reps++;
        } while ((t1 = now_ms()) - t0 < 20);
        t[s] = (t1 - t0) / reps;
    }
    qsort(t, (size_t)samples, sizeof *t, cmp_double);
    return t[samples / 2];
}

int main(int argc, char **argv)
{
    int64_t batch = 1;
    int threads = 2, samples = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--batch"))
            batch = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads"))
            threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--samples"))
            samples = atoi(argv[i + 1]);
    }
    samples = samples < 1 ? 1 : samples > 64 ? 64 : samples;
    tg_set_num_threads(threads);
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        const pair *p = &pairs[i];
        int64_t pad = p->k / 2, oh = (p->hw + 2 * pad - p->k) / p->stride + 1;
        tg__conv_geom pw = {.n = batch, .c = p->c, .h = p->hw, .w = p->hw, .o = p->e,
                            .kh = 1, .kw = 1, .oh = p->hw, .ow = p->hw, .sh = 1, .sw = 1,
                            .dh = 1, .dw = 1, .groups = 1,
                            .w_serial = UINT64_MAX - (uint64_t)i, .w_version = 1};
        tg__conv_geom dw = {.n = batch, .c = p->e, .h = p->hw, .w = p->hw, .o = p->e,
                            .kh = p->k, .kw = p->k, .oh = oh, .ow = oh, .sh = p->stride,
                            .sw = p->stride, .ph = pad, .pw = pad, .dh = 1, .dw = 1,
                            .groups = p->e};
        int64_t in_n = batch * p->c * p->hw * p->hw, mid_n = batch * p->e * p->hw * p->hw;
        int64_t out_n = batch * p->e * oh * oh;
        float *x = bench_rand_f32(in_n, 1), *w1 = bench_rand_f32(p->e * p->c, 2), *b1 = bench_rand_f32(p->e, 3);
        float *w2 = bench_rand_f32(p->e * p->k * p->k, 4), *b2 = bench_rand_f32(p->e, 5);
        float *mid = malloc((size_t)mid_n * 4), *y0 = malloc((size_t)out_n * 4),
              *y1 = malloc((size_t)out_n * 4);
        if (!x || !w1 || !b1 || !w2 || !b2 || !mid || !y0 || !y1 ||
            !tg__conv_pwdw_fits(TG_FLOAT32, &pw, &dw))
            return 1;
        run two = {&pw, &dw, x, w1, b1, w2, b2, mid, y0, false}, one = two;
        one.fused = true;
        one.y = y1;
        double ms_two = time_run(&two, samples), ms_one = time_run(&one, samples);
        double diff = 0;
        for (int64_t e = 0; e < out_n; e++)
            diff = fmax(diff, fabs((double)y0[e] - (double)y1[e]));
        printf("{\"bench\": \"conv_pwdw\", \"net\": \"%s\", \"c\": %lld, \"e\": %lld, "
               "\"hw\": %lld, \"k\": %lld, \"stride\": %lld, \"batch\": %lld, "
               "\"threads\": %d, \"two_ms\": %.4f, \"fused_ms\": %.4f, \"ratio\": %.3f, "
               "\"max_diff\": %.3g}\n",
               p->net, (long long)p->c, (long long)p->e, (long long)p->hw, (long long)p->k,
               (long long)p->stride, (long long)batch, threads, ms_two, ms_one,
               ms_one / ms_two, diff);
        fflush(stdout);
        free(x), free(w1), free(b1), free(w2), free(b2), free(mid), free(y0), free(y1);
    }
    return 0;
}
