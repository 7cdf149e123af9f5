/* Tests for 2-D pooling: max_pool2d, avg_pool2d, global_avg_pool2d against
 * naive double-precision references with PyTorch's semantics, their
 * gradients (and gradients of gradients), and their error paths. */
#include "harness.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- reference ------------------------------------------------------------------ */
/* PyTorch's output size: windows of the padded input; with ceil_mode a
 * partial last window counts when it starts inside the input or left pad */
static int64_t ref_out(int64_t in, int k, int s, int p, bool ceil_mode)
{
    int64_t span = in + 2 * p - k;
    if (span < 0)
        return ceil_mode && span > -s ? 1 : 0;
    int64_t n = span / s + 1;
    if (ceil_mode && span % s != 0) {
        n++;
        if ((n - 1) * s >= in + p)
            n--;
    }
    return n;
}

/* naive pooling in double: x [N, C, H, W] values -> out (max or avg) */
static void ref_pool(const double *x, int64_t N, int64_t C, int64_t H, int64_t W,
                     const tg_pool2d_opts *o, bool is_max, double *out, int64_t *OH,
                     int64_t *OW)
{
    int sh = o->stride[0] ? o->stride[0] : o->kernel[0];
    int sw = o->stride[1] ? o->stride[1] : o->kernel[1];
    *OH = ref_out(H, o->kernel[0], sh, o->padding[0], o->ceil_mode);
    *OW = ref_out(W, o->kernel[1], sw, o->padding[1], o->ceil_mode);
    for (int64_t p = 0; p < N * C; p++)
        for (int64_t i = 0; i < *OH; i++)
            for (int64_t j = 0; j < *OW; j++) {
                double best = -INFINITY, sum = 0;
                int64_t cnt = 0, padded = 0;
                for (int a = 0; a < o->kernel[0]; a++)
                    for (int b = 0; b < o->kernel[1]; b++) {
                        int64_t h = i * sh - o->padding[0] + a;
                        int64_t w = j * sw - o->padding[1] + b;
                        if (h < H + o->padding[0] && w < W + o->padding[1])
                            padded++;
                        if (h < 0 || w < 0 || h >= H || w >= W)
                            continue;
                        double v = x[p * H * W + h * W + w];
                        best = v > best ? v : best;
                        sum += v;
                        cnt++;
                    }
                out[(p * *OH + i) * *OW + j] =
                    is_max ? best : sum / (double)(o->count_include_pad ? padded : cnt);
            }
}

static double *values_of(tg_tensor *t)
{
    double *v = malloc((size_t)tg_numel(t) * sizeof *v);
    tg_copy_to(t, TG_FLOAT64, v);
    return v;
}

/* ---- forward ----------------------------------------------------------------------- */
typedef struct cfg {
    int64_t H, W;
    tg_pool2d_opts o;
} cfg;

static const cfg configs[] = {
    {6, 6, {{2, 2}, {0, 0}, {0, 0}, false, true}},
    {7, 5, {{2, 2}, {2, 2}, {0, 0}, true, true}},
    {7, 7, {{3, 3}, {2, 2}, {1, 1}, false, true}},
    {7, 7, {{3, 3}, {2, 2}, {1, 1}, false, false}},
    {6, 8, {{3, 2}, {2, 1}, {1, 1}, true, true}},
    {6, 8, {{3, 2}, {2, 1}, {1, 1}, true, false}},
    {3, 3, {{2, 2}, {2, 2}, {1, 1}, true, false}},
    {5, 4, {{4, 4}, {3, 3}, {2, 1}, true, true}},
    {4, 4, {{1, 1}, {1, 1}, {0, 0}, false, true}},
};
#define N_CONFIGS (int)(sizeof configs / sizeof configs[0])

static void test_forward_vs_reference(void)
{
    for (int dt = TG_FLOAT32; dt <= TG_FLOAT64; dt++)
        for (int k = 0; k < N_CONFIGS; k++) {
            const cfg *c = &configs[k];
            int64_t shape[4] = {2, 3, c->H, c->W};
            tg_tensor *x = tg_cast(tt_rand(4, shape, -2, 2), (tg_dtype)dt);
            double *xv = values_of(x);
            double ref[2 * 3 * 8 * 8];
            int64_t OH, OW;
            for (int is_max = 0; is_max < 2; is_max++) {
                ref_pool(xv, 2, 3, c->H, c->W, &c->o, is_max, ref, &OH, &OW);
                tg_tensor *y = is_max ? tg_max_pool2d(x, &c->o) : tg_avg_pool2d(x, &c->o);
                CHECK_SHAPE(y, 2, 3, OH, OW);
                CHECK(y && tg_dtype_of(y) == (tg_dtype)dt);
                CHECK_TENSOR(y, ref, dt == TG_FLOAT32 ? 1e-5 : 1e-12);
            }
            free(xv);
        }
}

static void test_hand_computed(void)
{
    double v[16];
    for (int i = 0; i < 16; i++)
        v[i] = i;
    tg_tensor *x = tt_tensor(TG_FLOAT32, 4, (int64_t[]){1, 1, 4, 4}, v);
    tg_pool2d_opts o = {{2, 2}, {0, 0}, {0, 0}, false, true};
    CHECK_TENSOR(tg_max_pool2d(x, &o), ((double[]){5, 7, 13, 15}), 0);
    CHECK_TENSOR(tg_avg_pool2d(x, &o), ((double[]){2.5, 4.5, 10.5, 12.5}), 1e-6);
    /* 3x3 stride 1 pad 1: the corner window holds 0 1 4 5 */
    tg_pool2d_opts p = {{3, 3}, {1, 1}, {1, 1}, false, true};
    tg_tensor *with = tg_avg_pool2d(x, &p);
    p.count_include_pad = false;
    tg_tensor *without = tg_avg_pool2d(x, &p);
    CHECK_NEAR(tg_get(with, (int64_t[]){0, 0, 0, 0}), 10.0 / 9.0, 1e-6);
    CHECK_NEAR(tg_get(without, (int64_t[]){0, 0, 0, 0}), 10.0 / 4.0, 1e-6);
    CHECK_NEAR(tg_get(with, (int64_t[]){0, 0, 1, 1}), 45.0 / 9.0, 1e-6);
    /* ceil_mode: 5 wide, 2x2 stride 2 gives 3 with the last window partial */
    tg_tensor *x5 = tt_tensor(TG_FLOAT64, 4, (int64_t[]){1, 1, 1, 5},
                              (double[]){1, 2, 3, 4, 5});
    tg_pool2d_opts q = {{1, 2}, {1, 2}, {0, 0}, true, true};
    CHECK_TENSOR(tg_max_pool2d(x5, &q), ((double[]){2, 4, 5}), 0);
    CHECK_TENSOR(tg_avg_pool2d(x5, &q), ((double[]){1.5, 3.5, 5}), 1e-12);
    q.ceil_mode = false;
    CHECK_SHAPE(tg_max_pool2d(x5, &q), 1, 1, 1, 2);
    /* ceil_mode must not add a window starting in the right padding */
    tg_tensor *x3 = tg_ones(TG_FLOAT32, 4, (int64_t[]){1, 1, 3, 3});
    tg_pool2d_opts r = {{2, 2}, {2, 2}, {1, 1}, true, true};
    CHECK_SHAPE(tg_max_pool2d(x3, &r), 1, 1, 2, 2);
}

static void test_nan_and_ties(void)
{
    tg_tensor *x = tt_tensor(TG_FLOAT64, 4, (int64_t[]){1, 1, 2, 4},
                             (double[]){1, NAN, 3, 3, 0, 2, 3, 3});
    tg_set_requires_grad(x, true);
    tg_pool2d_opts o = {{2, 2}, {0, 0}, {0, 0}, false, true};
    tg_tensor *y = tg_max_pool2d(x, &o);
    CHECK(y && isnan(tg_get(y, (int64_t[]){0, 0, 0, 0})));
    CHECK_NEAR(tg_get(y, (int64_t[]){0, 0, 0, 1}), 3, 0);
    /* ties: the gradient goes to the first maximum in the window */
    CHECK_OK(tg_backward(tg_sum(tg_slice(y, 3, 1, 2, 1), 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){0, 0, 1, 0, 0, 0, 0, 0}), 0);
    /* infinities (inf - inf is NaN inside the 2x2 fast path's NaN test) */
    tg_tensor *xi = tt_tensor(TG_FLOAT32, 4, (int64_t[]){1, 1, 2, 4},
                              (double[]){-INFINITY, 1, -INFINITY, -INFINITY,
                                         INFINITY, 2, -INFINITY, -INFINITY});
    tg_tensor *yi = tg_max_pool2d(xi, &o);
    CHECK_TENSOR(yi, ((double[]){INFINITY, -INFINITY}), 0);
    tg_set_requires_grad(xi, true);
    CHECK_OK(tg_backward(tg_sum(tg_max_pool2d(xi, &o), 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(xi), ((double[]){0, 0, 1, 0, 1, 0, 0, 0}), 0);
}

static void test_noncontiguous_input(void)
{
    tg_tensor *x = tt_rand(4, (int64_t[]){2, 5, 6, 3}, -1, 1);
    tg_tensor *xp = tg_permute(x, (const int[]){0, 3, 1, 2}); /* [2, 3, 5, 6] */
    tg_tensor *xc = tg_contiguous(xp);
    tg_pool2d_opts o = {{2, 3}, {1, 2}, {1, 1}, true, false};
    double *a = values_of(tg_max_pool2d(xp, &o)), *b = values_of(tg_avg_pool2d(xp, &o));
    tg_tensor *ma = tg_max_pool2d(xc, &o), *mb = tg_avg_pool2d(xc, &o);
    CHECK_TENSOR(ma, a, 0);
    CHECK_TENSOR(mb, b, 1e-15);
    free(a);
    free(b);
}

static void test_global_avg_pool(void)
{
    tg_tensor *x = tt_rand(4, (int64_t[]){2, 3, 4, 5}, -1, 1);
    double *xv = values_of(x), ref[6];
    for (int p = 0; p < 6; p++) {
        ref[p] = 0;
        for (int i = 0; i < 20; i++)
            ref[p] += xv[p * 20 + i] / 20.0;
    }
    tg_tensor *y = tg_global_avg_pool2d(x);
    CHECK_SHAPE(y, 2, 3, 1, 1);
    CHECK_TENSOR(y, ref, 1e-12);
    CHECK_TENSOR(tg_global_avg_pool2d(tg_cast(x, TG_FLOAT32)), ref, 1e-6);
    free(xv);
}

/* ---- gradients ---------------------------------------------------------------------- */
static tg_tensor *f_max(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return tg_max_pool2d(in[0], user);
}

static tg_tensor *f_avg(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return tg_avg_pool2d(in[0], user);
}

static tg_tensor *f_gap(int n, tg_tensor *const *in, void *user)
{
    (void)n, (void)user;
    return tg_global_avg_pool2d(in[0]);
}

static void test_gradcheck(void)
{
    for (int k = 0; k < N_CONFIGS; k++) {
        const cfg *c = &configs[k];
        tg_tensor *in[1] = {tt_rand(4, (int64_t[]){1, 2, c->H, c->W}, -1, 1)};
        tg_pool2d_opts o = c->o;
        CHECK_GRADCHECK(f_max, &o, 1, in);
        CHECK_GRADCHECK(f_avg, &o, 1, in);
    }
    tg_tensor *in[1] = {tt_rand(4, (int64_t[]){2, 2, 3, 4}, -1, 1)};
    CHECK_GRADCHECK(f_gap, NULL, 1, in);
}

typedef struct gg {
    tg_gradcheck_fn f;
    void *user;
    tg_tensor *r;
} gg;

/* gradient of the gradient w.r.t. the upstream gradient r: exercises
 * max_pool2d_grad / max_pool2d_select and avg_pool2d_grad's own rules */
static tg_tensor *f_grad_wrt_r(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    gg *g = user;
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *x = tg_detach(in[0]);
    tg_set_requires_grad(x, true);
    tg_tensor *y = g->f(1, &x, g->user), *res = NULL, *out = NULL;
    if (y && tg_autograd_grad(1, &y, &in[1], 1, &x, &res, true, true) == TG_OK)
        out = tg_mul(tg_mul_scalar(res, 1.0), g->r);
    tg_release(res);
    tg_set_grad_enabled(was);
    return out;
}

static void test_grad_of_grad(void)
{
    tg_pool2d_opts o = {{3, 2}, {2, 1}, {1, 1}, true, false};
    int64_t xs[4] = {1, 2, 5, 4};
    tg_tensor *x = tt_rand(4, xs, -1, 1);
    tg_no_grad_begin();
    tg_tensor *y0 = tg_max_pool2d(x, &o);
    tg_no_grad_end();
    const int64_t *ys = tg_shape(y0);
    /* gradient w.r.t. dy of the pooled gradient (max: select, avg: pooling) */
    for (int is_max = 0; is_max < 2; is_max++) {
        gg g = {is_max ? f_max : f_avg, &o, tt_rand(4, xs, -1, 1)};
        tg_set_requires_grad(g.r, false);
        tg_tensor *in[2] = {tg_detach(x), tt_rand(4, ys, -1, 1)};
        CHECK_GRADCHECK(f_grad_wrt_r, &g, 2, in);
    }
}

/* ---- LeNet's pooling: fast enough ---------------------------------------------------------- */
static void test_lenet_shapes(void)
{
    tg_generator *gen = tg_generator_new(7);
    tg_pool2d_opts o = {{2, 2}, {0, 0}, {0, 0}, false, true};
    int64_t s1[4] = {64, 6, 28, 28}, s2[4] = {64, 16, 10, 10};
    tg_tensor *a = tg_rand_uniform(gen, TG_FLOAT32, 4, s1, -1, 1);
    tg_tensor *b = tg_rand_uniform(gen, TG_FLOAT32, 4, s2, -1, 1);
    tg_set_requires_grad(a, true);
    tg_set_requires_grad(b, true);
    clock_t t0 = clock();
    for (int it = 0; it < 5; it++) {
        tg_scope_begin();
        tg_tensor *ya = tg_max_pool2d(a, &o), *yb = tg_max_pool2d(b, &o);
        CHECK_SHAPE(ya, 64, 6, 14, 14);
        CHECK_SHAPE(yb, 64, 16, 5, 5);
        CHECK_OK(tg_backward(tg_add(tg_sum(ya, 0, NULL, false), tg_sum(yb, 0, NULL, false)),
                             NULL, false));
        tg_scope_end();
    }
    double ms = 1000.0 * (double)(clock() - t0) / CLOCKS_PER_SEC / 5;
    printf("  lenet max_pool fwd+bwd: %.2f ms/iter (cpu time)\n", ms);
    /* every window of a gets exactly one unit of gradient per iteration */
    double total = 0;
    double *g = values_of(tg_grad(a));
    for (int64_t i = 0; i < tg_numel(a); i++)
        total += g[i];
    CHECK_NEAR(total, 5.0 * 64 * 6 * 14 * 14, 1e-3);
    free(g);
    tg_generator_free(gen);
}

/* ---- errors --------------------------------------------------------------------------------- */
/* inputs large enough for the pooling kernels to split over the threads:
 * forward against the reference, and every window's gradient */
static void test_large_parallel(void)
{
    int64_t s[4] = {8, 16, 90, 92}; /* over 1M elements, forward and back */
    tg_tensor *x = tt_rand(4, s, -1, 1);
    double *xv = values_of(x);
    double *ref = malloc(8 * 16 * 45 * 46 * sizeof *ref);
    tg_pool2d_opts o = {{2, 2}, {0, 0}, {0, 0}, false, true};
    int64_t OH, OW;
    for (int is_max = 0; is_max < 2; is_max++) {
        ref_pool(xv, 8, 16, 90, 92, &o, is_max, ref, &OH, &OW);
        tg_tensor *y = is_max ? tg_max_pool2d(x, &o) : tg_avg_pool2d(x, &o);
        CHECK_SHAPE(y, 8, 16, 45, 46);
        CHECK_TENSOR(y, ref, 1e-12);
        tg_tensor *g = NULL, *dy = tg_ones_like(y);
        CHECK_OK(tg_autograd_grad(1, &y, &dy, 1, &x, &g, false, false));
        CHECK_NEAR(tg_item(tg_sum(g, 0, NULL, false)), 8.0 * 16 * 45 * 46, 1e-6);
        tg_release(g);
    }
    free(ref);
    free(xv);
}

/* inference (no gradient: the values op, kernels/cpu/pool_max_values*):
 * ResNet-18's pooling after the stem, 3 x 3 windows at stride 2 with
 * padding 1, on planes of 112 x 112 and of odd sizes, float32 (the
 * vector kernels) and float64, against the reference */
static void test_resnet_values(void)
{
    static const int64_t shapes[][4] = {{2, 8, 112, 112}, {3, 5, 57, 75}, {1, 2, 9, 33}};
    tg_pool2d_opts o = {{3, 3}, {2, 2}, {1, 1}, false, true};
    for (int dt = TG_FLOAT32; dt <= TG_FLOAT64; dt++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            const int64_t *s = shapes[i];
            tg_tensor *x = tt_rand_dtype((tg_dtype)dt, 4, s, -3, 3);
            double *xv = values_of(x);
            int64_t OH, OW;
            double *ref = malloc((size_t)(s[0] * s[1] * (s[2] / 2 + 1) * (s[3] / 2 + 1)) *
                                 sizeof *ref);
            ref_pool(xv, s[0], s[1], s[2], s[3], &o, true, ref, &OH, &OW);
            tg_tensor *y = tg_max_pool2d(x, &o);
            CHECK_SHAPE(y, s[0], s[1], OH, OW);
            CHECK_TENSOR(y, ref, 0);
            free(ref);
            free(xv);
        }
}

static void test_errors(void)
{
    tg_tensor *x = tg_zeros(TG_FLOAT32, 4, (int64_t[]){1, 1, 4, 4});
    tg_pool2d_opts big = {{5, 5}, {0, 0}, {0, 0}, false, true};
    CHECK_ERROR(tg_max_pool2d(x, &big), TG_ERR_SHAPE, "padded input");
    CHECK_ERROR(tg_avg_pool2d(x, &big), TG_ERR_SHAPE, "padded input");
    tg_pool2d_opts big_pad = {{7, 7}, {1, 1}, {1, 1}, false, true};
    CHECK_ERROR(tg_max_pool2d(x, &big_pad), TG_ERR_SHAPE, "6x6");
    tg_pool2d_opts o = {{2, 2}, {0, 0}, {0, 0}, false, true};
    CHECK_ERROR(tg_max_pool2d(tg_zeros(TG_FLOAT32, 3, (int64_t[]){1, 4, 4}), &o),
                TG_ERR_SHAPE, "4-D");
    CHECK_ERROR(tg_avg_pool2d(tg_zeros(TG_FLOAT32, 5, (int64_t[]){1, 1, 1, 4, 4}), &o),
                TG_ERR_SHAPE, "[1, 1, 1, 4, 4]");
    CHECK_ERROR(tg_global_avg_pool2d(tg_zeros(TG_FLOAT32, 2, (int64_t[]){4, 4})),
                TG_ERR_SHAPE, "4-D");
    CHECK_ERROR(tg_max_pool2d(tg_zeros(TG_INT32, 4, (int64_t[]){1, 1, 4, 4}), &o),
                TG_ERR_DTYPE, "int32");
    tg_pool2d_opts pad = {{2, 2}, {0, 0}, {2, 2}, false, true};
    CHECK_ERROR(tg_max_pool2d(x, &pad), TG_ERR_ARG, "half the kernel");
    tg_pool2d_opts neg = {{2, 2}, {-1, 1}, {0, 0}, false, true};
    CHECK_ERROR(tg_avg_pool2d(x, &neg), TG_ERR_ARG, "positive");
    tg_pool2d_opts zero = {{0, 2}, {0, 0}, {0, 0}, false, true};
    CHECK_ERROR(tg_max_pool2d(x, &zero), TG_ERR_ARG, "kernel 0x2");
    CHECK_ERROR(tg_max_pool2d(x, NULL), TG_ERR_ARG, "opts");
    CHECK_ERROR(tg_max_pool2d(NULL, &o), TG_ERR_ARG, "NULL");
}

/* the backward ops check the argmax indices they are handed (both on one
 * thread and split over planes); a bad one fails the op with its value */
static void test_bad_indices(void)
{
    const tg_op_def *grad = tg_op_find("max_pool2d_grad");
    const tg_op_def *select = tg_op_find("max_pool2d_select");
    CHECK(grad && select);
    if (!grad || !select)
        return;
    int64_t small[4] = {1, 2, 2, 2}, large[4] = {512, 128, 2, 2}, hw[2] = {4, 4};
    tg_attr a = TG_AINTS("input_size", hw, 2);
    for (int big = 0; big < 2; big++) {
        const int64_t *s = big ? large : small;
        tg_tensor *dy = tg_ones(TG_FLOAT32, 4, s);
        tg_tensor *idx = tg_zeros(TG_INT64, 4, s);
        tg_tensor *in[2] = {dy, idx};
        CHECK(tg_op_call(grad, 2, in, &a, 1) != NULL);
        int64_t last = tg_numel(idx) - 1;
        tg_no_grad_begin();
        tg__store(TG_INT64, tg__elem_ptr(idx, last), 16);
        tg_no_grad_end();
        CHECK_ERROR(tg_op_call(grad, 2, in, &a, 1), TG_ERR_INDEX, "index 16");
        /* select reads a [.., 4, 4] source at the same indices */
        tg_tensor *src = tg_ones(TG_FLOAT32, 4, (int64_t[]){s[0], s[1], 4, 4});
        tg_tensor *sel[2] = {src, idx};
        CHECK_ERROR(tg_op_call(select, 2, sel, NULL, 0), TG_ERR_INDEX, "outside");
        tg_no_grad_begin();
        tg__store(TG_INT64, tg__elem_ptr(idx, last), -1);
        tg_no_grad_end();
        CHECK_ERROR(tg_op_call(grad, 2, in, &a, 1), TG_ERR_INDEX, "index -1");
    }
}

/* float32 2 x 2 average pooling and its gradient: every output the float expression
 * ((a + b) + c) + d) * 0.25 of its window, every input gradient 0 + dy / 4
 * inside a window and 0 in a leftover row or column, bit for bit, for
 * even and odd sizes, rows from 1 to 20 windows, with NaN, infinities
 * and signed zeros */
static void test_avg_2x2_planes(void)
{
    unsigned seed = 11;
    tg_pool2d_opts o = {{2, 2}, {2, 2}, {0, 0}, false, false};
    /* rows shorter than a vector group (4 or 8 windows; a group each,
     * running into the next row) to several groups with a tail */
    static const int64_t widths[] = {2, 3, 4, 5, 6, 7, 9, 11, 13, 16, 17, 18, 19, 28, 29, 34, 40};
    for (int64_t H = 2; H <= 11; H++)
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
            const int64_t W = widths[wi];
            const int64_t P = 2 * 5, OH = H / 2, OW = W / 2, n = P * H * W, m = P * OH * OW;
            double *v = malloc((size_t)n * sizeof *v), *d = malloc((size_t)m * sizeof *d);
            for (int64_t i = 0; i < n + m; i++) {
                seed = seed * 1103515245u + 12345u;
                unsigned r = (seed >> 8) % 61;
                double x = r == 0 ? NAN : r == 1 ? -INFINITY : r == 2 ? -0.0
                         : (float)(((double)r - 30) / 7.0);
                if (i < n)
                    v[i] = x;
                else
                    d[i - n] = x;
            }
            tg_tensor *x = tt_tensor(TG_FLOAT32, 4, (int64_t[]){2, 5, H, W}, v);
            tg_tensor *dy = tt_tensor(TG_FLOAT32, 4, (int64_t[]){2, 5, OH, OW}, d);
            tg_set_requires_grad(x, true);
            tg_tensor *y = tg_avg_pool2d(x, &o), *dx = NULL;
            CHECK(tg_autograd_grad(1, &y, &dy, 1, &x, &dx, false, false) == TG_OK);
            const float *yv = y ? tg_data(y) : NULL, *gv = dx ? tg_data(dx) : NULL;
            int64_t bad = 0;
            for (int64_t p = 0; yv && gv && p < P; p++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++) {
                        float want_g = 0.0f;
                        if (h < 2 * OH && w < 2 * OW)
                            want_g = 0.0f + (float)d[(p * OH + h / 2) * OW + w / 2] / 4.0f;
                        float got_g = gv[(p * H + h) * W + w];
                        bad += memcmp(&want_g, &got_g, sizeof got_g) != 0 &&
                               !(want_g != want_g && got_g != got_g);
                        if (h % 2 || w % 2 || h >= 2 * OH || w >= 2 * OW)
                            continue;
                        const double *q = v + (p * H + h) * W + w;
                        float want = ((float)q[0] + (float)q[1] + (float)q[W] + (float)q[W + 1]) *
                                     0.25f;
                        float got = yv[(p * OH + h / 2) * OW + w / 2];
                        bad += memcmp(&want, &got, sizeof got) != 0 && !(want != want && got != got);
                    }
            if (!yv || !gv || bad)
                tt_fail(__FILE__, __LINE__, "avg_pool2d 2x2 of [2, 5, %lld, %lld]: %lld values differ",
                        (long long)H, (long long)W, (long long)bad);
            tt_checks++;
            tg_release(dx); /* tg_autograd_grad's results are the caller's */
            free(v);
            free(d);
        }
}

/* float32 average gradients of planes that 2 x 2 windows would tile (H =
 * 2 OH, W = 2 OW) but whose windows are not 2 x 2 against the float64
 * path: the vector 2 x 2 gradient once took them and divided by 4 */
static void test_avg_grad_f32_not_2x2(void)
{
    static const tg_pool2d_opts opts[] = {
        {{3, 3}, {2, 2}, {1, 1}, false, true},
        {{3, 3}, {2, 2}, {1, 1}, false, false},
        {{3, 3}, {2, 2}, {0, 0}, true, true},
        {{2, 2}, {2, 2}, {0, 0}, false, true}, /* the vector kernel's own case */
    };
    for (int k = 0; k < (int)(sizeof opts / sizeof opts[0]); k++) {
        tg_tensor *x64 = tt_rand(4, (int64_t[]){2, 3, 8, 8}, -1, 1);
        tg_tensor *x32 = tg_cast(x64, TG_FLOAT32), *dx[2], *dy64 = NULL;
        tg_tensor *xs[2] = {x32, x64};
        for (int i = 0; i < 2; i++) {
            tg_set_requires_grad(xs[i], true);
            tg_tensor *y = tg_avg_pool2d(xs[i], &opts[k]);
            if (!dy64)
                dy64 = tt_rand(tg_ndim(y), tg_shape(y), -1, 1);
            tg_tensor *dy = tg_cast(dy64, tg_dtype_of(y));
            CHECK_OK(tg_autograd_grad(1, &y, &dy, 1, &xs[i], &dx[i], false, false));
        }
        CHECK(tt_rel_diff(dx[0], dx[1], 1) < 1e-5);
        tg_release(dx[0]);
        tg_release(dx[1]);
    }
}

int main(void)
{
    RUN(test_forward_vs_reference);
    RUN(test_hand_computed);
    RUN(test_avg_2x2_planes);
    RUN(test_nan_and_ties);
    RUN(test_noncontiguous_input);
    RUN(test_global_avg_pool);
    RUN(test_gradcheck);
    RUN(test_avg_grad_f32_not_2x2);
    RUN(test_grad_of_grad);
    RUN(test_lenet_shapes);
    RUN(test_large_parallel);
    RUN(test_resnet_values);
    RUN(test_errors);
    RUN(test_bad_indices);
    return tt_finish();
}
