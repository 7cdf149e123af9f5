/* Forward values of the masking and testing ops against references
 * written out here: tril/triu (numpy's np.tril/np.triu definition, every
 * dtype, batches, offsets beyond the matrix, empty dims) and their clear
 * errors; isnan/isinf/isposinf/isneginf/isfinite (C's isnan/isinf, every
 * dtype, strided inputs, no gradient). Gradients, forward mode, graph mode and ONNX round trips are the
 * op samples' (tests/op_samples.c). */
#include "harness.h"
#include "op_check.h"

#include <stdlib.h>

/* the reference: element (b, i, j) kept when j - i <= k (lower) or >= k */
static void check_trilu(tg_dtype dt, int64_t b, int64_t r, int64_t c, int64_t k, bool upper)
{
    int64_t n = b * r * c;
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v), *want = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t e = 0; e < n; e++) {
        int64_t i = e / c % r, j = e % c;
        v[e] = dt == TG_BOOL ? (double)(e % 3 != 0) : (double)(e % 7 + 1);
        want[e] = (upper ? j - i >= k : j - i <= k) ? v[e] : 0;
    }
    tg_tensor *x = tt_tensor(dt, 3, (int64_t[]){b, r, c}, v);
    tg_tensor *y = upper ? tg_triu(x, k) : tg_tril(x, k);
    CHECK(y && tg_dtype_of(y) == dt);
    CHECK_SHAPE(y, b, r, c);
    CHECK_TENSOR(y, want, 0);
    /* a transposed (strided) input gives the mask of the transposed values */
    tg_tensor *xt = tg_transpose(x, 1, 2), *yt = upper ? tg_triu(xt, k) : tg_tril(xt, k);
    tg_tensor *ref = upper ? tg_triu(tg_contiguous(xt), k) : tg_tril(tg_contiguous(xt), k);
    CHECK(tt_same(yt, ref));
    free(v);
    free(want);
}

static void test_trilu_values(void)
{
    const tg_dtype dts[] = {TG_FLOAT32, TG_FLOAT64, TG_INT32, TG_INT64, TG_UINT8, TG_BOOL};
    const int64_t ks[] = {-9, -2, -1, 0, 1, 3, 9, INT64_MAX, INT64_MIN};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (size_t k = 0; k < sizeof ks / sizeof *ks; k++) {
            check_trilu(dts[d], 2, 3, 4, ks[k], false);
            check_trilu(dts[d], 2, 3, 4, ks[k], true);
            check_trilu(dts[d], 1, 5, 2, ks[k], true);
            check_trilu(dts[d], 3, 0, 4, ks[k], false);
        }
}

static tg_tensor *tril_fn(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return tg_tril(in[0], *(const int64_t *)user);
}

/* the public function through the generic checks (gradcheck, forward vs
 * reverse mode, graph vs eager) at offsets beyond the matrix too */
static void test_trilu_checks(void)
{
    const int64_t ks[] = {-4, 0, 2, 5};
    for (int i = 0; i < 4; i++) {
        tg_tensor *x = tt_rand(3, (int64_t[]){2, 3, 4}, -1, 1);
        CHECK_OP(tril_fn, (void *)&ks[i], 1, &x);
    }
}

static void test_trilu_errors(void)
{
    CHECK_ERROR(tg_tril(tg_zeros(TG_FLOAT32, 1, (int64_t[]){3}), 0), TG_ERR_INDEX,
                "tril: input tensor must have at least 2 dimensions");
    CHECK_ERROR(tg_triu(tg_scalar(TG_INT64, 1), 0), TG_ERR_INDEX, "triu");
    CHECK_ERROR(tg_tril(NULL, 0), TG_ERR_ARG, "");
}

static void test_fpclass_values(void)
{
    const double v[8] = {0, -1.5, INFINITY, -INFINITY, NAN, 3e38, -0.0, 1e-310};
    for (int d = 0; d < 2; d++) {
        tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
        tg_tensor *x = tt_tensor(dt, 2, (int64_t[]){2, 4}, v);
        tg_tensor *(*fns[5])(tg_tensor *) = {tg_isnan, tg_isinf, tg_isposinf, tg_isneginf,
                                             tg_isfinite};
        for (int f = 0; f < 5; f++) {
            double want[8];
            for (int i = 0; i < 8; i++) {
                double e = v[i];
                want[i] = f == 0 ? isnan(e) != 0 : f == 1 ? isinf(e) != 0 : f == 2 ? e == INFINITY
                          : f == 3 ? e == -INFINITY : isfinite(e) != 0;
            }
            tg_tensor *y = fns[f](x);
            CHECK(y && tg_dtype_of(y) == TG_BOOL);
            CHECK_TENSOR(y, want, 0);
            /* a strided input: the transposed values' classes, transposed */
            tg_tensor *yt = fns[f](tg_transpose(x, 0, 1));
            CHECK(tt_same(yt, tg_contiguous(tg_transpose(y, 0, 1))));
        }
    }
    /* integers and bool are never NaN or infinite */
    tg_tensor *i = tt_tensor(TG_INT64, 1, (int64_t[]){3}, (double[]){1, -2, 0});
    CHECK_TENSOR(tg_isnan(i), ((double[]){0, 0, 0}), 0);
    CHECK_TENSOR(tg_isinf(tg_cast(i, TG_BOOL)), ((double[]){0, 0, 0}), 0);
    CHECK_TENSOR(tg_isfinite(tg_cast(i, TG_UINT8)), ((double[]){1, 1, 1}), 0);
    /* no gradient flows: the result does not require grad */
    tg_tensor *x = tt_rand(1, (int64_t[]){3}, -1, 1);
    CHECK(!tg_requires_grad(tg_isnan(x)) && !tg_requires_grad(tg_isfinite(x)));
    CHECK_ERROR(tg_isfinite(NULL), TG_ERR_ARG, "");
}

/* the value tests exported to ONNX (IsNaN, IsInf with its attributes;
 * isfinite as Not(Or(IsNaN, IsInf))) and imported back, both modes */
static tg_tensor *class_fn(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    switch (*(const int *)user) {
    case 0: return tg_isnan(in[0]);
    case 1: return tg_isinf(in[0]);
    case 2: return tg_isposinf(in[0]);
    case 3: return tg_isneginf(in[0]);
    default: return tg_isfinite(in[0]);
    }
}

static void test_fpclass_onnx(void)
{
    tg_tensor *x = tt_tensor(TG_FLOAT32, 2, (int64_t[]){2, 3},
                             (double[]){1, NAN, INFINITY, -INFINITY, 0, -2});
    for (int k = 0; k < 5; k++)
        CHECK_ONNX_ROUNDTRIP(class_fn, &k, 1, &x);
}

int main(void)
{
    RUN(test_fpclass_onnx);
    RUN(test_fpclass_values);
    RUN(test_trilu_values);
    RUN(test_trilu_checks);
    RUN(test_trilu_errors);
    return tt_finish();
}
