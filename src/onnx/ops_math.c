/* ONNX elementwise ops -> tensorgraph: unary math and activations (those
 * without attributes whose op names the ONNX operator, Tan or Softsign,
 * map directly: mapping.c), arithmetic
 * in the input type, Mod, variadic Max/Min/Sum/Mean, comparisons, logic, Clip, Where. */
#include "onnx/ops.h"

#include "ops/op.h"

#include <math.h>

static tg_status done(onnx_ictx *c, tg_tensor *y)
{
    c->out[0] = y;
    return y ? TG_OK : tg_last_status();
}

#define X0(c) oi_req((c), 0, "X")

/* ---- unary ---------------------------------------------------------------------- */
#define UNARY(name, fn) \
    static tg_status name(onnx_ictx *c) { return done(c, fn(X0(c))); }
UNARY(m_abs, tg_abs)
UNARY(m_neg, tg_neg)
UNARY(m_exp, tg_exp)
UNARY(m_log, tg_log)
UNARY(m_sqrt, tg_sqrt)
UNARY(m_sin, tg_sin)
UNARY(m_cos, tg_cos)
UNARY(m_tanh, tg_tanh)
UNARY(m_sigmoid, tg_sigmoid)
UNARY(m_erf, tg_erf)
UNARY(m_softplus, tg_softplus)
UNARY(m_floor, tg_floor)
UNARY(m_ceil, tg_ceil)
UNARY(m_round, tg_round)
UNARY(m_not, tg_logical_not)

static tg_status m_sign(onnx_ictx *c)
{
    tg_tensor *x = X0(c);
    return done(c, x ? onnx_as(tg_sign(x), tg_dtype_of(x)) : NULL);
}

static tg_status m_relu(onnx_ictx *c)
{
    tg_tensor *x = X0(c);
    if (x && !tg_dtype_is_float(tg_dtype_of(x))) /* Relu-14 takes integers */
        return done(c, tg_maximum(x, tg_scalar(tg_dtype_of(x), 0)));
    return done(c, tg_relu(x));
}

static tg_status m_reciprocal(onnx_ictx *c)
{
    tg_tensor *x = X0(c);
    return done(c, x ? onnx_as(tg_reciprocal(x), tg_dtype_of(x)) : NULL);
}

/* Op(alpha): fn(X, alpha), alpha defaulting to dflt (Celu, Elu, LeakyRelu) */
static tg_status alpha_op(onnx_ictx *c, double dflt, tg_tensor *(*fn)(tg_tensor *, double))
{
    double alpha;
    tg_status s = oa_float(c, "alpha", dflt, &alpha);
    return s != TG_OK ? s : done(c, fn(X0(c), alpha));
}

static tg_status m_celu(onnx_ictx *c) { return alpha_op(c, 1.0, tg_celu); }
static tg_status m_elu(onnx_ictx *c) { return alpha_op(c, 1.0, tg_elu); }
static tg_status m_leaky_relu(onnx_ictx *c) { return alpha_op(c, 0.01, tg_leaky_relu); }

/* Shrink is the shrink op itself (softshrink: bias = lambd, hardshrink:
 * bias 0); integer inputs compute in float32 and keep their type */
static tg_status m_shrink(onnx_ictx *c)
{
    double lambd, bias;
    tg_status s = oa_float(c, "lambd", 0.5, &lambd);
    if (s == TG_OK)
        s = oa_float(c, "bias", 0.0, &bias);
    tg_tensor *x = s == TG_OK ? X0(c) : NULL, *y;
    if (!x)
        return s != TG_OK ? s : tg_last_status();
    tg_attr a[2] = {TG_AF("a", lambd), TG_AF("b", bias)};
    s = tg_op_run(tg_op_find("shrink"), 1, &x, a, 2, &y);
    return s != TG_OK ? s : done(c, onnx_as(y, tg_dtype_of(x)));
}

/* ThresholdedRelu(alpha): x > alpha ? x : 0, F.threshold(x, alpha, 0) */
static tg_status m_thresholded_relu(onnx_ictx *c)
{
    double alpha;
    tg_status s = oa_float(c, "alpha", 1.0, &alpha);
    return s != TG_OK ? s : done(c, tg_threshold(X0(c), alpha, 0));
}

static tg_status m_hardsigmoid(onnx_ictx *c)
{
    double alpha, beta;
    tg_status s = oa_float(c, "alpha", 0.2, &alpha);
    if (s == TG_OK)
        s = oa_float(c, "beta", 0.5, &beta);
    return s != TG_OK ? s : done(c, tg_hardsigmoid(X0(c), alpha, beta));
}

/* Selu: tg_selu has PyTorch's constants; other ones go to the op itself */
static tg_status m_selu(onnx_ictx *c)
{
    double alpha, gamma;
    tg_status s = oa_float(c, "alpha", 1.67326319217681884765625, &alpha);
    if (s == TG_OK)
        s = oa_float(c, "gamma", 1.05070102214813232421875, &gamma);
    tg_tensor *x = s == TG_OK ? X0(c) : NULL, *y;
    if (!x)
        return tg_last_status();
    tg_attr a[2] = {TG_AF("a", alpha), TG_AF("b", gamma)};
    s = tg_op_run(tg_op_find("selu"), 1, &x, a, 2, &y);
    return s != TG_OK ? s : done(c, y);
}

/* ---- binary arithmetic ------------------------------------------------------------- */
static bool two(onnx_ictx *c, tg_tensor **a, tg_tensor **b)
{
    *a = oi_req(c, 0, "A");
    *b = *a ? oi_req(c, 1, "B") : NULL;
    return *b != NULL;
}

/* ONNX's arithmetic keeps the (common) input type */
#define ARITH(name, fn)                                           \
    static tg_status name(onnx_ictx *c)                           \
    {                                                             \
        tg_tensor *a, *b;                                         \
        if (!two(c, &a, &b))                                      \
            return tg_last_status();                              \
        return done(c, onnx_as(fn(a, b), tg_dtype_of(a)));       \
    }
ARITH(m_add, tg_add)
ARITH(m_sub, tg_sub)
ARITH(m_mul, tg_mul)

static tg_status m_div(onnx_ictx *c)
{
    tg_tensor *a, *b;
    if (!two(c, &a, &b))
        return tg_last_status();
    tg_dtype dt = tg_dtype_of(a);
    if (tg_dtype_is_float(dt))
        return done(c, onnx_as(tg_div(a, b), dt));
    /* integer division truncates toward zero (C's, numpy's astype) */
    tg_tensor *q = tg_div(onnx_as(a, TG_FLOAT64), onnx_as(b, TG_FLOAT64));
    return done(c, onnx_as(q, dt)); /* float -> int casts truncate */
}

static tg_status m_pow(onnx_ictx *c)
{
    tg_tensor *a, *b;
    if (!two(c, &a, &b))
        return tg_last_status();
    tg_dtype dt = tg_dtype_of(a);
    /* x^2 with a constant 2 (the variance in a layer norm exported below
     * opset 17) is x * x: the correctly rounded square, where powf is a
     * scalar libm call per element */
    if (tg_dtype_is_float(dt) && c->known[1] && c->val[1] && tg_numel(c->val[1]) == 1 &&
        tg_ndim(c->val[1]) <= tg_ndim(a) && tg_item(c->val[1]) == 2.0)
        return done(c, tg_mul(a, a));
    if (tg_dtype_is_float(dt))
        return done(c, onnx_as(tg_pow(a, onnx_as(b, dt)), dt));
    /* the result has the base's integer type: compute in float64 (exact
     * for results below 2^53) and round */
    tg_tensor *p = tg_pow(onnx_as(a, TG_FLOAT64), onnx_as(b, TG_FLOAT64));
    return done(c, onnx_as(tg_round(p), dt));
}

/* Mod: fmod=1 is C's fmod (torch.fmod); fmod=0, the default, is the
 * sign of the divisor (Python's %, torch.remainder) and ONNX allows it
 * for integers only */
static tg_status m_mod(onnx_ictx *c)
{
    int64_t cmod;
    tg_tensor *a, *b;
    tg_status s = oa_int(c, "fmod", 0, &cmod);
    if (s != TG_OK)
        return s;
    if (cmod != 0 && cmod != 1)
        return onnx_err(c, TG_ERR_IO, "fmod must be 0 or 1, got %lld", (long long)cmod);
    if (!two(c, &a, &b))
        return tg_last_status();
    tg_dtype dt = tg_dtype_of(a);
    if (!cmod && tg_dtype_is_float(dt))
        return onnx_err(c, TG_ERR_IO, "fmod=0 (the sign of the divisor) is for integer "
                        "inputs only; floating-point inputs need fmod=1");
    return done(c, onnx_as(cmod ? tg_fmod(a, b) : tg_remainder(a, b), dt));
}

/* ---- comparisons and logic (bool results) ---------------------------------------------- */
#define CMP(name, fn)                                   \
    static tg_status name(onnx_ictx *c)                 \
    {                                                   \
        tg_tensor *a, *b;                               \
        if (!two(c, &a, &b))                            \
            return tg_last_status();                    \
        return done(c, fn(a, b));                       \
    }
CMP(m_equal, tg_eq)
CMP(m_less, tg_lt)
CMP(m_less_equal, tg_le)
CMP(m_greater, tg_gt)
CMP(m_greater_equal, tg_ge)
CMP(m_and, tg_logical_and)
CMP(m_or, tg_logical_or)
CMP(m_xor, tg_logical_xor)

/* ---- variadic ---------------------------------------------------------------------------- */
static tg_status fold(onnx_ictx *c, tg_tensor *(*fn)(tg_tensor *, tg_tensor *), bool mean)
{
    tg_tensor *acc = NULL;
    int n = 0;
    for (int i = 0; i < c->n_in; i++) {
        if (!c->in[i])
            return onnx_err(c, TG_ERR_IO, "input %d is empty (\"\")", i);
        acc = acc ? fn(acc, c->in[i]) : c->in[i];
        n++;
        if (!acc)
            return tg_last_status();
    }
    tg_dtype dt = tg_dtype_of(c->in[0]);
    if (mean && n > 1)
        acc = tg_div(acc, tg_scalar(tg_dtype_of(acc), n));
    return done(c, onnx_as(acc, dt));
}

static tg_status m_max(onnx_ictx *c) { return fold(c, tg_maximum, false); }
static tg_status m_min(onnx_ictx *c) { return fold(c, tg_minimum, false); }
static tg_status m_sum(onnx_ictx *c) { return fold(c, tg_add, false); }
static tg_status m_mean(onnx_ictx *c) { return fold(c, tg_add, true); }

/* ---- Clip (min and max are optional inputs from opset 11) ------------------------------------
 * torch.clamp's gradient convention: x at exactly a bound passes its
 * gradient (1), a bound gets it only where x is strictly beyond it. Known
 * float bounds make one clamp op; bounds computed or trained in the model
 * make where(x < lo, lo, x) then where(y > hi, hi, y), which has the same
 * gradients (maximum/minimum would split ties: 0.5). Integer inputs have
 * no gradients: maximum/minimum, exact for int64. When min > max every
 * output is max, as ONNX says. */
static tg_tensor *clip_bound(onnx_ictx *c, int i, tg_dtype dt)
{
    return tg_reshape(onnx_as(c->in[i], dt), 0, NULL);
}

static tg_status m_clip(onnx_ictx *c)
{
    tg_tensor *x = X0(c);
    if (!x)
        return tg_last_status();
    tg_dtype dt = tg_dtype_of(x);
    bool has[3] = {false}, known = true;
    double v[3] = {0, -INFINITY, INFINITY};
    for (int i = 1; i < 3; i++) {
        has[i] = i < c->n_in && c->in[i];
        if (has[i] && tg_numel(c->in[i]) != 1)
            return onnx_err(c, TG_ERR_IO, "input %d (%s) should be a scalar, has %lld "
                            "elements", i, i == 1 ? "min" : "max",
                            (long long)tg_numel(c->in[i]));
        if (has[i] && c->known[i] && tg_copy_to(c->in[i], TG_FLOAT64, &v[i]) != TG_OK)
            return tg_last_status();
        known &= !has[i] || c->known[i];
    }
    if (!tg_dtype_is_float(dt)) {
        tg_tensor *y = x;
        for (int i = 1; i < 3; i++)
            if (has[i])
                y = i == 1 ? tg_maximum(y, clip_bound(c, i, dt))
                           : tg_minimum(y, clip_bound(c, i, dt));
        return done(c, onnx_as(y, dt));
    }
    if (known) /* min > max: clamp's own check would refuse; every output is max */
        return done(c, v[1] > v[2] ? tg_full_like(x, v[2]) : tg_clamp(x, v[1], v[2]));
    tg_tensor *y = x;
    if (has[1]) {
        tg_tensor *lo = clip_bound(c, 1, dt);
        y = tg_where(tg_lt(y, lo), lo, y);
    }
    if (has[2]) {
        tg_tensor *hi = clip_bound(c, 2, dt);
        y = tg_where(tg_gt(y, hi), hi, y);
    }
    return done(c, y);
}

static tg_status m_where(onnx_ictx *c)
{
    tg_tensor *cond = oi_req(c, 0, "condition");
    tg_tensor *a = cond ? oi_req(c, 1, "X") : NULL;
    tg_tensor *b = a ? oi_req(c, 2, "Y") : NULL;
    if (!b)
        return tg_last_status();
    return done(c, onnx_as(tg_where(onnx_as(cond, TG_BOOL), a, b), tg_dtype_of(a)));
}

/* since_versions up to opset 17 (onnx.defs), inputs, outputs */
const onnx_op_entry onnx_ops_math[] = {
    {"Abs", {1, 6, 13}, 1, 1, 1, 1, m_abs, 0},
    {"Neg", {1, 6, 13}, 1, 1, 1, 1, m_neg, 0},
    {"Exp", {1, 6, 13}, 1, 1, 1, 1, m_exp, 0},
    {"Log", {1, 6, 13}, 1, 1, 1, 1, m_log, 0},
    {"Sqrt", {1, 6, 13}, 1, 1, 1, 1, m_sqrt, 0},
    {"Sin", {7}, 1, 1, 1, 1, m_sin, 0},
    {"Cos", {7}, 1, 1, 1, 1, m_cos, 0},
    {"Tanh", {1, 6, 13}, 1, 1, 1, 1, m_tanh, 0},
    {"Sigmoid", {1, 6, 13}, 1, 1, 1, 1, m_sigmoid, 0},
    {"Erf", {9, 13}, 1, 1, 1, 1, m_erf, 0},
    {"Softplus", {1}, 1, 1, 1, 1, m_softplus, 0},
    {"Floor", {1, 6, 13}, 1, 1, 1, 1, m_floor, 0},
    {"Ceil", {1, 6, 13}, 1, 1, 1, 1, m_ceil, 0},
    {"Round", {11}, 1, 1, 1, 1, m_round, 0},
    {"Sign", {9, 13}, 1, 1, 1, 1, m_sign, 0},
    {"Not", {1}, 1, 1, 1, 1, m_not, 0},
    {"Relu", {1, 6, 13, 14}, 1, 1, 1, 1, m_relu, 0},
    {"Reciprocal", {1, 6, 13}, 1, 1, 1, 1, m_reciprocal, 0},
    {"LeakyRelu", {1, 6, 16}, 1, 1, 1, 1, m_leaky_relu, 0},
    {"Elu", {1, 6}, 1, 1, 1, 1, m_elu, 0},
    {"HardSigmoid", {1, 6}, 1, 1, 1, 1, m_hardsigmoid, 0},
    {"Selu", {1, 6}, 1, 1, 1, 1, m_selu, 0},
    {"Celu", {12}, 1, 1, 1, 1, m_celu, 0},
    {"Shrink", {9}, 1, 1, 1, 1, m_shrink, 0},
    {"ThresholdedRelu", {10}, 1, 1, 1, 1, m_thresholded_relu, 0},
    {"Add", {1, 6, 7, 13, 14}, 2, 2, 1, 1, m_add, 0},
    {"Sub", {1, 6, 7, 13, 14}, 2, 2, 1, 1, m_sub, 0},
    {"Mul", {1, 6, 7, 13, 14}, 2, 2, 1, 1, m_mul, 0},
    {"Div", {1, 6, 7, 13, 14}, 2, 2, 1, 1, m_div, 0},
    {"Pow", {1, 7, 12, 13, 15}, 2, 2, 1, 1, m_pow, 0},
    {"Mod", {10, 13}, 2, 2, 1, 1, m_mod, 0},
    {"Equal", {1, 7, 11, 13}, 2, 2, 1, 1, m_equal, 0},
    {"Less", {1, 7, 9, 13}, 2, 2, 1, 1, m_less, 0},
    {"LessOrEqual", {12, 16}, 2, 2, 1, 1, m_less_equal, 0},
    {"Greater", {1, 7, 9, 13}, 2, 2, 1, 1, m_greater, 0},
    {"GreaterOrEqual", {12, 16}, 2, 2, 1, 1, m_greater_equal, 0},
    {"And", {1, 7}, 2, 2, 1, 1, m_and, 0},
    {"Or", {1, 7}, 2, 2, 1, 1, m_or, 0},
    {"Xor", {1, 7}, 2, 2, 1, 1, m_xor, 0},
    {"Max", {1, 6, 8, 12, 13}, 1, -1, 1, 1, m_max, 0},
    {"Min", {1, 6, 8, 12, 13}, 1, -1, 1, 1, m_min, 0},
    {"Sum", {1, 6, 8, 13}, 1, -1, 1, 1, m_sum, 0},
    {"Mean", {1, 6, 8, 13}, 1, -1, 1, 1, m_mean, 0},
    {"Clip", {1, 6, 11, 12, 13}, 1, 3, 1, 1, m_clip, 0},
    {"Where", {9, 16}, 3, 3, 1, 1, m_where, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
