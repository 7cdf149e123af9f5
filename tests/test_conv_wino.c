/* Winograd's F(2x2, 3x3) convolution (kernels/cpu/conv_wino.h) against
 * plain reference loops in float64: odd and even planes (partial tiles at
 * the right and bottom edges), padding 0, 1 and 2, channel counts around
 * the vector widths, several images (blocks of tiles that cross images
 * and rows), with and without bias, relu and a residual, on 1 and 2
 * threads, at every instruction set this CPU has; its error against the
 * dense path's on a ResNet layer; the same bits on any thread count and
 * with the weights' transform kept (frozen weights); NaN and infinities
 * left to the direct paths; and which shapes the automatic choice sends
 * here. */
#include "conv_reference.h"
#include "harness.h"
#include "kernel_data.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_dense.h"
#include "kernels/cpu/conv_wino.h"
#include "kernels/cpu/cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct shape {
    int64_t n, c, h, w, o, ph, pw;
} shape;

static const shape grid[] = {
    {1, 16, 8, 8, 16, 1, 1},    /* even plane, whole tiles */
    {1, 17, 9, 11, 19, 1, 1},   /* odd plane: half tiles at both edges */
    {3, 16, 7, 5, 33, 1, 1},    /* several images, blocks across them */
    {2, 20, 12, 13, 24, 0, 0},  /* no padding */
    {1, 24, 10, 9, 16, 2, 2},   /* padding past the kernel's reach */
    {2, 16, 6, 14, 18, 1, 0},   /* unequal padding */
    {1, 64, 28, 28, 64, 1, 1},  /* ResNet-like, several blocks */
    {1, 16, 3, 150, 16, 1, 1},  /* a wide row: segments of 64 tiles */
};

static tg__conv_geom geom_of(const shape *s)
{
    conv_shape full = {s->n, s->c, s->h, s->w, s->o, 3, 3, 1, 1, s->ph, s->pw, 1, 1};
    return conv_geom_of(&full);
}

typedef struct data {
    tg__conv_geom g;
    int64_t nx, nw, ny;
    double *x, *w, *b, *r, *want;
    float *fx, *fw, *fb, *fr, *y;
} data;

static data make(const shape *s, bool bias, bool res, bool relu)
{
    data d = {.g = geom_of(s)};
    d.nx = d.g.n * d.g.c * d.g.h * d.g.w;
    d.nw = d.g.o * d.g.c * 9;
    d.ny = d.g.n * d.g.o * d.g.oh * d.g.ow;
    d.x = malloc(sizeof(double) * (size_t)d.nx);
    d.w = malloc(sizeof(double) * (size_t)d.nw);
    d.b = malloc(sizeof(double) * (size_t)d.g.o);
    d.r = malloc(sizeof(double) * (size_t)d.ny);
    d.want = malloc(sizeof(double) * (size_t)d.ny);
    fill(d.x, d.nx, 11);
    fill(d.w, d.nw, 12);
    fill(d.b, d.g.o, 13);
    fill(d.r, d.ny, 14);
    conv_reference(&d.g, d.x, d.w, bias ? d.b : NULL, res ? d.r : NULL, relu, d.want);
    d.fx = typed(d.x, d.nx, false);
    d.fw = typed(d.w, d.nw, false);
    d.fb = bias ? typed(d.b, d.g.o, false) : NULL;
    d.fr = res ? typed(d.r, d.ny, false) : NULL;
    d.y = malloc(sizeof(float) * (size_t)d.ny);
    return d;
}

static void drop(data *d)
{
    free(d->x), free(d->w), free(d->b), free(d->r), free(d->want);
    free(d->fx), free(d->fw), free(d->fb), free(d->fr), free(d->y);
}

/* the largest difference from the reference (NaN if any output is NaN) */
static double worst_error(const data *d)
{
    double worst = 0;
    for (int64_t i = 0; i < d->ny; i++) {
        double e = fabs((double)d->y[i] - d->want[i]);
        worst = e > worst || e != e ? e : worst;
    }
    return worst;
}

static bool run_wino(data *d, bool relu)
{
    tg_status st = TG_ERR_INTERNAL;
    memset(d->y, 0x7f, sizeof(float) * (size_t)d->ny);
    bool taken = tg__conv_wino_forward(TG_FLOAT32, &d->g, d->fx, d->fw, d->fb, d->fr, relu,
                                       d->y, &st);
    return taken && st == TG_OK;
}

/* every output within 1e-5 per product of the fan-in (inputs and weights
 * in [-1, 1)); relu's zeros are +0 */
static void check_shape(const shape *s, bool bias, bool res, bool relu, int threads)
{
    data d = make(s, bias, res, relu);
    tg_set_num_threads(threads);
    CHECK(run_wino(&d, relu));
    double worst = worst_error(&d), tol = 1e-5 * (double)(d.g.c * 9 + 2);
    bool signs = true;
    for (int64_t i = 0; relu && i < d.ny; i++)
        signs &= d.y[i] > 0 || (d.y[i] == 0 && !signbit(d.y[i]));
    tt_checks++;
    if (!(worst <= tol) || !signs)
        tt_fail(__FILE__, __LINE__,
                "%s bias %d res %d relu %d threads %d: n%lld c%lld %lldx%lld o%lld p%lldx%lld: "
                "worst error %g (tol %g), relu signs %d",
                tg__isa_name(tg__cpu_isa()), bias, res, relu, threads, (long long)s->n,
                (long long)s->c, (long long)s->h, (long long)s->w, (long long)s->o,
                (long long)s->ph, (long long)s->pw, worst, tol, signs);
    drop(&d);
}

static void test_every_shape_and_isa(void)
{
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
        tg__cpu_force((tg__isa)isa);
        for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++)
            for (int run = 0; run < 8; run++)
                check_shape(&grid[i], run & 1, run & 2, run & 4, 1 + (int)(i + (size_t)run) % 2);
    }
    tg__cpu_force(tg__cpu_detected());
    tg_set_num_threads(2);
}

/* on a ResNet layer Winograd's error is of the direct product's size:
 * within 4x the dense path's worst error against float64 */
static void test_error_against_dense(void)
{
    shape s = {1, 64, 28, 28, 64, 1, 1};
    data d = make(&s, true, false, false);
    CHECK(run_wino(&d, false));
    double wino = worst_error(&d);
    CHECK_OK(tg__conv_dense_forward(TG_FLOAT32, &d.g, d.fx, d.fw, d.fb, false, d.y));
    double dense = worst_error(&d);
    tt_checks++;
    if (getenv("TG_TEST_VERBOSE"))
        printf("worst error against float64: winograd %g, dense %g\n", wino, dense);
    if (!(wino <= 4 * dense && wino < 1e-4))
        tt_fail(__FILE__, __LINE__, "winograd's worst error %g, dense's %g", wino, dense);
    drop(&d);
}

/* the same bits on 1, 2 and 3 threads (a block's tiles are one GEMM's
 * columns, each output the same sum whoever runs it), and with frozen
 * weights on the call that transforms them and on the one that reuses them */
static void test_same_bits(void)
{
    static const shape s = {3, 32, 11, 13, 40, 1, 1};
    data d = make(&s, true, true, true);
    tg_set_num_threads(1);
    CHECK(run_wino(&d, true));
    float *one = malloc(sizeof(float) * (size_t)d.ny);
    memcpy(one, d.y, sizeof(float) * (size_t)d.ny);
    for (int threads = 2; threads <= 3; threads++) {
        tg_set_num_threads(threads);
        CHECK(run_wino(&d, true));
        CHECK(memcmp(one, d.y, sizeof(float) * (size_t)d.ny) == 0);
    }
    d.g.w_serial = (uint64_t)1 << 41;
    for (int call = 0; call < 2; call++) {
        CHECK(run_wino(&d, true));
        CHECK(memcmp(one, d.y, sizeof(float) * (size_t)d.ny) == 0);
    }
    tg_set_num_threads(2);
    free(one);
    drop(&d);
}

/* a NaN or infinity in the input or the weights, or a huge value: not
 * taken here; through tg__conv2d_forward the outputs are the other paths'
 * bits (NaN exactly where an output reads the NaN) */
static void test_non_finite_left_to_direct(void)
{
    static const shape s = {1, 16, 16, 16, 16, 1, 1};
    const float bad[] = {NAN, INFINITY, -INFINITY, 0x1p120f};
    for (int where = 0; where < 2; where++)
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            data d = make(&s, true, false, false);
            CHECK(run_wino(&d, false)); /* taken while every value is moderate */
            float *p = where ? d.fw : d.fx;
            p[where ? 40 : 2 * 12 + 5] = bad[k];
            tg_status st = TG_OK;
            CHECK(!tg__conv_wino_forward(TG_FLOAT32, &d.g, d.fx, d.fw, d.fb, NULL, false, d.y,
                                         &st));
            float *want = malloc(sizeof(float) * (size_t)d.ny);
            tg__conv_wino_set_enabled(false);
            CHECK_OK(tg__conv2d_forward(TG_FLOAT32, &d.g, d.fx, d.fw, d.fb, want));
            tg__conv_wino_set_enabled(true);
            CHECK_OK(tg__conv2d_forward(TG_FLOAT32, &d.g, d.fx, d.fw, d.fb, d.y));
            CHECK(memcmp(want, d.y, sizeof(float) * (size_t)d.ny) == 0);
            free(want);
            drop(&d);
        }
}

/* through the public entry points: tg__conv2d_forward_residual gives the
 * bits of this path with the residual added in its output transform */
static void test_entry_points(void)
{
    static const shape s = {2, 32, 16, 16, 32, 1, 1};
    data d = make(&s, true, true, true);
    tg_set_num_threads(1); /* see test_choice */
    CHECK(tg__conv_wino_wanted(TG_FLOAT32, &d.g));
    CHECK(run_wino(&d, true));
    float *via = malloc(sizeof(float) * (size_t)d.ny);
    CHECK_OK(tg__conv2d_forward_residual(TG_FLOAT32, &d.g, d.fx, d.fw, d.fb, d.fr, true, via));
    CHECK(memcmp(via, d.y, sizeof(float) * (size_t)d.ny) == 0);
    free(via);
    drop(&d);
    tg_set_num_threads(2);
}

/* the input gradient as the forward product of dy with the weights flipped
 * and transposed (padding 2 - p), within the forward's tolerance, and what
 * tg__conv2d_grad_input gives (it takes this path first); padding beyond
 * 2 is left to the direct kernels */
static void test_grad_input(void)
{
    static const shape grads[] = {{2, 24, 10, 9, 16, 1, 1}, {1, 16, 12, 14, 20, 0, 0},
                                  {1, 17, 13, 13, 18, 2, 1}};
    for (size_t i = 0; i < sizeof grads / sizeof *grads; i++) {
        tg__conv_geom g = geom_of(&grads[i]);
        int64_t nx = g.n * g.c * g.h * g.w, nw = g.o * g.c * 9, ny = g.n * g.o * g.oh * g.ow;
        double *dy = malloc(sizeof(double) * (size_t)ny), *w = malloc(sizeof(double) * (size_t)nw);
        double *want = malloc(sizeof(double) * (size_t)nx);
        fill(dy, ny, 21);
        fill(w, nw, 22);
        conv_reference_grads(&g, NULL, w, dy, want, NULL);
        float *fdy = typed(dy, ny, false), *fw = typed(w, nw, false);
        float *dx = malloc(sizeof(float) * (size_t)nx), *via = malloc(sizeof(float) * (size_t)nx);
        tg_status st = TG_ERR_INTERNAL;
        CHECK(tg__conv_wino_grad_input(TG_FLOAT32, &g, fdy, fw, dx, &st));
        CHECK_OK(st);
        double worst = 0, tol = 1e-5 * (double)(g.o * 9 + 2);
        for (int64_t k = 0; k < nx; k++) {
            double e = fabs((double)dx[k] - want[k]);
            worst = e > worst || e != e ? e : worst;
        }
        CHECK(worst <= tol);
        CHECK_OK(tg__conv2d_grad_input(TG_FLOAT32, &g, fdy, fw, via));
        CHECK(memcmp(via, dx, sizeof(float) * (size_t)nx) == 0);
        free(dy), free(w), free(want), free(fdy), free(fw), free(dx), free(via);
    }
    shape wide = {1, 16, 12, 12, 16, 3, 3};
    tg__conv_geom g = geom_of(&wide);
    float one = 1;
    tg_status st = TG_OK;
    CHECK(!tg__conv_wino_grad_input(TG_FLOAT32, &g, &one, &one, &one, &st));
}

/* which shapes the automatic choice sends here (on one thread: on Zen 5
 * at AVX-512 the dense path takes the forward on more, as below) */
static void test_choice(void)
{
    shape resnet = {1, 64, 56, 56, 64, 1, 1};
    tg__conv_geom g = geom_of(&resnet), h;
    tg_set_num_threads(2);
    bool zen5 = tg__cpu_amd_family() == 0x1A && tg__cpu_isa() == TG_ISA_AVX512;
    CHECK(tg__conv_wino_wanted(TG_FLOAT32, &g) == !zen5);
    h = g, h.o = 16; /* too few output channels for the dense tiles: Winograd's */
    CHECK(tg__conv_wino_wanted(TG_FLOAT32, &h));
    tg_set_num_threads(1);
    CHECK(tg__conv_wino_wanted(TG_FLOAT32, &g));
    CHECK(!tg__conv_wino_wanted(TG_FLOAT64, &g));
    h = g, h.sh = h.sw = 2, h.oh = h.ow = 28;
    CHECK(!tg__conv_wino_wanted(TG_FLOAT32, &h));
    h = g, h.groups = 2;
    CHECK(!tg__conv_wino_wanted(TG_FLOAT32, &h));
    h = g, h.kh = h.kw = 5, h.oh = h.ow = 54;
    CHECK(!tg__conv_wino_wanted(TG_FLOAT32, &h));
    h = g, h.dh = h.dw = 2, h.oh = h.ow = 54;
    CHECK(!tg__conv_wino_wanted(TG_FLOAT32, &h));
    h = g, h.c = 3; /* an image's first layer: too few channels */
    CHECK(!tg__conv_wino_wanted(TG_FLOAT32, &h));
    h = g, h.h = h.w = h.oh = h.ow = 7; /* 16 tiles: too few */
    CHECK(!tg__conv_wino_wanted(TG_FLOAT32, &h));
    tg_status st = TG_OK;
    float one = 1;
    h = g, h.sh = 2;
    CHECK(!tg__conv_wino_forward(TG_FLOAT32, &h, &one, &one, NULL, NULL, false, &one, &st));
    tg__conv_wino_set_enabled(false);
    CHECK(!tg__conv_wino_wanted(TG_FLOAT32, &g));
    tg__conv_wino_set_enabled(true);
    CHECK(tg__conv_wino_wanted(TG_FLOAT32, &g));
    tg_set_num_threads(2);
}

int main(void)
{
    RUN(test_every_shape_and_isa);
    RUN(test_error_against_dense);
    RUN(test_same_bits);
    RUN(test_non_finite_left_to_direct);
    RUN(test_entry_points);
    RUN(test_grad_input);
    RUN(test_choice);
    return tt_finish();
}
