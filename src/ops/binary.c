/* Broadcasting binary arithmetic: add sub mul div pow maximum minimum
 * fmod remainder, and division rounded down or toward zero.
 * One row-kernel template per op, expanded for every numeric dtype, with
 * contiguous and scalar-operand fast paths that the compiler vectorizes. */
#include "autodiff/jvp.h"
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/iter.h"
#include "ops/array.h"
#include "ops/elementwise.h"

#include <math.h>

/* a row kernel: o = EXPR(x, y) with x from operand 1, y from operand 2 */
#define BIN_ROW(NAME, T, EXPR)                                              \
    TG_ISA_ROW(NAME)                                                        \
    {                                                                       \
        (void)ctx;                                                          \
        const int64_t z = sizeof(T);                                        \
        T *o = (T *)p[0];                                                   \
        const T *a = (const T *)p[1], *b = (const T *)p[2];                 \
        if (s[0] == z && s[1] == z && s[2] == z) {                          \
            for (int64_t i = 0; i < n; i++) {                               \
                T x = a[i], y = b[i];                                       \
                o[i] = (EXPR);                                              \
            }                                                               \
        } else if (s[0] == z && s[1] == z && s[2] == 0) {                   \
            const T y = b[0];                                               \
            for (int64_t i = 0; i < n; i++) {                               \
                T x = a[i];                                                 \
                (void)x, (void)y;                                           \
                o[i] = (EXPR);                                              \
            }                                                               \
        } else if (s[0] == z && s[1] == 0 && s[2] == z) {                   \
            const T x = a[0];                                               \
            for (int64_t i = 0; i < n; i++) {                               \
                T y = b[i];                                                 \
                (void)x, (void)y;                                           \
                o[i] = (EXPR);                                              \
            }                                                               \
        } else {                                                            \
            for (int64_t i = 0; i < n; i++) {                               \
                T x = *(const T *)(p[1] + i * s[1]);                        \
                T y = *(const T *)(p[2] + i * s[2]);                        \
                *(T *)(p[0] + i * s[0]) = (EXPR);                           \
            }                                                               \
        }                                                                   \
    }

/* integer arithmetic wraps (as in PyTorch) instead of overflowing */
#define WRAP(T, UT, OP, x, y) ((T)((UT)(x) OP (UT)(y)))

#define BIN_ALL(OP, FEXPR, I32EXPR, I64EXPR, U8EXPR)  \
    BIN_ROW(OP##_f32, float, FEXPR)                   \
    BIN_ROW(OP##_f64, double, FEXPR)                  \
    BIN_ROW(OP##_i32, int32_t, I32EXPR)               \
    BIN_ROW(OP##_i64, int64_t, I64EXPR)               \
    BIN_ROW(OP##_u8, uint8_t, U8EXPR)                 \
    static const tg_iter_row_fn OP##_rows[TG_NUM_DTYPES] = { \
        OP##_f32, OP##_f64, OP##_i32, OP##_i64, OP##_u8, NULL};

BIN_ALL(add, x + y, WRAP(int32_t, uint32_t, +, x, y),
        WRAP(int64_t, uint64_t, +, x, y), (uint8_t)(x + y))
BIN_ALL(sub, x - y, WRAP(int32_t, uint32_t, -, x, y),
        WRAP(int64_t, uint64_t, -, x, y), (uint8_t)(x - y))
BIN_ALL(mul, x * y, WRAP(int32_t, uint32_t, *, x, y),
        WRAP(int64_t, uint64_t, *, x, y), (uint8_t)(x * y))
BIN_ALL(maximum, (x > y || x != x) ? x : y, x > y ? x : y, x > y ? x : y,
        x > y ? x : y)
BIN_ALL(minimum, (x < y || x != x) ? x : y, x < y ? x : y, x < y ? x : y,
        x < y ? x : y)
/* div promotes integers to float32 (true division), so floats only */
BIN_ROW(div_f32, float, x / y)
BIN_ROW(div_f64, double, x / y)
static const tg_iter_row_fn div_rows[TG_NUM_DTYPES] = {div_f32, div_f64};

static int64_t ipow(int64_t x, int64_t y)
{
    if (y < 0)
        return x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;
    uint64_t r = 1, b = (uint64_t)x;
    for (; y; y >>= 1, b *= b)
        if (y & 1)
            r *= b;
    return (int64_t)r;
}
BIN_ROW(pow_f32, float, powf(x, y))
BIN_ROW(pow_f64, double, pow(x, y))
BIN_ROW(pow_i32, int32_t, (int32_t)ipow(x, y))
BIN_ROW(pow_i64, int64_t, ipow(x, y))
BIN_ROW(pow_u8, uint8_t, (uint8_t)ipow(x, y))
static const tg_iter_row_fn pow_rows[TG_NUM_DTYPES] = {pow_f32, pow_f64, pow_i32,
                                                      pow_i64, pow_u8, NULL};

/* fmod: C's fmod, the sign of the dividend (torch.fmod). remainder: the
 * sign of the divisor, Python's % (torch.remainder), computed as PyTorch
 * does, fmod corrected by adding b, so both agree bit for bit with it.
 * Integer rows never divide by 0 (the kernel refuses that first) nor
 * compute INT_MIN % -1 (undefined in C; the remainder is 0). */
static inline float rem_f32(float x, float y)
{
    float m = fmodf(x, y);
    return m != 0 && ((m < 0) != (y < 0)) ? m + y : m;
}
static inline double rem_f64(double x, double y)
{
    double m = fmod(x, y);
    return m != 0 && ((m < 0) != (y < 0)) ? m + y : m;
}
static inline int64_t ifmod(int64_t x, int64_t y) { return y == 0 || y == -1 ? 0 : x % y; }
static inline int64_t irem(int64_t x, int64_t y)
{
    int64_t m = ifmod(x, y);
    return m != 0 && ((m < 0) != (y < 0)) ? m + y : m;
}
#define BIN_MOD(OP, F32, F64, I64)                                      \
    BIN_ROW(OP##_f32, float, F32(x, y))                                 \
    BIN_ROW(OP##_f64, double, F64(x, y))                                \
    BIN_ROW(OP##_i32, int32_t, (int32_t)I64(x, y))                      \
    BIN_ROW(OP##_i64, int64_t, I64(x, y))                               \
    BIN_ROW(OP##_u8, uint8_t, (uint8_t)(y ? x % y : 0))                 \
    static const tg_iter_row_fn OP##_rows[TG_NUM_DTYPES] = {            \
        OP##_f32, OP##_f64, OP##_i32, OP##_i64, OP##_u8, NULL};
BIN_MOD(fmod, fmodf, fmod, ifmod)
BIN_MOD(remainder, rem_f32, rem_f64, irem)

/* a / b rounded down (torch.floor_divide, div(rounding_mode='floor')):
 * floats as PyTorch computes them, from fmod, so that 1 // 0.1 is 9 as in
 * Python (floor(1 / 0.1) would give 10); a zero divisor gives IEEE's
 * a / b. Toward zero (rounding_mode='trunc'): trunc(a / b). Integer rows
 * never see b == 0 (refused first); INT_MIN / -1 wraps to INT_MIN. */
#define FLOOR_DIV(NAME, T, FMOD, FLOOR)                                      \
    static inline T NAME(T x, T y)                                          \
    {                                                                       \
        if (y == 0)                                                         \
            return x / y;                                                   \
        T m = FMOD(x, y), d = (x - m) / y;                                  \
        if (m != 0 && (y < 0) != (m < 0))                                   \
            d -= 1;                                                         \
        if (d == 0)                                                         \
            return copysign((T)0, x / y);                                   \
        T f = FLOOR(d);                                                     \
        return d - f > (T)0.5 ? f + 1 : f;                                  \
    }
FLOOR_DIV(floordiv_f32, float, fmodf, floorf)
FLOOR_DIV(floordiv_f64, double, fmod, floor)
static inline int64_t itruncdiv(int64_t x, int64_t y)
{
    return y == -1 ? (int64_t)(0 - (uint64_t)x) : y == 0 ? 0 : x / y;
}
static inline int64_t ifloordiv(int64_t x, int64_t y)
{
    int64_t q = itruncdiv(x, y);
    return y != -1 && y != 0 && x % y != 0 && (x < 0) != (y < 0) ? q - 1 : q;
}
#define BIN_ROUNDED(OP, F32, F64, I64)                                  \
    BIN_ROW(OP##_f32, float, F32)                                       \
    BIN_ROW(OP##_f64, double, F64)                                      \
    BIN_ROW(OP##_i32, int32_t, (int32_t)I64(x, y))                      \
    BIN_ROW(OP##_i64, int64_t, I64(x, y))                               \
    BIN_ROW(OP##_u8, uint8_t, (uint8_t)(y ? x / y : 0))                 \
    static const tg_iter_row_fn OP##_rows[TG_NUM_DTYPES] = {            \
        OP##_f32, OP##_f64, OP##_i32, OP##_i64, OP##_u8, NULL};
BIN_ROUNDED(floor_divide, floordiv_f32(x, y), floordiv_f64(x, y), ifloordiv)
BIN_ROUNDED(trunc_divide, truncf(x / y), trunc(x / y), itruncdiv)

/* div is true division (integers give float32) unless told otherwise */
typedef struct div_attrs {
    bool true_div;
} div_attrs;
static const tg_attr_spec div_specs[] = {TG_SPEC_BOOL(div_attrs, true_div, 1), {0}};
extern const tg_op_def tg_op_div;

static tg_status binary_infer(tg_op_ctx *c)
{
    const tg_tensor *a = c->in[0], *b = c->in[1];
    if (a->dtype == TG_BOOL || b->dtype == TG_BOOL)
        return tg__error(TG_ERR_DTYPE,
                         "%s: bool tensors are not supported by arithmetic; "
                         "cast them first (tg_cast)", c->op->name);
    tg_dtype dt = tg_result_type(a, b);
    if (!tg_dtype_is_float(dt) && c->op == &tg_op_div &&
        ((const div_attrs *)c->attr)->true_div)
        dt = tg_default_float();
    return tg_infer_broadcast(c, dt);
}

/* runs the row table for the output dtype over (out, a, b), converting
 * inputs of another dtype first */
static tg_status run_binary(tg_op_ctx *c, const tg_iter_row_fn *rows)
{
    tg_tensor *out = c->out[0];
    tg_tensor *a = tg__as_dtype(c->in[0], out->dtype);
    tg_tensor *b = tg__as_dtype(c->in[1], out->dtype);
    tg_status s = TG_OK;
    if (!a || !b) {
        s = TG_ERR_NOMEM;
    } else if (!rows[out->dtype]) {
        s = tg__error(TG_ERR_DTYPE, "%s: not supported for %s", c->op->name,
                      tg_dtype_name(out->dtype));
    } else {
        const tg_tensor *ops[3] = {out, a, b};
        tg_iter it;
        tg_iter_init(&it, 3, ops);
        tg_iter_run(&it, rows[out->dtype], NULL);
    }
    tg_release(a);
    tg_release(b);
    return s;
}

#define KERNEL(OP) \
    static tg_status OP##_kernel(tg_op_ctx *c) { return run_binary(c, OP##_rows); }
KERNEL(add)
KERNEL(sub)
KERNEL(mul)
KERNEL(div)
KERNEL(pow)
KERNEL(maximum)
KERNEL(minimum)

/* an integer divisor of 0 that divides something is an error, as in
 * PyTorch (ZeroDivisionError); floats give NaN */
static tg_status mod_kernel(tg_op_ctx *c, const tg_iter_row_fn *rows)
{
    /* an empty result divides nothing (PyTorch: no error) */
    if (!tg_dtype_is_float(c->out[0]->dtype) && c->out[0]->numel > 0) {
        tg_tensor *b = tg__contig(c->in[1]);
        if (!b)
            return TG_ERR_NOMEM;
        const char *p = tg__base(b);
        size_t es = tg_dtype_size(b->dtype);
        bool zero = false;
        for (int64_t i = 0; i < b->numel && !zero; i++)
            zero = tg__load(b->dtype, p + i * (int64_t)es) == 0;
        tg_release(b);
        if (zero)
            return tg__error(TG_ERR_ARG, "%s: integer division by zero (ZeroDivisionError "
                             "in PyTorch); a divisor element is 0", c->op->name);
    }
    return run_binary(c, rows);
}
static tg_status fmod_kernel(tg_op_ctx *c) { return mod_kernel(c, fmod_rows); }
static tg_status remainder_kernel(tg_op_ctx *c) { return mod_kernel(c, remainder_rows); }
static tg_status floor_divide_kernel(tg_op_ctx *c) { return mod_kernel(c, floor_divide_rows); }
static tg_status trunc_divide_kernel(tg_op_ctx *c) { return mod_kernel(c, trunc_divide_rows); }

/* ---- gradient rules: public ops only, reduced back over broadcast dims */
static tg_tensor *unbroadcast(tg_grad_ctx *g, int i, tg_tensor *d)
{
    return tg_sum_to(d, g->in_meta[i].ndim, g->in_meta[i].shape);
}

static tg_status add_grad(tg_grad_ctx *g)
{
    for (int i = 0; i < 2; i++)
        if (g->needs_grad[i])
            g->dx[i] = unbroadcast(g, i, g->dy[0]);
    return TG_OK;
}

static tg_status sub_grad(tg_grad_ctx *g)
{
    if (g->needs_grad[0])
        g->dx[0] = unbroadcast(g, 0, g->dy[0]);
    if (g->needs_grad[1])
        g->dx[1] = unbroadcast(g, 1, tg_neg(g->dy[0]));
    return TG_OK;
}

static tg_status mul_grad(tg_grad_ctx *g)
{
    if (g->needs_grad[0])
        g->dx[0] = unbroadcast(g, 0, tg_mul(g->dy[0], g->in[1]));
    if (g->needs_grad[1])
        g->dx[1] = unbroadcast(g, 1, tg_mul(g->dy[0], g->in[0]));
    return TG_OK;
}

static tg_status div_grad(tg_grad_ctx *g)
{
    tg_tensor *a = g->in[0], *b = g->in[1];
    if (g->needs_grad[0])
        g->dx[0] = unbroadcast(g, 0, tg_div(g->dy[0], b));
    if (g->needs_grad[1]) /* PyTorch's -dy * ((a / b) / b): its rounding, and no b^2 to
                             overflow or underflow where the quotients do not */
        g->dx[1] = unbroadcast(g, 1, tg_mul(tg_neg(g->dy[0]), tg_div(tg_div(a, b), b)));
    return TG_OK;
}

/* d(a^b)/da = b * a^(b-1), taken as 0 where b == 0 (PyTorch's rule: not
 * 0 * inf at a == 0); the gradient and the tangent both use it */
static tg_tensor *pow_d_base(tg_tensor *a, tg_tensor *b)
{
    tg_tensor *d = tg_mul(b, tg_pow(a, tg_add_scalar(b, -1.0)));
    return tg_where(tg_eq(b, tg_zeros_like(b)), tg_zeros_like(d), d);
}

/* d(a^b)/db = a^b log(a) (y = a^b), taken as 0 where a == 0 and b >= 0
 * (PyTorch's rule: where b < 0 it is inf * -inf = -inf) */
static tg_tensor *pow_d_exp(tg_tensor *a, tg_tensor *b, tg_tensor *y)
{
    tg_tensor *zero = tg_eq(a, tg_zeros_like(a));
    tg_tensor *at0 = tg_logical_and(zero, tg_ge(b, tg_zeros_like(b)));
    tg_tensor *d = tg_mul(y, tg_log(tg_where(at0, tg_ones_like(a), a)));
    return tg_where(at0, tg_zeros_like(d), d);
}

static tg_status pow_grad(tg_grad_ctx *g)
{
    tg_tensor *a = g->in[0], *b = g->in[1], *dy = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = unbroadcast(g, 0, tg_mul(dy, pow_d_base(a, b)));
    if (g->needs_grad[1])
        g->dx[1] = unbroadcast(g, 1, tg_mul(dy, pow_d_exp(a, b, tg_pow(a, b))));
    return TG_OK;
}

/* ties split the gradient evenly, as PyTorch does */
static tg_status extremum_grad(tg_grad_ctx *g, bool is_max)
{
    tg_tensor *a = g->in[0], *b = g->in[1], *dy = g->dy[0];
    tg_tensor *wins = is_max ? tg_gt(a, b) : tg_lt(a, b);
    tg_tensor *ties = tg_eq(a, b);
    tg_tensor *wa = tg_add(tg_cast(wins, dy->dtype),
                           tg_mul_scalar(tg_cast(ties, dy->dtype), 0.5));
    if (g->needs_grad[0])
        g->dx[0] = unbroadcast(g, 0, tg_mul(dy, wa));
    if (g->needs_grad[1])
        g->dx[1] = unbroadcast(g, 1, tg_mul(dy, tg_sub(tg_ones_like(wa), wa)));
    return TG_OK;
}
/* the quotient a / b rounded toward zero (fmod) or down (remainder):
 * PyTorch's d/db of a - b * q, with q piecewise constant. The rounded
 * division ops, as PyTorch's div(rounding_mode=...): their gradients are
 * zeros of their own, so a second derivative at b = 0 is 0, where one
 * through a / b would be 0 * inf */
static tg_tensor *mod_quotient(tg_tensor *a, tg_tensor *b, bool floor_q)
{
    return floor_q ? tg_floor_divide(a, b) : tg_trunc_divide(a, b);
}

/* d/da = 1, d/db = -q */
static tg_status mod_grad(tg_grad_ctx *g, bool floor_q)
{
    if (g->needs_grad[0])
        g->dx[0] = unbroadcast(g, 0, g->dy[0]);
    if (g->needs_grad[1])
        g->dx[1] = unbroadcast(g, 1, tg_neg(tg_mul(g->dy[0],
                                                   mod_quotient(g->in[0], g->in[1], floor_q))));
    return TG_OK;
}
static tg_status fmod_grad(tg_grad_ctx *g) { return mod_grad(g, false); }
static tg_status remainder_grad(tg_grad_ctx *g) { return mod_grad(g, true); }

/* rounded quotients are piecewise constant: zero gradients, as PyTorch's
 * div(rounding_mode=...) gives */
static tg_status rounded_grad(tg_grad_ctx *g)
{
    for (int i = 0; i < 2; i++)
        if (g->needs_grad[i])
            g->dx[i] = unbroadcast(g, i, tg_zeros_like(g->dy[0]));
    return TG_OK;
}
#define floor_divide_grad rounded_grad
#define trunc_divide_grad rounded_grad

static tg_status maximum_grad(tg_grad_ctx *g) { return extremum_grad(g, true); }
static tg_status minimum_grad(tg_grad_ctx *g) { return extremum_grad(g, false); }

/* ---- forward mode (broadcasting: the runner expands a lone term) ------ */
#define TA (c->dx[0])
#define TB (c->dx[1])

static tg_status add_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL;
    if (TA)
        TG_JVP_TERM(c, acc, TA);
    if (TB)
        TG_JVP_TERM(c, acc, TB);
    c->dy[0] = acc;
    return TG_OK;
}

static tg_status sub_jvp(tg_jvp_ctx *c)
{
    if (TA && TB)
        return tg__jvp_set(c, 0, tg_sub(TA, TB));
    return tg__jvp_set(c, 0, TA ? TA : tg_neg(TB));
}

static tg_status mul_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL;
    if (TA)
        TG_JVP_TERM(c, acc, tg_mul(TA, c->in[1]));
    if (TB)
        TG_JVP_TERM(c, acc, tg_mul(c->in[0], TB));
    c->dy[0] = acc;
    return TG_OK;
}

/* ta / b - tb a / b^2 */
static tg_status div_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL, *a = c->in[0], *b = c->in[1];
    if (TA)
        TG_JVP_TERM(c, acc, tg_div(TA, b));
    if (TB)
        TG_JVP_TERM(c, acc, tg_neg(tg_div(tg_mul(TB, a), tg_mul(b, b))));
    c->dy[0] = acc;
    return TG_OK;
}

/* ta b a^(b-1) + tb a^b log a, each as the gradient rule takes it */
static tg_status pow_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL, *a = c->in[0], *b = c->in[1];
    if (TA)
        TG_JVP_TERM(c, acc, tg_mul(TA, pow_d_base(a, b)));
    if (TB)
        TG_JVP_TERM(c, acc, tg_mul(TB, pow_d_exp(a, b, c->out[0])));
    c->dy[0] = acc;
    return TG_OK;
}

/* the winner's tangent; ties take the mean, as the gradient splits evenly */
static tg_status extremum_jvp(tg_jvp_ctx *c, bool is_max)
{
    tg_tensor *acc = NULL, *a = c->in[0], *b = c->in[1];
    tg_dtype dt = c->out_meta[0].dtype;
    tg_tensor *wins = is_max ? tg_gt(a, b) : tg_lt(a, b);
    tg_tensor *wa = tg_add(tg_cast(wins, dt), tg_mul_scalar(tg_cast(tg_eq(a, b), dt), 0.5));
    if (TA)
        TG_JVP_TERM(c, acc, tg_mul(TA, wa));
    if (TB)
        TG_JVP_TERM(c, acc, tg_mul(TB, tg_sub(tg__jvp_scalar(c, 1.0), wa)));
    c->dy[0] = acc;
    return TG_OK;
}
/* ta - tb q, q as in the gradient */
static tg_status mod_jvp(tg_jvp_ctx *c, bool floor_q)
{
    tg_tensor *acc = NULL;
    if (TA)
        TG_JVP_TERM(c, acc, TA);
    if (TB)
        TG_JVP_TERM(c, acc, tg_neg(tg_mul(TB, mod_quotient(c->in[0], c->in[1], floor_q))));
    c->dy[0] = acc;
    return TG_OK;
}
static tg_status rounded_jvp(tg_jvp_ctx *c)
{
    c->dy[0] = NULL; /* zero */
    return TG_OK;
}
#define floor_divide_jvp rounded_jvp
#define trunc_divide_jvp rounded_jvp
static tg_status fmod_jvp(tg_jvp_ctx *c) { return mod_jvp(c, false); }
static tg_status remainder_jvp(tg_jvp_ctx *c) { return mod_jvp(c, true); }

static tg_status maximum_jvp(tg_jvp_ctx *c) { return extremum_jvp(c, true); }
static tg_status minimum_jvp(tg_jvp_ctx *c) { return extremum_jvp(c, false); }

/* ---- definitions ------------------------------------------------------------ */
static const tg_arg_spec binary_in[] = {{"a", TG_DTS_NUMBER}, {"b", TG_DTS_NUMBER}, {0}};
static const tg_arg_spec binary_out[] = {{"y", TG_DTS_NUMBER}, {0}};
/* either input may be overwritten by the output (when dtype and shape match) */
#define BINARY_FLAGS (TG_OP_PURE | TG_OP_ELEMENTWISE | TG_INPLACE_OK(0) | TG_INPLACE_OK(1))
#define BINARY_COMMON(OP)                                                   \
    .name = #OP, .n_in = 2, .n_out = 1, .inputs = binary_in, .outputs = binary_out, \
    .infer = binary_infer, .kernel = {[TG_CPU] = OP##_kernel}, .grad = OP##_grad, \
    .jvp = OP##_jvp

const tg_op_def tg_op_add = {BINARY_COMMON(add), .flags = BINARY_FLAGS | TG_OP_COMMUTATIVE,
                             .onnx = {"Add", 14}};
const tg_op_def tg_op_sub = {BINARY_COMMON(sub), .flags = BINARY_FLAGS, .onnx = {"Sub", 14}};
const tg_op_def tg_op_mul = {BINARY_COMMON(mul),
                             .flags = BINARY_FLAGS | TG_OP_COMMUTATIVE | TG_OP_SAVES_FOR_OTHERS,
                             .save_inputs = TG_SAVE_ALL, .onnx = {"Mul", 14}};
const tg_op_def tg_op_div = {BINARY_COMMON(div), .attrs = {div_specs, sizeof(div_attrs)},
                             .flags = BINARY_FLAGS, .save_inputs = TG_SAVE_ALL,
                             .onnx = {"Div", 14}};
const tg_op_def tg_op_pow = {BINARY_COMMON(pow), .flags = BINARY_FLAGS,
                             .save_inputs = TG_SAVE_ALL, .onnx = {"Pow", 15}};
const tg_op_def tg_op_maximum = {BINARY_COMMON(maximum),
                                 .flags = BINARY_FLAGS | TG_OP_COMMUTATIVE,
                                 .save_inputs = TG_SAVE_ALL, .onnx = {"Max", 13}};
const tg_op_def tg_op_minimum = {BINARY_COMMON(minimum),
                                 .flags = BINARY_FLAGS | TG_OP_COMMUTATIVE,
                                 .save_inputs = TG_SAVE_ALL, .onnx = {"Min", 13}};

/* ONNX Mod: fmod=1 is fmod; fmod=0 (integers only) is remainder */
const tg_op_def tg_op_fmod = {BINARY_COMMON(fmod), .flags = BINARY_FLAGS,
                              .save_inputs = TG_SAVE_ALL, .onnx = {"Mod", 13}};
const tg_op_def tg_op_remainder = {BINARY_COMMON(remainder), .flags = BINARY_FLAGS,
                                   .save_inputs = TG_SAVE_ALL, .onnx = {"Mod", 13}};
/* no ONNX operator rounds a float quotient this way (Div truncates
 * integers only) */
const tg_op_def tg_op_floor_divide = {BINARY_COMMON(floor_divide), .flags = BINARY_FLAGS};
const tg_op_def tg_op_trunc_divide = {BINARY_COMMON(trunc_divide), .flags = BINARY_FLAGS};

/* ---- public functions --------------------------------------------------------- */
static tg_tensor *binary(const tg_op_def *op, tg_tensor *a, tg_tensor *b)
{
    tg_tensor *in[2] = {a, b};
    return tg_op_call(op, 2, in, NULL, 0);
}

tg_tensor *tg_add(tg_tensor *a, tg_tensor *b) { return binary(&tg_op_add, a, b); }
tg_tensor *tg_sub(tg_tensor *a, tg_tensor *b) { return binary(&tg_op_sub, a, b); }
tg_tensor *tg_mul(tg_tensor *a, tg_tensor *b) { return binary(&tg_op_mul, a, b); }
tg_tensor *tg_pow(tg_tensor *a, tg_tensor *b) { return binary(&tg_op_pow, a, b); }
tg_tensor *tg_maximum(tg_tensor *a, tg_tensor *b) { return binary(&tg_op_maximum, a, b); }
tg_tensor *tg_minimum(tg_tensor *a, tg_tensor *b) { return binary(&tg_op_minimum, a, b); }
tg_tensor *tg_fmod(tg_tensor *a, tg_tensor *b) { return binary(&tg_op_fmod, a, b); }
tg_tensor *tg_remainder(tg_tensor *a, tg_tensor *b) { return binary(&tg_op_remainder, a, b); }
tg_tensor *tg_floor_divide(tg_tensor *a, tg_tensor *b)
{
    return binary(&tg_op_floor_divide, a, b);
}
tg_tensor *tg_trunc_divide(tg_tensor *a, tg_tensor *b)
{
    return binary(&tg_op_trunc_divide, a, b);
}

tg_tensor *tg_div(tg_tensor *a, tg_tensor *b)
{
    static const tg_attr true_div = TG_AI("true_div", 1);
    tg_tensor *in[2] = {a, b};
    return tg_op_call(&tg_op_div, 2, in, &true_div, 1);
}

/* ---- scalar conveniences: a 0-d tensor of x's dtype ------------------- */
static tg_tensor *with_scalar(tg_tensor *(*op)(tg_tensor *, tg_tensor *),
                              tg_tensor *x, double s)
{
    if (!x) /* usually an earlier failure: keep its message */
        return tg__error_is_set() ? NULL
                                  : tg__error_null(TG_ERR_ARG, "scalar op: input is NULL");
    /* a fractional scalar with an integer tensor computes in the default
     * float, as a Python float does in PyTorch */
    tg_dtype dt = tg_dtype_is_float(x->dtype) || (isfinite(s) && s == floor(s))
                      ? x->dtype : tg_default_float();
    TG_LOCAL_BEGIN();
    tg_tensor *y = op(x, tg_scalar(dt, s));
    TG_LOCAL_RETURN(y);
}

tg_tensor *tg_add_scalar(tg_tensor *x, double s) { return with_scalar(tg_add, x, s); }
tg_tensor *tg_mul_scalar(tg_tensor *x, double s) { return with_scalar(tg_mul, x, s); }
/* An integer tensor to a negative integral scalar power is an error, as in
 * PyTorch (x ** -2); with a tensor exponent tg_pow gives 0, 1 or -1 (PyTorch
 * again: 1 / x rounded toward zero) */
tg_tensor *tg_pow_scalar(tg_tensor *x, double s)
{
    if (x && !tg_dtype_is_float(x->dtype) && isfinite(s) && s == floor(s) && s < 0)
        return tg__error_null(TG_ERR_ARG, "pow: Integers to negative integer powers are "
                              "not allowed (a %s tensor to the power %g)",
                              tg_dtype_name(x->dtype), s);
    return with_scalar(tg_pow, x, s);
}
