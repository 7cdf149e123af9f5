/* Tests for the composite nn ops: instance_norm, group_norm, interpolate
 * and einsum. Forward against naive double references; gradients by
 * gradcheck (contiguous and strided); forward mode (tg_jvp, which traces
 * the op into a graph and runs it) against central differences, and its
 * graph-mode outputs against eager; error paths. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a generic check of one composite: fn(n inputs) -> one output ---------------- */
typedef struct comp {
    tg_tensor *(*f)(int n, tg_tensor *const *in, const void *arg);
    const void *arg;
} comp;

static tg_tensor *comp_grad_fn(int n, tg_tensor *const *in, void *user)
{
    const comp *c = user;
    return c->f(n, in, c->arg);
}

static tg_status comp_jvp_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    const comp *c = user;
    int n = ((const int *)c->arg)[0];
    out[0] = c->f(n, in, c->arg);
    return out[0] ? TG_OK : tg_last_status();
}

/* in: float64 leaves; args start with the operand count */
static void check_composite(const comp *c, int n, tg_tensor **in, const char *what)
{
    tg_scope_begin();
    tt_current = what;
    CHECK_GRADCHECK(comp_grad_fn, (void *)c, n, in);
    /* forward mode and graph mode against eager */
    tg_tensor *tan[8], *plus[8], *minus[8], *y = NULL, *dy = NULL;
    const double h = 1e-6;
    for (int i = 0; i < n; i++) {
        tan[i] = tg_detach(tt_rand(tg_ndim(in[i]), tg_shape(in[i]), -1, 1));
        plus[i] = tg_add(tg_detach(in[i]), tg_mul_scalar(tan[i], h));
        minus[i] = tg_add(tg_detach(in[i]), tg_mul_scalar(tan[i], -h));
    }
    CHECK_OK(tg_jvp(comp_jvp_fn, (void *)c, n, in, tan, 1, &y, &dy));
    tg_tensor *eager = c->f(n, in, c->arg);
    CHECK(tt_rel_diff(y, eager, 1e-6) < 1e-12);
    tg_tensor *fd = tg_mul_scalar(tg_sub(c->f(n, plus, c->arg), c->f(n, minus, c->arg)),
                                  0.5 / h);
    CHECK(tt_rel_diff(dy, fd, 1e-3) < 1e-5);
    tg_scope_end();
}

/* ---- instance_norm / group_norm ------------------------------------------------------ */
/* x [N, C, S] with groups of C/G channels normalised together */
static void ref_group_norm(const double *x, int64_t N, int64_t C, int64_t S, int64_t G,
                           const double *w, const double *b, double eps, double *y)
{
    int64_t K = C / G * S;
    for (int64_t r = 0; r < N * G; r++) {
        const double *xr = x + r * K;
        double m = 0, v = 0;
        for (int64_t k = 0; k < K; k++)
            m += xr[k];
        m /= (double)K;
        for (int64_t k = 0; k < K; k++)
            v += (xr[k] - m) * (xr[k] - m);
        v /= (double)K;
        for (int64_t k = 0; k < K; k++) {
            int64_t c = (r % G) * (C / G) + k / S;
            y[r * K + k] = (xr[k] - m) / sqrt(v + eps) * (w ? w[c] : 1) + (b ? b[c] : 0);
        }
    }
}

static tg_tensor *f_instance(int n, tg_tensor *const *in, const void *arg)
{
    (void)arg;
    return tg_instance_norm(in[0], n > 1 ? in[1] : NULL, n > 2 ? in[2] : NULL, 1e-5);
}

static tg_tensor *f_group(int n, tg_tensor *const *in, const void *arg)
{
    const int *a = arg;
    return tg_group_norm(in[0], a[1], n > 1 ? in[1] : NULL, n > 2 ? in[2] : NULL, 1e-5);
}

static void check_norm_forward(tg_dtype dt, int nd, const int64_t *shape, int G, bool affine)
{
    int64_t N = shape[0], C = shape[1], S = 1;
    for (int i = 2; i < nd; i++)
        S *= shape[i];
    tg_tensor *x = tt_rand_dtype(dt, nd, shape, -2, 3);
    tg_tensor *w = affine ? tt_rand_dtype(dt, 1, &C, 0.5, 1.5) : NULL;
    tg_tensor *b = affine ? tt_rand_dtype(dt, 1, &C, -1, 1) : NULL;
    double *xv = tt_values(x), *wv = w ? tt_values(w) : NULL, *bv = b ? tt_values(b) : NULL;
    double *ref = malloc((size_t)(N * C * S) * sizeof *ref);
    double tol = dt == TG_FLOAT32 ? 1e-4 : 1e-10;
    ref_group_norm(xv, N, C, S, G, wv, bv, 1e-5, ref);
    tg_tensor *y = G == C && nd > 2 ? tg_instance_norm(x, w, b, 1e-5)
                                    : tg_group_norm(x, G, w, b, 1e-5);
    CHECK(y && tg_dtype_of(y) == dt);
    CHECK_TENSOR(y, ref, tol);
    if (G == C && nd > 2) { /* group norm with one channel per group is instance norm */
        tg_tensor *y2 = tg_group_norm(x, G, w, b, 1e-5);
        CHECK_TENSOR(y2, ref, tol);
    }
    free(xv);
    free(wv);
    free(bv);
    free(ref);
}

static void test_norm_forward(void)
{
    for (int d = 0; d < 2; d++) {
        tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
        check_norm_forward(dt, 4, (int64_t[]){2, 3, 4, 5}, 3, true);
        check_norm_forward(dt, 3, (int64_t[]){3, 4, 7}, 4, false);
        check_norm_forward(dt, 4, (int64_t[]){2, 6, 3, 3}, 2, true);
        check_norm_forward(dt, 4, (int64_t[]){2, 6, 3, 3}, 1, false);
        check_norm_forward(dt, 2, (int64_t[]){5, 6}, 3, true);
        check_norm_forward(dt, 5, (int64_t[]){1, 4, 2, 3, 2}, 2, true);
    }
}

static void test_norm_gradients(void)
{
    int64_t xs[4] = {2, 4, 3, 2}, C = 4;
    tg_tensor *in[3] = {tt_rand(4, xs, -1, 2), tt_rand(1, &C, 0.5, 1.5), tt_rand(1, &C, -1, 1)};
    int a1[2] = {3, 4}, a2[2] = {3, 2}, a3[2] = {1, 2};
    check_composite(&(comp){f_instance, a1}, 3, in, "instance_norm");
    check_composite(&(comp){f_group, a2}, 3, in, "group_norm");
    check_composite(&(comp){f_group, a3}, 1, in, "group_norm without affine");
}

static void test_norm_errors(void)
{
    tg_tensor *x = tg_ones(TG_FLOAT32, 3, (int64_t[]){2, 6, 1});
    tg_tensor *w = tg_ones(TG_FLOAT32, 1, (int64_t[]){5});
    tg_tensor *xi = tg_ones(TG_INT32, 3, (int64_t[]){2, 6, 4});
    CHECK_ERROR(tg_instance_norm(x, NULL, NULL, 1e-5), TG_ERR_SHAPE, "more than 1 spatial");
    CHECK_ERROR(tg_group_norm(x, 4, NULL, NULL, 1e-5), TG_ERR_ARG, "divisible by num_groups");
    CHECK_ERROR(tg_group_norm(x, 0, NULL, NULL, 1e-5), TG_ERR_ARG, "divisible");
    CHECK_ERROR(tg_group_norm(x, 3, w, NULL, 1e-5), TG_ERR_SHAPE, "weight has shape [5]");
    CHECK_ERROR(tg_group_norm(xi, 3, NULL, NULL, 1e-5), TG_ERR_DTYPE, "group_norm");
    CHECK_ERROR(tg_instance_norm(w, NULL, NULL, 1e-5), TG_ERR_SHAPE, "at least 3 dims");
}

/* ---- interpolate ------------------------------------------------------------------- */
/* PyTorch's formulas, one axis at a time, for x [N*C rows, H, W] */
static double src_linear(int64_t i, int64_t in, int64_t out, bool ac, double inv)
{
    if (ac)
        return out > 1 ? (double)i * (double)(in - 1) / (double)(out - 1) : 0;
    double s = ((double)i + 0.5) * inv - 0.5;
    return s < 0 ? 0 : s;
}

static void ref_bilinear(const double *x, int64_t R, int64_t H, int64_t W, int64_t OH,
                         int64_t OW, bool ac, double ih, double iw, double *y)
{
    for (int64_t r = 0; r < R; r++)
        for (int64_t i = 0; i < OH; i++)
            for (int64_t j = 0; j < OW; j++) {
                double sh = src_linear(i, H, OH, ac, ih), sw = src_linear(j, W, OW, ac, iw);
                int64_t h0 = (int64_t)sh, w0 = (int64_t)sw;
                int64_t h1 = h0 < H - 1 ? h0 + 1 : h0, w1 = w0 < W - 1 ? w0 + 1 : w0;
                double lh = sh - (double)h0, lw = sw - (double)w0;
                const double *p = x + r * H * W;
                y[(r * OH + i) * OW + j] =
                    (1 - lh) * ((1 - lw) * p[h0 * W + w0] + lw * p[h0 * W + w1]) +
                    lh * ((1 - lw) * p[h1 * W + w0] + lw * p[h1 * W + w1]);
            }
}

static void ref_nearest(const double *x, int64_t R, int64_t H, int64_t W, int64_t OH,
                        int64_t OW, double ih, double iw, double *y)
{
    for (int64_t r = 0; r < R; r++)
        for (int64_t i = 0; i < OH; i++)
            for (int64_t j = 0; j < OW; j++) {
                int64_t h = (int64_t)floorf((float)i * (float)ih);
                int64_t w = (int64_t)floorf((float)j * (float)iw);
                h = h < H - 1 ? h : H - 1;
                w = w < W - 1 ? w : W - 1;
                y[(r * OH + i) * OW + j] = x[(r * H + h) * W + w];
            }
}

static void check_interp(int64_t H, int64_t W, const int64_t *size, const double *sf,
                         tg_interp_mode mode, bool ac)
{
    int64_t shape[4] = {2, 3, H, W};
    tg_tensor *x = tt_rand_dtype(TG_FLOAT64, 4, shape, -2, 2);
    int64_t OH = size ? size[0] : (int64_t)floor((double)H * sf[0]);
    int64_t OW = size ? size[1] : (int64_t)floor((double)W * sf[1]);
    double ih = size ? (double)H / (double)OH : 1 / sf[0];
    double iw = size ? (double)W / (double)OW : 1 / sf[1];
    double *xv = tt_values(x), *ref = malloc((size_t)(6 * OH * OW) * sizeof *ref);
    if (mode == TG_INTERP_LINEAR)
        ref_bilinear(xv, 6, H, W, OH, OW, ac, ih, iw, ref);
    else
        ref_nearest(xv, 6, H, W, OH, OW, ih, iw, ref);
    tg_tensor *y = tg_interpolate(x, 2, size, sf, mode, ac);
    CHECK(y != NULL);
    if (y) {
        CHECK_SHAPE(y, 2, 3, OH, OW);
        CHECK_TENSOR(y, ref, 1e-12);
    }
    free(xv);
    free(ref);
}

static void test_interpolate_forward(void)
{
    for (int ac = 0; ac < 2; ac++) {
        check_interp(4, 5, (int64_t[]){7, 3}, NULL, TG_INTERP_LINEAR, ac);
        check_interp(4, 5, (int64_t[]){1, 1}, NULL, TG_INTERP_LINEAR, ac);
        check_interp(3, 4, NULL, (double[]){2.0, 1.5}, TG_INTERP_LINEAR, ac);
        check_interp(6, 6, NULL, (double[]){0.5, 0.7}, TG_INTERP_LINEAR, ac);
        check_interp(5, 5, (int64_t[]){5, 5}, NULL, TG_INTERP_LINEAR, ac);
    }
    check_interp(4, 5, (int64_t[]){8, 15}, NULL, TG_INTERP_NEAREST, false);
    check_interp(6, 9, (int64_t[]){4, 5}, NULL, TG_INTERP_NEAREST, false);
    check_interp(3, 3, NULL, (double[]){2.0, 3.0}, TG_INTERP_NEAREST, false);
    check_interp(5, 7, NULL, (double[]){0.6, 1.3}, TG_INTERP_NEAREST, false);
    /* 1-D linear and nearest-exact: a hand-computed case */
    tg_tensor *x = tt_tensor(TG_FLOAT32, 3, (int64_t[]){1, 1, 3}, (double[]){0, 3, 6});
    tg_tensor *y = tg_interpolate(x, 1, (int64_t[]){6}, NULL, TG_INTERP_LINEAR, false);
    CHECK_TENSOR(y, ((double[]){0, 0.75, 2.25, 3.75, 5.25, 6}), 1e-6);
    tg_tensor *z = tg_interpolate(x, 1, (int64_t[]){5}, NULL, TG_INTERP_NEAREST_EXACT, false);
    CHECK_TENSOR(z, ((double[]){0, 0, 3, 6, 6}), 0);
    /* bicubic reproduces a linear ramp away from the borders (Keys' kernel
     * is exact for linear functions where all four taps are inside) */
    tg_tensor *ramp = tt_tensor(TG_FLOAT64, 4, (int64_t[]){1, 1, 1, 6},
                                (double[]){0, 1, 2, 3, 4, 5});
    tg_tensor *rb = tg_interpolate(ramp, 2, (int64_t[]){1, 11}, NULL, TG_INTERP_BICUBIC, true);
    double *rv = rb ? tt_values(rb) : NULL;
    for (int i = 2; rv && i < 9; i++)
        CHECK_NEAR(rv[i], i * 0.5, 1e-12);
    free(rv);
    tg_tensor *xi = tt_tensor(TG_INT64, 3, (int64_t[]){1, 1, 3}, (double[]){1, 2, 3});
    tg_tensor *yi = tg_interpolate(xi, 1, NULL, (double[]){2}, TG_INTERP_NEAREST, false);
    CHECK(yi && tg_dtype_of(yi) == TG_INT64);
    CHECK_TENSOR(yi, ((double[]){1, 1, 2, 2, 3, 3}), 0);
}

typedef struct interp_arg {
    int n_in;
    int64_t size[3];
    tg_interp_mode mode;
    bool ac;
} interp_arg;

static tg_tensor *f_interp(int n, tg_tensor *const *in, const void *arg)
{
    (void)n;
    const interp_arg *a = arg;
    return tg_interpolate(in[0], tg_ndim(in[0]) - 2, a->size, NULL, a->mode, a->ac);
}

static void test_interpolate_gradients(void)
{
    tg_tensor *x = tt_rand(4, (int64_t[]){1, 2, 3, 4}, -1, 1);
    interp_arg a1 = {1, {5, 3}, TG_INTERP_LINEAR, false}, a2 = {1, {5, 7}, TG_INTERP_LINEAR, true};
    interp_arg a3 = {1, {6, 2}, TG_INTERP_NEAREST, false};
    check_composite(&(comp){f_interp, &a1}, 1, &x, "bilinear");
    check_composite(&(comp){f_interp, &a2}, 1, &x, "bilinear align_corners");
    check_composite(&(comp){f_interp, &a3}, 1, &x, "nearest");
    interp_arg a5 = {1, {6, 3}, TG_INTERP_BICUBIC, false}, a6 = {1, {2, 7}, TG_INTERP_BICUBIC, true};
    check_composite(&(comp){f_interp, &a5}, 1, &x, "bicubic");
    check_composite(&(comp){f_interp, &a6}, 1, &x, "bicubic align_corners");
    tg_tensor *x3 = tt_rand(5, (int64_t[]){1, 1, 2, 3, 2}, -1, 1);
    interp_arg a4 = {1, {3, 4, 3}, TG_INTERP_LINEAR, false};
    check_composite(&(comp){f_interp, &a4}, 1, &x3, "trilinear");
}

static void test_interpolate_errors(void)
{
    tg_tensor *x = tg_ones(TG_FLOAT32, 4, (int64_t[]){1, 1, 2, 2});
    tg_tensor *xi = tg_ones(TG_INT32, 4, (int64_t[]){1, 1, 2, 2});
    int64_t sz[2] = {3, 3};
    double sf[2] = {2, 2};
    CHECK_ERROR(tg_interpolate(x, 2, sz, sf, TG_INTERP_LINEAR, false), TG_ERR_ARG,
                "exactly one");
    CHECK_ERROR(tg_interpolate(x, 2, NULL, NULL, TG_INTERP_LINEAR, false), TG_ERR_ARG,
                "exactly one");
    CHECK_ERROR(tg_interpolate(x, 1, sz, NULL, TG_INTERP_LINEAR, false), TG_ERR_SHAPE,
                "one size or scale factor per spatial dim");
    CHECK_ERROR(tg_interpolate(x, 2, sz, NULL, TG_INTERP_NEAREST, true), TG_ERR_ARG,
                "align_corners");
    CHECK_ERROR(tg_interpolate(x, 2, NULL, (double[]){0.1, 1}, TG_INTERP_LINEAR, false),
                TG_ERR_ARG, "scale factor");
    CHECK_ERROR(tg_interpolate(x, 2, sz, NULL, (tg_interp_mode)7, false), TG_ERR_UNSUPPORTED,
                "unknown mode");
    CHECK_ERROR(tg_interpolate(xi, 2, sz, NULL, TG_INTERP_LINEAR, false), TG_ERR_DTYPE,
                "interpolate");
    tg_tensor *x3 = tg_ones(TG_FLOAT32, 3, (int64_t[]){1, 1, 2});
    CHECK_ERROR(tg_interpolate(x3, 1, sz, NULL, TG_INTERP_BICUBIC, false), TG_ERR_SHAPE,
                "bicubic needs a 4-D input");
}

/* ---- einsum ------------------------------------------------------------------------- */
typedef struct ein_arg {
    int n;
    const char *eq;
} ein_arg;

static tg_tensor *f_einsum(int n, tg_tensor *const *in, const void *arg)
{
    return tg_einsum(((const ein_arg *)arg)->eq, n, in);
}

static tg_tensor *ein(const char *eq, int n, tg_tensor **in)
{
    return tg_einsum(eq, n, in);
}

static void test_einsum_forward(void)
{
    tg_scope_begin();
    tg_tensor *a = tt_rand_dtype(TG_FLOAT64, 2, (int64_t[]){3, 4}, -1, 1);
    tg_tensor *b = tt_rand_dtype(TG_FLOAT64, 2, (int64_t[]){4, 5}, -1, 1);
    tg_tensor *v = tt_rand_dtype(TG_FLOAT64, 1, (int64_t[]){4}, -1, 1);
    tg_tensor *sq = tt_rand_dtype(TG_FLOAT64, 2, (int64_t[]){4, 4}, -1, 1);
    tg_tensor *ba = tt_rand_dtype(TG_FLOAT64, 3, (int64_t[]){2, 3, 4}, -1, 1);
    tg_tensor *bb = tt_rand_dtype(TG_FLOAT64, 3, (int64_t[]){2, 4, 5}, -1, 1);
    double tol = 1e-12;
    CHECK(tt_rel_diff(ein("ij,jk->ik", 2, (tg_tensor *[]){a, b}), tg_matmul(a, b), 1) < tol);
    CHECK(tt_rel_diff(ein("ij,jk", 2, (tg_tensor *[]){a, b}), tg_matmul(a, b), 1) < tol);
    CHECK(tt_rel_diff(ein("ij->ji", 1, &a), tg_transpose(a, 0, 1), 1) < tol);
    CHECK(tt_rel_diff(ein("ji", 1, &a), tg_transpose(a, 0, 1), 1) < tol);
    CHECK(tt_rel_diff(ein("ij->", 1, &a), tg_sum(a, 0, NULL, false), 1) < tol);
    CHECK(tt_rel_diff(ein("ij->i", 1, &a), tg_sum(a, 1, (int[]){1}, false), 1) < tol);
    CHECK(tt_rel_diff(ein("bij,bjk->bik", 2, (tg_tensor *[]){ba, bb}), tg_matmul(ba, bb), 1) <
          tol);
    CHECK(tt_rel_diff(ein("...ij,...jk->...ik", 2, (tg_tensor *[]){ba, b}), tg_matmul(ba, b),
                      1) < tol);
    CHECK(tt_rel_diff(ein("i,i->", 2, (tg_tensor *[]){v, v}),
                      tg_sum(tg_mul(v, v), 0, NULL, false), 1) < tol);
    CHECK(tt_rel_diff(ein("i,j->ij", 2, (tg_tensor *[]){v, v}),
                      tg_mul(tg_unsqueeze(v, 1), tg_unsqueeze(v, 0)), 1) < tol);
    CHECK(tt_rel_diff(ein("bij,jk,bik->b", 3, (tg_tensor *[]){ba, b, tg_matmul(ba, b)}),
                      tg_sum(tg_mul(tg_matmul(ba, b), tg_matmul(ba, b)), 2, (int[]){1, 2},
                             false), 1) < tol);
    /* trace and diagonal against explicit sums */
    double *s = tt_values(sq), tr = 0, diag[4];
    for (int i = 0; i < 4; i++)
        tr += diag[i] = s[i * 5];
    CHECK_TENSOR(ein("ii", 1, &sq), &tr, 1e-12);
    CHECK_TENSOR(ein("ii->i", 1, &sq), diag, 1e-12);
    free(s);
    /* ij,ij->ij is elementwise; iij with broadcasting of size 1 */
    CHECK(tt_rel_diff(ein("ij,ij->ij", 2, (tg_tensor *[]){a, a}), tg_mul(a, a), 1) < tol);
    tg_tensor *row = tt_rand_dtype(TG_FLOAT64, 2, (int64_t[]){1, 4}, -1, 1);
    CHECK(tt_rel_diff(ein("ij,ij->ij", 2, (tg_tensor *[]){a, row}), tg_mul(a, row), 1) < tol);
    tg_scope_end();
}

static void test_einsum_gradients(void)
{
    tg_tensor *a = tt_rand(3, (int64_t[]){2, 3, 4}, -1, 1);
    tg_tensor *b = tt_rand(2, (int64_t[]){4, 2}, -1, 1);
    tg_tensor *sq = tt_rand(3, (int64_t[]){2, 3, 3}, -1, 1);
    ein_arg e1 = {2, "bij,jk->bki"}, e2 = {1, "bii->bi"}, e3 = {1, "...ii->..."};
    ein_arg e4 = {2, "bij,bkk->bj"};
    check_composite(&(comp){f_einsum, &e1}, 2, (tg_tensor *[]){a, b}, "einsum bij,jk->bki");
    check_composite(&(comp){f_einsum, &e2}, 1, &sq, "einsum bii->bi");
    check_composite(&(comp){f_einsum, &e3}, 1, &sq, "einsum ...ii->...");
    check_composite(&(comp){f_einsum, &e4}, 2, (tg_tensor *[]){a, sq}, "einsum bij,bkk->bj");
}

static void test_einsum_errors(void)
{
    tg_tensor *a = tg_ones(TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_tensor *b = tg_ones(TG_FLOAT32, 2, (int64_t[]){4, 3});
    CHECK_ERROR(tg_einsum("ij,jk->ik", 2, (tg_tensor *[]){a, b}), TG_ERR_SHAPE, "size");
    CHECK_ERROR(tg_einsum("ijk->i", 1, &a), TG_ERR_SHAPE, "has 2 dims");
    CHECK_ERROR(tg_einsum("ij->k", 1, &a), TG_ERR_ARG, "output subscript k");
    CHECK_ERROR(tg_einsum("ij->ii", 1, &a), TG_ERR_ARG, "repeated");
    CHECK_ERROR(tg_einsum("i1->i", 1, &a), TG_ERR_ARG, "invalid subscript '1'");
    CHECK_ERROR(tg_einsum("ij,ij->i", 1, &a), TG_ERR_ARG, "2 operand terms for 1");
    CHECK_ERROR(tg_einsum("i..j.->i", 1, &a), TG_ERR_ARG, "ellipsis");
    CHECK_ERROR(tg_einsum("ii", 1, &a), TG_ERR_SHAPE, "repeated");
}


/* ---- ONNX: a graph of the composites exports (as the ops they are made
 * of) and re-imports with the same outputs in both modes ------------------------------------ */
static void test_onnx_round_trip(void)
{
    tg_graph *g = tg_graph_new("composites");
    tg_graph_begin(g);
    int64_t xs[4] = {2, 4, 3, 5}, C = 4;
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, xs);
    tg_tensor *w = tt_rand_dtype(TG_FLOAT32, 1, &C, 0.5, 1.5);
    tg_tensor *b = tt_rand_dtype(TG_FLOAT32, 1, &C, -1, 1);
    tg_tensor *y[5];
    y[0] = tg_group_norm(x, 2, w, b, 1e-5);
    y[1] = tg_instance_norm(x, w, NULL, 1e-5);
    y[2] = tg_interpolate(x, 2, (int64_t[]){5, 4}, NULL, TG_INTERP_LINEAR, false);
    y[3] = tg_interpolate(x, 2, NULL, (double[]){2, 2}, TG_INTERP_NEAREST, false);
    y[4] = tg_einsum("ncij,ncjk->nik", 2,
                     (tg_tensor *[]){x, tg_transpose(x, 2, 3)});
    tg_graph_end();
    char path[256];
    snprintf(path, sizeof path, "/tmp/tg_composite_%ld.onnx", (long)getpid());
    CHECK_OK(tg_onnx_export(g, 5, y, path));
    tg_tensor *xv = tt_rand_dtype(TG_FLOAT32, 4, xs, -2, 2);
    tg_session *sess = tg_session_new(g);
    tg_tensor *want[5] = {NULL};
    CHECK_OK(tg_session_run(sess, 1, &x, &xv, 5, y, want, 0, NULL));
    tg_session_free(sess);
    tg_onnx_model *m = tg_onnx_load(path);
    CHECK(m != NULL);
    for (int mode = 0; m && mode < 2; mode++) {
        tg_state_dict *o = NULL;
        const char *nm = "x";
        CHECK_OK(tg_onnx_run(m, (tg_onnx_mode)mode, 1, &nm, &xv, &o, NULL));
        for (int i = 0; o && i < 5; i++) {
            tg_onnx_value_info vi;
            tg_onnx_output_info(m, i, &vi);
            CHECK(tt_rel_diff(tg_state_dict_get(o, vi.name), want[i], 1) < 1e-6);
        }
        tg_state_dict_free(o);
    }
    tg_onnx_free(m);
    unlink(path);
    tg_graph_free(g);
}

int main(void)
{
    RUN(test_norm_forward);
    RUN(test_norm_gradients);
    RUN(test_norm_errors);
    RUN(test_interpolate_forward);
    RUN(test_interpolate_gradients);
    RUN(test_interpolate_errors);
    RUN(test_einsum_forward);
    RUN(test_einsum_gradients);
    RUN(test_einsum_errors);
    RUN(test_onnx_round_trip);
    return tt_finish();
}
