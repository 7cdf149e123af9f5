/* Gradients where an op has a kink or a tie, against PyTorch's choice
 * (issue 10). The expected values were obtained with PyTorch 1.13
 * (/usr/bin/python3, float64 tensors, y.backward(torch.ones_like(y))),
 * e.g. torch.tensor([-1., 1., 0., -2., 2.]).clamp(-1, 1) gives the
 * gradient [1, 1, 1, 0, 0]. Each case runs eagerly (tg_autograd_grad)
 * and as a graph (tg_graph_gradients and a session): one rule serves
 * both, but both are what users call. The conventions are stated in
 * include/tg/ops.h. */
#include "harness.h"

#include <string.h>

typedef tg_tensor *(*fn2)(tg_tensor *a, tg_tensor *b);

/* grads of sum(f(a[, b])) with respect to each input, eager and graph */
static void expect_grads(fn2 f, int n, const int64_t *len, const double *const *x,
                         const double *const *want, const char *what)
{
    tg_scope_begin();
    tg_tensor *in[2], *eager[2];
    for (int i = 0; i < n; i++) {
        in[i] = tt_tensor(TG_FLOAT64, 1, &len[i], x[i]);
        tg_set_requires_grad(in[i], true);
    }
    tg_tensor *y = f(in[0], n > 1 ? in[1] : NULL);
    tg_tensor *s = tg_sum(y, 0, NULL, false);
    CHECK_OK(tg_autograd_grad(1, &s, NULL, n, in, eager, false, false));

    tg_graph *g = tg_graph_new("kink");
    tg_tensor *q[2], *dq[2], *got[2];
    for (int i = 0; i < n; i++)
        q[i] = tg_placeholder(g, NULL, TG_FLOAT64, 1, &len[i]);
    tg_graph_begin(g);
    tg_tensor *sy = tg_sum(f(q[0], n > 1 ? q[1] : NULL), 0, NULL, false);
    tg_graph_end();
    CHECK_OK(tg_graph_gradients(g, 1, &sy, NULL, n, q, dq));
    tg_session *sess = tg_session_new(g);
    CHECK_OK(tg_session_run(sess, n, q, in, n, dq, got, 0, NULL));
    for (int i = 0; i < n; i++) {
        printf("  %s, input %d\n", what, i);
        CHECK_TENSOR(eager[i], want[i], 1e-12);
        CHECK_TENSOR(got[i], want[i], 1e-12);
        tg_release(eager[i]);
    }
    tg_session_free(sess);
    tg_graph_free(g);
    tg_scope_end();
}

#define CASE1(f, xs, ws)                                                    \
    expect_grads(f, 1, (const int64_t[]){sizeof(xs) / sizeof(double)},      \
                 (const double *const[]){xs}, (const double *const[]){ws}, #f)

static tg_tensor *clamp_pm1(tg_tensor *x, tg_tensor *u) { (void)u; return tg_clamp(x, -1, 1); }
static tg_tensor *relu1(tg_tensor *x, tg_tensor *u) { (void)u; return tg_relu(x); }
static tg_tensor *abs1(tg_tensor *x, tg_tensor *u) { (void)u; return tg_abs(x); }
static tg_tensor *leaky01(tg_tensor *x, tg_tensor *u) { (void)u; return tg_leaky_relu(x, 0.1); }
static tg_tensor *elu2(tg_tensor *x, tg_tensor *u) { (void)u; return tg_elu(x, 2.0); }
static tg_tensor *hardswish1(tg_tensor *x, tg_tensor *u) { (void)u; return tg_hardswish(x); }
static tg_tensor *sign1(tg_tensor *x, tg_tensor *u) { (void)u; return tg_sign(x); }
static tg_tensor *hardtanh1(tg_tensor *x, tg_tensor *u) { (void)u; return tg_hardtanh(x, -1, 1); }
static tg_tensor *relu6_(tg_tensor *x, tg_tensor *u) { (void)u; return tg_relu6(x); }
static tg_tensor *softshrink1(tg_tensor *x, tg_tensor *u) { (void)u; return tg_softshrink(x, 0.5); }
static tg_tensor *hardshrink1(tg_tensor *x, tg_tensor *u) { (void)u; return tg_hardshrink(x, 0.5); }
static tg_tensor *threshold1(tg_tensor *x, tg_tensor *u) { (void)u; return tg_threshold(x, 0.5, -2); }
static tg_tensor *celu2(tg_tensor *x, tg_tensor *u) { (void)u; return tg_celu(x, 2.0); }
static tg_tensor *max_all(tg_tensor *x, tg_tensor *u) { (void)u; return tg_max(x, 0, NULL, false); }
static tg_tensor *min_all(tg_tensor *x, tg_tensor *u) { (void)u; return tg_min(x, 0, NULL, false); }

static tg_tensor *max_rows(tg_tensor *x, tg_tensor *u) /* x as [2, 2], max over dim 1 */
{
    (void)u;
    return tg_max(tg_reshape(x, 2, (const int64_t[]){2, 2}), 1, (const int[]){1}, false);
}

static tg_tensor *min_rows(tg_tensor *x, tg_tensor *u) /* x as [2, 3], min over dim 1 */
{
    (void)u;
    return tg_min(tg_reshape(x, 2, (const int64_t[]){2, 3}), 1, (const int[]){1}, false);
}

static void test_clamp_bounds_pass_through(void)
{
    /* torch.clamp: the bounds belong to the pass-through region */
    CASE1(clamp_pm1, ((const double[]){-1, 1, 0, -2, 2}), ((const double[]){1, 1, 1, 0, 0}));
    CASE1(clamp_pm1, ((const double[]){NAN}), ((const double[]){0}));
}

static void test_activations_at_zero(void)
{
    CASE1(relu1, ((const double[]){0, 1, -1, NAN}), ((const double[]){0, 1, 0, 1}));
    CASE1(abs1, ((const double[]){0, 1, -1}), ((const double[]){0, 1, -1}));
    CASE1(sign1, ((const double[]){0, 1}), ((const double[]){0, 0}));
    CASE1(leaky01, ((const double[]){0, 1, -1}), ((const double[]){0.1, 1, 0.1}));
    CASE1(elu2, ((const double[]){0}), ((const double[]){2}));
    CASE1(hardswish1, ((const double[]){-3, 3, 0}), ((const double[]){-0.5, 1.5, 0.5}));
}

/* F.hardtanh, F.relu6, the shrinks, F.threshold, F.celu at their kinks;
 * at NaN the values of PyTorch's vectorised loops (tensors of 16 elements
 * or more; its scalar loop passes a NaN's gradient through hardtanh and
 * the shrinks), which threshold shares with relu */
static void test_clipping_activations_at_kinks(void)
{
    CASE1(hardtanh1, ((const double[]){-1, 1, 0, -2, 2, NAN}), ((const double[]){0, 0, 1, 0, 0, 0}));
    CASE1(relu6_, ((const double[]){0, 6, 3, -1, 7, NAN}), ((const double[]){0, 0, 1, 0, 0, 0}));
    CASE1(softshrink1, ((const double[]){-0.5, 0.5, 0, -1, 1, NAN}),
          ((const double[]){0, 0, 0, 1, 1, 0}));
    CASE1(hardshrink1, ((const double[]){-0.5, 0.5, 0, -1, 1, NAN}),
          ((const double[]){0, 0, 0, 1, 1, 0}));
    CASE1(threshold1, ((const double[]){0.5, 0, 1, NAN}), ((const double[]){0, 0, 1, 1}));
    CASE1(celu2, ((const double[]){0}), ((const double[]){1}));
}

static void test_reduction_ties_share(void)
{
    CASE1(max_all, ((const double[]){1, 3, 3, 2}), ((const double[]){0, 0.5, 0.5, 0}));
    CASE1(max_all, ((const double[]){2, 2, 2}), ((const double[]){1.0 / 3, 1.0 / 3, 1.0 / 3}));
    CASE1(min_all, ((const double[]){1, 1, 3, 2}), ((const double[]){0.5, 0.5, 0, 0}));
    CASE1(max_rows, ((const double[]){3, 3, 1, 2}), ((const double[]){0.5, 0.5, 0, 1}));
    CASE1(min_rows, ((const double[]){1, 1, 1, 2, 0, 0}),
          ((const double[]){1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 0.5, 0.5}));
}

static void test_maximum_minimum_ties_split(void)
{
    const int64_t len[2] = {3, 3};
    const double a[] = {1, 3, 2}, b[] = {1, 2, 5};
    expect_grads(tg_maximum, 2, len, (const double *const[]){a, b},
                 (const double *const[]){(const double[]){0.5, 1, 0},
                                         (const double[]){0.5, 0, 1}}, "maximum");
    expect_grads(tg_minimum, 2, len, (const double *const[]){a, b},
                 (const double *const[]){(const double[]){0.5, 0, 1},
                                         (const double[]){0.5, 1, 0}}, "minimum");
}

/* max pooling: the first maximum of each window (row-major) takes it all */
static tg_tensor *pool_2x2(tg_tensor *x, tg_tensor *u)
{
    (void)u;
    tg_pool2d_opts o = {.kernel = {2, 2}};
    return tg_max_pool2d(tg_reshape(x, 4, (const int64_t[]){1, 1, 2, 2}), &o);
}

static tg_tensor *pool_overlap(tg_tensor *x, tg_tensor *u)
{
    (void)u;
    tg_pool2d_opts o = {.kernel = {2, 2}, .stride = {1, 1}};
    return tg_max_pool2d(tg_reshape(x, 4, (const int64_t[]){1, 1, 3, 3}), &o);
}

static tg_tensor *pool_padded(tg_tensor *x, tg_tensor *u)
{
    (void)u;
    tg_pool2d_opts o = {.kernel = {2, 2}, .padding = {1, 1}};
    return tg_max_pool2d(tg_reshape(x, 4, (const int64_t[]){1, 1, 2, 2}), &o);
}

static void test_max_pool_ties_first(void)
{
    CASE1(pool_2x2, ((const double[]){1, 1, 1, 1}), ((const double[]){1, 0, 0, 0}));
    CASE1(pool_overlap, ((const double[]){1, 1, 1, 1, 1, 1, 1, 1, 1}),
          ((const double[]){1, 1, 0, 1, 1, 0, 0, 0, 0}));
    CASE1(pool_padded, ((const double[]){1, 1, 1, 1}), ((const double[]){1, 1, 1, 1}));
}

int main(void)
{
    RUN(test_clamp_bounds_pass_through);
    RUN(test_activations_at_zero);
    RUN(test_clipping_activations_at_kinks);
    RUN(test_reduction_ties_share);
    RUN(test_maximum_minimum_ties_split);
    RUN(test_max_pool_ties_first);
    return tt_finish();
}
