/* The math ops of issue 10 §3 (fmod/remainder, cumsum, range, L1/L2
 * norms, topk/sort, pad modes), each through its public function: forward
 * against PyTorch's values (PyTorch 1.13 on /usr/bin/python3, float64;
 * the call is given next to each) and error messages; then op_check.h's
 * checks (gradcheck, forward vs reverse mode, graph vs eager) away from
 * the jumps. The generic op-sample suite covers the ops' definitions too. */
#include "harness.h"
#include "op_check.h"

#include <math.h>

#define T1(dt, n, ...) tt_tensor(dt, 1, (int64_t[]){n}, (double[]){__VA_ARGS__})

/* ---- fmod / remainder ----------------------------------------------------------- */
static void test_fmod_remainder_values(void)
{
    /* a = [5.5,-5.5,5.5,-5.5,0,-0,3,1e-300], b = [2,2,-2,-2,3,3,inf,-1] */
    tg_tensor *a = T1(TG_FLOAT64, 8, 5.5, -5.5, 5.5, -5.5, 0.0, -0.0, 3.0, 1e-300);
    tg_tensor *b = T1(TG_FLOAT64, 8, 2, 2, -2, -2, 3, 3, INFINITY, -1);
    CHECK_TENSOR(tg_fmod(a, b), ((double[]){1.5, -1.5, 1.5, -1.5, 0, 0, 3, 1e-300}), 0);
    /* remainder(1e-300, -1) is -1.0 in PyTorch too (fmod + b rounds) */
    CHECK_TENSOR(tg_remainder(a, b), ((double[]){1.5, 0.5, -0.5, -1.5, 0, 0, 3, -1}), 0);
    /* torch.remainder(tensor([-0.]), 2.) keeps -0. */
    double z = 1;
    tg_tensor *nz = tg_remainder(T1(TG_FLOAT64, 1, -0.0), T1(TG_FLOAT64, 1, 2.0));
    CHECK(nz && tg_copy_to(nz, TG_FLOAT64, &z) == TG_OK && z == 0 && signbit(z));
    /* gradients: d/da 1, d/db -trunc(a/b) and -floor(a/b) */
    tg_set_requires_grad(a, true);
    tg_set_requires_grad(b, true);
    tg_tensor *in[2] = {a, b}, *d[2];
    tg_tensor *y = tg_sum(tg_fmod(a, b), 0, NULL, false);
    CHECK_OK(tg_autograd_grad(1, &y, NULL, 2, in, d, false, false));
    CHECK_TENSOR(d[0], ((double[]){1, 1, 1, 1, 1, 1, 1, 1}), 0);
    CHECK_TENSOR(d[1], ((double[]){-2, 2, 2, -2, 0, 0, 0, 0}), 0);
    y = tg_sum(tg_remainder(a, b), 0, NULL, false);
    CHECK_OK(tg_autograd_grad(1, &y, NULL, 2, in, d, false, false));
    CHECK_TENSOR(d[1], ((double[]){-2, 3, 3, -2, 0, 0, 0, 1}), 0);
    /* a float divisor of 0 gives NaN */
    double v[2];
    tg_tensor *zero = T1(TG_FLOAT32, 1, 0);
    CHECK(tg_copy_to(tg_fmod(T1(TG_FLOAT32, 1, 5), zero), TG_FLOAT64, &v[0]) == TG_OK);
    CHECK(tg_copy_to(tg_remainder(T1(TG_FLOAT32, 1, 5), zero), TG_FLOAT64, &v[1]) == TG_OK);
    CHECK(isnan(v[0]) && isnan(v[1]));
}

static void test_fmod_remainder_integers(void)
{
    /* fmod([7,-7,7,-7,0], [3,3,-3,-3,-1]) and remainder */
    tg_tensor *a = T1(TG_INT64, 5, 7, -7, 7, -7, 0), *b = T1(TG_INT64, 5, 3, 3, -3, -3, -1);
    tg_tensor *f = tg_fmod(a, b), *r = tg_remainder(a, b);
    CHECK(f && tg_dtype_of(f) == TG_INT64);
    CHECK_TENSOR(f, ((double[]){1, -1, 1, -1, 0}), 0);
    CHECK_TENSOR(r, ((double[]){1, 2, -2, -1, 0}), 0);
    /* int32 the same; INT32_MIN % -1 (a trap in C; PyTorch dies of SIGFPE) is 0 */
    tg_tensor *a32 = T1(TG_INT32, 6, 7, -7, 7, -7, 0, -2147483648.0);
    tg_tensor *b32 = T1(TG_INT32, 6, 3, 3, -3, -3, -1, -1);
    CHECK_TENSOR(tg_remainder(a32, b32), ((double[]){1, 2, -2, -1, 0, 0}), 0);
    CHECK_TENSOR(tg_fmod(a32, b32), ((double[]){1, -1, 1, -1, 0, 0}), 0);
    /* uint8: remainder([7, 200], [3, 7]) = [1, 4] */
    CHECK_TENSOR(tg_remainder(T1(TG_UINT8, 2, 7, 200), T1(TG_UINT8, 2, 3, 7)),
                 ((double[]){1, 4}), 0);
    /* mixed: int32 with a float 0-d tensor computes in float32:
     * fmod(int32 [7,-7], 2.5) = [2., -2.] */
    tg_tensor *m = tg_fmod(T1(TG_INT32, 2, 7, -7), tg_scalar(TG_FLOAT64, 2.5));
    CHECK(m && tg_dtype_of(m) == TG_FLOAT32);
    CHECK_TENSOR(m, ((double[]){2, -2}), 0);
    /* broadcasting [2,1] with [3] */
    tg_tensor *col = tt_tensor(TG_INT64, 2, (int64_t[]){2, 1}, (double[]){10, -10});
    tg_tensor *br = tg_remainder(col, T1(TG_INT64, 3, 3, 4, -4));
    CHECK_SHAPE(br, 2, 3);
    CHECK_TENSOR(br, ((double[]){1, 2, -2, 2, 2, -2}), 0);
    /* an integer divisor of 0 is an error (PyTorch: ZeroDivisionError) */
    CHECK_ERROR(tg_fmod(a, T1(TG_INT64, 5, 1, 1, 0, 1, 1)), TG_ERR_ARG, "division by zero");
    CHECK_ERROR(tg_remainder(T1(TG_UINT8, 1, 3), T1(TG_UINT8, 1, 0)), TG_ERR_ARG,
                "division by zero");
    CHECK_ERROR(tg_fmod(T1(TG_BOOL, 1, 1), T1(TG_BOOL, 1, 1)), TG_ERR_DTYPE, "bool");
}

static tg_tensor *fmod_fn(int n, tg_tensor *const *in, void *u)
{
    (void)n;
    return u ? tg_remainder(in[0], in[1]) : tg_fmod(in[0], in[1]);
}

static void test_fmod_remainder_checks(void)
{
    tg_tensor *in[2] = {tt_rand(2, (int64_t[]){3, 4}, -3, 3),
                        tt_rand(1, (int64_t[]){4}, 0.6, 1.4)};
    tg_set_requires_grad(in[0], true);
    tg_set_requires_grad(in[1], true);
    CHECK_OP(fmod_fn, NULL, 2, in);
    CHECK_OP(fmod_fn, (void *)1, 2, in);
    CHECK_ONNX_ROUNDTRIP(fmod_fn, NULL, 2, in);
}

/* ---- cumsum --------------------------------------------------------------------- */
static void test_cumsum_values(void)
{
    /* torch.cumsum(x, 1), x = [[1,2,3],[4,5,6]]; gradient of sum(y * w) */
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
    tg_set_requires_grad(x, true);
    tg_tensor *y = tg_cumsum(x, 1, false, false), *dx;
    CHECK_TENSOR(y, ((double[]){1, 3, 6, 4, 9, 15}), 0);
    tg_tensor *w = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, -1, 2, 0.5, 3, -2});
    tg_tensor *l = tg_sum(tg_mul(y, w), 0, NULL, false);
    CHECK_OK(tg_autograd_grad(1, &l, NULL, 1, &x, &dx, false, false));
    CHECK_TENSOR(dx, ((double[]){2, 1, 2, 1.5, 1, -2}), 0);
    /* ONNX CumSum's options (onnx's test_cumsum_1d_*: x = [1,2,3,4,5]) */
    tg_tensor *v = T1(TG_FLOAT64, 5, 1, 2, 3, 4, 5);
    CHECK_TENSOR(tg_cumsum(v, 0, true, false), ((double[]){0, 1, 3, 6, 10}), 0);
    CHECK_TENSOR(tg_cumsum(v, -1, false, true), ((double[]){15, 14, 12, 9, 5}), 0);
    CHECK_TENSOR(tg_cumsum(v, 0, true, true), ((double[]){14, 12, 9, 5, 0}), 0);
    /* axis 0 of [2,3] */
    CHECK_TENSOR(tg_cumsum(x, 0, false, false), ((double[]){1, 2, 3, 5, 7, 9}), 0);
    /* integers and bool sum as int64: cumsum(int32 [1,2,3]), cumsum([T,F,T]) */
    tg_tensor *i = tg_cumsum(T1(TG_INT32, 3, 1, 2, 3), 0, false, false);
    CHECK(i && tg_dtype_of(i) == TG_INT64);
    CHECK_TENSOR(i, ((double[]){1, 3, 6}), 0);
    CHECK_TENSOR(tg_cumsum(T1(TG_BOOL, 3, 1, 0, 1), 0, false, false), ((double[]){1, 1, 2}), 0);
    /* float32 accumulates in double as PyTorch's CPU kernel:
     * cumsum(float32 [2^24, 1, 1, 1]) = [2^24, 2^24, 2^24 + 2, 2^24 + 4] */
    tg_tensor *f = tg_cumsum(T1(TG_FLOAT32, 4, 16777216.0, 1, 1, 1), 0, false, false);
    CHECK_TENSOR(f, ((double[]){16777216.0, 16777216.0, 16777218.0, 16777220.0}), 0);
    /* a 0-d tensor is its own cumsum (axis 0 or -1); an empty axis is empty */
    tg_tensor *s = tg_cumsum(tg_scalar(TG_FLOAT64, 3.5), -1, false, false);
    CHECK(s && tg_ndim(s) == 0);
    CHECK_TENSOR(s, ((double[]){3.5}), 0);
    tg_tensor *e = tg_cumsum(tg_zeros(TG_FLOAT32, 2, (int64_t[]){0, 3}), 0, false, false);
    CHECK_SHAPE(e, 0, 3);
    /* errors */
    CHECK_ERROR(tg_cumsum(x, 2, false, false), TG_ERR_INDEX, "axis 2 is out of range");
    CHECK_ERROR(tg_cumsum(tg_scalar(TG_FLOAT64, 1), 1, false, false), TG_ERR_INDEX, "axis 1");
}

static tg_tensor *cumsum_fn(int n, tg_tensor *const *in, void *u)
{
    (void)n;
    int o = (int)(intptr_t)u;
    return tg_cumsum(in[0], o & 4 ? -1 : 1, o & 1, o & 2);
}

static void test_cumsum_checks(void)
{
    tg_tensor *x = tt_rand(3, (int64_t[]){2, 3, 4}, -1, 1);
    tg_set_requires_grad(x, true);
    for (intptr_t o = 0; o < 8; o++) {
        CHECK_OP(cumsum_fn, (void *)o, 1, &x);
        CHECK_ONNX_ROUNDTRIP(cumsum_fn, (void *)o, 1, &x);
    }
}

int main(void)
{
    RUN(test_fmod_remainder_values);
    RUN(test_fmod_remainder_integers);
    RUN(test_fmod_remainder_checks);
    RUN(test_cumsum_values);
    RUN(test_cumsum_checks);
    return tt_finish();
}
