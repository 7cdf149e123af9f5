/* Tests for softmax, log_softmax, dropout and the losses (mse_loss,
 * cross_entropy, nll_loss, bce_with_logits): forward against naive double
 * references and hand-computed values, gradients for every reduction,
 * and error paths. */
#include "harness.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/vmath.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>

/* ---- softmax ----------------------------------------------------------------------- */
/* naive (log_)softmax of x with shape [outer, n, inner] over n */
static void ref_softmax(const double *x, int64_t outer, int64_t n, int64_t inner,
                        bool log_form, double *y)
{
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            double m = -INFINITY, s = 0;
            for (int64_t k = 0; k < n; k++)
                m = fmax(m, x[(o * n + k) * inner + j]);
            for (int64_t k = 0; k < n; k++)
                s += exp(x[(o * n + k) * inner + j] - m);
            for (int64_t k = 0; k < n; k++) {
                int64_t i = (o * n + k) * inner + j;
                y[i] = log_form ? x[i] - m - log(s) : exp(x[i] - m) / s;
            }
        }
}

static void check_softmax(tg_dtype dt, int ndim, const int64_t *shape, int axis)
{
    int a = axis < 0 ? axis + ndim : axis;
    int64_t outer = 1, inner = 1, numel = 1;
    for (int i = 0; i < ndim; i++) {
        numel *= shape[i];
        if (i < a) outer *= shape[i];
        if (i > a) inner *= shape[i];
    }
    tg_tensor *x = tt_rand_dtype(dt, ndim, shape, -5, 5);
    double *xv = tt_values(x), *ref = malloc((size_t)numel * sizeof *ref);
    double tol = dt == TG_FLOAT32 ? 2e-6 : 1e-13;
    for (int lg = 0; lg < 2; lg++) {
        ref_softmax(xv, outer, shape[a], inner, lg, ref);
        tg_tensor *y = lg ? tg_log_softmax(x, axis) : tg_softmax(x, axis);
        CHECK(y && tg_dtype_of(y) == dt);
        CHECK_TENSOR(y, ref, lg ? 10 * tol : tol);
    }
    free(xv);
    free(ref);
}

static void test_softmax_forward(void)
{
    int64_t s3[3] = {3, 4, 5}, big[3] = {2, 3, 300};
    for (int dt = TG_FLOAT32; dt <= TG_FLOAT64; dt++) {
        for (int axis = -3; axis < 3; axis++)
            check_softmax((tg_dtype)dt, 3, s3, axis);
        check_softmax((tg_dtype)dt, 3, big, 1); /* inner > one column block */
        check_softmax((tg_dtype)dt, 3, big, 0);
        check_softmax((tg_dtype)dt, 2, (int64_t[]){64, 1000}, -1); /* parallel rows */
    }
}

static void test_softmax_values(void)
{
    /* uniform -> 1/n; huge logits stay finite */
    tg_tensor *u = tg_full(TG_FLOAT32, 2, (int64_t[]){2, 4}, 7.0);
    CHECK_TENSOR(tg_softmax(u, 1), ((double[]){.25, .25, .25, .25, .25, .25, .25, .25}), 1e-7);
    tg_tensor *h = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, (double[]){1000, 1001, 1002});
    double e = exp(1.0), s = 1 + e + e * e;
    CHECK_TENSOR(tg_softmax(h, 0), ((double[]){1 / s, e / s, e * e / s}), 1e-6);
    CHECK_TENSOR(tg_log_softmax(h, 0), ((double[]){-2 - log(1 + 1 / e + 1 / (e * e)),
                                                   -1 - log(1 + 1 / e + 1 / (e * e)),
                                                   -log(1 + 1 / e + 1 / (e * e))}), 1e-4);
    tg_tensor *n = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){-1e300, 0});
    CHECK_TENSOR(tg_softmax(n, 0), ((double[]){0, 1}), 0);
    /* a 0-d input is its own axis */
    CHECK_NEAR(tg_item(tg_softmax(tg_scalar(TG_FLOAT64, 3), 0)), 1, 0);
    CHECK_NEAR(tg_item(tg_log_softmax(tg_scalar(TG_FLOAT64, 3), -1)), 0, 0);
    /* non-contiguous input */
    tg_tensor *x = tt_rand_dtype(TG_FLOAT64, 2, (int64_t[]){4, 3}, -2, 2);
    tg_tensor *xt = tg_transpose(x, 0, 1);
    double *want = tt_values(tg_softmax(tg_contiguous(xt), 1));
    CHECK_TENSOR(tg_softmax(xt, 1), want, 1e-15);
    free(want);
}

/* float32 (log_)softmax of one row in the documented order (16 lanes of
 * maxima from x[0] and of sums, the tail, then the lanes; the exp of
 * kernels/cpu/vmath.h): what every path over the last dim must give bit
 * for bit, rows of short ones taken a block at a time */
static void ref_row_f32(const float *x, int64_t n, bool log_form, float *y)
{
    float mx[16], acc[16] = {0}, m, s = 0;
    for (int j = 0; j < 16; j++)
        mx[j] = x[0];
    int64_t k = 0;
    for (; k + 16 <= n; k += 16)
        for (int j = 0; j < 16; j++)
            mx[j] = x[k + j] > mx[j] ? x[k + j] : mx[j];
    m = mx[0];
    for (int j = 1; j < 16; j++)
        m = mx[j] > m ? mx[j] : m;
    for (; k < n; k++)
        m = x[k] > m ? x[k] : m;
    float *e = malloc((size_t)n * sizeof *e);
    for (k = 0; k < n; k++)
        e[k] = tg__vexpf(x[k] - m);
    for (k = 0; k + 16 <= n; k += 16)
        for (int j = 0; j < 16; j++)
            acc[j] += e[k + j];
    for (; k < n; k++)
        s += e[k];
    for (int j = 0; j < 16; j++)
        s += acc[j];
    for (k = 0; k < n; k++)
        y[k] = log_form ? x[k] - (m + logf(s)) : e[k] * (1.0f / s);
    free(e);
}

/* every row length the block path takes at some instruction set (up to
 * 256 with AVX-512, 1024 below) and past it, at every level */
static int64_t next_length(int64_t n)
{
    static const int64_t longer[] = {128, 255, 256, 257, 511, 1000, 1024, 1025, 1100, 0};
    if (n < 36)
        return n + 1;
    if (n < 100)
        return n + 9;
    for (int i = 0; longer[i]; i++)
        if (longer[i] > n)
            return longer[i];
    return 1 << 30;
}

static void test_softmax_short_rows(void)
{
    unsigned seed = 3;
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
    tg__cpu_force((tg__isa)isa);
    for (int64_t n = 1; n <= 1100; n = next_length(n))
        for (int64_t m = 1; m <= 300; m += m < 20 ? 3 : 140) {
            int64_t len = m * n;
            float *x = malloc((size_t)len * sizeof *x), *want = malloc((size_t)len * sizeof *want);
            double *xd = malloc((size_t)len * sizeof *xd);
            for (int64_t i = 0; i < len; i++) {
                seed = seed * 1103515245u + 12345u;
                unsigned r = (seed >> 8) % 211;
                /* ties; now and then NaN, an infinity or a whole row of -inf */
                x[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY
                     : (float)(r % 37) / 4.0f - 4.5f;
                if ((i / n) % 11 == 5)
                    x[i] = -INFINITY;
                xd[i] = x[i];
            }
            tg_tensor *t = tt_tensor(TG_FLOAT32, 2, (int64_t[]){m, n}, xd);
            for (int lg = 0; lg < 2; lg++) {
                for (int64_t r = 0; r < m; r++)
                    ref_row_f32(x + r * n, n, lg, want + r * n);
                tg_tensor *y = lg ? tg_log_softmax(t, 1) : tg_softmax(t, -1);
                const float *got = y ? tg_data(y) : NULL;
                int64_t bad = 0;
                for (int64_t i = 0; got && i < len; i++)
                    bad += !((got[i] != got[i] && want[i] != want[i]) ||
                             memcmp(&got[i], &want[i], sizeof *got) == 0);
                if (!got || bad)
                    tt_fail(__FILE__, __LINE__, "%s, %s of [%lld, %lld]: %lld elements differ "
                            "from the row order", tg__isa_name((tg__isa)isa),
                            lg ? "log_softmax" : "softmax", (long long)m, (long long)n,
                            (long long)bad);
                tt_checks++;
            }
            free(x);
            free(xd);
            free(want);
        }
    }
    tg__cpu_force(tg__cpu_detected());
}

static tg_tensor *f_softmax(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return tg_softmax(in[0], *(int *)user);
}

static tg_tensor *f_log_softmax(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return tg_log_softmax(in[0], *(int *)user);
}

static void test_softmax_grad(void)
{
    int64_t s[3] = {2, 3, 4};
    int axes[3] = {0, -1, 1};
    for (int i = 0; i < 3; i++) {
        tg_tensor *in[1] = {tt_rand(3, s, -2, 2)};
        CHECK_GRADCHECK(f_softmax, &axes[i], 1, in);
        CHECK_GRADCHECK(f_log_softmax, &axes[i], 1, in);
        for (int lg = 0; lg < 2; lg++) {
            tt_grad_of g = {lg ? f_log_softmax : f_softmax, &axes[i], tt_rand(3, s, -1, 1),
                            0};
            tg_set_requires_grad(g.r, false);
            CHECK_GRADCHECK(tt_grad_of_fn, &g, 1, in);
        }
    }
}

/* softmax_grad, the one-op backward softmax's rule calls: float32 rows in
 * vector lanes (64 and 37 columns: whole lanes and a tail) and columns of
 * an earlier axis against y (dy - sum(dy y)) in double; float64 gradients
 * are gradchecked through the sample table (op_samples.c) */
static void check_softmax_grad_op(int ndim, const int64_t *shape, int axis)
{
    int64_t outer = 1, n = shape[axis], inner = 1, numel = 1;
    for (int i = 0; i < ndim; i++) {
        numel *= shape[i];
        if (i < axis) outer *= shape[i];
        if (i > axis) inner *= shape[i];
    }
    tg_tensor *y = tg_softmax(tt_rand_dtype(TG_FLOAT32, ndim, shape, -3, 3), axis);
    tg_tensor *dy = tt_rand_dtype(TG_FLOAT32, ndim, shape, -1, 1);
    double *yv = tt_values(y), *dv = tt_values(dy), *ref = malloc((size_t)numel * sizeof *ref);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            double s = 0;
            for (int64_t k = 0; k < n; k++)
                s += dv[(o * n + k) * inner + j] * yv[(o * n + k) * inner + j];
            for (int64_t k = 0; k < n; k++) {
                int64_t i = (o * n + k) * inner + j;
                ref[i] = yv[i] * (dv[i] - s);
            }
        }
    tg_tensor *in[2] = {dy, y};
    tg_attr at = {.name = "axis", .type = TG_ATTR_INT, .u.i = axis};
    tg_tensor *dx = tg_op_call(tg_op_find("softmax_grad"), 2, in, &at, 1);
    CHECK(dx && tg_dtype_of(dx) == TG_FLOAT32);
    CHECK_TENSOR(dx, ref, 1e-6);
    /* softmax's own gradient is that op's result */
    tg_tensor *x = tt_rand_dtype(TG_FLOAT32, ndim, shape, -3, 3);
    tg_set_requires_grad(x, true);
    tg_tensor *sy = tg_softmax(x, axis);
    CHECK_OK(tg_backward(sy, dy, false));
    tg_tensor *in2[2] = {dy, sy};
    double *want = tt_values(tg_op_call(tg_op_find("softmax_grad"), 2, in2, &at, 1));
    CHECK_TENSOR(tg_grad(x), want, 0);
    free(want);
    free(yv);
    free(dv);
    free(ref);
}

static void test_softmax_grad_op(void)
{
    check_softmax_grad_op(2, (int64_t[]){8, 64}, 1);
    check_softmax_grad_op(3, (int64_t[]){3, 5, 37}, 2);
    check_softmax_grad_op(3, (int64_t[]){3, 5, 4}, 1);
    check_softmax_grad_op(2, (int64_t[]){300, 400}, 1); /* split across the pool */
    /* mismatched inputs: a clear error */
    tg_tensor *in[2] = {tt_rand(2, (int64_t[]){2, 3}, -1, 1), tt_rand(2, (int64_t[]){3, 2}, 0, 1)};
    tg_attr at = {.name = "axis", .type = TG_ATTR_INT, .u.i = 1};
    CHECK(!tg_op_call(tg_op_find("softmax_grad"), 2, in, &at, 1));
    CHECK(strstr(tg_last_error(), "softmax_grad") != NULL);
}

/* masked rows: -inf logits get 0, a NaN poisons its row (float32 lanes) */
static void test_softmax_masked_rows(void)
{
    float v[40];
    for (int i = 0; i < 40; i++)
        v[i] = i < 20 ? -INFINITY : (float)(i % 7) * 0.5f;
    tg_tensor *x = tg_from_data(TG_FLOAT32, 2, (int64_t[]){2, 20}, v);
    tg_tensor *y = tg_softmax(x, 1);
    double *yv = tt_values(y);
    int nan_row = 1, ok_row = 1;
    double sum = 0;
    for (int i = 0; i < 20; i++)
        nan_row &= isnan(yv[i]); /* all -inf: -inf - -inf is NaN, as PyTorch */
    for (int i = 20; i < 40; i++)
        sum += yv[i], ok_row &= yv[i] > 0;
    CHECK(nan_row && ok_row && fabs(sum - 1) < 1e-6);
    free(yv);
    v[25] = NAN;
    for (int i = 0; i < 20; i++)
        v[i] = i == 3 ? 1.0f : -INFINITY;
    y = tg_softmax(tg_from_data(TG_FLOAT32, 2, (int64_t[]){2, 20}, v), 1);
    yv = tt_values(y);
    CHECK(yv[3] == 1 && yv[0] == 0 && isnan(yv[20]) && isnan(yv[39]));
    free(yv);
}

/* ---- dropout --------------------------------------------------------------------------- */
static void test_dropout(void)
{
    int64_t n = 20000;
    tg_generator *gen = tg_generator_new(11), *same = tg_generator_new(11);
    tg_tensor *x = tt_rand_dtype(TG_FLOAT32, 1, &n, 1, 2);
    /* identity when not training or p == 0 */
    double *xv = tt_values(x);
    CHECK_TENSOR(tg_dropout(x, 0.5, false, gen), xv, 0);
    CHECK_TENSOR(tg_dropout(x, 0.0, true, gen), xv, 0);
    /* the mask is tg_rand_bernoulli(1 - p) of the generator, scaled by 1/(1-p) */
    tg_tensor *y = tg_dropout(x, 0.3, true, gen);
    double *mask = tt_values(tg_rand_bernoulli(same, 1, &n, 0.7));
    double *want = malloc((size_t)n * sizeof *want);
    int64_t zeros = 0;
    for (int64_t i = 0; i < n; i++) {
        want[i] = mask[i] ? xv[i] / 0.7 : 0;
        zeros += mask[i] == 0;
    }
    CHECK_TENSOR(y, want, 1e-5);
    CHECK_NEAR((double)zeros / (double)n, 0.3, 0.02);
    /* p == 1 drops everything; the gradient is zero, not NaN */
    tg_tensor *xg = tt_rand_dtype(TG_FLOAT64, 1, (int64_t[]){5}, -1, 1);
    tg_set_requires_grad(xg, true);
    tg_tensor *z = tg_dropout(xg, 1.0, true, gen);
    CHECK_TENSOR(z, ((double[]){0, 0, 0, 0, 0}), 0);
    CHECK_OK(tg_backward(tg_sum(z, 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(xg), ((double[]){0, 0, 0, 0, 0}), 0);
    /* gradient: the scaled mask */
    tg_tensor *ones = tg_ones(TG_FLOAT64, 1, (int64_t[]){64});
    tg_set_requires_grad(ones, true);
    tg_tensor *d = tg_dropout(ones, 0.5, true, gen);
    CHECK_OK(tg_backward(tg_sum(d, 0, NULL, false), NULL, false));
    double *dv = tt_values(d);
    CHECK_TENSOR(tg_grad(ones), dv, 0);
    free(dv), free(xv), free(mask), free(want);
    tg_generator_free(gen);
    tg_generator_free(same);
}

static void test_dropout_errors(void)
{
    tg_generator *gen = tg_generator_new(1);
    tg_tensor *x = tg_ones(TG_FLOAT32, 1, (int64_t[]){4});
    CHECK_ERROR(tg_dropout(x, -0.1, true, gen), TG_ERR_ARG, "[0, 1], got -0.1");
    CHECK_ERROR(tg_dropout(x, 1.5, true, gen), TG_ERR_ARG, "got 1.5");
    CHECK_ERROR(tg_dropout(x, 1.5, false, gen), TG_ERR_ARG, "[0, 1]");
    CHECK_ERROR(tg_dropout(x, NAN, true, gen), TG_ERR_ARG, "[0, 1]");
    CHECK_ERROR(tg_dropout(x, 0.5, true, NULL), TG_ERR_ARG, "generator");
    CHECK_ERROR(tg_dropout(tg_ones(TG_INT64, 1, (int64_t[]){4}), 0.5, true, gen),
                TG_ERR_DTYPE, "int64");
    tg_generator_free(gen);
}

/* ---- losses ------------------------------------------------------------------------------ */
static const tg_reduction reductions[3] = {TG_REDUCTION_MEAN, TG_REDUCTION_SUM,
                                           TG_REDUCTION_NONE};

/* the reduced reference for per-element losses l[0..n) */
static void reduce_ref(const double *l, int64_t n, tg_reduction r, double *out)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        s += l[i];
        if (r == TG_REDUCTION_NONE)
            out[i] = l[i];
    }
    if (r != TG_REDUCTION_NONE)
        out[0] = r == TG_REDUCTION_SUM ? s : s / (double)n;
}

static void check_reduced_shape(tg_tensor *y, tg_reduction r, int ndim, const int64_t *shape)
{
    if (r == TG_REDUCTION_NONE)
        tt_check_shape(y, shape, ndim, "loss", __FILE__, __LINE__);
    else
        CHECK(y && tg_ndim(y) == 0);
}

static void test_mse(void)
{
    int64_t s[2] = {3, 4};
    for (int dt = TG_FLOAT32; dt <= TG_FLOAT64; dt++) {
        tg_tensor *p = tt_rand_dtype((tg_dtype)dt, 2, s, -2, 2);
        tg_tensor *t = tt_rand_dtype((tg_dtype)dt, 2, s, -2, 2);
        double *pv = tt_values(p), *tv = tt_values(t), l[12], want[12];
        for (int i = 0; i < 12; i++)
            l[i] = (pv[i] - tv[i]) * (pv[i] - tv[i]);
        for (int k = 0; k < 3; k++) {
            reduce_ref(l, 12, reductions[k], want);
            tg_tensor *y = tg_mse_loss(p, t, reductions[k]);
            check_reduced_shape(y, reductions[k], 2, s);
            CHECK(y && tg_dtype_of(y) == (tg_dtype)dt);
            CHECK_TENSOR(y, want, dt == TG_FLOAT32 ? 1e-5 : 1e-12);
        }
        free(pv), free(tv);
    }
    tg_tensor *a = tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 3});
    tg_tensor *b = tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){0, 0});
    CHECK_NEAR(tg_item(tg_mse_loss(a, b, TG_REDUCTION_MEAN)), 5, 1e-6);
}

/* naive cross entropy of logits [N, C] row n and label */
static double ref_ce(const double *x, int64_t C, int64_t n, int64_t label)
{
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < C; c++)
        m = fmax(m, x[n * C + c]);
    for (int64_t c = 0; c < C; c++)
        s += exp(x[n * C + c] - m);
    return m + log(s) - x[n * C + label];
}

static void test_cross_entropy_forward(void)
{
    int64_t s[2] = {5, 4}, N = 5;
    double labv[5] = {0, 3, 1, 1, 2};
    for (int dt = TG_FLOAT32; dt <= TG_FLOAT64; dt++)
        for (int ldt = TG_INT32; ldt <= TG_INT64; ldt++) {
            tg_tensor *x = tt_rand_dtype((tg_dtype)dt, 2, s, -3, 3);
            tg_tensor *lab = tt_tensor((tg_dtype)ldt, 1, &N, labv);
            double *xv = tt_values(x), l[5], want[5];
            for (int n = 0; n < 5; n++)
                l[n] = ref_ce(xv, 4, n, (int64_t)labv[n]);
            for (int k = 0; k < 3; k++) {
                reduce_ref(l, 5, reductions[k], want);
                tg_tensor *ce = tg_cross_entropy(x, lab, reductions[k]);
                check_reduced_shape(ce, reductions[k], 1, &N);
                CHECK(ce && tg_dtype_of(ce) == (tg_dtype)dt);
                CHECK_TENSOR(ce, want, dt == TG_FLOAT32 ? 1e-5 : 1e-12);
                /* nll_loss of log_softmax is the same */
                CHECK_TENSOR(tg_nll_loss(tg_log_softmax(x, 1), lab, reductions[k]), want,
                             dt == TG_FLOAT32 ? 1e-5 : 1e-12);
            }
            free(xv);
        }
    /* uniform logits: log C for every sample */
    tg_tensor *u = tg_zeros(TG_FLOAT32, 2, (int64_t[]){3, 10});
    tg_tensor *lab = tt_tensor(TG_INT64, 1, (int64_t[]){3}, (double[]){0, 9, 4});
    CHECK_NEAR(tg_item(tg_cross_entropy(u, lab, TG_REDUCTION_MEAN)), log(10.0), 1e-6);
    CHECK_NEAR(tg_item(tg_cross_entropy(u, lab, TG_REDUCTION_SUM)), 3 * log(10.0), 1e-5);
    /* a confident right answer costs little */
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){1, 2}, (double[]){50, 0});
    tg_tensor *l0 = tt_tensor(TG_INT32, 1, (int64_t[]){1}, (double[]){0});
    CHECK_NEAR(tg_item(tg_cross_entropy(x, l0, TG_REDUCTION_MEAN)), log1p(exp(-50.0)), 1e-15);
}

static void test_nll_loss_forward(void)
{
    /* [N, C, d] scores with [N, d] labels, as for segmentation */
    int64_t s[3] = {2, 3, 4}, ls[2] = {2, 4};
    double labv[8] = {0, 1, 2, 2, 1, 1, 0, 2};
    tg_tensor *x = tt_rand_dtype(TG_FLOAT64, 3, s, -3, 0);
    tg_tensor *lab = tt_tensor(TG_INT64, 2, ls, labv);
    double *xv = tt_values(x), l[8], want[8];
    for (int n = 0; n < 2; n++)
        for (int j = 0; j < 4; j++)
            l[n * 4 + j] = -xv[(n * 3 + (int)labv[n * 4 + j]) * 4 + j];
    for (int k = 0; k < 3; k++) {
        reduce_ref(l, 8, reductions[k], want);
        tg_tensor *y = tg_nll_loss(x, lab, reductions[k]);
        check_reduced_shape(y, reductions[k], 2, ls);
        CHECK_TENSOR(y, want, 1e-14);
    }
    free(xv);
}

static void test_bce_forward(void)
{
    int64_t s[2] = {3, 4};
    for (int dt = TG_FLOAT32; dt <= TG_FLOAT64; dt++) {
        tg_tensor *x = tt_rand_dtype((tg_dtype)dt, 2, s, -4, 4);
        tg_tensor *t = tt_rand_dtype((tg_dtype)dt, 2, s, 0, 1);
        double *xv = tt_values(x), *tv = tt_values(t), l[12], want[12];
        for (int i = 0; i < 12; i++) {
            double p = 1 / (1 + exp(-xv[i]));
            l[i] = -(tv[i] * log(p) + (1 - tv[i]) * log(1 - p));
        }
        for (int k = 0; k < 3; k++) {
            reduce_ref(l, 12, reductions[k], want);
            tg_tensor *y = tg_bce_with_logits(x, t, reductions[k]);
            check_reduced_shape(y, reductions[k], 2, s);
            CHECK(y && tg_dtype_of(y) == (tg_dtype)dt);
            CHECK_TENSOR(y, want, dt == TG_FLOAT32 ? 1e-5 : 1e-12);
        }
        free(xv), free(tv);
    }
    /* stable at extreme logits */
    tg_tensor *x = tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, (double[]){100, -100, 100, -100});
    tg_tensor *t = tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, (double[]){1, 1, 0, 0});
    CHECK_TENSOR(tg_bce_with_logits(x, t, TG_REDUCTION_NONE),
                 ((double[]){0, 100, 100, 0}), 1e-5);
}

/* ---- loss gradients ---------------------------------------------------------------------------- */
typedef struct loss_case {
    tg_reduction r;
    tg_tensor *labels;
} loss_case;

static tg_tensor *f_mse(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return tg_mse_loss(in[0], in[1], ((loss_case *)user)->r);
}

static tg_tensor *f_bce(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return tg_bce_with_logits(in[0], in[1], ((loss_case *)user)->r);
}

static tg_tensor *f_ce(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    loss_case *c = user;
    return tg_cross_entropy(in[0], c->labels, c->r);
}

static tg_tensor *f_nll(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    loss_case *c = user;
    return tg_nll_loss(in[0], c->labels, c->r);
}

static void test_loss_gradcheck(void)
{
    int64_t s[2] = {4, 3}, N = 4, s3[3] = {2, 3, 2}, l3[2] = {2, 2};
    tg_tensor *lab = tt_tensor(TG_INT64, 1, &N, (double[]){2, 0, 1, 2});
    tg_tensor *lab32 = tt_tensor(TG_INT32, 1, &N, (double[]){1, 1, 0, 2});
    tg_tensor *lab3 = tt_tensor(TG_INT64, 2, l3, (double[]){0, 2, 1, 1});
    for (int k = 0; k < 3; k++) {
        loss_case c = {reductions[k], lab}, c32 = {reductions[k], lab32},
                  c3 = {reductions[k], lab3};
        tg_tensor *two[2] = {tt_rand(2, s, -2, 2), tt_rand(2, s, -2, 2)};
        CHECK_GRADCHECK(f_mse, &c, 2, two);
        tg_tensor *bce[2] = {tt_rand(2, s, -3, 3), tt_rand(2, s, 0, 1)};
        CHECK_GRADCHECK(f_bce, &c, 2, bce);
        tg_tensor *one[1] = {tt_rand(2, s, -2, 2)};
        CHECK_GRADCHECK(f_ce, &c, 1, one);
        CHECK_GRADCHECK(f_ce, &c32, 1, one);
        CHECK_GRADCHECK(f_nll, &c, 1, one);
        tg_tensor *k3[1] = {tt_rand(3, s3, -2, 2)};
        CHECK_GRADCHECK(f_nll, &c3, 1, k3);
        /* grad of grad: cross entropy's is the softmax Jacobian, bce's is
         * sigmoid'; nll_loss_grad's own rule runs in both */
        tt_grad_of g = {f_ce, &c,
                        k == 2 ? tt_rand(1, &N, -1, 1) : tg_ones(TG_FLOAT64, 0, NULL), 0};
        tg_set_requires_grad(g.r, false);
        CHECK_GRADCHECK(tt_grad_of_fn, &g, 1, one);
        tt_grad_of h = {f_bce, &c,
                        k == 2 ? tt_rand(2, s, -1, 1) : tg_ones(TG_FLOAT64, 0, NULL), 0};
        tg_set_requires_grad(h.r, false);
        CHECK_GRADCHECK(tt_grad_of_fn, &h, 2, bce);
    }
}

/* the gradient of nll_loss_grad w.r.t. the upstream gradient (its own rule) */
static tg_tensor *f_nll_grad_wrt_r(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    loss_case *c = user;
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *x = tg_detach(in[0]), *res = NULL, *out = NULL;
    tg_set_requires_grad(x, true);
    tg_tensor *y = tg_nll_loss(x, c->labels, TG_REDUCTION_NONE);
    if (y && tg_autograd_grad(1, &y, &in[1], 1, &x, &res, true, true) == TG_OK)
        out = tg_mul(tg_mul_scalar(res, 1.0), in[0]);
    tg_release(res);
    tg_set_grad_enabled(was);
    return out;
}

static void test_nll_grad_of_grad(void)
{
    int64_t s[2] = {4, 3}, N = 4;
    loss_case c = {TG_REDUCTION_NONE,
                   tt_tensor(TG_INT32, 1, &N, (double[]){2, 0, 1, 2})};
    tg_tensor *in[2] = {tg_detach(tt_rand(2, s, -2, 2)), tt_rand(1, &N, -1, 1)};
    CHECK_GRADCHECK(f_nll_grad_wrt_r, &c, 2, in);
    /* the gradient of cross entropy (mean) is (softmax - onehot) / N */
    tg_tensor *x = tt_rand(2, s, -2, 2);
    CHECK_OK(tg_backward(tg_cross_entropy(x, c.labels, TG_REDUCTION_MEAN), NULL, false));
    double *p = tt_values(tg_softmax(tg_detach(x), 1)), labs[4] = {2, 0, 1, 2};
    for (int i = 0; i < 12; i++)
        p[i] = (p[i] - (i % 3 == labs[i / 3])) / 4;
    CHECK_TENSOR(tg_grad(x), p, 1e-14);
    free(p);
}

/* ---- loss errors ------------------------------------------------------------------------------ */
static void test_loss_errors(void)
{
    int64_t s[2] = {3, 5}, N = 3;
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, s);
    tg_tensor *ok = tt_tensor(TG_INT64, 1, &N, (double[]){0, 4, 1});
    tg_tensor *big = tt_tensor(TG_INT64, 1, &N, (double[]){0, 5, 1});
    tg_tensor *neg = tt_tensor(TG_INT32, 1, &N, (double[]){0, 1, -1});
    CHECK_ERROR(tg_cross_entropy(x, big, TG_REDUCTION_MEAN), TG_ERR_INDEX, "label 5");
    CHECK_ERROR(tg_cross_entropy(x, big, TG_REDUCTION_MEAN), TG_ERR_INDEX, "C = 5");
    CHECK_ERROR(tg_nll_loss(x, neg, TG_REDUCTION_SUM), TG_ERR_INDEX, "label -1");
    CHECK_ERROR(tg_nll_loss(x, big, TG_REDUCTION_NONE), TG_ERR_INDEX, "C = 5");
    CHECK_ERROR(tg_cross_entropy(x, tg_zeros(TG_FLOAT32, 1, &N), TG_REDUCTION_MEAN),
                TG_ERR_DTYPE, "int32 or int64, got float32");
    CHECK_ERROR(tg_nll_loss(x, tg_zeros(TG_UINT8, 1, &N), TG_REDUCTION_MEAN), TG_ERR_DTYPE,
                "uint8");
    CHECK_ERROR(tg_cross_entropy(x, tg_zeros(TG_INT64, 1, (int64_t[]){4}), TG_REDUCTION_MEAN),
                TG_ERR_SHAPE, "labels of shape [4]");
    CHECK_ERROR(tg_cross_entropy(tg_zeros(TG_FLOAT32, 1, (int64_t[]){5}), ok,
                                 TG_REDUCTION_MEAN), TG_ERR_SHAPE, "[N, C, ...]");
    CHECK_ERROR(tg_cross_entropy(tg_zeros(TG_INT32, 2, s), ok, TG_REDUCTION_MEAN),
                TG_ERR_DTYPE, "int32");
    CHECK_ERROR(tg_cross_entropy(x, ok, (tg_reduction)7), TG_ERR_ARG, "reduction 7");
    CHECK_ERROR(tg_cross_entropy(x, NULL, TG_REDUCTION_MEAN), TG_ERR_ARG, "labels");
    CHECK_ERROR(tg_mse_loss(x, tg_zeros(TG_FLOAT32, 2, (int64_t[]){5, 3}), TG_REDUCTION_SUM),
                TG_ERR_SHAPE, "target of shape [5, 3]");
    CHECK_ERROR(tg_mse_loss(x, x, (tg_reduction)-1), TG_ERR_ARG, "reduction");
    CHECK_ERROR(tg_mse_loss(tg_zeros(TG_INT32, 2, s), x, TG_REDUCTION_SUM), TG_ERR_DTYPE,
                "int32");
    CHECK_ERROR(tg_bce_with_logits(x, tg_zeros(TG_FLOAT32, 1, &N), TG_REDUCTION_MEAN),
                TG_ERR_SHAPE, "targets of shape [3]");
    CHECK_ERROR(tg_bce_with_logits(x, tg_zeros(TG_INT64, 2, s), TG_REDUCTION_MEAN),
                TG_ERR_DTYPE, "int64");
    CHECK_ERROR(tg_bce_with_logits(x, x, (tg_reduction)3), TG_ERR_ARG, "reduction");
    /* softmax errors */
    CHECK_ERROR(tg_softmax(x, 2), TG_ERR_INDEX, "softmax");
    CHECK_ERROR(tg_log_softmax(x, -3), TG_ERR_INDEX, "log_softmax");
    CHECK_ERROR(tg_softmax(tg_zeros(TG_INT64, 2, s), 1), TG_ERR_DTYPE, "int64");
    CHECK_ERROR(tg_softmax(NULL, 1), TG_ERR_ARG, "NULL");
}

/* the registry lists every op of the family */
static void test_registry(void)
{
    static const char *names[] = {"softmax", "log_softmax", "nll_loss", "nll_loss_grad",
                                  "bce_with_logits", "max_pool2d", "max_pool2d_grad",
                                  "max_pool2d_select", "avg_pool2d", "avg_pool2d_grad",
                                  "batch_norm", "batch_norm_grad", "layer_norm",
                                  "layer_norm_grad"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        tt_checks++;
        if (!tg_op_find(names[i]))
            tt_fail(__FILE__, __LINE__, "op %s is not registered", names[i]);
    }
}

int main(void)
{
    RUN(test_softmax_forward);
    RUN(test_softmax_values);
    RUN(test_softmax_short_rows);
    RUN(test_softmax_grad);
    RUN(test_softmax_grad_op);
    RUN(test_softmax_masked_rows);
    RUN(test_dropout);
    RUN(test_dropout_errors);
    RUN(test_mse);
    RUN(test_cross_entropy_forward);
    RUN(test_nll_loss_forward);
    RUN(test_bce_forward);
    RUN(test_loss_gradcheck);
    RUN(test_nll_grad_of_grad);
    RUN(test_loss_errors);
    RUN(test_registry);
    return tt_finish();
}
