/* The math ops of issue 10 §3 (fmod/remainder, cumsum, range, L1/L2
 * norms, topk/sort, pad modes), each through its public function: forward
 * against PyTorch's values (PyTorch 1.13 on /usr/bin/python3, float64;
 * the call is given next to each) and error messages; then op_check.h's
 * checks (gradcheck, forward vs reverse mode, graph vs eager) away from
 * the jumps. The generic op-sample suite covers the ops' definitions too. */
#include "harness.h"
#include "op_check.h"

#include <math.h>

/* tg_autograd_grad's results belong to the caller: hand them to the
 * test's scope */
static tg_status grads(tg_tensor *y, int n, tg_tensor **x, tg_tensor **d)
{
    tg_status s = tg_autograd_grad(1, &y, NULL, n, x, d, false, false);
    for (int i = 0; i < n && s == TG_OK; i++) {
        tg_tensor *c = tg_clone(d[i]);
        tg_release(d[i]);
        d[i] = c;
    }
    return s;
}

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
    CHECK_OK(grads(y, 2, in, d));
    CHECK_TENSOR(d[0], ((double[]){1, 1, 1, 1, 1, 1, 1, 1}), 0);
    CHECK_TENSOR(d[1], ((double[]){-2, 2, 2, -2, 0, 0, 0, 0}), 0);
    y = tg_sum(tg_remainder(a, b), 0, NULL, false);
    CHECK_OK(grads(y, 2, in, d));
    CHECK_TENSOR(d[1], ((double[]){-2, 3, 3, -2, 0, 0, 0, 1}), 0);
    /* a float divisor of 0 gives NaN */
    double v[2];
    tg_tensor *zero = T1(TG_FLOAT32, 1, 0);
    CHECK(tg_copy_to(tg_fmod(T1(TG_FLOAT32, 1, 5), zero), TG_FLOAT64, &v[0]) == TG_OK);
    CHECK(tg_copy_to(tg_remainder(T1(TG_FLOAT32, 1, 5), zero), TG_FLOAT64, &v[1]) == TG_OK);
    CHECK(isnan(v[0]) && isnan(v[1]));
}

/* ---- floor_divide / trunc_divide ------------------------------------------------- */
static void test_rounded_division(void)
{
    /* floats: PyTorch's values, 1 // 0.1 is 9 (floor(1 / 0.1) would be 10),
     * -0.5 // 2 is -1, 0.5 // -2 is -1, trunc(0.5 / -2) is -0 */
    tg_tensor *a = T1(TG_FLOAT64, 6, 5.0, -5.0, 1.0, -0.5, 0.5, 7.5);
    tg_tensor *b = T1(TG_FLOAT64, 6, 2.0, 2.0, 0.1, 2.0, -2.0, -2.5);
    CHECK_TENSOR(tg_floor_divide(a, b), ((double[]){2, -3, 9, -1, -1, -3}), 0);
    CHECK_TENSOR(tg_trunc_divide(a, b), ((double[]){2, -2, 10, -0.0, -0.0, -3}), 0);
    double z = 1;
    CHECK(tg_copy_to(tg_trunc_divide(T1(TG_FLOAT64, 1, 0.5), T1(TG_FLOAT64, 1, -2)),
                     TG_FLOAT64, &z) == TG_OK && z == 0 && signbit(z));
    /* a float divisor of 0: IEEE's quotient */
    double v[3];
    tg_tensor *q = tg_floor_divide(T1(TG_FLOAT32, 3, 5, -5, 0), T1(TG_FLOAT32, 3, 0, 0, 0));
    CHECK(q && tg_copy_to(q, TG_FLOAT64, v) == TG_OK);
    CHECK(isinf(v[0]) && v[0] > 0 && isinf(v[1]) && v[1] < 0 && isnan(v[2]));
    /* integers exactly, in their dtype: 2^40 + 1 survives, INT_MIN / -1 wraps */
    tg_tensor *ia = T1(TG_INT64, 6, 7, -7, 7, -7, 1099511627777.0, -9223372036854775808.0);
    tg_tensor *ib = T1(TG_INT64, 6, 2, 2, -2, -2, 1, -1);
    tg_tensor *f = tg_floor_divide(ia, ib), *t = tg_trunc_divide(ia, ib);
    CHECK(f && tg_dtype_of(f) == TG_INT64 && t && tg_dtype_of(t) == TG_INT64);
    int64_t got[6];
    CHECK(tg_copy_to(f, TG_INT64, got) == TG_OK);
    CHECK(got[0] == 3 && got[1] == -4 && got[2] == -4 && got[3] == 3 &&
          got[4] == 1099511627777 && got[5] == INT64_MIN);
    CHECK(tg_copy_to(t, TG_INT64, got) == TG_OK);
    CHECK(got[0] == 3 && got[1] == -3 && got[2] == -3 && got[3] == 3 && got[5] == INT64_MIN);
    CHECK_TENSOR(tg_floor_divide(T1(TG_UINT8, 2, 7, 200), T1(TG_UINT8, 2, 2, 7)),
                 ((double[]){3, 28}), 0);
    /* int32 with a float64 0-d tensor computes in float64 */
    tg_tensor *m = tg_floor_divide(T1(TG_INT32, 2, 7, -7), tg_scalar(TG_FLOAT64, 2.5));
    CHECK(m && tg_dtype_of(m) == TG_FLOAT64);
    CHECK_TENSOR(m, ((double[]){2, -3}), 0);
    /* an integer divisor of 0 is an error, as in PyTorch */
    CHECK_ERROR(tg_floor_divide(T1(TG_INT64, 2, 1, 2), T1(TG_INT64, 2, 1, 0)), TG_ERR_ARG,
                "division by zero");
    CHECK_ERROR(tg_trunc_divide(T1(TG_INT32, 1, 1), T1(TG_INT32, 1, 0)), TG_ERR_ARG,
                "division by zero");
    /* zero gradients for both inputs, as torch.div(rounding_mode=...) */
    tg_set_requires_grad(a, true);
    tg_set_requires_grad(b, true);
    tg_tensor *in[2] = {a, b}, *d[2];
    CHECK_OK(grads(tg_sum(tg_floor_divide(a, b), 0, NULL, false), 2, in, d));
    CHECK_TENSOR(d[0], ((double[]){0, 0, 0, 0, 0, 0}), 0);
    CHECK_TENSOR(d[1], ((double[]){0, 0, 0, 0, 0, 0}), 0);
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
    /* mixed: int32 with a float32 0-d tensor computes in float32:
     * fmod(int32 [7,-7], 2.5) = [2., -2.] */
    tg_tensor *m = tg_fmod(T1(TG_INT32, 2, 7, -7), tg_scalar(TG_FLOAT32, 2.5));
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
    CHECK_OK(grads(l, 1, &x, &dx));
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

/* ---- range ------------------------------------------------------------------------ */
static tg_tensor *range_fn(int n, tg_tensor *const *in, void *u)
{
    (void)n, (void)u;
    return tg_mul(in[0], tg_range(TG_FLOAT64, 1, 2.2, 0.25));
}

static void test_range(void)
{
    /* torch.arange(0, 1, 0.1) in float32: each element start + i * delta */
    tg_tensor *r = tg_range(TG_FLOAT32, 0, 1, 0.1);
    CHECK_SHAPE(r, 10);
    CHECK_TENSOR(r, ((double[]){0.0, 0.10000000149011612, 0.20000000298023224,
                                0.30000001192092896, 0.4000000059604645, 0.5,
                                0.6000000238418579, 0.699999988079071, 0.800000011920929,
                                0.8999999761581421}), 0);
    /* torch.arange(-1., 1., 0.3, dtype=float64) */
    CHECK_TENSOR(tg_range(TG_FLOAT64, -1, 1, 0.3),
                 ((double[]){-1.0, -0.7, -0.4, -0.10000000000000003, 0.19999999999999996,
                             0.49999999999999994, 0.7999999999999999}), 0);
    /* ONNX's test_range_int32_type_negative_delta: Range(10, 6, -3) = [10, 7] */
    tg_tensor *i = tg_range(TG_INT32, 10, 6, -3);
    CHECK(i && tg_dtype_of(i) == TG_INT32);
    CHECK_TENSOR(i, ((double[]){10, 7}), 0);
    /* a limit on the wrong side is empty (ONNX; torch.arange refuses it) */
    CHECK_SHAPE(tg_range(TG_INT64, 5, 0, 1), 0);
    CHECK_ERROR(tg_range(TG_INT64, 0, 5, 0), TG_ERR_ARG, "non-zero delta");
    CHECK_ERROR(tg_range(TG_FLOAT32, 0, INFINITY, 1), TG_ERR_ARG, "finite");
    CHECK_ERROR(tg_range(TG_FLOAT32, 0, 1e300, 1e-300), TG_ERR_SHAPE, "too many");
    CHECK_ERROR(tg_range(TG_BOOL, 0, 2, 1), TG_ERR_DTYPE, "bool");
    /* in a graph it is a node: built, then run by a session */
    tg_graph *g = tg_graph_new(NULL);
    tg_graph_begin(g);
    tg_tensor *sym = tg_range(TG_INT64, 2, 11, 4);
    tg_graph_end();
    CHECK(sym && tg_is_symbolic(sym));
    tg_session *s = tg_session_new(g);
    tg_tensor *out = NULL;
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 1, &sym, &out, 0, NULL));
    CHECK_TENSOR(out, ((double[]){2, 6, 10}), 0); /* owned by the test's scope */
    tg_session_free(s);
    tg_graph_free(g);
    /* next to differentiable ops; exported as ONNX Range and re-imported */
    tg_tensor *x = tt_rand(2, (int64_t[]){2, 5}, -1, 1);
    tg_set_requires_grad(x, true);
    CHECK_OP(range_fn, NULL, 1, &x);
    CHECK_ONNX_ROUNDTRIP(range_fn, NULL, 1, &x);
}

/* ---- vector_norm (L1, L2) ------------------------------------------------------------ */
static void test_vector_norm_values(void)
{
    /* torch.linalg.vector_norm(x, ord, dim=1), x = [[3,-4,0],[0,0,0]]: a zero
     * row's gradient is 0, not NaN, for both ords */
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){3, -4, 0, 0, 0, 0});
    tg_set_requires_grad(x, true);
    int ax1 = 1;
    tg_tensor *l2 = tg_vector_norm(x, 2, 1, &ax1, false), *dx;
    CHECK_TENSOR(l2, ((double[]){5, 0}), 0);
    tg_tensor *s = tg_sum(l2, 0, NULL, false);
    CHECK_OK(grads(s, 1, &x, &dx));
    CHECK_TENSOR(dx, ((double[]){0.6, -0.8, 0, 0, 0, 0}), 1e-15);
    tg_tensor *l1 = tg_vector_norm(x, 1, 1, &ax1, false);
    CHECK_TENSOR(l1, ((double[]){7, 0}), 0);
    s = tg_sum(l1, 0, NULL, false);
    CHECK_OK(grads(s, 1, &x, &dx));
    CHECK_TENSOR(dx, ((double[]){1, -1, 0, 0, 0, 0}), 0);
    /* over everything with keepdim: vector_norm([[1,2],[3,4]], 2, (0,1), keepdim) */
    tg_tensor *m = tt_tensor(TG_FLOAT32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4});
    tg_tensor *all = tg_vector_norm(m, 2, 0, NULL, true);
    CHECK_SHAPE(all, 1, 1);
    CHECK(tg_dtype_of(all) == TG_FLOAT32);
    CHECK_TENSOR(all, ((double[]){5.477225575051661}), 1e-6);
    CHECK_TENSOR(tg_vector_norm(m, 1, 1, (int[]){0}, false), ((double[]){4, 6}), 0);
    /* an empty reduction is 0 */
    CHECK_TENSOR(tg_vector_norm(tg_zeros(TG_FLOAT64, 2, (int64_t[]){0, 2}), 2, 1, (int[]){0},
                                false), ((double[]){0, 0}), 0);
    /* the gradient of the L2 norm of a zero vector (all axes) is 0 too */
    tg_tensor *z = tg_zeros(TG_FLOAT64, 1, (int64_t[]){3});
    tg_set_requires_grad(z, true);
    CHECK_OK(grads(tg_vector_norm(z, 2, 0, NULL, false), 1, &z, &dx));
    CHECK_TENSOR(dx, ((double[]){0, 0, 0}), 0);
    /* errors */
    CHECK_ERROR(tg_vector_norm(tg_zeros(TG_INT64, 1, (int64_t[]){3}), 2, 0, NULL, false),
                TG_ERR_DTYPE, "float");
    CHECK_ERROR(tg_vector_norm(x, 3, 0, NULL, false), TG_ERR_UNSUPPORTED, "ord 3");
    CHECK_ERROR(tg_vector_norm(x, 2, 1, (int[]){2}, false), TG_ERR_INDEX, "");
}

static tg_tensor *norm_fn(int n, tg_tensor *const *in, void *u)
{
    (void)n;
    int axes[2] = {0, 2};
    return tg_vector_norm(in[0], u ? 1 : 2, 2, axes, u != NULL);
}

/* F.normalize(x, 2, dim 1): x / max(norm, eps) */
static tg_tensor *normalize_fn(int n, tg_tensor *const *in, void *u)
{
    (void)n, (void)u;
    int ax = 1;
    tg_tensor *d = tg_clamp(tg_vector_norm(in[0], 2, 1, &ax, true), 1e-12, INFINITY);
    return tg_div(in[0], d);
}

static void test_vector_norm_checks(void)
{
    /* values of both signs away from 0 (the kink of |x|) */
    tg_tensor *r = tt_rand(3, (int64_t[]){2, 3, 4}, 0.2, 1);
    tg_tensor *sg = tg_sub(tg_mul_scalar(tg_cast(tg_gt(tt_rand(3, (int64_t[]){2, 3, 4}, 0, 1),
                                                       tg_scalar(TG_FLOAT64, 0.5)), TG_FLOAT64),
                                         2), tg_scalar(TG_FLOAT64, 1));
    tg_tensor *x = tg_mul(r, sg);
    tg_set_requires_grad(x, true);
    CHECK_OP(norm_fn, NULL, 1, &x);
    CHECK_OP(norm_fn, (void *)1, 1, &x);
    CHECK_OP(normalize_fn, NULL, 1, &x);
    CHECK_ONNX_ROUNDTRIP(norm_fn, NULL, 1, &x);
    CHECK_ONNX_ROUNDTRIP(norm_fn, (void *)1, 1, &x);
}

/* ---- topk, sort, argsort ----------------------------------------------------------------- */
static void test_topk_values(void)
{
    /* torch.topk(x, 3, 1), x = [[3,1,4,1,5],[9,2,6,5,3]]; gradient of sum(v * w) */
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 5},
                             (double[]){3, 1, 4, 1, 5, 9, 2, 6, 5, 3});
    tg_set_requires_grad(x, true);
    tg_tensor *v, *i, *dx;
    CHECK_OK(tg_topk(x, 3, 1, true, true, &v, &i));
    CHECK(tg_dtype_of(i) == TG_INT64);
    CHECK_TENSOR(v, ((double[]){5, 4, 3, 9, 6, 5}), 0);
    CHECK_TENSOR(i, ((double[]){4, 2, 0, 0, 2, 3}), 0);
    tg_tensor *w = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
    CHECK_OK(grads(tg_sum(tg_mul(v, w), 0, NULL, false), 1, &x, &dx));
    CHECK_TENSOR(dx, ((double[]){3, 0, 2, 0, 1, 4, 0, 5, 6, 0}), 0);
    /* smallest, ties by the lower index: topk(x, 2, 1, largest=False) */
    CHECK_OK(tg_topk(x, 2, -1, false, true, &v, &i));
    CHECK_TENSOR(v, ((double[]){1, 1, 2, 3}), 0);
    CHECK_TENSOR(i, ((double[]){1, 3, 1, 4}), 0);
    /* along axis 0: a tie (5, 5) goes to row 0 */
    CHECK_OK(tg_topk(x, 1, 0, true, true, &v, &i));
    CHECK_SHAPE(v, 1, 5);
    CHECK_TENSOR(i, ((double[]){1, 1, 1, 1, 0}), 0);
    /* NaN is the largest: topk([1,nan,3,nan], 2) = nan, nan at 1, 3; smallest 1, 3 */
    tg_tensor *n = T1(TG_FLOAT32, 4, 1, NAN, 3, NAN);
    CHECK_OK(tg_topk(n, 2, 0, true, true, &v, &i));
    CHECK_TENSOR(i, ((double[]){1, 3}), 0);
    CHECK_OK(tg_topk(n, 2, 0, false, true, &v, &i));
    CHECK_TENSOR(v, ((double[]){1, 3}), 0);
    CHECK_TENSOR(i, ((double[]){0, 2}), 0);
    /* sort (stable) and argsort of integers: sort([2,1,2,0,1], stable=True) */
    tg_tensor *z = T1(TG_INT64, 5, 2, 1, 2, 0, 1);
    CHECK_OK(tg_sort(z, 0, false, &v, &i));
    CHECK_TENSOR(v, ((double[]){0, 1, 1, 2, 2}), 0);
    CHECK_TENSOR(i, ((double[]){3, 1, 4, 0, 2}), 0);
    CHECK_TENSOR(tg_argsort(z, -1, true), ((double[]){0, 2, 1, 4, 3}), 0);
    /* k = 0 gives empty results; a 0-d tensor is its own top 1 */
    CHECK_OK(tg_topk(x, 0, 1, true, true, &v, &i));
    CHECK_SHAPE(v, 2, 0);
    CHECK_OK(tg_topk(tg_scalar(TG_FLOAT64, 2.5), 1, 0, true, true, &v, &i));
    CHECK(tg_ndim(v) == 0);
    /* and with k = 0 too (PyTorch's: the output is 0-d, so it holds the element) */
    CHECK_OK(tg_topk(tg_scalar(TG_FLOAT64, 2.5), 0, 0, true, true, &v, &i));
    CHECK_TENSOR(v, ((double[]){2.5}), 0);
    CHECK_TENSOR(i, ((double[]){0}), 0);
    /* errors */
    CHECK_FAILS(tg_topk(x, 6, 1, true, true, &v, &i), TG_ERR_ARG, "k (6) is larger");
    CHECK_FAILS(tg_topk(x, -1, 1, true, true, &v, &i), TG_ERR_ARG, "k (-1)");
    CHECK_FAILS(tg_topk(x, 1, 2, true, true, &v, &i), TG_ERR_INDEX, "axis 2");
    CHECK_FAILS(tg_topk(x, 1, 1, true, true, NULL, &i), TG_ERR_ARG, "values is NULL");
    CHECK_FAILS(tg_topk(T1(TG_BOOL, 2, 1, 0), 1, 0, true, true, &v, &i), TG_ERR_DTYPE, "");
}

static tg_tensor *topk_fn(int n, tg_tensor *const *in, void *u)
{
    (void)n;
    tg_tensor *v = NULL, *i;
    tg_topk(in[0], 2, u ? 0 : 1, u == NULL, true, &v, &i);
    return v;
}

static void test_topk_checks(void)
{
    tg_tensor *x = tt_rand(3, (int64_t[]){3, 4, 2}, -1, 1);
    tg_set_requires_grad(x, true);
    CHECK_OP(topk_fn, NULL, 1, &x);
    CHECK_OP(topk_fn, (void *)1, 1, &x);
    CHECK_ONNX_ROUNDTRIP(topk_fn, NULL, 1, &x);
    CHECK_ONNX_ROUNDTRIP(topk_fn, (void *)1, 1, &x);
}

/* ---- pad modes -------------------------------------------------------------------------- */
static void test_pad_modes_values(void)
{
    /* x = arange(6).reshape(1,2,3); F.pad(x, (2,1), 'reflect') and the
     * gradient of sum(y * arange(12)) */
    tg_tensor *x = tt_tensor(TG_FLOAT64, 3, (int64_t[]){1, 2, 3}, (double[]){0, 1, 2, 3, 4, 5});
    tg_set_requires_grad(x, true);
    int64_t last[6] = {0, 0, 0, 0, 2, 1};
    tg_tensor *y = tg_pad_ex(x, 6, last, TG_PAD_REFLECT, 0), *dx;
    CHECK_SHAPE(y, 1, 2, 6);
    CHECK_TENSOR(y, ((double[]){2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}), 0);
    tg_tensor *w = tg_reshape(tg_range(TG_FLOAT64, 0, 12, 1), 3, (int64_t[]){1, 2, 6});
    CHECK_OK(grads(tg_sum(tg_mul(y, w), 0, NULL, false), 1, &x, &dx));
    CHECK_TENSOR(dx, ((double[]){2, 9, 4, 8, 27, 16}), 0);
    /* F.pad(x, (2,1,1,0), 'replicate') */
    int64_t two[6] = {0, 0, 1, 0, 2, 1};
    y = tg_pad_ex(x, 6, two, TG_PAD_REPLICATE, 0);
    CHECK_SHAPE(y, 1, 3, 6);
    CHECK_TENSOR(y, ((double[]){0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5}), 0);
    w = tg_reshape(tg_range(TG_FLOAT64, 0, 18, 1), 3, (int64_t[]){1, 3, 6});
    CHECK_OK(grads(tg_sum(tg_mul(y, w), 0, NULL, false), 1, &x, &dx));
    CHECK_TENSOR(dx, ((double[]){24, 12, 30, 39, 15, 33}), 0);
    /* integers and uint8 too (the copy is by element size) */
    tg_tensor *u = tg_pad_ex(T1(TG_UINT8, 3, 7, 8, 9), 2, (int64_t[]){2, 2}, TG_PAD_REFLECT, 0);
    CHECK_TENSOR(u, ((double[]){9, 8, 7, 8, 9, 8, 7}), 0);
    /* ONNX's edge on a 1-element dim, and no padding at all */
    CHECK_TENSOR(tg_pad_ex(T1(TG_INT64, 1, 4), 2, (int64_t[]){2, 1}, TG_PAD_REPLICATE, 0),
                 ((double[]){4, 4, 4, 4}), 0);
    CHECK_TENSOR(tg_pad_ex(T1(TG_FLOAT32, 2, 1, 2), 0, NULL, TG_PAD_REFLECT, 0),
                 ((double[]){1, 2}), 0);
    /* PyTorch's checks: reflect pads < the dim; replicate needs elements */
    CHECK_ERROR(tg_pad_ex(x, 6, (int64_t[]){0, 0, 0, 0, 3, 0}, TG_PAD_REFLECT, 0), TG_ERR_ARG,
                "less than the size of the dim");
    CHECK_ERROR(tg_pad_ex(tg_zeros(TG_FLOAT32, 1, (int64_t[]){0}), 2, (int64_t[]){1, 0},
                          TG_PAD_REPLICATE, 0), TG_ERR_ARG, "empty axis");
    CHECK_ERROR(tg_pad_ex(x, 2, (int64_t[]){1, 0}, (tg_pad_mode)3, 0), TG_ERR_ARG, "mode");
}

static tg_tensor *pad_fn(int n, tg_tensor *const *in, void *u)
{
    (void)n;
    return tg_pad_ex(in[0], 4, (int64_t[]){1, 2, 2, 1}, (tg_pad_mode)(intptr_t)u, 0);
}

static void test_pad_modes_checks(void)
{
    tg_tensor *x = tt_rand(2, (int64_t[]){3, 4}, -1, 1);
    tg_set_requires_grad(x, true);
    for (intptr_t m = 1; m <= 2; m++) {
        CHECK_OP(pad_fn, (void *)m, 1, &x);
        CHECK_ONNX_ROUNDTRIP(pad_fn, (void *)m, 1, &x);
    }
}

int main(void)
{
    RUN(test_fmod_remainder_values);
    RUN(test_fmod_remainder_integers);
    RUN(test_rounded_division);
    RUN(test_fmod_remainder_checks);
    RUN(test_cumsum_values);
    RUN(test_cumsum_checks);
    RUN(test_range);
    RUN(test_vector_norm_values);
    RUN(test_vector_norm_checks);
    RUN(test_topk_values);
    RUN(test_topk_checks);
    RUN(test_pad_modes_values);
    RUN(test_pad_modes_checks);
    return tt_finish();
}
