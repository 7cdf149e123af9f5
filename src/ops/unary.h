/* What the unary elementwise families share (unary.c, unary_math.c,
 * unary_act.c): the row templates expanded per dtype, the definition
 * wrapper that carries an op's row table, the one infer and kernel every
 * unary op runs, and the derivative macro. */
#ifndef TG_OPS_UNARY_H
#define TG_OPS_UNARY_H

#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/iter.h"
#include "ops/op.h"
#include "tg/autograd.h"

#include <stdint.h>

/* the attributes of every unary op with any (slope, alpha, bounds, lambd
 * and bias...): two numbers in one struct, so that one kernel passes them
 * to the rows (as P) and one macro to the derivatives (as a) */
typedef struct unary_attrs {
    double a, b;
} unary_attrs;

#define UN_ROW(NAME, T, EXPR)                                               \
    TG_ISA_ROW(NAME)                                                        \
    {                                                                       \
        typedef T V; /* the element type, for casts inside EXPR */          \
        const unary_attrs *P = ctx;                                         \
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

/* float-only ops: integer inputs are converted to float32 (rows of the
 * integer dtypes are NULL: tg__unary_infer reads that) */
#define UN_FLOAT(OP, EXPR) UN_FLOAT2(OP, EXPR, EXPR)
/* the same with an expression per precision (float32's vectorizable
 * forms of kernels/cpu/vmath.h beside libm's double functions) */
#define UN_FLOAT2(OP, EXPR32, EXPR64)                                       \
    UN_ROW(OP##_f32, float, EXPR32)                                         \
    UN_ROW(OP##_f64, double, EXPR64)                                        \
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

/* clamp(x, a, b) with comparisons, not fmin/fmax, so that NaN passes
 * through (clamp, hardtanh); a > b gives b everywhere, as PyTorch's
 * min(max(x, a), b) and NumPy's clip */
#define CLAMP_EXPR (V)(x < P->a ? (P->a > P->b ? P->b : P->a) : x > P->b ? P->b : x)

/* log(1 + exp(v)) without overflow for v >> 0 or underflow for v << 0
 * (softplus, mish, logsigmoid); inside rows (tgmath, V) */
#define SOFTPLUS(v) (fmax((v), (V)0) + log1p(exp(-fabs(v))))

/* an op definition and the row table its kernel runs */
typedef struct unary_def {
    tg_op_def def;
    const tg_iter_row_fn *rows;
} unary_def;

/* the output dtype: the input's, or float32 for an integer input of an
 * op with float rows only (and a bool input of one whose input spec
 * allows bools, tg__unary_math_in); other bool inputs are refused */
tg_status tg__unary_infer(tg_op_ctx *c);
/* runs the definition's row for the output dtype over the input
 * (converted to it), with the decoded attributes as the rows' P */
tg_status tg__unary_kernel(tg_op_ctx *c);

extern const tg_arg_spec tg__unary_number_in[];  /* x: any numeric dtype */
/* x: any numeric dtype or bool (math functions: bools compute as 0 and 1
 * in float32, as PyTorch's) */
extern const tg_arg_spec tg__unary_math_in[];
extern const tg_arg_spec tg__unary_number_out[]; /* y: any numeric dtype */
extern const tg_arg_spec tg__unary_float_out[];  /* y: float32 or float64 */

#define UNARY_FLAGS (TG_OP_PURE | TG_OP_ELEMENTWISE | TG_INPLACE_OK(0))
/* the fields every unary op shares: OUT is tg__unary_number_out for ops
 * with integer rows, tg__unary_float_out for float-only ops (ints compute
 * in float32) */
#define UNARY_COMMON(OP, IN, OUT)                                           \
    .name = #OP, .n_in = 1, .n_out = 1, .inputs = IN, .outputs = OUT,        \
    .flags = UNARY_FLAGS, .infer = tg__unary_infer,                         \
    .kernel = {[TG_CPU] = tg__unary_kernel}, .deriv = OP##_deriv

/* the derivative t * f'(x), from x, y and the attributes a: one per op,
 * giving both its VJP and its JVP */
#define DERIV(OP, EXPR)                                                     \
    static tg_tensor *OP##_deriv(tg_tensor *t, tg_tensor *x, tg_tensor *y,  \
                                 const void *attr)                          \
    {                                                                       \
        const unary_attrs *a = attr;                                        \
        (void)x, (void)y, (void)a;                                          \
        return (EXPR);                                                      \
    }

/* v where x < 0, elsewhere v's values cut from the graph: the exponential
 * branch of elu, selu and celu then has PyTorch's second derivative, 0
 * from x = 0 on (its double backward masks by x < 0), and an exp that
 * overflowed above 0 meets no zero gradient (0 * inf). Built only when the
 * derivative is itself recorded (create_graph): else v. */
static inline tg_tensor *tg__below_zero(tg_tensor *v, tg_tensor *x)
{
    if (!tg_grad_enabled())
        return v;
    return tg_where(tg_lt(x, tg_zeros_like(x)), v, tg_detach(v));
}

/* dy * gelu'(x) (exact GELU) in one pass: the op gelu_grad (act_grad.c);
 * dy and x of one shape and float dtype */
tg_tensor *tg__gelu_grad(tg_tensor *dy, tg_tensor *x);
/* dy * gelu'(x) of the tanh form, one pass: the op gelu_tanh_grad */
tg_tensor *tg__gelu_tanh_grad(tg_tensor *dy, tg_tensor *x);

/* calls a unary op without attributes */
static inline tg_tensor *tg__unary_call(const unary_def *op, tg_tensor *x)
{
    return tg_op_call(&op->def, 1, &x, NULL, 0);
}

#endif
