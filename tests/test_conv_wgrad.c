/* The weight gradient as one GEMM per chunk of images
 * (kernels/cpu/conv_wgrad.h) against plain reference loops in float64:
 * strides, padding, dilation, rectangular kernels and images, 1x1
 * layers, float32 and float64, chunks of one image, of several and the
 * whole batch; tg__conv2d_grad_weight sends many-weight layers here (the
 * same bits) and leaves LeNet's to the direct kernels; groups refused. */
#include "conv_reference.h"
#include "harness.h"
#include "kernel_data.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_wgrad.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef conv_shape shape;

static const shape grid[] = {
    {3, 32, 9, 9, 40, 3, 3, 1, 1, 1, 1, 1, 1},   /* ResNet-like 3x3 */
    {2, 24, 11, 10, 48, 3, 3, 2, 2, 1, 1, 1, 1},  /* stride 2, odd planes */
    {2, 64, 6, 7, 64, 1, 1, 2, 2, 0, 0, 1, 1},    /* 1x1 stride-2 projection */
    {1, 8, 20, 20, 72, 7, 7, 2, 2, 3, 3, 1, 1},   /* 7x7 stem-like */
    {2, 16, 10, 12, 36, 3, 2, 1, 2, 2, 0, 2, 1},  /* unequal, dilated */
    {2, 64, 8, 8, 128, 3, 3, 1, 1, 1, 1, 1, 1},   /* taken by tg__conv2d_grad_weight */
};

static void check(const shape *s, bool f64, int64_t chunk)
{
    tg__conv_geom g = conv_geom_of(s);
    int64_t nx = g.n * g.c * g.h * g.w, ny = g.n * g.o * g.oh * g.ow;
    int64_t nw = g.o * g.c * g.kh * g.kw;
    double *x = malloc(sizeof(double) * (size_t)nx), *dy = malloc(sizeof(double) * (size_t)ny);
    double *want = malloc(sizeof(double) * (size_t)nw);
    fill(x, nx, 31);
    fill(dy, ny, 32);
    conv_reference_grads(&g, x, NULL, dy, NULL, want);
    void *tx = typed(x, nx, f64), *tdy = typed(dy, ny, f64);
    void *got = malloc((size_t)nw * 8), *via = malloc((size_t)nw * 8);
    memset(got, 0x7f, (size_t)nw * 8); /* overwritten, not accumulated into */
    tg__conv_wgrad_set_chunk_bytes(chunk);
    tg_dtype dt = f64 ? TG_FLOAT64 : TG_FLOAT32;
    CHECK_OK(tg__conv_wgrad_gemm(dt, &g, tdy, tx, got));
    double worst = 0, fan = (double)(g.n * g.oh * g.ow);
    double tol = (f64 ? 1e-12 : 3e-6) * fan;
    for (int64_t i = 0; i < nw; i++) {
        double v = f64 ? ((double *)got)[i] : ((float *)got)[i], e = fabs(v - want[i]);
        worst = e > worst || e != e ? e : worst;
    }
    tt_checks++;
    if (!(worst <= tol))
        tt_fail(__FILE__, __LINE__, "%s n%lld c%lld o%lld k%lldx%lld chunk %lld: worst %g (tol %g)",
                f64 ? "f64" : "f32", (long long)s->n, (long long)s->c, (long long)s->o,
                (long long)s->kh, (long long)s->kw, (long long)chunk, worst, tol);
    if (tg__conv_wgrad_gemm_wanted(&g)) { /* through the entry point: this path's bits */
        CHECK_OK(tg__conv2d_grad_weight(dt, &g, tdy, tx, via));
        CHECK(memcmp(via, got, (size_t)nw * (f64 ? 8 : 4)) == 0);
    }
    tg__conv_wgrad_set_chunk_bytes((int64_t)8 << 20);
    free(x), free(dy), free(want), free(tx), free(tdy), free(got), free(via);
}

static void test_every_shape(void)
{
    const int64_t chunks[] = {1, 40000, (int64_t)8 << 20}; /* one image, some, all */
    for (int threads = 1; threads <= 2; threads++) {
        tg_set_num_threads(threads);
        for (size_t i = 0; i < sizeof grid / sizeof *grid; i++)
            for (int c = 0; c < 3; c++)
                for (int f64 = 0; f64 < 2; f64++)
                    check(&grid[i], f64, chunks[c]);
    }
    tg_set_num_threads(2);
}

/* which layers come here: many weights, one group */
static void test_choice(void)
{
    shape resnet = {1, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1, 1, 1};
    shape lenet2 = {64, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0, 1, 1};
    shape resnet_l1 = {1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1};
    tg__conv_geom g = conv_geom_of(&resnet);
    CHECK(tg__conv_wgrad_gemm_wanted(&g));
    g.groups = 2;
    CHECK(!tg__conv_wgrad_gemm_wanted(&g));
    float one = 1;
    CHECK(tg__conv_wgrad_gemm(TG_FLOAT32, &g, &one, &one, &one) == TG_ERR_ARG);
    g = conv_geom_of(&lenet2);
    CHECK(!tg__conv_wgrad_gemm_wanted(&g));
    g = conv_geom_of(&resnet_l1); /* the direct kernels' accumulators still fit */
    CHECK(!tg__conv_wgrad_gemm_wanted(&g));
}

int main(void)
{
    RUN(test_every_shape);
    RUN(test_choice);
    return tt_finish();
}
