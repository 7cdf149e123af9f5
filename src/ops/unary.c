/* Unary elementwise math: neg abs exp log sqrt rsqrt sin cos tanh sigmoid
 * relu leaky_relu elu gelu erf softplus floor ceil round sign clamp.
 * One row template per op expanded per dtype (tgmath picks float or
 * double functions); integer inputs of float-only ops compute in float32. */
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"

#include <tgmath.h>

typedef struct params {
    double a, b;
} params;

#define UN_ROW(NAME, T, EXPR)                                               \
    static void NAME(char **p, const int64_t *s, int64_t n, void *ctx)      \
    {                                                                       \
        typedef T V; /* the element type, for casts inside EXPR */          \
        const params *P = ctx;                                              \
        (void)P;                                                            \
        const int64_t z = sizeof(V);                                        \
        if (s[0] == z && s[1] == z) {                                       \
            T *o = (T *)p[0];                                               \
            const T *in = (const T *)p[1];                                  \
            for (int64_t i = 0; i < n; i++) {                               \
                T x = in[i];                                                \
                o[i] = (EXPR);                                              \
            }                                                               \
        } else {                                                            \
            for (int64_t i = 0; i < n; i++) {                               \
                T x = *(const T *)(p[1] + i * s[1]);                        \
                *(T *)(p[0] + i * s[0]) = (EXPR);                           \
            }                                                               \
        }                                                                   \
    }

/* float-only ops: integer inputs are converted to float32 */
#define UN_FLOAT(OP, EXPR)                                                  \
    UN_ROW(OP##_f32, float, EXPR)                                           \
    UN_ROW(OP##_f64, double, EXPR)                                          \
    static const tg_iter_row_fn OP##_rows[TG_NUM_DTYPES] = {OP##_f32, OP##_f64};

/* ops defined for every numeric dtype */
#define UN_ALL(OP, EXPR, IEXPR, UEXPR)                                      \
    UN_ROW(OP##_f32, float, EXPR)                                           \
    UN_ROW(OP##_f64, double, EXPR)                                          \
    UN_ROW(OP##_i32, int32_t, IEXPR)                                        \
    UN_ROW(OP##_i64, int64_t, IEXPR)                                        \
    UN_ROW(OP##_u8, uint8_t, UEXPR)                                         \
    static const tg_iter_row_fn OP##_rows[TG_NUM_DTYPES] = {                \
        OP##_f32, OP##_f64, OP##_i32, OP##_i64, OP##_u8, NULL};

#define SQRT1_2 0.70710678118654752440

/* integer negation wraps through uint64 (-INT_MIN is INT_MIN, as in
 * PyTorch) instead of overflowing, which is undefined behaviour */
#define INEG(x) (V)(0 - (uint64_t)(x))
UN_ALL(neg, -x, INEG(x), INEG(x))
UN_ALL(abs, fabs(x), x < 0 ? INEG(x) : x, x)
/* NaN passes through relu (x != x), as in PyTorch */
UN_ALL(relu, x > 0 || x != x ? x : (V)0, x > 0 ? x : (V)0, x)
UN_ALL(sign, (V)((x > 0) - (x < 0)), (V)((x > 0) - (x < 0)), (V)(x > 0))
UN_ALL(floor, floor(x), x, x)
UN_ALL(ceil, ceil(x), x, x)
UN_ALL(round, nearbyint(x), x, x) /* default rounding: half to even */
/* comparisons, not fmin/fmax, so that NaN passes through */
#define CLAMP_EXPR (V)(x < P->a ? P->a : x > P->b ? P->b : x)
UN_ALL(clamp, CLAMP_EXPR, CLAMP_EXPR, CLAMP_EXPR)
UN_FLOAT(exp, exp(x))
UN_FLOAT(log, log(x))
UN_FLOAT(sqrt, sqrt(x))
UN_FLOAT(rsqrt, 1 / sqrt(x))
UN_FLOAT(sin, sin(x))
UN_FLOAT(cos, cos(x))
UN_FLOAT(tanh, tanh(x))
UN_FLOAT(sigmoid, x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)))
UN_FLOAT(erf, erf(x))
/* erfc(-x/sqrt2) = 1 + erf(x/sqrt2) without the cancellation for x << 0 */
UN_FLOAT(gelu, (V)0.5 * x * erfc(-x * (V)SQRT1_2))
UN_FLOAT(softplus, fmax(x, (V)0) + log1p(exp(-fabs(x))))
UN_FLOAT(leaky_relu, x > 0 ? x : x * (V)P->a)
UN_FLOAT(elu, x > 0 ? x : (V)P->a * expm1(x))

static bool is_int_row_table(const tg_iter_row_fn *rows)
{
    return rows[TG_INT32] != NULL;
}

/* ---- shared infer/kernel: the table hangs off the op's name via a map -- */
typedef struct unary_def {
    tg_op_def def;
    const tg_iter_row_fn *rows;
} unary_def;

static tg_status unary_infer(tg_op_ctx *c)
{
    const unary_def *u = (const unary_def *)c->op;
    tg_dtype dt = c->in[0]->dtype;
    if (dt == TG_BOOL)
        return tg__error(TG_ERR_DTYPE, "%s: bool input is not supported; cast it "
                         "first", c->op->name);
    if (!tg_dtype_is_float(dt) && !is_int_row_table(u->rows))
        dt = TG_FLOAT32;
    if (dt == TG_UINT8 && u->rows == neg_rows)
        return tg__error(TG_ERR_DTYPE, "neg: uint8 input is not supported");
    return tg_infer_set(c, 0, dt, c->in[0]->ndim, c->in[0]->shape);
}

static tg_status unary_kernel(tg_op_ctx *c)
{
    const unary_def *u = (const unary_def *)c->op;
    tg_tensor *out = c->out[0];
    tg_tensor *x = tg__as_dtype(c->in[0], out->dtype);
    if (!x)
        return TG_ERR_NOMEM;
    params P = {tg_attr_float(c->attrs, c->n_attrs, "a", 0),
                tg_attr_float(c->attrs, c->n_attrs, "b", 0)};
    const tg_tensor *ops[2] = {out, x};
    tg_iter it;
    tg_iter_init(&it, 2, ops);
    tg_iter_run(&it, u->rows[out->dtype], &P);
    tg_release(x);
    return TG_OK;
}

/* ---- gradient rules --------------------------------------------------------- */
#define X (g->in[0])
#define Y (g->out[0])
#define DY (g->dy[0])
#define RULE(OP, EXPR)                                                      \
    static tg_status OP##_grad(tg_grad_ctx *g)                              \
    {                                                                       \
        g->dx[0] = (EXPR);                                                  \
        return TG_OK;                                                       \
    }
static double attr_a(const tg_grad_ctx *g) { return tg_attr_float(g->attrs, g->n_attrs, "a", 0); }
static double attr_b(const tg_grad_ctx *g) { return tg_attr_float(g->attrs, g->n_attrs, "b", 0); }
static tg_tensor *mask_of(tg_tensor *bool_mask, tg_tensor *like)
{
    return tg_cast(bool_mask, like->dtype);
}
static tg_tensor *zeros_grad(tg_tensor *dy) { return tg_zeros_like(dy); }

RULE(neg, tg_neg(DY))
RULE(abs, tg_mul(DY, tg_sign(X)))
RULE(exp, tg_mul(DY, Y))
RULE(log, tg_div(DY, X))
RULE(sqrt, tg_div(tg_mul_scalar(DY, 0.5), Y))
RULE(rsqrt, tg_mul(tg_mul_scalar(DY, -0.5), tg_mul(Y, tg_mul(Y, Y))))
RULE(sin, tg_mul(DY, tg_cos(X)))
RULE(cos, tg_neg(tg_mul(DY, tg_sin(X))))
RULE(tanh, tg_mul(DY, tg_sub(tg_ones_like(Y), tg_mul(Y, Y))))
RULE(sigmoid, tg_mul(DY, tg_mul(Y, tg_sub(tg_ones_like(Y), Y))))
/* relu's gradient is one fused pass (relu_grad below), not gt+cast+mul */
static tg_tensor *relu_grad_call(tg_tensor *dy, tg_tensor *y);
RULE(relu, relu_grad_call(DY, Y))
RULE(erf, tg_mul(DY, tg_mul_scalar(tg_exp(tg_neg(tg_mul(X, X))), 1.12837916709551257390)))
/* d/dx x*Phi(x) = Phi(x) + x*phi(x) */
RULE(gelu, tg_mul(DY, tg_add(tg_mul_scalar(tg_add_scalar(tg_erf(tg_mul_scalar(X, SQRT1_2)), 1.0), 0.5),
                             tg_mul(X, tg_mul_scalar(tg_exp(tg_mul_scalar(tg_mul(X, X), -0.5)),
                                                     0.39894228040143267794)))))
RULE(softplus, tg_mul(DY, tg_sigmoid(X)))
RULE(floor, zeros_grad(DY))
RULE(ceil, zeros_grad(DY))
RULE(round, zeros_grad(DY))
RULE(sign, zeros_grad(DY))
RULE(leaky_relu, tg_mul(DY, tg_where(tg_gt(X, tg_zeros_like(X)), tg_ones_like(X),
                                     tg_full_like(X, attr_a(g)))))
/* x > 0: 1, else alpha * exp(x) = y + alpha */
RULE(elu, tg_mul(DY, tg_where(tg_gt(X, tg_zeros_like(X)), tg_ones_like(X),
                              tg_add_scalar(Y, attr_a(g)))))
RULE(clamp, tg_mul(DY, mask_of(tg_logical_and(tg_ge(X, tg_full_like(X, attr_a(g))),
                                              tg_le(X, tg_full_like(X, attr_b(g)))), DY)))

#define IN 1u
#define OUT 1u
#define UNARY_DEF(OP, SAVE_IN, SAVE_OUT)                                    \
    const unary_def tg_op_##OP = {                                          \
        {.name = #OP, .n_in = 1, .n_out = 1, .save_inputs = (SAVE_IN),      \
         .save_outputs = (SAVE_OUT), .infer = unary_infer,                  \
         .kernel = unary_kernel, .grad = OP##_grad},                        \
        OP##_rows};
#define UNARY_OP(OP, SAVE_IN, SAVE_OUT)                                     \
    UNARY_DEF(OP, SAVE_IN, SAVE_OUT)                                        \
    tg_tensor *tg_##OP(tg_tensor *x)                                        \
    {                                                                       \
        return tg_op_call(&tg_op_##OP.def, 1, &x, NULL, 0);                 \
    }

UNARY_OP(neg, 0, 0)
UNARY_OP(abs, IN, 0)
UNARY_OP(exp, 0, OUT)
UNARY_OP(log, IN, 0)
UNARY_OP(sqrt, 0, OUT)
UNARY_OP(rsqrt, 0, OUT)
UNARY_OP(sin, IN, 0)
UNARY_OP(cos, IN, 0)
UNARY_OP(tanh, 0, OUT)
UNARY_OP(sigmoid, 0, OUT)
UNARY_OP(relu, 0, OUT)
UNARY_OP(erf, IN, 0)
UNARY_OP(gelu, IN, 0)
UNARY_OP(softplus, IN, 0)
UNARY_OP(floor, 0, 0)
UNARY_OP(ceil, 0, 0)
UNARY_OP(round, 0, 0)
UNARY_OP(sign, 0, 0)
UNARY_DEF(leaky_relu, IN, 0)
UNARY_DEF(elu, IN, OUT)
UNARY_DEF(clamp, IN, 0)

tg_tensor *tg_leaky_relu(tg_tensor *x, double negative_slope)
{
    tg_attr a = TG_AF("a", negative_slope);
    return tg_op_call(&tg_op_leaky_relu.def, 1, &x, &a, 1);
}

tg_tensor *tg_elu(tg_tensor *x, double alpha)
{
    tg_attr a = TG_AF("a", alpha);
    return tg_op_call(&tg_op_elu.def, 1, &x, &a, 1);
}

tg_tensor *tg_clamp(tg_tensor *x, double lo, double hi)
{
    if (lo > hi)
        return tg__error_null(TG_ERR_ARG, "clamp: lo %g is greater than hi %g", lo, hi);
    tg_attr a[2] = {TG_AF("a", lo), TG_AF("b", hi)};
    return tg_op_call(&tg_op_clamp.def, 1, &x, a, 2);
}

/* ---- relu_grad(dy, y) = dy where y > 0, else 0 ----------------------------
 * The backward of relu, fused: it runs once per activation per training
 * step. Its own gradient: relu_grad(ddy, y) for dy; y gets none. */
#define RELU_GRAD_ROW(NAME, T)                                              \
    static void NAME(char **p, const int64_t *s, int64_t n, void *ctx)      \
    {                                                                       \
        (void)ctx;                                                          \
        const int64_t z = sizeof(T);                                        \
        if (s[0] == z && s[1] == z && s[2] == z) {                          \
            T *o = (T *)p[0];                                               \
            const T *d = (const T *)p[1], *y = (const T *)p[2];             \
            for (int64_t i = 0; i < n; i++)                                 \
                o[i] = y[i] > 0 ? d[i] : (T)0;                              \
        } else {                                                            \
            for (int64_t i = 0; i < n; i++)                                 \
                *(T *)(p[0] + i * s[0]) = *(const T *)(p[2] + i * s[2]) > 0 \
                                              ? *(const T *)(p[1] + i * s[1]) \
                                              : (T)0;                       \
        }                                                                   \
    }
RELU_GRAD_ROW(relu_grad_f32, float)
RELU_GRAD_ROW(relu_grad_f64, double)

static tg_status relu_grad_infer(tg_op_ctx *c)
{
    const tg_tensor *dy = c->in[0], *y = c->in[1];
    if (!tg__shape_eq(dy->ndim, dy->shape, y->ndim, y->shape) || dy->dtype != y->dtype ||
        !tg_dtype_is_float(dy->dtype)) {
        char a[160], b[160];
        return tg__error(TG_ERR_SHAPE, "relu_grad: dy %s %s and y %s %s must be floating "
                         "point of one shape and dtype",
                         tg_shape_str(dy->ndim, dy->shape, a, sizeof a), tg_dtype_name(dy->dtype),
                         tg_shape_str(y->ndim, y->shape, b, sizeof b), tg_dtype_name(y->dtype));
    }
    return tg_infer_set(c, 0, dy->dtype, dy->ndim, dy->shape);
}

static tg_status relu_grad_kernel(tg_op_ctx *c)
{
    const tg_tensor *ops[3] = {c->out[0], c->in[0], c->in[1]};
    tg_iter it;
    tg_iter_init(&it, 3, ops);
    tg_iter_run(&it, c->out[0]->dtype == TG_FLOAT32 ? relu_grad_f32 : relu_grad_f64, NULL);
    return TG_OK;
}

static tg_status relu_grad_grad(tg_grad_ctx *g)
{
    if (g->needs_grad[0])
        g->dx[0] = relu_grad_call(g->dy[0], g->in[1]);
    return TG_OK;
}

const tg_op_def tg_op_relu_grad = {
    .name = "relu_grad", .n_in = 2, .n_out = 1, .save_inputs = 2u,
    .infer = relu_grad_infer, .kernel = relu_grad_kernel, .grad = relu_grad_grad};

static tg_tensor *relu_grad_call(tg_tensor *dy, tg_tensor *y)
{
    tg_tensor *in[2] = {dy, y};
    return tg_op_call(&tg_op_relu_grad, 2, in, NULL, 0);
}

const tg_op_def *const tg_ops_unary[] = {
    &tg_op_neg.def, &tg_op_abs.def, &tg_op_exp.def, &tg_op_log.def,
    &tg_op_sqrt.def, &tg_op_rsqrt.def, &tg_op_sin.def, &tg_op_cos.def,
    &tg_op_tanh.def, &tg_op_sigmoid.def, &tg_op_relu.def, &tg_op_erf.def,
    &tg_op_gelu.def, &tg_op_softplus.def, &tg_op_floor.def, &tg_op_ceil.def,
    &tg_op_round.def, &tg_op_sign.def, &tg_op_leaky_relu.def, &tg_op_elu.def,
    &tg_op_clamp.def, &tg_op_relu_grad, NULL,
};
