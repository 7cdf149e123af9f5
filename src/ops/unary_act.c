/* Unary activations beyond unary.c: softsign silu mish logsigmoid celu
 * hardtanh (relu6) shrink (softshrink, hardshrink: ONNX Shrink) threshold.
 * Rows, infer and kernel are unary.c's (ops/unary.h). Values, NaN
 * propagation and the derivatives at the kinks are PyTorch's (1.13, the
 * tests' oracle), but for softshrink(NaN) (NaN, see SHRINK_EXPR) and
 * softsign's gradient at +-inf (0, not NaN). A gradient mask is where(),
 * not a product, so that an inf or NaN gradient outside the mask stays
 * out as PyTorch's does. */
#include "kernels/cpu/vmath.h"
#include "ops/unary.h"

#include <tgmath.h>

/* x / (1 + |x|) */
UN_FLOAT(softsign, x / (1 + fabs(x)))
/* x * sigmoid(x), PyTorch's x / (1 + exp(-x)): -0 far below 0; float32
 * with vmath.h's vectorizable exp */
UN_FLOAT2(silu, x / (1 + tg__vexpf_full(-x)), x / (1 + exp(-x)))
/* x * tanh(softplus(x)) */
UN_FLOAT(mish, x * tanh(SOFTPLUS(x)))
/* log(sigmoid(x)) = -softplus(-x), finite for x << 0 */
UN_FLOAT(logsigmoid, -SOFTPLUS(-x))
/* x > 0 ? x : alpha (exp(x / alpha) - 1), with PyTorch's x * (1 / alpha) */
UN_FLOAT(celu, x > 0 ? x : (V)P->a * expm1(x * (V)(1 / P->a)))
/* clamp(x, min_val, max_val); integers too, as PyTorch's */
UN_ALL(hardtanh, CLAMP_EXPR, CLAMP_EXPR, CLAMP_EXPR)
/* ONNX Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0, bounds
 * in the element type as PyTorch casts them. A NaN passes through, as
 * PyTorch's hardshrink (its softshrink and ONNX's reference give 0 there:
 * a NaN turned into a number would hide it) */
#define SHRINK_EXPR                                                         \
    (x < -(V)P->a ? x + (V)P->b : x > (V)P->a ? x - (V)P->b : x == x ? (V)0 : x)
UN_FLOAT(shrink, SHRINK_EXPR)
/* F.threshold: x > threshold ? x : value (a NaN passes through); the
 * numbers take x's dtype first, as PyTorch's scalars do */
#define THRESHOLD_EXPR (x <= (V)P->a ? (V)P->b : x)
UN_ALL(threshold, THRESHOLD_EXPR, THRESHOLD_EXPR, THRESHOLD_EXPR)

/* t where cond holds, 0 elsewhere */
static tg_tensor *t_where(tg_tensor *cond, tg_tensor *t)
{
    return tg_where(cond, t, tg_zeros_like(t));
}

/* 1 / (1 + |x|)^2 (0 at +-inf, where PyTorch's composite gives NaN) */
DERIV(softsign, tg_div(t, tg_square(tg_add_scalar(tg_abs(x), 1))))
/* sigmoid(x) (1 + x (1 - sigmoid(x))) */
static tg_tensor *silu_deriv(tg_tensor *t, tg_tensor *x, tg_tensor *y, const void *attr)
{
    (void)y, (void)attr;
    tg_tensor *s = tg_sigmoid(x);
    return tg_mul(t, tg_mul(s, tg_add_scalar(tg_mul(x, tg_add_scalar(tg_neg(s), 1)), 1)));
}
/* tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2), sp = softplus(x) (PyTorch's
 * mish_backward) */
static tg_tensor *mish_deriv(tg_tensor *t, tg_tensor *x, tg_tensor *y, const void *attr)
{
    (void)y, (void)attr;
    tg_tensor *th = tg_tanh(tg_softplus(x));
    tg_tensor *d = tg_mul(tg_mul(x, tg_sigmoid(x)), tg_add_scalar(tg_neg(tg_square(th)), 1));
    return tg_mul(t, tg_add(th, d));
}
DERIV(logsigmoid, tg_mul(t, tg_sigmoid(tg_neg(x))))
/* 1 above 0, exp(x / alpha) at and below (the two agree at 0) */
DERIV(celu, tg_mul(t, tg_where(tg_gt(x, tg_zeros_like(x)), tg_ones_like(x),
                               tg_exp(tg_mul_scalar(tg__below_zero(x, x), 1 / a->a)))))
/* 1 on the open (min_val, max_val), 0 at the bounds, beyond and at NaN
 * (PyTorch's hardtanh_backward; its scalar loop, which only tensors of
 * under 8 or 16 elements take, passes a NaN's gradient instead) */
DERIV(hardtanh, tg__grad_of_input(t_where(tg_logical_and(tg_gt(x, tg_full_like(x, a->a)),
                                                         tg_lt(x, tg_full_like(x, a->b))),
                                          t),
                                  x))
/* 1 outside the closed [-lambd, lambd], 0 on it and at NaN (PyTorch's
 * softshrink and hardshrink backward, vectorised loop as for hardtanh) */
DERIV(shrink, tg__grad_of_input(t_where(tg_logical_or(tg_lt(x, tg_full_like(x, -a->a)),
                                                      tg_gt(x, tg_full_like(x, a->a))),
                                        t),
                                x))
/* 1 above the threshold and at NaN, 0 where x <= threshold (PyTorch's
 * threshold_backward, as relu's) */
DERIV(threshold,
      tg__grad_of_input(t_where(tg_logical_not(tg_le(x, tg_full_like(x, a->a))), t), x))

/* hardtanh: PyTorch refuses uint8 with a negative bound */
static tg_status hardtanh_infer(tg_op_ctx *c)
{
    const unary_attrs *a = c->attr;
    if (c->in[0]->dtype == TG_UINT8 && (a->a < 0 || a->b < 0))
        return tg__error(TG_ERR_DTYPE, "hardtanh: cannot do hardtanh on an unsigned type with "
                         "negative limits (min_val %g, max_val %g)", a->a, a->b);
    return tg__unary_infer(c);
}

/* short names for this file's definitions */
#define number_in tg__unary_number_in
#define number_out tg__unary_number_out
#define float_out tg__unary_float_out

static const tg_attr_spec alpha_specs[] = {TG_SPEC_FLOAT(unary_attrs, a, 1.0), {0}};
/* a, b: min_val, max_val (hardtanh); threshold, value (threshold) */
static const tg_attr_spec bounds_specs[] = {TG_SPEC_FLOAT(unary_attrs, a, 0, TG_REQUIRED),
                                            TG_SPEC_FLOAT(unary_attrs, b, 0, TG_REQUIRED), {0}};
/* a, b: lambd, bias (ONNX Shrink's defaults) */
static const tg_attr_spec shrink_specs[] = {TG_SPEC_FLOAT(unary_attrs, a, 0.5),
                                            TG_SPEC_FLOAT(unary_attrs, b, 0.0), {0}};

const unary_def tg_op_softsign = {{UNARY_COMMON(softsign, number_in, float_out),
                                   .save_inputs = 1u, .onnx = {"Softsign", 1}}, softsign_rows};
/* no ONNX operator in opsets up to 17: silu, mish (Mish is opset 18),
 * logsigmoid */
const unary_def tg_op_silu = {{UNARY_COMMON(silu, number_in, float_out), .save_inputs = 1u},
                              silu_rows};
const unary_def tg_op_mish = {{UNARY_COMMON(mish, number_in, float_out), .save_inputs = 1u},
                              mish_rows};
const unary_def tg_op_logsigmoid = {{UNARY_COMMON(logsigmoid, number_in, float_out),
                                     .save_inputs = 1u}, logsigmoid_rows};
const unary_def tg_op_celu = {{UNARY_COMMON(celu, number_in, float_out), .save_inputs = 1u,
                               .attrs = {alpha_specs, sizeof(unary_attrs)},
                               .onnx = {"Celu", 12}}, celu_rows};
/* exported as ONNX Clip, whose importer makes clamp (1 at the bounds) */
const unary_def tg_op_hardtanh = {{.name = "hardtanh", .n_in = 1, .n_out = 1,
                                   .inputs = number_in, .outputs = number_out,
                                   .flags = UNARY_FLAGS, .infer = hardtanh_infer,
                                   .kernel = {[TG_CPU] = tg__unary_kernel},
                                   .deriv = hardtanh_deriv, .save_inputs = 1u,
                                   .attrs = {bounds_specs, sizeof(unary_attrs)},
                                   .onnx = {"Clip", 13}}, hardtanh_rows};
const unary_def tg_op_shrink = {{UNARY_COMMON(shrink, number_in, float_out), .save_inputs = 1u,
                                 .attrs = {shrink_specs, sizeof(unary_attrs)},
                                 .onnx = {"Shrink", 9}}, shrink_rows};
/* ONNX ThresholdedRelu is threshold with value 0 (other values export as
 * LessOrEqual and Where) */
const unary_def tg_op_threshold = {{UNARY_COMMON(threshold, number_in, number_out),
                                    .save_inputs = 1u,
                                    .attrs = {bounds_specs, sizeof(unary_attrs)},
                                    .onnx = {"ThresholdedRelu", 10}}, threshold_rows};

static tg_tensor *call2(const unary_def *op, tg_tensor *x, double a, double b)
{
    tg_attr at[2] = {TG_AF("a", a), TG_AF("b", b)};
    return tg_op_call(&op->def, 1, &x, at, 2);
}

tg_tensor *tg_softsign(tg_tensor *x) { return tg__unary_call(&tg_op_softsign, x); }
tg_tensor *tg_silu(tg_tensor *x) { return tg__unary_call(&tg_op_silu, x); }
tg_tensor *tg_mish(tg_tensor *x) { return tg__unary_call(&tg_op_mish, x); }
tg_tensor *tg_logsigmoid(tg_tensor *x) { return tg__unary_call(&tg_op_logsigmoid, x); }

tg_tensor *tg_celu(tg_tensor *x, double alpha)
{
    if (alpha == 0)
        return tg__error_null(TG_ERR_ARG, "celu: alpha must not be 0 (it divides x)");
    tg_attr a = TG_AF("a", alpha);
    return tg_op_call(&tg_op_celu.def, 1, &x, &a, 1);
}

tg_tensor *tg_hardtanh(tg_tensor *x, double min_val, double max_val)
{
    if (min_val > max_val)
        return tg__error_null(TG_ERR_ARG, "hardtanh: min_val %g cannot be greater than "
                              "max_val %g", min_val, max_val);
    return call2(&tg_op_hardtanh, x, min_val, max_val);
}

tg_tensor *tg_relu6(tg_tensor *x) { return tg_hardtanh(x, 0, 6); }

tg_tensor *tg_softshrink(tg_tensor *x, double lambd)
{
    if (!(lambd >= 0))
        return tg__error_null(TG_ERR_ARG, "softshrink: lambda must be greater or equal to 0, "
                              "but found to be %g", lambd);
    return call2(&tg_op_shrink, x, lambd, lambd);
}

tg_tensor *tg_hardshrink(tg_tensor *x, double lambd) { return call2(&tg_op_shrink, x, lambd, 0); }

tg_tensor *tg_threshold(tg_tensor *x, double threshold, double value)
{
    return call2(&tg_op_threshold, x, threshold, value);
}

const tg_op_def *const tg_ops_unary_act[] = {
    &tg_op_softsign.def, &tg_op_silu.def,     &tg_op_mish.def,
    &tg_op_logsigmoid.def, &tg_op_celu.def,   &tg_op_hardtanh.def,
    &tg_op_shrink.def,   &tg_op_threshold.def, NULL,
};
