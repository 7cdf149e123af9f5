/* Unary elementwise math: neg abs exp log sqrt rsqrt sin cos tanh sigmoid
 * relu leaky_relu elu gelu erf softplus floor ceil round sign clamp
 * hardswish hardsigmoid selu.
 * One row template per op expanded per dtype (tgmath picks float or
 * double functions); integer inputs of float-only ops compute in float32,
 * and so do bools of the math functions (exp ... erf, as PyTorch).
 * The templates, infer and kernel are shared with unary_math.c and
 * unary_act.c through ops/unary.h.
 * Each op gives its derivative once (t * f'(x)): autodiff makes both the
 * gradient and the forward-mode rule from it. */
#include "autodiff/jvp.h"
#include "ops/elementwise.h"
#include "kernels/cpu/vgelu.h"
#include "kernels/cpu/vmath.h"
#include "ops/unary.h"

#include <tgmath.h>

#define SQRT1_2 0.70710678118654752440

/* integer negation wraps through uint64 (-INT_MIN is INT_MIN, and -x of
 * uint8 is 256 - x, as in PyTorch) instead of overflowing, which is
 * undefined behaviour */
#define INEG(x) (V)(0 - (uint64_t)(x))
UN_ALL(neg, -x, INEG(x), INEG(x))
UN_ALL(abs, fabs(x), x < 0 ? INEG(x) : x, x)
/* NaN passes through relu (x != x), as in PyTorch */
UN_ALL(relu, x > 0 || x != x ? x : (V)0, x > 0 ? x : (V)0, x)
UN_ALL(sign, (V)((x > 0) - (x < 0)), (V)((x > 0) - (x < 0)), (V)(x > 0))
UN_ALL(floor, floor(x), x, x)
UN_ALL(ceil, ceil(x), x, x)
UN_ALL(round, nearbyint(x), x, x) /* default rounding: half to even */
UN_ALL(clamp, CLAMP_EXPR, CLAMP_EXPR, CLAMP_EXPR)
/* exp, tanh and sigmoid in float32: the vectorizable forms of
 * kernels/cpu/vmath.h over the whole range (within 1.3, 1.4 and 2.5 ulp;
 * libm's are scalar calls, 4-10x slower), float64: libm */
UN_FLOAT2(exp, tg__vexpf_full(x), exp(x))
UN_FLOAT(log, log(x))
UN_FLOAT(sqrt, sqrt(x))
UN_FLOAT(rsqrt, 1 / sqrt(x))
UN_FLOAT(sin, sin(x))
UN_FLOAT(cos, cos(x))
UN_FLOAT2(tanh, tg__vtanhf(x), tanh(x))
UN_FLOAT2(sigmoid, tg__vsigmoidf(x), x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)))
/* float32: the vectorizable erf of kernels/cpu/vmath.h (within 4 ulp;
 * libm's erff is a scalar call), float64: libm */
UN_FLOAT2(erf, tg__verff(x), erf(x))
/* erfc(-x/sqrt2) = 1 + erf(x/sqrt2) without the cancellation for x << 0;
 * attribute a = 1: PyTorch's approximate='tanh', in its order of
 * operations: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
#define GELU_BETA 0.79788456080286535588 /* sqrt(2 / pi) */
#define GELU_KAPPA 0.044715
#define GELU_TANH(x) \
    ((V)0.5 * (x) * (1 + tanh((V)GELU_BETA * ((x) + (V)GELU_KAPPA * ((x) * (x) * (x))))))
/* float32: both forms by kernels/cpu/vgelu.h (one branch-free path per
 * lane: within 8 ulp of x Phi(x) down to -13.2; the tanh form as x
 * sigmoid(2u), without 1 + tanh u's cancellation), each in a loop of its
 * own */
UN_ROW(gelu_tanh_f32, float, tg__vgelu_tanhf(x))
UN_ROW(gelu_erf_f32, float, tg__vgeluf(x))
static void gelu_f32(char **p, const int64_t *s, int64_t n, void *ctx)
{
    const unary_attrs *P = ctx;
    (P->a != 0 ? gelu_tanh_f32 : gelu_erf_f32)(p, s, n, ctx);
}
UN_ROW(gelu_f64, double, P->a != 0 ? GELU_TANH(x) : (V)0.5 * x * erfc(-x * (V)SQRT1_2))
static const tg_iter_row_fn gelu_rows[TG_NUM_DTYPES] = {gelu_f32, gelu_f64};
UN_FLOAT(softplus, SOFTPLUS(x))
UN_FLOAT(leaky_relu, x > 0 ? x : x * (V)P->a)
UN_FLOAT(elu, x > 0 ? x : (V)P->a * expm1(x))
/* x * relu6(x + 3) / 6, in PyTorch's order of operations (so -0 below
 * -3, and x * 6 / 6 above 3); NaN passes through */
#define RELU6(v) ((v) < 0 ? (V)0 : (v) > 6 ? (V)6 : (v))
UN_FLOAT(hardswish, x * RELU6(x + 3) / 6)
/* clamp(alpha x + beta, 0, 1); NaN passes through */
#define HARDSIGMOID(v) ((v) < 0 ? (V)0 : (v) > 1 ? (V)1 : (v))
UN_FLOAT(hardsigmoid, HARDSIGMOID((V)P->a * x + (V)P->b))
/* gamma * (x > 0 ? x : alpha * (exp(x) - 1)) */
UN_FLOAT(selu, x > 0 ? (V)P->b * x : (V)P->b * (V)P->a * expm1(x))

static bool is_int_row_table(const tg_iter_row_fn *rows)
{
    return rows[TG_INT32] != NULL;
}

/* ---- the infer and kernel of every unary op (ops/unary.h) -------------- */
static const unary_attrs no_attrs;

tg_status tg__unary_infer(tg_op_ctx *c)
{
    const unary_def *u = (const unary_def *)c->op;
    tg_dtype dt = c->in[0]->dtype;
    /* math functions (input spec tg__unary_math_in) take bools as
     * PyTorch's do, as 0 and 1 in the default float; activations refuse them */
    if (dt == TG_BOOL && !(c->op->inputs[0].dtypes & TG_DTS_BOOL))
        return tg__error(TG_ERR_DTYPE, "%s: bool input is not supported; cast it "
                         "first", c->op->name);
    if (!tg_dtype_is_float(dt) && !is_int_row_table(u->rows))
        dt = tg_default_float();
    return tg_infer_set(c, 0, dt, c->in[0]->ndim, c->in[0]->shape);
}

tg_status tg__unary_kernel(tg_op_ctx *c)
{
    const unary_def *u = (const unary_def *)c->op;
    tg_tensor *out = c->out[0];
    tg_tensor *x = tg__as_dtype(c->in[0], out->dtype);
    if (!x)
        return TG_ERR_NOMEM;
    unary_attrs P = c->op->attrs.specs ? *(const unary_attrs *)c->attr : no_attrs;
    const tg_tensor *ops[2] = {out, x};
    tg_iter it;
    tg_iter_init(&it, 2, ops);
    tg_iter_run(&it, u->rows[out->dtype], &P);
    tg_release(x);
    return TG_OK;
}

/* ---- derivatives: t * f'(x), one per op, giving its VJP and its JVP ---- */
tg_tensor *tg__deriv_zero(tg_tensor *t, tg_tensor *x, tg_tensor *y, const void *attr)
{
    (void)x, (void)y, (void)attr;
    return tg_zeros_like(t);
}

/* relu's derivative is one fused pass (relu_grad below), not gt+cast+mul */
static tg_tensor *relu_grad_call(tg_tensor *dy, tg_tensor *y);

DERIV(neg, tg_neg(t))
DERIV(abs, tg_mul(t, tg_sign(x)))
DERIV(exp, tg_mul(t, y))
DERIV(log, tg_div(t, x))
DERIV(sqrt, tg_div(tg_mul_scalar(t, 0.5), y))
DERIV(rsqrt, tg_mul(tg_mul_scalar(t, -0.5), tg_mul(y, tg_mul(y, y))))
DERIV(sin, tg_mul(t, tg_cos(x)))
DERIV(cos, tg_neg(tg_mul(t, tg_sin(x))))
DERIV(tanh, tg_mul(t, tg_sub(tg_ones_like(y), tg_mul(y, y))))
DERIV(sigmoid, tg_mul(t, tg_mul(y, tg_sub(tg_ones_like(y), y))))
DERIV(relu, relu_grad_call(t, y))
DERIV(erf, tg_mul(t, tg_mul_scalar(tg_exp(tg_neg(tg_mul(x, x))), 1.12837916709551257390)))
/* exact: d/dx x Phi(x) = Phi(x) + x phi(x); tanh form, with u = beta (x +
 * kappa x^3): 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) beta (1 + 3 kappa x^2) */
static tg_tensor *gelu_deriv(tg_tensor *t, tg_tensor *x, tg_tensor *y, const void *attr)
{
    (void)y;
    const unary_attrs *a = attr;
    /* one pass each (gelu_grad, gelu_tanh_grad); x of an integer gelu
     * input is cast to the gradient's float dtype, as the forward
     * computed in it */
    tg_tensor *xf = x->dtype == t->dtype ? x : tg_cast(x, t->dtype);
    return a && a->a != 0 ? tg__gelu_tanh_grad(t, xf) : tg__gelu_grad(t, xf);
}
DERIV(softplus, tg_mul(t, tg_sigmoid(x)))
DERIV(leaky_relu, tg__grad_of_input(tg_mul(t, tg_where(tg_gt(x, tg_zeros_like(x)),
                                                       tg_ones_like(x), tg_full_like(x, a->a))),
                                     x))
/* x > 0: 1, else alpha * exp(x) = y + alpha */
DERIV(elu, tg_mul(t, tg_where(tg_gt(x, tg_zeros_like(x)), tg_ones_like(x),
                              tg_add_scalar(tg__below_zero(y, x), a->a))))
/* 0 below -3, x/3 + 1/2 on [-3, 3], 1 above (PyTorch's one-sided values
 * at the kinks) */
DERIV(hardswish, tg_mul(t, tg_where(tg_lt(x, tg_full_like(x, -3)), tg_zeros_like(x),
                                    tg_where(tg_le(x, tg_full_like(x, 3)),
                                             tg_add_scalar(tg_mul_scalar(x, 1.0 / 3), 0.5),
                                             tg_ones_like(x)))))
/* alpha on the open interval where 0 < alpha x + beta < 1, 0 elsewhere
 * (PyTorch's hardsigmoid: 0 at the kinks) */
static tg_tensor *hardsigmoid_deriv(tg_tensor *t, tg_tensor *x, tg_tensor *y, const void *attr)
{
    (void)y;
    const unary_attrs *a = attr;
    tg_tensor *v = tg_add_scalar(tg_mul_scalar(x, a->a), a->b);
    tg_tensor *inside = tg_logical_and(tg_gt(v, tg_zeros_like(v)), tg_lt(v, tg_ones_like(v)));
    return tg__grad_of_input(tg_mul(t, tg_mul_scalar(tg_cast(inside, t->dtype), a->a)), x);
}
/* x > 0: gamma, else gamma alpha exp(x) = y + gamma alpha (at 0 too, as
 * PyTorch) */
DERIV(selu, tg_mul(t, tg_where(tg_gt(x, tg_zeros_like(x)), tg_full_like(x, a->b),
                               tg_add_scalar(tg__below_zero(y, x), a->a * a->b))))
/* 1 on the closed interval [lo, hi], 0 outside */
DERIV(clamp, tg_mul(t, tg_cast(tg_logical_and(tg_ge(x, tg_full_like(x, a->a)),
                                              tg_le(x, tg_full_like(x, a->b))), t->dtype)))

/* ---- definitions ---------------------------------------------------------- */
const tg_arg_spec tg__unary_number_in[] = {{"x", TG_DTS_NUMBER}, {0}};
const tg_arg_spec tg__unary_math_in[] = {{"x", TG_DTS_NUMBER | TG_DTS_BOOL}, {0}};
const tg_arg_spec tg__unary_number_out[] = {{"y", TG_DTS_NUMBER}, {0}};
const tg_arg_spec tg__unary_float_out[] = {{"y", TG_DTS_FLOAT}, {0}};
/* short names for this file's definitions */
#define number_in tg__unary_number_in
#define math_in tg__unary_math_in
#define number_out tg__unary_number_out
#define float_out tg__unary_float_out

static const tg_attr_spec slope_specs[] = {TG_SPEC_FLOAT(unary_attrs, a, 0.01), {0}};
static const tg_attr_spec alpha_specs[] = {TG_SPEC_FLOAT(unary_attrs, a, 1.0), {0}};
/* gelu: a = 0 exact (erf), 1 the tanh approximation */
static const tg_attr_spec gelu_specs[] = {TG_SPEC_FLOAT(unary_attrs, a, 0, TG_RANGE(0, 1)), {0}};
/* ONNX's attribute names and PyTorch's values (F.hardsigmoid, F.selu) */
static const tg_attr_spec hardsigmoid_specs[] = {TG_SPEC_FLOAT(unary_attrs, a, 1.0 / 6),
                                                 TG_SPEC_FLOAT(unary_attrs, b, 0.5), {0}};
#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_GAMMA 1.0507009873554804934193349852946
static const tg_attr_spec selu_specs[] = {TG_SPEC_FLOAT(unary_attrs, a, SELU_ALPHA),
                                          TG_SPEC_FLOAT(unary_attrs, b, SELU_GAMMA), {0}};
static const tg_attr_spec clamp_specs[] = {TG_SPEC_FLOAT(unary_attrs, a, 0, TG_REQUIRED),
                                           TG_SPEC_FLOAT(unary_attrs, b, 0, TG_REQUIRED), {0}};

const unary_def tg_op_neg = {{UNARY_COMMON(neg, number_in, number_out),
                              .onnx = {"Neg", 13}}, neg_rows};
const unary_def tg_op_abs = {{UNARY_COMMON(abs, number_in, number_out), .save_inputs = 1u,
                              .onnx = {"Abs", 13}}, abs_rows};
const unary_def tg_op_exp = {{UNARY_COMMON(exp, math_in, float_out), .save_outputs = 1u,
                              .onnx = {"Exp", 13}}, exp_rows};
const unary_def tg_op_log = {{UNARY_COMMON(log, math_in, float_out), .save_inputs = 1u,
                              .onnx = {"Log", 13}}, log_rows};
const unary_def tg_op_sqrt = {{UNARY_COMMON(sqrt, math_in, float_out), .save_outputs = 1u,
                               .onnx = {"Sqrt", 13}}, sqrt_rows};
const unary_def tg_op_rsqrt = {{UNARY_COMMON(rsqrt, math_in, float_out), .save_outputs = 1u},
                               rsqrt_rows};
const unary_def tg_op_sin = {{UNARY_COMMON(sin, math_in, float_out), .save_inputs = 1u,
                              .onnx = {"Sin", 7}}, sin_rows};
const unary_def tg_op_cos = {{UNARY_COMMON(cos, math_in, float_out), .save_inputs = 1u,
                              .onnx = {"Cos", 7}}, cos_rows};
const unary_def tg_op_tanh = {{UNARY_COMMON(tanh, math_in, float_out), .save_outputs = 1u,
                               .onnx = {"Tanh", 13}}, tanh_rows};
const unary_def tg_op_sigmoid = {{UNARY_COMMON(sigmoid, math_in, float_out), .save_outputs = 1u,
                                  .onnx = {"Sigmoid", 13}}, sigmoid_rows};
const unary_def tg_op_relu = {{UNARY_COMMON(relu, number_in, number_out), .save_outputs = 1u,
                               .onnx = {"Relu", 14}}, relu_rows};
const unary_def tg_op_erf = {{UNARY_COMMON(erf, math_in, float_out), .save_inputs = 1u,
                              .onnx = {"Erf", 13}}, erf_rows};
const unary_def tg_op_gelu = {{UNARY_COMMON(gelu, number_in, float_out), .save_inputs = 1u,
                               .attrs = {gelu_specs, sizeof(unary_attrs)},
                               .onnx = {"Gelu", 20}}, gelu_rows};
const unary_def tg_op_softplus = {{UNARY_COMMON(softplus, number_in, float_out), .save_inputs = 1u,
                                   .onnx = {"Softplus", 1}}, softplus_rows};
#define floor_deriv tg__deriv_zero
#define ceil_deriv tg__deriv_zero
#define round_deriv tg__deriv_zero
#define sign_deriv tg__deriv_zero
const unary_def tg_op_floor = {{UNARY_COMMON(floor, number_in, number_out), .onnx = {"Floor", 13}},
                               floor_rows};
const unary_def tg_op_ceil = {{UNARY_COMMON(ceil, number_in, number_out), .onnx = {"Ceil", 13}},
                              ceil_rows};
const unary_def tg_op_round = {{UNARY_COMMON(round, number_in, number_out), .onnx = {"Round", 11}},
                               round_rows};
const unary_def tg_op_sign = {{UNARY_COMMON(sign, number_in, number_out), .onnx = {"Sign", 13}},
                              sign_rows};
const unary_def tg_op_leaky_relu = {{UNARY_COMMON(leaky_relu, number_in, float_out), .save_inputs = 1u,
                                     .attrs = {slope_specs, sizeof(unary_attrs)},
                                     .onnx = {"LeakyRelu", 16}}, leaky_relu_rows};
const unary_def tg_op_elu = {{UNARY_COMMON(elu, number_in, float_out), .save_inputs = 1u,
                              .save_outputs = 1u, .attrs = {alpha_specs, sizeof(unary_attrs)},
                              .onnx = {"Elu", 6}}, elu_rows};
const unary_def tg_op_hardswish = {{UNARY_COMMON(hardswish, number_in, float_out),
                                    .save_inputs = 1u, .onnx = {"HardSwish", 14}},
                                   hardswish_rows};
const unary_def tg_op_hardsigmoid = {{UNARY_COMMON(hardsigmoid, number_in, float_out),
                                      .save_inputs = 1u,
                                      .attrs = {hardsigmoid_specs, sizeof(unary_attrs)},
                                      .onnx = {"HardSigmoid", 6}}, hardsigmoid_rows};
const unary_def tg_op_selu = {{UNARY_COMMON(selu, number_in, float_out), .save_inputs = 1u,
                               .save_outputs = 1u, .attrs = {selu_specs, sizeof(unary_attrs)},
                               .onnx = {"Selu", 6}}, selu_rows};
const unary_def tg_op_clamp = {{UNARY_COMMON(clamp, number_in, number_out), .save_inputs = 1u,
                                .attrs = {clamp_specs, sizeof(unary_attrs)},
                                .onnx = {"Clip", 13}}, clamp_rows};

/* ---- public functions ------------------------------------------------------ */
#define unary tg__unary_call

tg_tensor *tg_neg(tg_tensor *x) { return unary(&tg_op_neg, x); }
tg_tensor *tg_abs(tg_tensor *x) { return unary(&tg_op_abs, x); }
tg_tensor *tg_exp(tg_tensor *x) { return unary(&tg_op_exp, x); }
tg_tensor *tg_log(tg_tensor *x) { return unary(&tg_op_log, x); }
tg_tensor *tg_sqrt(tg_tensor *x) { return unary(&tg_op_sqrt, x); }
tg_tensor *tg_rsqrt(tg_tensor *x) { return unary(&tg_op_rsqrt, x); }
tg_tensor *tg_sin(tg_tensor *x) { return unary(&tg_op_sin, x); }
tg_tensor *tg_cos(tg_tensor *x) { return unary(&tg_op_cos, x); }
tg_tensor *tg_tanh(tg_tensor *x) { return unary(&tg_op_tanh, x); }
tg_tensor *tg_sigmoid(tg_tensor *x) { return unary(&tg_op_sigmoid, x); }
tg_tensor *tg_relu(tg_tensor *x) { return unary(&tg_op_relu, x); }
tg_tensor *tg_erf(tg_tensor *x) { return unary(&tg_op_erf, x); }
tg_tensor *tg_gelu(tg_tensor *x) { return unary(&tg_op_gelu, x); }

tg_tensor *tg_gelu_tanh(tg_tensor *x)
{
    tg_attr a = TG_AF("a", 1.0);
    return tg_op_call(&tg_op_gelu.def, 1, &x, &a, 1);
}
tg_tensor *tg_softplus(tg_tensor *x) { return unary(&tg_op_softplus, x); }
tg_tensor *tg_floor(tg_tensor *x) { return unary(&tg_op_floor, x); }
tg_tensor *tg_ceil(tg_tensor *x) { return unary(&tg_op_ceil, x); }
tg_tensor *tg_round(tg_tensor *x) { return unary(&tg_op_round, x); }
tg_tensor *tg_sign(tg_tensor *x) { return unary(&tg_op_sign, x); }
tg_tensor *tg_hardswish(tg_tensor *x) { return unary(&tg_op_hardswish, x); }

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

tg_tensor *tg_hardsigmoid(tg_tensor *x, double alpha, double beta)
{
    tg_attr a[2] = {TG_AF("a", alpha), TG_AF("b", beta)};
    return tg_op_call(&tg_op_hardsigmoid.def, 1, &x, a, 2);
}

tg_tensor *tg_selu(tg_tensor *x) { return unary(&tg_op_selu, x); }

tg_tensor *tg_clamp(tg_tensor *x, double lo, double hi)
{
    tg_attr a[2] = {TG_AF("a", lo), TG_AF("b", hi)};
    return tg_op_call(&tg_op_clamp.def, 1, &x, a, 2);
}

/* ---- relu_grad(dy, y) = 0 where y <= 0, else dy (a NaN y passes dy, as
 * PyTorch's threshold_backward) ---------------------------------------------
 * The backward of relu, fused: it runs once per activation per training
 * step. Its own gradient: relu_grad(ddy, y) for dy; y gets none. */
#define RELU_GRAD_ROW(NAME, T)                                              \
    TG_ISA_ROW(NAME)                                                        \
    {                                                                       \
        (void)ctx;                                                          \
        const int64_t z = sizeof(T);                                        \
        if (s[0] == z && s[1] == z && s[2] == z) {                          \
            T *o = (T *)p[0];                                               \
            const T *d = (const T *)p[1], *y = (const T *)p[2];             \
            for (int64_t i = 0; i < n; i++) {                               \
                T dv = d[i]; /* read always: a conditional read does not */ \
                o[i] = y[i] <= 0 ? (T)0 : dv; /* vectorize without AVX */   \
            }                                                               \
        } else if (s[0] == z && s[1] == 0 && s[2] == z) {                   \
            /* dy broadcast (the backward of a sum): vectorized as above */ \
            T *o = (T *)p[0];                                               \
            const T dv = *(const T *)p[1], *y = (const T *)p[2];            \
            for (int64_t i = 0; i < n; i++)                                 \
                o[i] = y[i] <= 0 ? (T)0 : dv;                               \
        } else {                                                            \
            for (int64_t i = 0; i < n; i++)                                 \
                *(T *)(p[0] + i * s[0]) = *(const T *)(p[2] + i * s[2]) <= 0 \
                                              ? (T)0                        \
                                              : *(const T *)(p[1] + i * s[1]); \
        }                                                                   \
    }
RELU_GRAD_ROW(relu_grad_f32, float)
RELU_GRAD_ROW(relu_grad_f64, double)

static tg_status relu_grad_infer(tg_op_ctx *c)
{
    return tg__infer_grad_pair(c, "y");
}

static tg_status relu_grad_kernel(tg_op_ctx *c)
{
    return tg__run_grad_pair(c, relu_grad_f32, relu_grad_f64);
}

static tg_status relu_grad_grad(tg_grad_ctx *g)
{
    if (g->needs_grad[0])
        g->dx[0] = relu_grad_call(g->dy[0], g->in[1]);
    return TG_OK;
}

/* y only selects: its gradient is zero (almost everywhere) */
static const tg_arg_spec relu_grad_in[] = {
    {"dy", TG_DTS_FLOAT}, {"y", TG_DTS_FLOAT | TG_ARG_NO_GRAD}, {0}};
static const tg_arg_spec relu_grad_out[] = {{"dx", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_relu_grad = {
    .name = "relu_grad", .n_in = 2, .n_out = 1, .inputs = relu_grad_in,
    .outputs = relu_grad_out,
    .flags = TG_OP_PURE | TG_OP_ELEMENTWISE | TG_INPLACE_OK(0) | TG_INPLACE_OK(1),
    .save_inputs = 2u, .infer = relu_grad_infer, .kernel = {[TG_CPU] = relu_grad_kernel},
    .grad = relu_grad_grad, .jvp = tg__jvp_linear};

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
    &tg_op_clamp.def, &tg_op_hardswish.def, &tg_op_hardsigmoid.def, &tg_op_selu.def,
    &tg_op_relu_grad, NULL,
};
