/* The pointwise convolution's forward path (kernels/cpu/conv_pw.h: the
 * weights packed once per call, the GEMM's macro-kernel with the bias,
 * shortcut and activation in its store, gemm_ep_arch.h) against float64
 * reference loops, at every instruction set this CPU has, float32 and
 * float64, on 1 and 2 threads, with the built-in GEMM kernel and with
 * CBLAS (whichever gemm_select.c measured faster for the units' shape): output channels around the tile heights
 * (1, 2, 5, 13-17, 29, 160: whole tiles and every row-tail kernel), planes
 * around the vector widths (1 to 17 columns, 49 = 3 x 16 + 1, 196), input
 * channels past the GEMM's k block (300: partial sums stored, then
 * accumulated), batches of several images; with and without bias, every
 * activation (none, relu, clamp, hardswish), a shortcut with and without
 * relu; 1 x 1 planes of 1 to 12 images, whose frozen weights give the
 * same bits as unfrozen ones. Each variant's bits are the plain product's followed by the ops'
 * scalar forms, and the bits do not depend on the thread count. */
#include "harness.h"
#include "kernel_data.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_pw.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/gemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct shape {
    int64_t n, c, h, w, o;
} shape;

static const shape grid[] = {
    {1, 3, 1, 1, 1},    {2, 5, 1, 3, 2},    {1, 8, 4, 4, 16},  {3, 7, 1, 17, 15},
    {1, 16, 7, 7, 17},  {2, 32, 5, 5, 13},  {1, 24, 14, 14, 29}, {2, 300, 3, 5, 14},
    {1, 300, 7, 7, 33}, {4, 40, 7, 7, 160}, {1, 17, 9, 11, 5},   {2, 96, 8, 12, 24},
    {2, 300, 9, 11, 37}, /* on two threads: blocks of channels and panels */
    /* inputs read in place (three times the output's channels, planes of
     * four column panels or more): columns left over, three slabs of KC */
    {1, 100, 13, 13, 20}, {2, 520, 12, 12, 7},
    /* 1 x 1 planes (squeeze-excite): one product of n rows, by the skinny
     * dot products up to 8 rows (k under and past their 16 lanes), by the
     * GEMM beyond */
    {1, 576, 1, 1, 144}, {8, 40, 1, 1, 150}, {3, 9, 1, 1, 21}, {12, 64, 1, 1, 33},
};

static tg__conv_geom geom_of(const shape *s)
{
    return (tg__conv_geom){.n = s->n, .c = s->c, .h = s->h, .w = s->w, .o = s->o,
                           .kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                           .groups = 1, .oh = s->h, .ow = s->w};
}

/* the activation of v (after bias and shortcut) as the ops compute it */
#define ACT_REF(T)                                                               \
    static T act_ref_##T(const tg__conv_act *a, T v)                            \
    {                                                                            \
        switch (a->kind) {                                                       \
        case TG_CONV_ACT_RELU: return v > 0 || v != v ? v : (T)0;                \
        case TG_CONV_ACT_CLAMP:                                                  \
            return v < (T)a->lo ? (T)a->lo : v > (T)a->hi ? (T)a->hi : v;        \
        case TG_CONV_ACT_HARDSWISH: {                                            \
            T t = v + 3;                                                         \
            return v * (t < 0 ? (T)0 : t > 6 ? (T)6 : t) / 6;                    \
        }                                                                        \
        default: return v;                                                       \
        }                                                                        \
    }
ACT_REF(float)
ACT_REF(double)

typedef struct data {
    const shape *s;
    tg__conv_geom g;
    int64_t nx, nw, ny;
    double *want; /* reference products without bias */
    double *b;
    void *x, *w, *tb, *res;
} data;

static void make_data(data *d, const shape *s, bool f64)
{
    d->s = s;
    d->g = geom_of(s);
    int64_t hw = s->h * s->w;
    d->nx = s->n * s->c * hw, d->nw = s->o * s->c, d->ny = s->n * s->o * hw;
    double *x = malloc(sizeof(double) * (size_t)d->nx), *w = malloc(sizeof(double) * (size_t)d->nw);
    double *r = malloc(sizeof(double) * (size_t)d->ny);
    d->b = malloc(sizeof(double) * (size_t)s->o);
    d->want = calloc((size_t)d->ny, sizeof(double));
    fill(x, d->nx, 1);
    fill(w, d->nw, 2);
    fill(d->b, s->o, 3);
    fill(r, d->ny, 4);
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t o = 0; o < s->o; o++)
            for (int64_t c = 0; c < s->c; c++)
                for (int64_t p = 0; p < hw; p++)
                    d->want[(n * s->o + o) * hw + p] +=
                        w[o * s->c + c] * x[(n * s->c + c) * hw + p];
    d->x = typed(x, d->nx, f64);
    d->w = typed(w, d->nw, f64);
    d->tb = typed(d->b, s->o, f64);
    d->res = typed(r, d->ny, f64);
    free(x);
    free(w);
    free(r);
}

static void free_data(data *d)
{
    free(d->want);
    free(d->b);
    free(d->x);
    free(d->w);
    free(d->tb);
    free(d->res);
}

static double at(const void *v, int64_t i, bool f64)
{
    return f64 ? ((const double *)v)[i] : ((const float *)v)[i];
}

/* the plain product (with or without bias) against the reference */
static void check_plain(const data *d, bool f64, bool bias, const void *y)
{
    int64_t hw = d->s->h * d->s->w;
    double worst = 0, tol = (f64 ? 1e-12 : 3e-6) * (double)(d->s->c + 1);
    for (int64_t i = 0; i < d->ny; i++) {
        double want = d->want[i] + (bias ? d->b[i / hw % d->s->o] : 0);
        double e = fabs(at(y, i, f64) - want);
        worst = e > worst || e != e ? e : worst;
    }
    tt_checks++;
    if (!(worst <= tol))
        tt_fail(__FILE__, __LINE__, "%s %s threads %d: n%lld c%lld %lldx%lld o%lld bias %d: "
                "worst error %g (tol %g)", tg__isa_name(tg__cpu_isa()), f64 ? "f64" : "f32",
                tg_get_num_threads(), (long long)d->s->n, (long long)d->s->c,
                (long long)d->s->h, (long long)d->s->w, (long long)d->s->o, (int)bias, worst,
                tol);
}

/* y's bits after the epilogue: act(plain (+ res)) by the ops' scalar forms */
static void expect(const data *d, bool f64, const void *plain, const void *res,
                   const tg__conv_act *act, void *want)
{
    for (int64_t i = 0; i < d->ny; i++) {
        if (f64) {
            double v = ((const double *)plain)[i];
            if (res)
                v = v + ((const double *)res)[i];
            ((double *)want)[i] = act_ref_double(act, v);
        } else {
            float v = ((const float *)plain)[i];
            if (res)
                v = v + ((const float *)res)[i];
            ((float *)want)[i] = act_ref_float(act, v);
        }
    }
}

/* every epilogue of one shape at the current ISA and thread count */
static void check_shape(const data *d, bool f64)
{
    tg_dtype dt = f64 ? TG_FLOAT64 : TG_FLOAT32;
    size_t bytes = (size_t)d->ny * (f64 ? sizeof(double) : sizeof(float));
    char *plain = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
    const tg__conv_act acts[] = {{TG_CONV_ACT_NONE, 0, 0},
                                 {TG_CONV_ACT_RELU, 0, 0},
                                 {TG_CONV_ACT_CLAMP, 0, 6},
                                 {TG_CONV_ACT_CLAMP, -0.3, 0.55},
                                 {TG_CONV_ACT_HARDSWISH, 0, 0}};
    for (int bias = 0; bias < 2; bias++) {
        const void *b = bias ? d->tb : NULL;
        tg_status st = TG_ERR_ARG;
        CHECK(tg__conv_pw_forward(dt, &d->g, d->x, d->w, b, &acts[0], plain, &st));
        CHECK_OK(st);
        check_plain(d, f64, bias, plain);
        for (int k = 0; k < 5; k++) {
            for (int r = 0; r < 2; r++) {
                const void *res = r ? d->res : NULL;
                /* shortcuts come with no activation or relu only */
                bool taken = !res || k < 2;
                st = TG_ERR_ARG;
                memset(got, 0x7f, bytes);
                CHECK(tg__conv_pw_forward_res(dt, &d->g, d->x, d->w, b, res, &acts[k], got,
                                              &st) == taken);
                if (!taken)
                    continue;
                CHECK_OK(st);
                expect(d, f64, plain, res, &acts[k], want);
                if (memcmp(got, want, bytes) != 0)
                    tt_fail(__FILE__, __LINE__, "%s %s threads %d: n%lld c%lld %lldx%lld "
                            "o%lld bias %d act %d res %d: not the ops' bits",
                            tg__isa_name(tg__cpu_isa()), f64 ? "f64" : "f32",
                            tg_get_num_threads(), (long long)d->s->n, (long long)d->s->c,
                            (long long)d->s->h, (long long)d->s->w, (long long)d->s->o,
                            bias, k, r);
                tt_checks++;
            }
        }
    }
    free(plain);
    free(got);
    free(want);
}

static void test_every_shape_isa_and_epilogue(void)
{
    int n_isa = (int)tg__cpu_detected() + 1;
    int threads0 = tg_get_num_threads();
    for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++)
        for (int f64 = 0; f64 < 2; f64++) {
            data d;
            make_data(&d, &grid[i], f64);
            for (int isa = 0; isa < n_isa; isa++) {
                tg__cpu_force((tg__isa)isa);
                for (int way = 0; way < 4; way++) { /* built-in kernel or CBLAS */
                    tg__gemm_set_mode(way < 2 ? TG_GEMM_BUILTIN : TG_GEMM_BLAS);
                    CHECK_OK(tg_set_num_threads(way % 2 + 1));
                    check_shape(&d, f64);
                }
            }
            free_data(&d);
        }
    tg__cpu_force(tg__cpu_detected());
    tg__gemm_set_mode(TG_GEMM_AUTO);
    CHECK_OK(tg_set_num_threads(threads0));
}

/* with the built-in kernel, one and two threads (which split the work
 * into different units) give the same bits, at every ISA (CBLAS, which
 * the automatic choice may take for some unit shapes, promises nothing
 * of the kind) */
static void test_threads_same_bits(void)
{
    static const shape s = {3, 300, 14, 14, 40};
    int n_isa = (int)tg__cpu_detected() + 1, threads0 = tg_get_num_threads();
    data d;
    make_data(&d, &s, false);
    size_t bytes = (size_t)d.ny * sizeof(float);
    char *one = malloc(bytes), *two = malloc(bytes);
    const tg__conv_act hs = {TG_CONV_ACT_HARDSWISH, 0, 0};
    tg__gemm_set_mode(TG_GEMM_BUILTIN);
    for (int isa = 0; isa < n_isa; isa++) {
        tg__cpu_force((tg__isa)isa);
        tg_status st = TG_ERR_ARG;
        CHECK_OK(tg_set_num_threads(1));
        CHECK(tg__conv_pw_forward(TG_FLOAT32, &d.g, d.x, d.w, d.tb, &hs, one, &st));
        CHECK_OK(st);
        CHECK_OK(tg_set_num_threads(2));
        CHECK(tg__conv_pw_forward(TG_FLOAT32, &d.g, d.x, d.w, d.tb, &hs, two, &st));
        CHECK_OK(st);
        CHECK(memcmp(one, two, bytes) == 0);
    }
    tg__cpu_force(tg__cpu_detected());
    tg__gemm_set_mode(TG_GEMM_AUTO);
    CHECK_OK(tg_set_num_threads(threads0));
    free(one);
    free(two);
    free_data(&d);
}

/* 1 x 1 planes with the weights frozen (an imported model's, kept
 * packed between calls where the GEMM runs the product): the bits of the
 * same call unfrozen, on the first call and the next */
static void test_vectors_frozen_same_bits(void)
{
    static const shape shapes[] = {{2, 96, 1, 1, 24}, {12, 64, 1, 1, 33}};
    const tg__conv_act relu = {TG_CONV_ACT_RELU, 0, 0};
    for (size_t i = 0; i < 2; i++) {
        data d;
        make_data(&d, &shapes[i], false);
        size_t bytes = (size_t)d.ny * sizeof(float);
        char *plain = malloc(bytes), *kept = malloc(bytes);
        tg_status st = TG_ERR_ARG;
        CHECK(tg__conv_pw_forward(TG_FLOAT32, &d.g, d.x, d.w, d.tb, &relu, plain, &st));
        CHECK_OK(st);
        tg__conv_geom frozen = d.g;
        frozen.w_serial = UINT64_MAX - 7 - i, frozen.w_version = 1;
        for (int call = 0; call < 2; call++) {
            memset(kept, 0x7f, bytes);
            st = TG_ERR_ARG;
            CHECK(tg__conv_pw_forward(TG_FLOAT32, &frozen, d.x, d.w, d.tb, &relu, kept, &st));
            CHECK_OK(st);
            CHECK(memcmp(plain, kept, bytes) == 0);
        }
        free(plain);
        free(kept);
        free_data(&d);
    }
}

/* shapes the path refuses: not 1x1 stride 1 unpadded ungrouped */
static void test_refused(void)
{
    static const shape s = {1, 4, 5, 5, 4};
    tg__conv_geom g = geom_of(&s);
    const tg__conv_act none = {TG_CONV_ACT_NONE, 0, 0};
    float x[100] = {0}, w[16] = {0}, y[100];
    tg_status st = TG_OK;
    g.groups = 2;
    CHECK(!tg__conv_pw_forward(TG_FLOAT32, &g, x, w, NULL, &none, y, &st));
    g = geom_of(&s);
    g.sh = g.sw = 2, g.oh = g.ow = 3;
    CHECK(!tg__conv_pw_forward(TG_FLOAT32, &g, x, w, NULL, &none, y, &st));
}

int main(void)
{
    RUN(test_every_shape_isa_and_epilogue);
    RUN(test_threads_same_bits);
    RUN(test_vectors_frozen_same_bits);
    RUN(test_refused);
    return tt_finish();
}
