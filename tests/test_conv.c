/* conv2d: forward and both gradients against a naive direct convolution
 * in doubles for many option combinations (stride, padding, dilation,
 * groups, bias, non-square kernels, strided inputs, both float dtypes,
 * the parallel batch split), gradcheck incl. grad of grad, and errors. */
#include "harness.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>

static tg_generator *rng;

static tg_tensor *rnd(tg_dtype dt, int ndim, const int64_t *shape)
{
    if (!rng)
        rng = tg_generator_new(7);
    return tg_rand_uniform(rng, dt, ndim, shape, -1, 1);
}

static double *values(const tg_tensor *t)
{
    double *v = malloc((size_t)(tg_numel(t) ? tg_numel(t) : 1) * sizeof *v);
    tg_copy_to(t, TG_FLOAT64, v);
    return v;
}

typedef struct ref {
    int64_t oh, ow;
    double *y, *dx, *dw, *db; /* forward, and gradients for upstream dy */
} ref;

/* direct convolution and its adjoints, straight from the definition */
static ref naive_conv(const tg_tensor *x, const tg_tensor *w, const tg_tensor *b,
                      const tg_conv2d_opts *o, const double *dy)
{
    const int64_t *xs = tg_shape(x), *ws = tg_shape(w);
    int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
    int64_t O = ws[0], cg = ws[1], kh = ws[2], kw = ws[3], og = O / o->groups;
    ref r;
    r.oh = (H + 2 * o->padding[0] - o->dilation[0] * (kh - 1) - 1) / o->stride[0] + 1;
    r.ow = (W + 2 * o->padding[1] - o->dilation[1] * (kw - 1) - 1) / o->stride[1] + 1;
    double *xv = values(x), *wv = values(w), *bv = b ? values(b) : NULL;
    r.y = calloc((size_t)(N * O * r.oh * r.ow + 1), sizeof(double));
    r.dx = calloc((size_t)(N * C * H * W + 1), sizeof(double));
    r.dw = calloc((size_t)(O * cg * kh * kw + 1), sizeof(double));
    r.db = calloc((size_t)(O + 1), sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t oy = 0; oy < r.oh; oy++)
                for (int64_t ox = 0; ox < r.ow; ox++) {
                    int64_t yi = ((n * O + oc) * r.oh + oy) * r.ow + ox;
                    double acc = bv ? bv[oc] : 0, g = dy ? dy[yi] : 0;
                    r.db[oc] += g;
                    for (int64_t ci = 0; ci < cg; ci++) {
                        int64_t c = oc / og * cg + ci;
                        for (int64_t i = 0; i < kh; i++)
                            for (int64_t j = 0; j < kw; j++) {
                                int64_t iy = oy * o->stride[0] - o->padding[0] + i * o->dilation[0];
                                int64_t ix = ox * o->stride[1] - o->padding[1] + j * o->dilation[1];
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                    continue;
                                int64_t xi = ((n * C + c) * H + iy) * W + ix;
                                int64_t wi = ((oc * cg + ci) * kh + i) * kw + j;
                                acc += xv[xi] * wv[wi];
                                r.dx[xi] += wv[wi] * g;
                                r.dw[wi] += xv[xi] * g;
                            }
                    }
                    r.y[yi] = acc;
                }
    free(xv);
    free(wv);
    free(bv);
    return r;
}

static void ref_free(ref *r)
{
    free(r->y);
    free(r->dx);
    free(r->dw);
    free(r->db);
}

/* forward and all three gradients of one configuration against naive_conv */
static void check_conv(tg_dtype dt, tg_tensor *x, tg_tensor *w, bool with_bias,
                       const tg_conv2d_opts *o, const char *what)
{
    double tol = dt == TG_FLOAT32 ? 2e-4 : 1e-10;
    tg_tensor *b = with_bias ? rnd(dt, 1, (int64_t[]){tg_shape(w)[0]}) : NULL;
    tg_set_requires_grad(x, true);
    tg_set_requires_grad(w, true);
    if (b)
        tg_set_requires_grad(b, true);
    tg_tensor *y = tg_conv2d(x, w, b, o);
    if (!y) {
        tt_fail(__FILE__, __LINE__, "%s: conv2d failed: %s", what, tg_last_error());
        return;
    }
    tg_tensor *dy = rnd(dt, 4, tg_shape(y));
    double *dyv = values(dy);
    ref r = naive_conv(x, w, b, o, dyv);
    int64_t N = tg_shape(x)[0], O = tg_shape(w)[0];
    tt_check_shape(y, (int64_t[]){N, O, r.oh, r.ow}, 4, what, __FILE__, __LINE__);
    tt_check_tensor(y, r.y, tol, what, __FILE__, __LINE__);
    tg_tensor *in[3] = {x, w, b}, *g[3] = {NULL, NULL, NULL};
    CHECK_OK(tg_autograd_grad(1, &y, &dy, b ? 3 : 2, in, g, false, false));
    tt_check_tensor(g[0], r.dx, tol, "dx", __FILE__, __LINE__);
    tt_check_tensor(g[1], r.dw, tol * 10, "dw", __FILE__, __LINE__);
    if (b)
        tt_check_tensor(g[2], r.db, tol * 10, "db", __FILE__, __LINE__);
    for (int i = 0; i < 3; i++)
        tg_release(g[i]);
    ref_free(&r);
    free(dyv);
}

static tg_conv2d_opts opts(int sh, int sw, int ph, int pw, int dh, int dw, int groups)
{
    return (tg_conv2d_opts){{sh, sw}, {ph, pw}, {dh, dw}, groups};
}

static void test_forward_backward_combos(void)
{
    static const int combos[][7] = {
        /* sh sw ph pw dh dw groups */
        {1, 1, 0, 0, 1, 1, 1}, {2, 2, 0, 0, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1},
        {1, 1, 1, 2, 1, 1, 1}, {1, 1, 0, 0, 2, 2, 1}, {1, 1, 2, 1, 2, 1, 1},
        {1, 1, 0, 0, 1, 1, 2}, {2, 1, 1, 0, 1, 2, 2}, {2, 2, 1, 1, 2, 2, 2},
        {3, 2, 2, 2, 1, 1, 4}, {1, 2, 0, 1, 1, 1, 1}};
    static const int64_t kernels[][2] = {{3, 3}, {3, 2}, {1, 4}, {2, 1}};
    tg_dtype dts[2] = {TG_FLOAT32, TG_FLOAT64};
    char what[128];
    for (int d = 0; d < 2; d++)
        for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++)
            for (int k = 0; k < 4; k++) {
                const int *v = combos[c];
                tg_conv2d_opts o = opts(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
                int64_t C = 4, O = v[6] == 4 ? 8 : 6;
                tg_tensor *x = rnd(dts[d], 4, (int64_t[]){2, C, 7, 8});
                tg_tensor *w = rnd(dts[d], 4, (int64_t[]){O, C / v[6], kernels[k][0],
                                                          kernels[k][1]});
                snprintf(what, sizeof what, "%s combo %zu kernel %d",
                         tg_dtype_name(dts[d]), c, k);
                check_conv(dts[d], x, w, (c + (size_t)k) % 2 == 0, &o, what);
            }
}

static void test_special_shapes(void)
{
    tg_conv2d_opts one = opts(1, 1, 0, 0, 1, 1, 1), g2 = opts(1, 1, 0, 0, 1, 1, 2);
    /* 1x1 kernels (no im2col), with and without groups */
    check_conv(TG_FLOAT32, rnd(TG_FLOAT32, 4, (int64_t[]){3, 4, 5, 5}),
               rnd(TG_FLOAT32, 4, (int64_t[]){6, 4, 1, 1}), true, &one, "1x1");
    check_conv(TG_FLOAT64, rnd(TG_FLOAT64, 4, (int64_t[]){3, 4, 5, 5}),
               rnd(TG_FLOAT64, 4, (int64_t[]){6, 2, 1, 1}), false, &g2, "1x1 groups");
    /* the kernel as large as the padded input: a 1x1 output */
    tg_conv2d_opts p1 = opts(1, 1, 1, 1, 1, 1, 1);
    check_conv(TG_FLOAT64, rnd(TG_FLOAT64, 4, (int64_t[]){1, 2, 3, 3}),
               rnd(TG_FLOAT64, 4, (int64_t[]){3, 2, 5, 5}), true, &p1, "full");
    /* stride larger than the kernel: input rows the output never sees */
    tg_conv2d_opts s3 = opts(3, 3, 0, 0, 1, 1, 1);
    check_conv(TG_FLOAT64, rnd(TG_FLOAT64, 4, (int64_t[]){2, 1, 8, 7}),
               rnd(TG_FLOAT64, 4, (int64_t[]){2, 1, 2, 2}), false, &s3, "gaps");
    /* depthwise */
    tg_conv2d_opts dw = opts(1, 1, 1, 1, 1, 1, 3);
    check_conv(TG_FLOAT32, rnd(TG_FLOAT32, 4, (int64_t[]){2, 3, 6, 6}),
               rnd(TG_FLOAT32, 4, (int64_t[]){3, 1, 3, 3}), true, &dw, "depthwise");
    /* opts NULL means stride 1, no padding */
    tg_tensor *x = rnd(TG_FLOAT32, 4, (int64_t[]){1, 2, 5, 5});
    tg_tensor *w = rnd(TG_FLOAT32, 4, (int64_t[]){3, 2, 3, 3});
    CHECK_SHAPE(tg_conv2d(x, w, NULL, NULL), 1, 3, 3, 3);
    /* an empty batch */
    CHECK_SHAPE(tg_conv2d(rnd(TG_FLOAT32, 4, (int64_t[]){0, 2, 5, 5}), w, NULL, NULL),
                0, 3, 3, 3);
}

static void test_lenet_shapes(void)
{
    /* the LeNet-5 layers at a batch that takes the parallel path */
    tg_conv2d_opts p2 = opts(1, 1, 2, 2, 1, 1, 1), p0 = opts(1, 1, 0, 0, 1, 1, 1);
    check_conv(TG_FLOAT32, rnd(TG_FLOAT32, 4, (int64_t[]){16, 1, 28, 28}),
               rnd(TG_FLOAT32, 4, (int64_t[]){6, 1, 5, 5}), true, &p2, "lenet conv1");
    check_conv(TG_FLOAT32, rnd(TG_FLOAT32, 4, (int64_t[]){16, 6, 14, 14}),
               rnd(TG_FLOAT32, 4, (int64_t[]){16, 6, 5, 5}), true, &p0, "lenet conv2");
}

static void test_strided_inputs(void)
{
    /* non-contiguous x and w (permuted, sliced), mixed float dtypes */
    tg_conv2d_opts o = opts(1, 2, 1, 1, 1, 1, 1);
    tg_tensor *xb = rnd(TG_FLOAT64, 4, (int64_t[]){2, 6, 7, 3});
    tg_tensor *x = tg_detach(tg_permute(xb, (int[]){0, 3, 1, 2})); /* [2,3,6,7] */
    tg_tensor *wb = rnd(TG_FLOAT64, 4, (int64_t[]){4, 3, 3, 6});
    tg_tensor *w = tg_detach(tg_slice(wb, 3, 0, 6, 2)); /* [4,3,3,3] */
    CHECK(!tg_is_contiguous(x) && !tg_is_contiguous(w));
    check_conv(TG_FLOAT64, x, w, true, &o, "strided");
    tg_tensor *y = tg_conv2d(tg_cast(x, TG_FLOAT32), w, NULL, &o);
    CHECK(y && tg_dtype_of(y) == TG_FLOAT64);
}

/* ---- gradcheck --------------------------------------------------------------- */
static tg_tensor *f_conv(int n, tg_tensor *const *in, void *user)
{
    return tg_conv2d(in[0], in[1], n > 2 ? in[2] : NULL, user);
}

static void test_gradcheck(void)
{
    static const int combos[][7] = {
        {1, 1, 0, 0, 1, 1, 1}, {2, 2, 1, 1, 1, 1, 1}, {1, 1, 1, 0, 2, 1, 1},
        {2, 1, 1, 2, 1, 2, 2}, {1, 1, 0, 0, 1, 1, 2}};
    for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++) {
        const int *v = combos[c];
        tg_conv2d_opts o = opts(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
        tg_tensor *in[3] = {tt_rand(4, (int64_t[]){2, 2, 5, 4}, -1, 1),
                            tt_rand(4, (int64_t[]){2, 2 / v[6], 2, 3}, -1, 1),
                            tt_rand(1, (int64_t[]){2}, -1, 1)};
        CHECK_GRADCHECK(f_conv, &o, c % 2 ? 2 : 3, in);
    }
}

/* first derivatives of sum(conv(x, w)^2), differentiable: their gradcheck
 * checks conv2d_grad_input / conv2d_grad_weight's own gradients */
typedef struct gg_case {
    tg_conv2d_opts o;
    int which;
} gg_case;

static tg_tensor *f_conv_grad(int n, tg_tensor *const *in, void *user)
{
    const gg_case *gc = user;
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *y = tg_conv2d(in[0], in[1], NULL, &gc->o);
    tg_tensor *loss = tg_sum(tg_mul(y, y), 0, NULL, false);
    tg_tensor *g[2] = {NULL, NULL};
    tg_status s = tg_autograd_grad(1, &loss, NULL, n, in, g, true, true);
    tg_tensor *r = s == TG_OK ? tg_mul_scalar(g[gc->which], 1.0) : NULL;
    tg_set_grad_enabled(was);
    tg_release(g[0]);
    tg_release(g[1]);
    return r;
}

static void test_double_backward(void)
{
    tg_conv2d_opts os[2] = {opts(1, 1, 0, 0, 1, 1, 1), opts(2, 1, 1, 1, 1, 2, 2)};
    for (int k = 0; k < 2; k++)
        for (int which = 0; which < 2; which++) {
            gg_case gc = {os[k], which};
            tg_tensor *in[2] = {tt_rand(4, (int64_t[]){1, 2, 4, 5}, -1, 1),
                                tt_rand(4, (int64_t[]){2, 2 / os[k].groups, 2, 2}, -1, 1)};
            CHECK_GRADCHECK(f_conv_grad, &gc, 2, in);
        }
}

/* ---- errors -------------------------------------------------------------------- */
static void test_errors(void)
{
    tg_tensor *x = rnd(TG_FLOAT32, 4, (int64_t[]){1, 4, 6, 6});
    tg_tensor *w = rnd(TG_FLOAT32, 4, (int64_t[]){6, 4, 3, 3});
    tg_conv2d_opts g2 = opts(1, 1, 0, 0, 1, 1, 2), g3 = opts(1, 1, 0, 0, 1, 1, 3);
    CHECK_ERROR(tg_conv2d(x, rnd(TG_FLOAT32, 4, (int64_t[]){6, 3, 3, 3}), NULL, NULL),
                TG_ERR_SHAPE, "has 4 channels but weight [6, 3, 3, 3] expects 3");
    CHECK_ERROR(tg_conv2d(x, w, NULL, &g2), TG_ERR_SHAPE, "expects 8");
    CHECK_ERROR(tg_conv2d(x, rnd(TG_FLOAT32, 4, (int64_t[]){6, 1, 3, 3}), NULL, &g3),
                TG_ERR_SHAPE, "groups = 3 must divide");
    CHECK_ERROR(tg_conv2d(x, rnd(TG_FLOAT32, 4, (int64_t[]){5, 2, 3, 3}), NULL, &g2),
                TG_ERR_SHAPE, "must divide");
    CHECK_ERROR(tg_conv2d(rnd(TG_FLOAT32, 3, (int64_t[]){4, 6, 6}), w, NULL, NULL),
                TG_ERR_SHAPE, "input must be 4-D");
    CHECK_ERROR(tg_conv2d(x, rnd(TG_FLOAT32, 2, (int64_t[]){6, 36}), NULL, NULL),
                TG_ERR_SHAPE, "weight must be 4-D");
    CHECK_ERROR(tg_conv2d(tg_cast(x, TG_INT32), w, NULL, NULL), TG_ERR_DTYPE, "int32");
    CHECK_ERROR(tg_conv2d(x, tg_cast(w, TG_UINT8), NULL, NULL), TG_ERR_DTYPE, "uint8");
    CHECK_ERROR(tg_conv2d(x, w, rnd(TG_FLOAT32, 1, (int64_t[]){5}), NULL), TG_ERR_SHAPE,
                "bias");
    CHECK_ERROR(tg_conv2d(x, rnd(TG_FLOAT32, 4, (int64_t[]){6, 4, 7, 3}), NULL, NULL),
                TG_ERR_SHAPE, "larger than the padded input");
    tg_conv2d_opts bad = opts(0, 1, 0, 0, 1, 1, 1);
    CHECK_ERROR(tg_conv2d(x, w, NULL, &bad), TG_ERR_ARG, "stride");
    bad = opts(1, 1, -1, 0, 1, 1, 1);
    CHECK_ERROR(tg_conv2d(x, w, NULL, &bad), TG_ERR_ARG, "padding");
    bad = opts(1, 1, 0, 0, 1, 0, 1);
    CHECK_ERROR(tg_conv2d(x, w, NULL, &bad), TG_ERR_ARG, "dilation");
    bad = opts(1, 1, 0, 0, 1, 1, 0);
    CHECK_ERROR(tg_conv2d(x, w, NULL, &bad), TG_ERR_ARG, "groups");
    CHECK_ERROR(tg_conv2d(NULL, w, NULL, NULL), TG_ERR_ARG, "NULL");
    /* the gradient ops check their output gradient too */
    const tg_op_def *gi = tg_op_find("conv2d_grad_input");
    const tg_op_def *gw = tg_op_find("conv2d_grad_weight");
    CHECK(gi && gw && tg_op_find("conv2d"));
    int64_t xs[4] = {1, 4, 6, 6};
    tg_attr a = TG_AINTS("input_shape", xs, 4);
    tg_tensor *in[2] = {rnd(TG_FLOAT32, 4, (int64_t[]){1, 6, 5, 4}), w};
    CHECK_ERROR(tg_op_call(gi, 2, in, &a, 1), TG_ERR_SHAPE, "expected [1, 6, 4, 4]");
    CHECK_ERROR(tg_op_call(gw, 2, in, NULL, 0), TG_ERR_ARG, "weight_shape");
}

int main(void)
{
    RUN(test_forward_backward_combos);
    RUN(test_special_shapes);
    RUN(test_lenet_shapes);
    RUN(test_strided_inputs);
    RUN(test_gradcheck);
    RUN(test_double_backward);
    RUN(test_errors);
    tg_generator_free(rng);
    return tt_finish();
}
