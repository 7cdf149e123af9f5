/* Forward-mode (JVP) rules: the output tangents of an op from its inputs,
 * outputs and input tangents, written with public op functions like the
 * gradient rules. They live here, in a table keyed by op name, rather than
 * in the op definitions, so that the op files need not change; the
 * registry's names are what graphs use to find ops anyway. */
#include "autodiff/jvp.h"

#include <string.h>

#define T(i) (c->dx[i])
#define X(i) (c->in[i])
#define Y (c->out[0])
#define SQRT1_2 0.70710678118654752440
#define TWO_OVER_SQRTPI 1.12837916709551257390
#define INV_SQRT2PI 0.39894228040143267794

/* ---- helpers ----------------------------------------------------------------- */
/* the status of an op that returned NULL */
static tg_status fail(const tg_jvp_ctx *c)
{
    if (tg_last_status() != TG_OK)
        return tg_last_status();
    return tg__error(TG_ERR_INTERNAL, "forward mode: the JVP rule of '%s' failed "
                     "(node '%s')", c->op->name, c->name);
}

/* dy[o] = t, where t NULL means an op failed */
static tg_status set(tg_jvp_ctx *c, int o, tg_tensor *t)
{
    c->dy[o] = t;
    return t ? TG_OK : fail(c);
}

/* acc + term, either of which may be absent (acc NULL: none yet); NULL
 * only when an op failed (term NULL is a failure, not a zero) */
static tg_tensor *add_term(tg_tensor *acc, tg_tensor *term)
{
    if (!term)
        return NULL;
    return acc ? tg_add(acc, term) : term;
}
#define TERM(expr)                                                          \
    do {                                                                    \
        if (!(acc = add_term(acc, (expr))))                                 \
            return fail(c);                                                 \
    } while (0)

static tg_tensor *scalar(const tg_jvp_ctx *c, double v)
{
    return tg_scalar(c->out_meta[0].dtype, v);
}

/* ops with no public function of their own (relu_grad, max_pool2d_select) */
static tg_tensor *call_named(const char *name, int n, tg_tensor *const *in,
                             const tg_attr *attrs, int n_attrs)
{
    const tg_op_def *op = tg_op_find(name);
    if (!op)
        return tg__error_null(TG_ERR_INTERNAL, "forward mode: op '%s' is not "
                              "registered", name);
    return tg_op_call(op, n, in, attrs, n_attrs);
}

/* the op itself on its first n inputs with input i replaced by its
 * tangent: the tangent of an op linear in input i (the others fixed) */
static tg_tensor *with_tangent(const tg_jvp_ctx *c, int i, int n)
{
    tg_tensor *in[TG_MAX_OP_INPUTS];
    for (int k = 0; k < n; k++)
        in[k] = c->in[k];
    in[i] = c->dx[i];
    return tg_op_call(c->op, n, in, c->attrs, c->n_attrs);
}

/* linear in input 0; the other inputs (indices, labels, relu_grad's y)
 * have no effect on the tangent */
static tg_status linear0(tg_jvp_ctx *c)
{
    return T(0) ? set(c, 0, with_tangent(c, 0, c->n_in)) : TG_OK;
}

/* linear in each of the first n inputs separately (matmul): the sum of
 * the op with one input replaced by its tangent at a time */
static tg_tensor *multilinear_terms(tg_jvp_ctx *c, int n, tg_status *s)
{
    tg_tensor *acc = NULL;
    for (int i = 0; i < n; i++)
        if (T(i) && !(acc = add_term(acc, with_tangent(c, i, n)))) {
            *s = fail(c);
            return NULL;
        }
    *s = TG_OK;
    return acc;
}

static tg_status multilinear(tg_jvp_ctx *c)
{
    tg_status s;
    c->dy[0] = multilinear_terms(c, c->n_in, &s);
    return s;
}

/* linear in all inputs together (concat): zeros for absent tangents */
static tg_status joint_linear(tg_jvp_ctx *c)
{
    tg_tensor *in[TG_MAX_OP_INPUTS];
    for (int i = 0; i < c->n_in; i++) {
        const tg_meta *m = &c->in_meta[i];
        if (!(in[i] = T(i) ? T(i) : tg_zeros(m->dtype, m->ndim, m->shape)))
            return fail(c);
    }
    return set(c, 0, tg_op_call(c->op, c->n_in, in, c->attrs, c->n_attrs));
}

static tg_status zero(tg_jvp_ctx *c)
{
    (void)c; /* piecewise constant: the tangent is zero */
    return TG_OK;
}

/* ---- unary elementwise: dy = t * f'(x) -------------------------------------------- */
static double attr_a(const tg_jvp_ctx *c) { return tg_attr_float(c->attrs, c->n_attrs, "a", 0); }
static double attr_b(const tg_jvp_ctx *c) { return tg_attr_float(c->attrs, c->n_attrs, "b", 0); }

#define UNARY(OP, EXPR)                                                     \
    static tg_status OP##_jvp(tg_jvp_ctx *c)                                \
    {                                                                       \
        tg_tensor *t = T(0), *x = X(0), *y = Y;                             \
        (void)x, (void)y;                                                   \
        return set(c, 0, (EXPR));                                           \
    }

UNARY(neg, tg_neg(t))
UNARY(abs, tg_mul(t, tg_sign(x)))
UNARY(exp, tg_mul(t, y))
UNARY(log, tg_div(t, x))
UNARY(sqrt, tg_div(tg_mul_scalar(t, 0.5), y))
UNARY(rsqrt, tg_mul(tg_mul_scalar(t, -0.5), tg_mul(y, tg_mul(y, y))))
UNARY(sin, tg_mul(t, tg_cos(x)))
UNARY(cos, tg_neg(tg_mul(t, tg_sin(x))))
UNARY(tanh, tg_mul(t, tg_sub(scalar(c, 1.0), tg_mul(y, y))))
UNARY(sigmoid, tg_mul(t, tg_mul(y, tg_sub(scalar(c, 1.0), y))))
UNARY(relu, call_named("relu_grad", 2, (tg_tensor *[]){t, y}, NULL, 0))
UNARY(erf, tg_mul(t, tg_mul_scalar(tg_exp(tg_neg(tg_mul(x, x))), TWO_OVER_SQRTPI)))
/* d/dx x Phi(x) = Phi(x) + x phi(x) */
UNARY(gelu, tg_mul(t, tg_add(tg_mul_scalar(tg_add_scalar(tg_erf(tg_mul_scalar(x, SQRT1_2)), 1.0), 0.5),
                             tg_mul(x, tg_mul_scalar(tg_exp(tg_mul_scalar(tg_mul(x, x), -0.5)),
                                                     INV_SQRT2PI)))))
UNARY(softplus, tg_mul(t, tg_sigmoid(x)))
UNARY(leaky_relu, tg_mul(t, tg_where(tg_gt(x, scalar(c, 0.0)), scalar(c, 1.0),
                                     scalar(c, attr_a(c)))))
/* x > 0: 1, else alpha * exp(x) = y + alpha */
UNARY(elu, tg_mul(t, tg_where(tg_gt(x, scalar(c, 0.0)), scalar(c, 1.0),
                              tg_add_scalar(y, attr_a(c)))))
/* the gradient rule's convention: 1 on the closed interval [lo, hi] */
UNARY(clamp, tg_mul(t, tg_cast(tg_logical_and(tg_ge(x, scalar(c, attr_a(c))),
                                               tg_le(x, scalar(c, attr_b(c)))),
                               c->out_meta[0].dtype)))

/* cast between float dtypes: the runner casts the tangent */
static tg_status cast_jvp(tg_jvp_ctx *c) { return set(c, 0, T(0)); }

/* ---- binary elementwise (broadcasting: the runner expands a lone term) ----------- */
static tg_status add_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL;
    if (T(0))
        TERM(T(0));
    if (T(1))
        TERM(T(1));
    c->dy[0] = acc;
    return TG_OK;
}

static tg_status sub_jvp(tg_jvp_ctx *c)
{
    if (T(0) && T(1))
        return set(c, 0, tg_sub(T(0), T(1)));
    return set(c, 0, T(0) ? T(0) : tg_neg(T(1)));
}

static tg_status mul_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL;
    if (T(0))
        TERM(tg_mul(T(0), X(1)));
    if (T(1))
        TERM(tg_mul(X(0), T(1)));
    c->dy[0] = acc;
    return TG_OK;
}

/* ta / b - tb a / b^2 */
static tg_status div_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL, *a = X(0), *b = X(1);
    if (T(0))
        TERM(tg_div(T(0), b));
    if (T(1))
        TERM(tg_neg(tg_div(tg_mul(T(1), a), tg_mul(b, b))));
    c->dy[0] = acc;
    return TG_OK;
}

/* ta b a^(b-1) + tb a^b log a, the second taken as 0 where a == 0 (as the
 * gradient rule does) */
static tg_status pow_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL, *a = X(0), *b = X(1);
    if (T(0))
        TERM(tg_mul(T(0), tg_mul(b, tg_pow(a, tg_add_scalar(b, -1.0)))));
    if (T(1)) {
        tg_tensor *is0 = tg_eq(a, scalar(c, 0.0));
        tg_tensor *safe = tg_where(is0, scalar(c, 1.0), a);
        tg_tensor *d = tg_mul(T(1), tg_mul(Y, tg_log(safe)));
        TERM(tg_where(is0, scalar(c, 0.0), d));
    }
    c->dy[0] = acc;
    return TG_OK;
}

/* the winner's tangent; ties take the mean, as the gradient splits evenly */
static tg_status extremum_jvp(tg_jvp_ctx *c, bool is_max)
{
    tg_tensor *acc = NULL, *a = X(0), *b = X(1);
    tg_dtype dt = c->out_meta[0].dtype;
    tg_tensor *wins = is_max ? tg_gt(a, b) : tg_lt(a, b);
    tg_tensor *wa = tg_add(tg_cast(wins, dt), tg_mul_scalar(tg_cast(tg_eq(a, b), dt), 0.5));
    if (T(0))
        TERM(tg_mul(T(0), wa));
    if (T(1))
        TERM(tg_mul(T(1), tg_sub(scalar(c, 1.0), wa)));
    c->dy[0] = acc;
    return TG_OK;
}
static tg_status maximum_jvp(tg_jvp_ctx *c) { return extremum_jvp(c, true); }
static tg_status minimum_jvp(tg_jvp_ctx *c) { return extremum_jvp(c, false); }

/* where(cond, ta, tb), zero for an absent tangent */
static tg_status where_jvp(tg_jvp_ctx *c)
{
    if (!T(1) && !T(2)) /* a float condition's tangent has no effect */
        return TG_OK;
    tg_tensor *ta = T(1) ? T(1) : scalar(c, 0.0);
    tg_tensor *tb = T(2) ? T(2) : scalar(c, 0.0);
    return set(c, 0, tg_where(X(0), ta, tb));
}

/* ---- views and copies ------------------------------------------------------------- */
/* reshape, not view: an eager tangent need not have a viewable layout */
static tg_status view_jvp(tg_jvp_ctx *c)
{
    return set(c, 0, tg_reshape(T(0), c->out_meta[0].ndim, c->out_meta[0].shape));
}

/* pad is affine: the tangent is padded with zeros, not with `value` */
static tg_status pad_jvp(tg_jvp_ctx *c)
{
    tg_attr a[8];
    int n = 0;
    for (int i = 0; i < c->n_attrs && n < 7; i++)
        if (strcmp(c->attrs[i].name, "value") != 0)
            a[n++] = c->attrs[i];
    a[n++] = (tg_attr)TG_AF("value", 0.0);
    return set(c, 0, tg_op_call(c->op, 1, &c->dx[0], a, n));
}

/* ---- reductions ---------------------------------------------------------------------- */
/* the reduced axes (all when the attribute is empty) and keepdim */
static int red_axes(const tg_jvp_ctx *c, int *axes, bool *keepdim)
{
    const int64_t *ax;
    int n = tg_attr_ints(c->attrs, c->n_attrs, "axes", &ax);
    int nd = c->in_meta[0].ndim;
    if (n == 0)
        for (int i = 0; i < nd; i++)
            axes[n++] = i;
    else
        for (int i = 0; i < n; i++)
            axes[i] = (int)(ax[i] < 0 ? ax[i] + nd : ax[i]);
    *keepdim = tg_attr_int(c->attrs, c->n_attrs, "keepdim", 0) != 0;
    return n;
}

/* t (shaped like the output) in keepdim form, to broadcast against x */
static tg_tensor *keep(const tg_jvp_ctx *c, tg_tensor *t, int n, const int *axes)
{
    const tg_meta *m = &c->in_meta[0];
    int64_t shape[TG_MAX_DIMS];
    memcpy(shape, m->shape, sizeof shape);
    for (int i = 0; i < n; i++)
        shape[axes[i]] = 1;
    return tg_reshape(t, m->ndim, shape);
}

/* amax: the mean of the tangents of the tied extremes */
static tg_status minmax_jvp(tg_jvp_ctx *c)
{
    int axes[TG_MAX_DIMS];
    bool kd;
    int n = red_axes(c, axes, &kd);
    tg_tensor *hit = tg_cast(tg_eq(X(0), keep(c, Y, n, axes)), c->out_meta[0].dtype);
    return set(c, 0, tg_div(tg_sum(tg_mul(T(0), hit), n, axes, kd), tg_sum(hit, n, axes, kd)));
}

/* sum(t * softmax(x)) over the axes */
static tg_status logsumexp_jvp(tg_jvp_ctx *c)
{
    int axes[TG_MAX_DIMS];
    bool kd;
    int n = red_axes(c, axes, &kd);
    tg_tensor *p = tg_exp(tg_sub(X(0), keep(c, Y, n, axes)));
    return set(c, 0, tg_sum(tg_mul(T(0), p), n, axes, kd));
}

/* d var = 2 / (N - correction) * sum((x - mean) t) */
static tg_tensor *var_tangent(tg_jvp_ctx *c)
{
    int axes[TG_MAX_DIMS];
    bool kd;
    int n = red_axes(c, axes, &kd);
    const tg_meta *m = &c->in_meta[0];
    int64_t count = 1;
    for (int i = 0; i < n; i++)
        count *= m->shape[axes[i]];
    double dof = (double)count - (double)tg_attr_int(c->attrs, c->n_attrs, "correction", 1);
    dof = dof > 0 ? dof : 0; /* inf or NaN, as the op gives */
    tg_tensor *centred = n ? tg_sub(X(0), tg_mean(X(0), n, axes, true)) : tg_zeros_like(X(0));
    return tg_mul_scalar(tg_sum(tg_mul(centred, T(0)), n, axes, kd), 2.0 / dof);
}

static tg_status var_jvp(tg_jvp_ctx *c) { return set(c, 0, var_tangent(c)); }

/* d std = d var / (2 std), zero where std is 0 (the gradient's convention) */
static tg_status std_jvp(tg_jvp_ctx *c)
{
    tg_tensor *z = scalar(c, 0.0);
    return set(c, 0, tg_where(tg_eq(Y, z), z, tg_div(var_tangent(c), tg_mul_scalar(Y, 2.0))));
}

/* ---- nn ---------------------------------------------------------------------------------- */
static int sm_axis(const tg_jvp_ctx *c)
{
    return (int)tg_attr_int(c->attrs, c->n_attrs, "axis", -1);
}

/* y * (t - sum(t y)) */
static tg_status softmax_jvp(tg_jvp_ctx *c)
{
    int a = sm_axis(c);
    tg_tensor *ty = tg_mul(T(0), Y);
    tg_tensor *dot = c->in_meta[0].ndim ? tg_sum(ty, 1, &a, true) : ty;
    return set(c, 0, tg_mul(Y, tg_sub(T(0), dot)));
}

/* t - sum(t softmax(x)) */
static tg_status log_softmax_jvp(tg_jvp_ctx *c)
{
    int a = sm_axis(c);
    tg_tensor *tp = tg_mul(T(0), tg_exp(Y));
    return set(c, 0, tg_sub(T(0), c->in_meta[0].ndim ? tg_sum(tp, 1, &a, true) : tp));
}

/* d/dx = sigmoid(x) - target, d/dtarget = -x */
static tg_status bce_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL;
    if (T(0))
        TERM(tg_mul(T(0), tg_sub(tg_sigmoid(X(0)), X(1))));
    if (T(1))
        TERM(tg_neg(tg_mul(T(1), X(0))));
    c->dy[0] = acc;
    return TG_OK;
}

/* ---- linear algebra, convolution, pooling ------------------------------------------------ */
/* alpha (op(ta) op(b) + op(a) op(tb)) + beta tc */
static tg_status gemm_jvp(tg_jvp_ctx *c)
{
    double alpha = tg_attr_float(c->attrs, c->n_attrs, "alpha", 1.0);
    double beta = tg_attr_float(c->attrs, c->n_attrs, "beta", 1.0);
    bool ta = tg_attr_int(c->attrs, c->n_attrs, "trans_a", 0);
    bool tb = tg_attr_int(c->attrs, c->n_attrs, "trans_b", 0);
    tg_tensor *acc = NULL;
    if (T(0))
        TERM(tg_gemm(T(0), X(1), NULL, alpha, 0.0, ta, tb));
    if (T(1))
        TERM(tg_gemm(X(0), T(1), NULL, alpha, 0.0, ta, tb));
    if (c->n_in == 3 && T(2) && beta != 0) /* beta 0: c is not read at all */
        TERM(beta == 1 ? T(2) : tg_mul_scalar(T(2), beta));
    c->dy[0] = acc;
    return TG_OK;
}

/* bilinear in x and w, plus the bias */
static tg_status conv2d_jvp(tg_jvp_ctx *c)
{
    tg_status s;
    tg_tensor *acc = multilinear_terms(c, 2, &s);
    if (s != TG_OK)
        return s;
    if (c->n_in == 3 && T(2))
        TERM(tg_reshape(T(2), 4, (int64_t[]){1, c->in_meta[2].shape[0], 1, 1}));
    c->dy[0] = acc;
    return TG_OK;
}

/* the tangent at the argmax indices (output 1, which has no tangent) */
static tg_status max_pool2d_jvp(tg_jvp_ctx *c)
{
    return set(c, 0, call_named("max_pool2d_select", 2, (tg_tensor *[]){T(0), c->out[1]},
                                NULL, 0));
}

/* ---- the table ------------------------------------------------------------------------- */
static const struct {
    const char *op;
    tg_jvp_rule rule;
} rules[] = {
    /* binary.c */
    {"add", add_jvp}, {"sub", sub_jvp}, {"mul", mul_jvp}, {"div", div_jvp},
    {"pow", pow_jvp}, {"maximum", maximum_jvp}, {"minimum", minimum_jvp},
    /* unary.c */
    {"neg", neg_jvp}, {"abs", abs_jvp}, {"exp", exp_jvp}, {"log", log_jvp},
    {"sqrt", sqrt_jvp}, {"rsqrt", rsqrt_jvp}, {"sin", sin_jvp}, {"cos", cos_jvp},
    {"tanh", tanh_jvp}, {"sigmoid", sigmoid_jvp}, {"relu", relu_jvp},
    {"erf", erf_jvp}, {"gelu", gelu_jvp}, {"softplus", softplus_jvp},
    {"floor", zero}, {"ceil", zero}, {"round", zero}, {"sign", zero},
    {"leaky_relu", leaky_relu_jvp}, {"elu", elu_jvp}, {"clamp", clamp_jvp},
    {"relu_grad", linear0},
    /* compare.c, convert.c */
    {"where", where_jvp}, {"cast", cast_jvp},
    /* shape.c */
    {"view", view_jvp}, {"permute", linear0}, {"slice", linear0},
    {"slice_grad", linear0}, {"expand", linear0}, {"clone", linear0},
    /* reductions */
    {"sum", linear0}, {"mean", linear0}, {"max", minmax_jvp}, {"min", minmax_jvp},
    {"var", var_jvp}, {"std", std_jvp}, {"logsumexp", logsumexp_jvp},
    /* linalg.c */
    {"matmul", multilinear}, {"gemm", gemm_jvp},
    /* conv.c, pool.c */
    {"conv2d", conv2d_jvp}, {"conv2d_grad_input", multilinear},
    {"conv2d_grad_weight", multilinear}, {"max_pool2d", max_pool2d_jvp},
    {"max_pool2d_grad", linear0}, {"max_pool2d_select", linear0},
    {"avg_pool2d", linear0}, {"avg_pool2d_grad", linear0},
    /* nn.c, loss.c */
    {"softmax", softmax_jvp}, {"log_softmax", log_softmax_jvp},
    {"nll_loss", linear0}, {"nll_loss_grad", linear0}, {"bce_with_logits", bce_jvp},
    /* array.c, array_index.c */
    {"concat", joint_linear}, {"pad", pad_jvp}, {"tile", linear0},
    {"gather", linear0}, {"scatter_add", linear0}, {"index_add", linear0},
    {"index_select", linear0}, {"embedding", linear0},
};
#define N_RULES ((int)(sizeof rules / sizeof rules[0]))

tg_jvp_rule tg__jvp_rule(const tg_op_def *op)
{
    for (int i = 0; op && i < N_RULES; i++)
        if (strcmp(rules[i].op, op->name) == 0)
            return rules[i].rule;
    return NULL;
}

int tg__jvp_rule_count(void) { return N_RULES; }

const char *tg__jvp_rule_name(int i)
{
    return i >= 0 && i < N_RULES ? rules[i].op : NULL;
}
