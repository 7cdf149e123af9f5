/* Unary elementwise math beyond unary.c: the trigonometric and hyperbolic
 * functions and their inverses (tan asin acos atan sinh cosh asinh acosh
 * atanh), expm1 log1p log2 log10, reciprocal, square.
 * Rows, infer and kernel are unary.c's (ops/unary.h). All but square are
 * float-only: integer and bool inputs compute in float32, as PyTorch's do. Values
 * outside a domain are C's (NaN for asin(2), acosh(0.5); -inf for
 * log1p(-1), inf for reciprocal(0)), which are PyTorch's. Derivatives
 * are written as PyTorch's autograd formulas, so that the poles and the
 * points outside the domain give its values too (acosh'(-2) is
 * 1/sqrt(x^2 - 1), not NaN, as there). */
#include "ops/unary.h"

#include <tgmath.h>

#define LN2 0.69314718055994530942
#define LN10 2.30258509299404568402

UN_FLOAT(tan, tan(x))
UN_FLOAT(asin, asin(x))
UN_FLOAT(acos, acos(x))
UN_FLOAT(atan, atan(x))
UN_FLOAT(sinh, sinh(x))
UN_FLOAT(cosh, cosh(x))
UN_FLOAT(asinh, asinh(x))
UN_FLOAT(acosh, acosh(x))
UN_FLOAT(atanh, atanh(x))
UN_FLOAT(expm1, expm1(x))
UN_FLOAT(log1p, log1p(x))
UN_FLOAT(log2, log2(x))
UN_FLOAT(log10, log10(x))
UN_FLOAT(reciprocal, 1 / x)
/* integer squares wrap (through uint64: signed overflow is undefined
 * behaviour), as PyTorch's do */
#define ISQUARE(x) (V)((uint64_t)(x) * (uint64_t)(x))
UN_ALL(square, x * x, ISQUARE(x), ISQUARE(x))

/* 1 - x^2 and x^2 +- 1, as PyTorch forms them */
static tg_tensor *one_minus_sq(tg_tensor *x) { return tg_add_scalar(tg_neg(tg_mul(x, x)), 1); }
static tg_tensor *sq_plus(tg_tensor *x, double c) { return tg_add_scalar(tg_mul(x, x), c); }

DERIV(tan, tg_mul(t, sq_plus(y, 1)))
DERIV(asin, tg_mul(t, tg_rsqrt(one_minus_sq(x))))
DERIV(acos, tg_neg(tg_mul(t, tg_rsqrt(one_minus_sq(x)))))
DERIV(atan, tg_div(t, sq_plus(x, 1)))
DERIV(sinh, tg_mul(t, tg_cosh(x)))
DERIV(cosh, tg_mul(t, tg_sinh(x)))
DERIV(asinh, tg_mul(t, tg_rsqrt(sq_plus(x, 1))))
DERIV(acosh, tg_mul(t, tg_rsqrt(sq_plus(x, -1))))
DERIV(atanh, tg_div(t, one_minus_sq(x)))
DERIV(expm1, tg_mul(t, tg_add_scalar(y, 1)))
DERIV(log1p, tg_div(t, tg_add_scalar(x, 1)))
DERIV(log2, tg_div(t, tg_mul_scalar(x, LN2)))
DERIV(log10, tg_div(t, tg_mul_scalar(x, LN10)))
DERIV(reciprocal, tg_neg(tg_mul(t, tg_mul(y, y))))
DERIV(square, tg_mul(t, tg_mul_scalar(x, 2)))

/* short names for this file's definitions */
#define number_in tg__unary_number_in
#define float_out tg__unary_float_out
/* float functions take bools too (math_in), as PyTorch's */
#define FLOAT_OP(OP, SAVE) UNARY_COMMON(OP, tg__unary_math_in, float_out), SAVE

const unary_def tg_op_tan = {{FLOAT_OP(tan, .save_outputs = 1u), .onnx = {"Tan", 7}}, tan_rows};
const unary_def tg_op_asin = {{FLOAT_OP(asin, .save_inputs = 1u), .onnx = {"Asin", 7}}, asin_rows};
const unary_def tg_op_acos = {{FLOAT_OP(acos, .save_inputs = 1u), .onnx = {"Acos", 7}}, acos_rows};
const unary_def tg_op_atan = {{FLOAT_OP(atan, .save_inputs = 1u), .onnx = {"Atan", 7}}, atan_rows};
const unary_def tg_op_sinh = {{FLOAT_OP(sinh, .save_inputs = 1u), .onnx = {"Sinh", 9}}, sinh_rows};
const unary_def tg_op_cosh = {{FLOAT_OP(cosh, .save_inputs = 1u), .onnx = {"Cosh", 9}}, cosh_rows};
const unary_def tg_op_asinh = {{FLOAT_OP(asinh, .save_inputs = 1u), .onnx = {"Asinh", 9}},
                               asinh_rows};
const unary_def tg_op_acosh = {{FLOAT_OP(acosh, .save_inputs = 1u), .onnx = {"Acosh", 9}},
                               acosh_rows};
const unary_def tg_op_atanh = {{FLOAT_OP(atanh, .save_inputs = 1u), .onnx = {"Atanh", 9}},
                               atanh_rows};
/* no ONNX operator: expm1, log1p, log2, log10, square */
const unary_def tg_op_expm1 = {{FLOAT_OP(expm1, .save_outputs = 1u)}, expm1_rows};
const unary_def tg_op_log1p = {{FLOAT_OP(log1p, .save_inputs = 1u)}, log1p_rows};
const unary_def tg_op_log2 = {{FLOAT_OP(log2, .save_inputs = 1u)}, log2_rows};
const unary_def tg_op_log10 = {{FLOAT_OP(log10, .save_inputs = 1u)}, log10_rows};
const unary_def tg_op_reciprocal = {{FLOAT_OP(reciprocal, .save_outputs = 1u),
                                     .onnx = {"Reciprocal", 13}}, reciprocal_rows};
const unary_def tg_op_square = {{UNARY_COMMON(square, number_in, tg__unary_number_out),
                                 .save_inputs = 1u}, square_rows};

tg_tensor *tg_tan(tg_tensor *x) { return tg__unary_call(&tg_op_tan, x); }
tg_tensor *tg_asin(tg_tensor *x) { return tg__unary_call(&tg_op_asin, x); }
tg_tensor *tg_acos(tg_tensor *x) { return tg__unary_call(&tg_op_acos, x); }
tg_tensor *tg_atan(tg_tensor *x) { return tg__unary_call(&tg_op_atan, x); }
tg_tensor *tg_sinh(tg_tensor *x) { return tg__unary_call(&tg_op_sinh, x); }
tg_tensor *tg_cosh(tg_tensor *x) { return tg__unary_call(&tg_op_cosh, x); }
tg_tensor *tg_asinh(tg_tensor *x) { return tg__unary_call(&tg_op_asinh, x); }
tg_tensor *tg_acosh(tg_tensor *x) { return tg__unary_call(&tg_op_acosh, x); }
tg_tensor *tg_atanh(tg_tensor *x) { return tg__unary_call(&tg_op_atanh, x); }
tg_tensor *tg_expm1(tg_tensor *x) { return tg__unary_call(&tg_op_expm1, x); }
tg_tensor *tg_log1p(tg_tensor *x) { return tg__unary_call(&tg_op_log1p, x); }
tg_tensor *tg_log2(tg_tensor *x) { return tg__unary_call(&tg_op_log2, x); }
tg_tensor *tg_log10(tg_tensor *x) { return tg__unary_call(&tg_op_log10, x); }
tg_tensor *tg_reciprocal(tg_tensor *x) { return tg__unary_call(&tg_op_reciprocal, x); }
tg_tensor *tg_square(tg_tensor *x) { return tg__unary_call(&tg_op_square, x); }

const tg_op_def *const tg_ops_unary_math[] = {
    &tg_op_tan.def,   &tg_op_asin.def,  &tg_op_acos.def,  &tg_op_atan.def,
    &tg_op_sinh.def,  &tg_op_cosh.def,  &tg_op_asinh.def, &tg_op_acosh.def,
    &tg_op_atanh.def, &tg_op_expm1.def, &tg_op_log1p.def, &tg_op_log2.def,
    &tg_op_log10.def, &tg_op_reciprocal.def, &tg_op_square.def, NULL,
};
