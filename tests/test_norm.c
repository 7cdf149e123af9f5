/* Tests for batch_norm (training and eval, running-stat updates) and
 * layer_norm: forward against naive double references, gradients (fused
 * first-order and composite create_graph paths, and grad of grad), and
 * error paths. */
#include "harness.h"

#include <stdlib.h>

/* ---- references ------------------------------------------------------------------ */
/* x [N, C, S]: per-channel batch statistics; y normalised with w, b (NULL: 1, 0) */
static void ref_batch_norm(const double *x, int64_t N, int64_t C, int64_t S,
                           const double *w, const double *b, double eps, double *y,
                           double *mean, double *var)
{
    for (int64_t c = 0; c < C; c++) {
        double s = 0, q = 0, M = (double)(N * S);
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < S; i++)
                s += x[(n * C + c) * S + i];
        mean[c] = s / M;
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < S; i++) {
                double d = x[(n * C + c) * S + i] - mean[c];
                q += d * d;
            }
        var[c] = q / M;
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < S; i++) {
                int64_t k = (n * C + c) * S + i;
                y[k] = (x[k] - mean[c]) / sqrt(var[c] + eps) * (w ? w[c] : 1) + (b ? b[c] : 0);
            }
    }
}

/* x [R, K]: per-row statistics; w, b [K] or NULL */
static void ref_layer_norm(const double *x, int64_t R, int64_t K, const double *w,
                           const double *b, double eps, double *y)
{
    for (int64_t r = 0; r < R; r++) {
        double s = 0, q = 0;
        for (int64_t k = 0; k < K; k++)
            s += x[r * K + k];
        double mean = s / (double)K;
        for (int64_t k = 0; k < K; k++)
            q += (x[r * K + k] - mean) * (x[r * K + k] - mean);
        double inv = 1 / sqrt(q / (double)K + eps);
        for (int64_t k = 0; k < K; k++)
            y[r * K + k] = (x[r * K + k] - mean) * inv * (w ? w[k] : 1) + (b ? b[k] : 0);
    }
}

/* ---- batch_norm forward ------------------------------------------------------------ */
static void check_bn_train(tg_dtype dt, int ndim, const int64_t *shape, bool affine)
{
    int64_t N = shape[0], C = shape[1], S = 1;
    for (int i = 2; i < ndim; i++)
        S *= shape[i];
    tg_tensor *x = tt_rand_dtype(dt, ndim, shape, -2, 3);
    tg_tensor *w = affine ? tt_rand_dtype(dt, 1, &C, 0.5, 1.5) : NULL;
    tg_tensor *b = affine ? tt_rand_dtype(dt, 1, &C, -1, 1) : NULL;
    tg_tensor *rm = tt_rand_dtype(dt, 1, &C, -1, 1);
    tg_tensor *rv = tt_rand_dtype(dt, 1, &C, 0.5, 2);
    double *xv = tt_values(x), *wv = affine ? tt_values(w) : NULL;
    double *bv = affine ? tt_values(b) : NULL, *rm0 = tt_values(rm), *rv0 = tt_values(rv);
    double *y = malloc((size_t)(N * C * S) * sizeof *y), mean[16], var[16];
    ref_batch_norm(xv, N, C, S, wv, bv, 1e-5, y, mean, var);
    tg_tensor *out = tg_batch_norm(x, rm, rv, w, b, true, 0.1, 1e-5);
    CHECK(out && tg_dtype_of(out) == dt);
    double tol = dt == TG_FLOAT32 ? 2e-5 : 1e-12;
    CHECK_TENSOR(out, y, tol);
    /* PyTorch: running = (1 - momentum) running + momentum * batch (unbiased var) */
    double em[16], ev[16], M = (double)(N * S);
    for (int c = 0; c < C; c++) {
        em[c] = 0.9 * rm0[c] + 0.1 * mean[c];
        ev[c] = 0.9 * rv0[c] + 0.1 * var[c] * M / (M - 1);
    }
    CHECK_TENSOR(rm, em, tol);
    CHECK_TENSOR(rv, ev, tol);
    free(xv), free(wv), free(bv), free(rm0), free(rv0), free(y);
}

static void test_batch_norm_train_forward(void)
{
    for (int dt = TG_FLOAT32; dt <= TG_FLOAT64; dt++)
        for (int affine = 0; affine < 2; affine++) {
            check_bn_train((tg_dtype)dt, 2, (int64_t[]){5, 3}, affine);
            check_bn_train((tg_dtype)dt, 4, (int64_t[]){3, 4, 2, 3}, affine);
            check_bn_train((tg_dtype)dt, 3, (int64_t[]){2, 3, 5}, affine);
        }
}

static void test_batch_norm_hand_computed(void)
{
    tg_tensor *x = tt_tensor(TG_FLOAT32, 2, (int64_t[]){4, 1}, (double[]){1, 2, 3, 4});
    tg_tensor *rm = tg_zeros(TG_FLOAT32, 1, (int64_t[]){1});
    tg_tensor *rv = tg_ones(TG_FLOAT32, 1, (int64_t[]){1});
    tg_tensor *y = tg_batch_norm(x, rm, rv, NULL, NULL, true, 0.1, 0);
    double s = sqrt(1.25); /* biased variance of 1..4 */
    CHECK_TENSOR(y, ((double[]){-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}), 1e-6);
    CHECK_NEAR(tg_item(rm), 0.25, 1e-7);              /* 0.9 * 0 + 0.1 * 2.5 */
    CHECK_NEAR(tg_item(rv), 0.9 + 0.1 * 5.0 / 3.0, 1e-6); /* unbiased var 5/3 */
    /* a second step moves the running stats again */
    tg_batch_norm(x, rm, rv, NULL, NULL, true, 0.5, 0);
    CHECK_NEAR(tg_item(rm), 0.5 * 0.25 + 0.5 * 2.5, 1e-6);
    /* NULL running stats are allowed in training */
    CHECK_TENSOR(tg_batch_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 0),
                 ((double[]){-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}), 1e-6);
}

static void test_batch_norm_eval(void)
{
    int64_t shape[4] = {2, 3, 2, 2}, C = 3;
    for (int dt = TG_FLOAT32; dt <= TG_FLOAT64; dt++) {
        tg_tensor *x = tt_rand_dtype((tg_dtype)dt, 4, shape, -2, 2);
        tg_tensor *rm = tt_tensor((tg_dtype)dt, 1, &C, (double[]){0.5, -1, 0});
        tg_tensor *rv = tt_tensor((tg_dtype)dt, 1, &C, (double[]){1, 4, 0.25});
        tg_tensor *w = tt_tensor((tg_dtype)dt, 1, &C, (double[]){2, 1, -1});
        tg_tensor *b = tt_tensor((tg_dtype)dt, 1, &C, (double[]){0, 1, 3});
        double *xv = tt_values(x), ref[24], ref_plain[24];
        const double rmv[3] = {0.5, -1, 0}, rvv[3] = {1, 4, 0.25}, wv[3] = {2, 1, -1},
                     bv[3] = {0, 1, 3};
        for (int i = 0; i < 24; i++) {
            int c = (i / 4) % 3;
            ref_plain[i] = (xv[i] - rmv[c]) / sqrt(rvv[c] + 1e-5);
            ref[i] = ref_plain[i] * wv[c] + bv[c];
        }
        double tol = dt == TG_FLOAT32 ? 1e-5 : 1e-12;
        tg_tensor *y = tg_batch_norm(x, rm, rv, w, b, false, 0.1, 1e-5);
        CHECK(y && tg_dtype_of(y) == (tg_dtype)dt);
        CHECK_TENSOR(y, ref, tol);
        CHECK_TENSOR(tg_batch_norm(x, rm, rv, NULL, NULL, false, 0.1, 1e-5), ref_plain, tol);
        /* eval leaves the running stats alone */
        CHECK_TENSOR(rm, rmv, 0);
        CHECK_TENSOR(rv, rvv, 0);
        free(xv);
    }
}

/* ---- layer_norm forward ------------------------------------------------------------- */
static void test_layer_norm_forward(void)
{
    int64_t shape[3] = {2, 3, 4};
    for (int dt = TG_FLOAT32; dt <= TG_FLOAT64; dt++)
        for (int n_axes = 1; n_axes <= 3; n_axes++)
            for (int affine = 0; affine < 2; affine++) {
                const int64_t *ps = shape + 3 - n_axes;
                int64_t K = 1;
                for (int i = 0; i < n_axes; i++)
                    K *= ps[i];
                tg_tensor *x = tt_rand_dtype((tg_dtype)dt, 3, shape, -2, 3);
                tg_tensor *w =
                    affine ? tt_rand_dtype((tg_dtype)dt, n_axes, ps, 0.5, 1.5) : NULL;
                tg_tensor *b = affine ? tt_rand_dtype((tg_dtype)dt, n_axes, ps, -1, 1) : NULL;
                double *xv = tt_values(x), *wv = affine ? tt_values(w) : NULL;
                double *bv = affine ? tt_values(b) : NULL, ref[24];
                ref_layer_norm(xv, 24 / K, K, wv, bv, 1e-5, ref);
                tg_tensor *y = tg_layer_norm(x, n_axes, w, b, 1e-5);
                CHECK(y && tg_dtype_of(y) == (tg_dtype)dt);
                CHECK_TENSOR(y, ref, dt == TG_FLOAT32 ? 2e-5 : 1e-12);
                free(xv), free(wv), free(bv);
            }
    /* hand-computed: [1, 3] normalises to -sqrt(3/2), 0, sqrt(3/2) */
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){1, 3}, (double[]){1, 2, 3});
    CHECK_TENSOR(tg_layer_norm(x, 1, NULL, NULL, 0),
                 ((double[]){-sqrt(1.5), 0, sqrt(1.5)}), 1e-12);
}

/* ---- gradients --------------------------------------------------------------------- */
/* in: x, weight, bias; user: the mode */
typedef struct bn_mode {
    bool training, affine;
    tg_tensor *rm, *rv;
} bn_mode;

static tg_tensor *f_bn(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    bn_mode *m = user;
    return tg_batch_norm(in[0], m->rm, m->rv, m->affine ? in[1] : NULL,
                         m->affine ? in[2] : NULL, m->training, 0.1, 1e-3);
}

static tg_tensor *f_ln(int n, tg_tensor *const *in, void *user)
{
    (void)user;
    return tg_layer_norm(in[0], *(int *)user, n > 1 ? in[1] : NULL, n > 2 ? in[2] : NULL,
                         1e-3);
}

static void test_batch_norm_gradcheck(void)
{
    static const int64_t shapes[3][4] = {{4, 3}, {3, 2, 2, 3}, {2, 3, 4}};
    static const int ndims[3] = {2, 4, 3};
    for (int k = 0; k < 3; k++) {
        int64_t C = shapes[k][1];
        tg_tensor *in[3] = {tt_rand(ndims[k], shapes[k], -2, 2), tt_rand(1, &C, 0.5, 1.5),
                            tt_rand(1, &C, -1, 1)};
        bn_mode train = {true, true, NULL, NULL};
        CHECK_GRADCHECK(f_bn, &train, 3, in);
        bn_mode plain = {true, false, NULL, NULL};
        CHECK_GRADCHECK(f_bn, &plain, 1, in);
        tg_tensor *rm = tt_tensor(TG_FLOAT32, 1, &C, (double[]){0.1, -0.2, 0.3});
        tg_tensor *rv = tt_tensor(TG_FLOAT32, 1, &C, (double[]){1.5, 0.5, 2});
        bn_mode eval = {false, true, rm, rv};
        CHECK_GRADCHECK(f_bn, &eval, 3, in);
    }
}

static void test_layer_norm_gradcheck(void)
{
    int64_t shape[3] = {2, 3, 4};
    for (int n_axes = 1; n_axes <= 2; n_axes++) {
        const int64_t *ps = shape + 3 - n_axes;
        tg_tensor *in[3] = {tt_rand(3, shape, -2, 2), tt_rand(n_axes, ps, 0.5, 1.5),
                            tt_rand(n_axes, ps, -1, 1)};
        CHECK_GRADCHECK(f_ln, &n_axes, 3, in);
        CHECK_GRADCHECK(f_ln, &n_axes, 1, in);
    }
}

/* d/d in[k] of sum(f(in) * r) with create_graph (tt_grad_of_fn): the
 * composite rules, differentiated again by gradcheck (their statistics
 * outputs included); r2 is a fixed upstream gradient of that, for the
 * third order */
typedef struct gg {
    tt_grad_of d1;
    tg_tensor *r2;
} gg;

static void test_grad_of_grad(void)
{
    int64_t xs[4] = {3, 2, 2, 2}, C = 2;
    bn_mode train = {true, true, NULL, NULL};
    /* k = 2 (bias) is left out: its gradient sum(r) does not depend on the inputs */
    for (int k = 0; k < 2; k++) {
        tg_tensor *in[3] = {tt_rand(4, xs, -2, 2), tt_rand(1, &C, 0.5, 1.5),
                            tt_rand(1, &C, -1, 1)};
        tt_grad_of g = {f_bn, &train, tt_rand(4, xs, -1, 1), k};
        tg_set_requires_grad(g.r, false);
        CHECK_GRADCHECK(tt_grad_of_fn, &g, 3, in);
    }
    int64_t ls[2] = {3, 4}, K = 4;
    int one = 1;
    for (int k = 0; k < 2; k++) {
        tg_tensor *in[3] = {tt_rand(2, ls, -2, 2), tt_rand(1, &K, 0.5, 1.5),
                            tt_rand(1, &K, -1, 1)};
        tt_grad_of g = {f_ln, &one, tt_rand(2, ls, -1, 1), k};
        tg_set_requires_grad(g.r, false);
        CHECK_GRADCHECK(tt_grad_of_fn, &g, 3, in);
    }
}

/* third order: the second-order graph runs the composite rules with
 * non-zero gradients reaching the statistics outputs */
static tg_tensor *f_grad2(int n, tg_tensor *const *in, void *user)
{
    gg *g = user;
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *d1 = tt_grad_of_fn(n, in, &g->d1), *res = NULL, *out = NULL;
    if (d1 && tg_autograd_grad(1, &d1, &g->r2, 1, &in[0], &res, true, true) == TG_OK)
        out = tg_mul_scalar(res, 1.0);
    tg_release(res);
    tg_set_grad_enabled(was);
    return out;
}

static void test_third_order(void)
{
    int64_t xs[3] = {3, 2, 2}, C = 2;
    bn_mode train = {true, true, NULL, NULL};
    tg_tensor *in[3] = {tt_rand(3, xs, -2, 2), tt_rand(1, &C, 0.5, 1.5),
                        tt_rand(1, &C, -1, 1)};
    gg g = {{f_bn, &train, tt_rand(3, xs, -1, 1), 0}, tt_rand(3, xs, -1, 1)};
    tg_set_requires_grad(g.d1.r, false);
    tg_set_requires_grad(g.r2, false);
    CHECK_GRADCHECK(f_grad2, &g, 3, in);
    int64_t ls[2] = {2, 3}, K = 3;
    int one = 1;
    tg_tensor *lin[3] = {tt_rand(2, ls, -2, 2), tt_rand(1, &K, 0.5, 1.5),
                         tt_rand(1, &K, -1, 1)};
    gg h = {{f_ln, &one, tt_rand(2, ls, -1, 1), 0}, tt_rand(2, ls, -1, 1)};
    tg_set_requires_grad(h.d1.r, false);
    tg_set_requires_grad(h.r2, false);
    CHECK_GRADCHECK(f_grad2, &h, 3, lin);
}

/* second order, where gradients reach the statistics outputs: the fused
 * rule (create_graph off) and the composite one (on) give the same values */
static void check_second_order_paths(gg *g, tg_tensor **in)
{
    tg_tensor *d1 = tt_grad_of_fn(3, in, &g->d1), *a = NULL, *b = NULL;
    CHECK_OK(tg_autograd_grad(1, &d1, &g->r2, 1, &in[0], &a, true, false));
    CHECK_OK(tg_autograd_grad(1, &d1, &g->r2, 1, &in[0], &b, true, true));
    double *v = tt_values(a);
    CHECK_TENSOR(b, v, 1e-10);
    free(v);
    tg_release(a);
    tg_release(b);
}

static void test_second_order_paths_agree(void)
{
    int64_t xs[4] = {3, 2, 2, 2}, C = 2;
    bn_mode train = {true, true, NULL, NULL};
    tg_tensor *in[3] = {tt_rand(4, xs, -2, 2), tt_rand(1, &C, 0.5, 1.5),
                        tt_rand(1, &C, -1, 1)};
    gg g = {{f_bn, &train, tt_rand(4, xs, -1, 1), 0}, tt_rand(4, xs, -1, 1)};
    check_second_order_paths(&g, in);
    int64_t ls[2] = {3, 4}, K = 4;
    int one = 1;
    tg_tensor *lin[3] = {tt_rand(2, ls, -2, 2), tt_rand(1, &K, 0.5, 1.5),
                         tt_rand(1, &K, -1, 1)};
    gg h = {{f_ln, &one, tt_rand(2, ls, -1, 1), 0}, tt_rand(2, ls, -1, 1)};
    check_second_order_paths(&h, lin);
}

/* the fused first-order backward and the composite one agree */
static void check_paths_agree(tg_gradcheck_fn f, void *user, tg_tensor **in, double tol)
{
    tg_tensor *fused[3], *composite[3];
    for (int pass = 0; pass < 2; pass++) {
        tg_tensor *y = f(3, in, user);
        tg_tensor *r = tg_cos(tg_detach(y)); /* a non-trivial upstream gradient */
        tg_tensor **res = pass ? composite : fused;
        CHECK_OK(tg_autograd_grad(1, &y, &r, 3, in, res, false, pass == 1));
    }
    for (int i = 0; i < 3; i++) {
        double *v = tt_values(fused[i]);
        CHECK_TENSOR(composite[i], v, tol);
        free(v);
        tg_release(fused[i]);
        tg_release(composite[i]);
    }
}

static void test_fused_matches_composite(void)
{
    int64_t xs[4] = {4, 3, 3, 2}, C = 3;
    bn_mode train = {true, true, NULL, NULL};
    tg_tensor *in[3] = {tt_rand(4, xs, -2, 2), tt_rand(1, &C, 0.5, 1.5),
                        tt_rand(1, &C, -1, 1)};
    check_paths_agree(f_bn, &train, in, 1e-12);
    tg_tensor *in32[3] = {tg_detach(tg_cast(in[0], TG_FLOAT32)),
                          tg_detach(tg_cast(in[1], TG_FLOAT32)),
                          tg_detach(tg_cast(in[2], TG_FLOAT32))};
    for (int i = 0; i < 3; i++)
        tg_set_requires_grad(in32[i], true);
    check_paths_agree(f_bn, &train, in32, 1e-4);
    int64_t ls[3] = {2, 5, 6};
    int two = 2;
    tg_tensor *lin[3] = {tt_rand(3, ls, -2, 2), tt_rand(2, ls + 1, 0.5, 1.5),
                         tt_rand(2, ls + 1, -1, 1)};
    check_paths_agree(f_ln, &two, lin, 1e-12);
}

/* large enough to run on several threads */
static void test_large_parallel(void)
{
    int64_t xs[4] = {8, 16, 32, 32}, C = 16;
    tg_generator *gen = tg_generator_new(3);
    tg_tensor *x = tg_rand_normal(gen, TG_FLOAT32, 4, xs, 1, 2);
    double *xv = tt_values(x);
    double *ref = malloc((size_t)tg_numel(x) * sizeof *ref), mean[16], var[16];
    ref_batch_norm(xv, 8, C, 1024, NULL, NULL, 1e-5, ref, mean, var);
    CHECK_TENSOR(tg_batch_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 1e-5), ref, 1e-4);
    ref_layer_norm(xv, 8 * 16, 1024, NULL, NULL, 1e-5, ref);
    CHECK_TENSOR(tg_layer_norm(x, 2, NULL, NULL, 1e-5), ref, 1e-4);
    free(xv);
    free(ref);
    tg_generator_free(gen);
}

/* ---- errors -------------------------------------------------------------------------- */
static void test_errors(void)
{
    int64_t C3 = 3, C4 = 4;
    tg_tensor *x = tg_ones(TG_FLOAT32, 4, (int64_t[]){2, 3, 2, 2});
    tg_tensor *c3 = tg_ones(TG_FLOAT32, 1, &C3), *c4 = tg_ones(TG_FLOAT32, 1, &C4);
    CHECK_ERROR(tg_batch_norm(x, NULL, NULL, c4, NULL, true, 0.1, 1e-5), TG_ERR_SHAPE,
                "weight has shape [4], expected [3]");
    CHECK_ERROR(tg_batch_norm(x, NULL, NULL, c3, c4, true, 0.1, 1e-5), TG_ERR_SHAPE,
                "bias");
    CHECK_ERROR(tg_batch_norm(x, c4, c3, NULL, NULL, true, 0.1, 1e-5), TG_ERR_SHAPE,
                "running_mean");
    CHECK_ERROR(tg_batch_norm(x, c3, c4, NULL, NULL, false, 0.1, 1e-5), TG_ERR_SHAPE,
                "running_var");
    CHECK_ERROR(tg_batch_norm(x, c3, tg_ones(TG_FLOAT32, 2, (int64_t[]){1, 3}), NULL, NULL,
                              false, 0.1, 1e-5), TG_ERR_SHAPE, "running_var");
    CHECK_ERROR(tg_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5), TG_ERR_ARG,
                "running_mean and running_var");
    CHECK_ERROR(tg_batch_norm(tg_ones(TG_FLOAT32, 1, &C3), NULL, NULL, NULL, NULL, true,
                              0.1, 1e-5), TG_ERR_SHAPE, "at least 2 dims");
    CHECK_ERROR(tg_batch_norm(tg_ones(TG_FLOAT32, 2, (int64_t[]){1, 3}), NULL, NULL, NULL,
                              NULL, true, 0.1, 1e-5), TG_ERR_SHAPE, "more than 1 value");
    CHECK_ERROR(tg_batch_norm(tg_ones(TG_INT32, 2, (int64_t[]){2, 3}), NULL, NULL, NULL,
                              NULL, true, 0.1, 1e-5), TG_ERR_DTYPE, "int32");
    CHECK_ERROR(tg_batch_norm(x, tg_zeros(TG_INT64, 1, &C3), NULL, NULL, NULL, true, 0.1,
                              1e-5), TG_ERR_DTYPE, "running_mean");
    CHECK_ERROR(tg_batch_norm(NULL, NULL, NULL, NULL, NULL, true, 0.1, 1e-5), TG_ERR_ARG,
                "NULL");
    /* layer_norm */
    CHECK_ERROR(tg_layer_norm(x, 0, NULL, NULL, 1e-5), TG_ERR_INDEX, "last 0 axes");
    CHECK_ERROR(tg_layer_norm(x, 5, NULL, NULL, 1e-5), TG_ERR_INDEX, "expected 1 to 4");
    CHECK_ERROR(tg_layer_norm(x, 1, c3, NULL, 1e-5), TG_ERR_SHAPE,
                "weight has shape [3], expected [2]");
    CHECK_ERROR(tg_layer_norm(x, 2, NULL, tg_ones(TG_FLOAT32, 1, &C4), 1e-5), TG_ERR_SHAPE,
                "bias");
    CHECK_ERROR(tg_layer_norm(tg_ones(TG_UINT8, 1, &C3), 1, NULL, NULL, 1e-5),
                TG_ERR_DTYPE, "uint8");
}

int main(void)
{
    RUN(test_batch_norm_train_forward);
    RUN(test_batch_norm_hand_computed);
    RUN(test_batch_norm_eval);
    RUN(test_layer_norm_forward);
    RUN(test_batch_norm_gradcheck);
    RUN(test_layer_norm_gradcheck);
    RUN(test_grad_of_grad);
    RUN(test_third_order);
    RUN(test_second_order_paths_agree);
    RUN(test_fused_matches_composite);
    RUN(test_large_parallel);
    RUN(test_errors);
    return tt_finish();
}
