/* conv_transpose2d: forward and all gradients against a direct loop from
 * the definition (each input element scatters its kernel-weighted copy
 * into the output) over a grid of stride, padding, output_padding (also
 * of a stride or more, below the dilation), dilation and groups, in float32 and float64; gradcheck incl. grad of
 * grad; graph mode; errors. */
#include "harness.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>

static tg_generator *rng;

static tg_tensor *rnd(tg_dtype dt, int ndim, const int64_t *shape)
{
    if (!rng)
        rng = tg_generator_new(11);
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
    double *y, *dx, *dw, *db;
} ref;

/* y[n, g*og + o, iy*s - p + i*d, ...] += x[n, c, iy, ix] * w[c, o, i, j]
 * for c in group g; and the adjoints for upstream dy */
static ref naive(const tg_tensor *x, const tg_tensor *w, const tg_tensor *b,
                 const tg_conv_transpose2d_opts *o, double *(*dy_of)(const ref *, void *),
                 void *user)
{
    const int64_t *xs = tg_shape(x), *ws = tg_shape(w);
    int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
    int64_t og = ws[1], kh = ws[2], kw = ws[3], G = o->groups, O = og * G, cg = C / G;
    ref r;
    r.oh = (H - 1) * o->stride[0] - 2 * o->padding[0] + o->dilation[0] * (kh - 1) +
           o->output_padding[0] + 1;
    r.ow = (W - 1) * o->stride[1] - 2 * o->padding[1] + o->dilation[1] * (kw - 1) +
           o->output_padding[1] + 1;
    double *xv = values(x), *wv = values(w), *bv = b ? values(b) : NULL;
    int64_t ny = N * O * r.oh * r.ow;
    r.y = calloc((size_t)ny + 1, sizeof(double));
    r.dx = calloc((size_t)(N * C * H * W) + 1, sizeof(double));
    r.dw = calloc((size_t)(C * og * kh * kw) + 1, sizeof(double));
    r.db = calloc((size_t)O + 1, sizeof(double));
    double *dy = dy_of ? dy_of(&r, user) : NULL;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t p = 0; p < r.oh * r.ow; p++) {
                int64_t yi = (n * O + oc) * r.oh * r.ow + p;
                r.y[yi] += bv ? bv[oc] : 0;
                if (dy)
                    r.db[oc] += dy[yi];
            }
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t iy = 0; iy < H; iy++)
                for (int64_t ix = 0; ix < W; ix++) {
                    int64_t xi = ((n * C + c) * H + iy) * W + ix;
                    for (int64_t o2 = 0; o2 < og; o2++)
                        for (int64_t i = 0; i < kh; i++)
                            for (int64_t j = 0; j < kw; j++) {
                                int64_t oy = iy * o->stride[0] - o->padding[0] + i * o->dilation[0];
                                int64_t ox = ix * o->stride[1] - o->padding[1] + j * o->dilation[1];
                                if (oy < 0 || oy >= r.oh || ox < 0 || ox >= r.ow)
                                    continue;
                                int64_t oc = c / cg * og + o2;
                                int64_t yi = ((n * O + oc) * r.oh + oy) * r.ow + ox;
                                int64_t wi = ((c * og + o2) * kh + i) * kw + j;
                                r.y[yi] += xv[xi] * wv[wi];
                                if (dy) {
                                    r.dx[xi] += wv[wi] * dy[yi];
                                    r.dw[wi] += xv[xi] * dy[yi];
                                }
                            }
                }
    free(xv);
    free(wv);
    free(bv);
    free(dy);
    return r;
}

static void ref_free(ref *r)
{
    free(r->y);
    free(r->dx);
    free(r->dw);
    free(r->db);
}

static double *dy_from(const ref *r, void *user)
{
    (void)r;
    return values(user);
}

static void check(tg_dtype dt, tg_tensor *x, tg_tensor *w, bool with_bias,
                  const tg_conv_transpose2d_opts *o, const char *what)
{
    double tol = dt == TG_FLOAT32 ? 2e-4 : 1e-10;
    int64_t O = tg_shape(w)[1] * o->groups;
    tg_tensor *b = with_bias ? rnd(dt, 1, &O) : NULL;
    tg_set_requires_grad(x, true);
    tg_set_requires_grad(w, true);
    if (b)
        tg_set_requires_grad(b, true);
    tg_tensor *y = tg_conv_transpose2d(x, w, b, o);
    if (!y) {
        tt_fail(__FILE__, __LINE__, "%s: conv_transpose2d failed: %s", what, tg_last_error());
        return;
    }
    tg_tensor *dy = rnd(dt, 4, tg_shape(y));
    ref r = naive(x, w, b, o, dy_from, dy);
    tt_check_shape(y, (int64_t[]){tg_shape(x)[0], O, r.oh, r.ow}, 4, what, __FILE__, __LINE__);
    tt_check_tensor(y, r.y, tol, what, __FILE__, __LINE__);
    tg_tensor *in[3] = {x, w, b}, *g[3] = {NULL, NULL, NULL};
    CHECK_OK(tg_autograd_grad(1, &y, &dy, b ? 3 : 2, in, g, false, false));
    tt_check_tensor(g[0], r.dx, tol, what, __FILE__, __LINE__);
    tt_check_tensor(g[1], r.dw, tol * 10, what, __FILE__, __LINE__);
    if (b)
        tt_check_tensor(g[2], r.db, tol * 10, what, __FILE__, __LINE__);
    for (int i = 0; i < 3; i++)
        tg_release(g[i]);
    ref_free(&r);
}

static tg_conv_transpose2d_opts opts(int sh, int sw, int ph, int pw, int oph, int opw, int dh,
                                     int dw, int groups)
{
    return (tg_conv_transpose2d_opts){{sh, sw}, {ph, pw}, {oph, opw}, {dh, dw}, groups};
}

static void test_grid(void)
{
    static const int combos[][9] = {
        /* sh sw ph pw oph opw dh dw groups */
        {1, 1, 0, 0, 0, 0, 1, 1, 1}, {2, 2, 0, 0, 0, 0, 1, 1, 1}, {2, 2, 1, 1, 1, 1, 1, 1, 1},
        {1, 1, 1, 2, 0, 0, 1, 1, 1}, {1, 1, 0, 0, 0, 0, 2, 2, 1}, {3, 2, 1, 0, 2, 1, 1, 2, 1},
        {1, 1, 0, 0, 0, 0, 1, 1, 2}, {2, 1, 1, 0, 1, 0, 1, 2, 2}, {2, 3, 1, 1, 0, 2, 2, 1, 4},
        {3, 3, 2, 1, 1, 0, 2, 2, 2},
        /* output_padding of a stride or more, below the dilation (PyTorch's rule) */
        {1, 1, 1, 0, 1, 0, 2, 1, 1}, {2, 1, 1, 1, 2, 0, 3, 1, 1}, {1, 2, 0, 1, 2, 1, 3, 2, 2}};
    static const int64_t kernels[][2] = {{3, 3}, {2, 3}, {1, 1}, {4, 2}};
    tg_dtype dts[2] = {TG_FLOAT32, TG_FLOAT64};
    char what[128];
    for (int d = 0; d < 2; d++)
        for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++)
            for (int k = 0; k < 4; k++) {
                const int *v = combos[c];
                tg_conv_transpose2d_opts o = opts(v[0], v[1], v[2], v[3], v[4], v[5], v[6],
                                                  v[7], v[8]);
                int64_t C = 4, og = v[8] == 4 ? 2 : 3;
                /* padding must leave an output: big enough inputs */
                tg_tensor *x = rnd(dts[d], 4, (int64_t[]){2, C, 5, 6});
                tg_tensor *w = rnd(dts[d], 4, (int64_t[]){C, og, kernels[k][0], kernels[k][1]});
                snprintf(what, sizeof what, "%s combo %zu kernel %d", tg_dtype_name(dts[d]), c, k);
                check(dts[d], x, w, (c + (size_t)k) % 2 == 0, &o, what);
            }
}

static void test_special(void)
{
    /* a batch that takes conv2d's parallel split, depthwise, strided inputs */
    tg_conv_transpose2d_opts s2 = opts(2, 2, 1, 1, 1, 1, 1, 1, 1);
    check(TG_FLOAT32, rnd(TG_FLOAT32, 4, (int64_t[]){16, 6, 7, 7}),
          rnd(TG_FLOAT32, 4, (int64_t[]){6, 4, 3, 3}), true, &s2, "batch 16");
    tg_conv_transpose2d_opts dw = opts(2, 2, 0, 0, 0, 0, 1, 1, 3);
    check(TG_FLOAT64, rnd(TG_FLOAT64, 4, (int64_t[]){2, 3, 4, 4}),
          rnd(TG_FLOAT64, 4, (int64_t[]){3, 1, 2, 2}), false, &dw, "depthwise");
    tg_tensor *xb = rnd(TG_FLOAT64, 4, (int64_t[]){2, 5, 6, 3});
    tg_tensor *x = tg_detach(tg_permute(xb, (int[]){0, 3, 1, 2})); /* [2,3,5,6] */
    tg_tensor *wb = rnd(TG_FLOAT64, 4, (int64_t[]){3, 2, 3, 6});
    tg_tensor *w = tg_detach(tg_slice(wb, 3, 0, 6, 2));
    CHECK(!tg_is_contiguous(x) && !tg_is_contiguous(w));
    check(TG_FLOAT64, x, w, true, &s2, "strided");
    /* mixed dtypes promote; NULL opts are the defaults */
    tg_tensor *y = tg_conv_transpose2d(tg_cast(x, TG_FLOAT32), w, NULL, NULL);
    CHECK(y && tg_dtype_of(y) == TG_FLOAT64);
    CHECK_SHAPE(y, 2, 2, 7, 8);
    /* an empty batch */
    CHECK_SHAPE(tg_conv_transpose2d(rnd(TG_FLOAT32, 4, (int64_t[]){0, 3, 4, 4}), w, NULL, &s2),
                0, 2, 8, 8);
}

/* conv_transpose2d is conv2d's input gradient: the same numbers */
static void test_adjoint_of_conv2d(void)
{
    tg_tensor *x = rnd(TG_FLOAT64, 4, (int64_t[]){2, 4, 9, 8});
    tg_tensor *w = rnd(TG_FLOAT64, 4, (int64_t[]){6, 2, 3, 3});
    tg_conv2d_opts co = {{2, 2}, {1, 1}, {1, 1}, 2};
    tg_set_requires_grad(x, true);
    tg_tensor *y = tg_conv2d(x, w, NULL, &co);
    tg_tensor *dy = rnd(TG_FLOAT64, 4, tg_shape(y)), *dx = NULL;
    CHECK_OK(tg_autograd_grad(1, &y, &dy, 1, &x, &dx, false, false));
    tg_conv_transpose2d_opts to = opts(2, 2, 1, 1, 0, 1, 1, 1, 2);
    tg_tensor *t = tg_conv_transpose2d(dy, w, NULL, &to);
    CHECK_SHAPE(t, 2, 4, 9, 8);
    double *v = values(dx);
    CHECK_TENSOR(t, v, 1e-12);
    free(v);
    tg_release(dx);
}

static tg_tensor *f_ct(int n, tg_tensor *const *in, void *user)
{
    return tg_conv_transpose2d(in[0], in[1], n > 2 ? in[2] : NULL, user);
}

static void test_gradcheck(void)
{
    static const int combos[][9] = {{1, 1, 0, 0, 0, 0, 1, 1, 1}, {2, 2, 1, 0, 1, 1, 1, 1, 1},
                                    {2, 1, 0, 1, 0, 0, 2, 1, 2}, {3, 2, 1, 1, 2, 0, 1, 2, 2}};
    for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++) {
        const int *v = combos[c];
        tg_conv_transpose2d_opts o = opts(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]);
        tg_tensor *in[3] = {tt_rand(4, (int64_t[]){2, 2, 3, 4}, -1, 1),
                            tt_rand(4, (int64_t[]){2, 2, 2, 3}, -1, 1),
                            tt_rand(1, (int64_t[]){2 * v[8]}, -1, 1)};
        CHECK_GRADCHECK(f_ct, &o, c % 2 ? 2 : 3, in);
    }
}

/* first derivatives of sum(y^2), differentiated again */
typedef struct gg_case {
    tg_conv_transpose2d_opts o;
    int which;
} gg_case;

static tg_tensor *f_ct_grad(int n, tg_tensor *const *in, void *user)
{
    const gg_case *gc = user;
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *y = tg_conv_transpose2d(in[0], in[1], NULL, &gc->o);
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
    for (int which = 0; which < 2; which++) {
        gg_case gc = {opts(2, 1, 1, 0, 1, 0, 1, 2, 2), which};
        tg_tensor *in[2] = {tt_rand(4, (int64_t[]){1, 2, 3, 3}, -1, 1),
                            tt_rand(4, (int64_t[]){2, 1, 2, 2}, -1, 1)};
        CHECK_GRADCHECK(f_ct_grad, &gc, 2, in);
    }
}

static void test_errors(void)
{
    tg_tensor *x = rnd(TG_FLOAT32, 4, (int64_t[]){1, 4, 3, 3});
    tg_tensor *w = rnd(TG_FLOAT32, 4, (int64_t[]){4, 2, 3, 3});
    CHECK_ERROR(tg_conv_transpose2d(x, rnd(TG_FLOAT32, 4, (int64_t[]){3, 2, 3, 3}), NULL, NULL),
                TG_ERR_SHAPE, "has 4 channels but weight");
    tg_conv_transpose2d_opts o = opts(2, 2, 0, 0, 2, 0, 1, 1, 1);
    CHECK_ERROR(tg_conv_transpose2d(x, w, NULL, &o), TG_ERR_ARG, "output_padding 2");
    o = opts(1, 1, 0, 0, 2, 0, 2, 2, 1); /* nor as large as the dilation */
    CHECK_ERROR(tg_conv_transpose2d(x, w, NULL, &o), TG_ERR_ARG, "either stride 1 or dilation 2");
    o = opts(1, 1, 3, 0, 0, 0, 1, 1, 1);
    CHECK_ERROR(tg_conv_transpose2d(x, w, NULL, &o), TG_ERR_SHAPE, "leaves no output");
    o = opts(1, 1, 0, 0, 0, 0, 1, 1, 3);
    CHECK_ERROR(tg_conv_transpose2d(x, w, NULL, &o), TG_ERR_SHAPE, "groups = 3 must divide");
    o = opts(0, 1, 0, 0, 0, 0, 1, 1, 1);
    CHECK_ERROR(tg_conv_transpose2d(x, w, NULL, &o), TG_ERR_ARG, "stride");
    o = opts(1, 1, 0, 0, -1, 0, 1, 1, 1);
    CHECK_ERROR(tg_conv_transpose2d(x, w, NULL, &o), TG_ERR_ARG, "output_padding");
    CHECK_ERROR(tg_conv_transpose2d(x, w, rnd(TG_FLOAT32, 1, (int64_t[]){4}), NULL),
                TG_ERR_SHAPE, "bias");
    CHECK_ERROR(tg_conv_transpose2d(rnd(TG_FLOAT32, 3, (int64_t[]){4, 3, 3}), w, NULL, NULL),
                TG_ERR_SHAPE, "4-D");
    CHECK_ERROR(tg_conv_transpose2d(tg_cast(x, TG_INT32), w, NULL, NULL), TG_ERR_DTYPE, "int32");
    CHECK_ERROR(tg_conv_transpose2d(NULL, w, NULL, NULL), TG_ERR_ARG, "NULL");
}

int main(void)
{
    RUN(test_grid);
    RUN(test_special);
    RUN(test_adjoint_of_conv2d);
    RUN(test_gradcheck);
    RUN(test_double_backward);
    RUN(test_errors);
    tg_generator_free(rng);
    return tt_finish();
}
