/* Statistical reductions: var and std (two passes, mean then squared
 * deviations, in double) with PyTorch's `correction`, logsumexp (max,
 * then the sum of exp(x - max), so large inputs do not overflow), and the
 * L1 and L2 vector norms (sums of |x| and x^2 in double). */
#include "autodiff/jvp.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"

#include <math.h>

/* a float64 scratch vector with one entry per output */
static tg_tensor *per_output(const tg_op_ctx *c)
{
    int64_t n = c->out[0]->numel;
    tg_tensor *t = tg__alloc(TG_FLOAT64, 1, &n);
    if (!t)
        tg__error(TG_ERR_NOMEM, "%s: out of memory", c->op->name);
    return t;
}

static double dof_of(int64_t n, int64_t correction)
{
    double d = (double)n - (double)correction;
    return d > 0 ? d : 0; /* 0: the result is inf or NaN, as in PyTorch */
}

/* ---- var, std -------------------------------------------------------------------- */
static tg_status var_std_kernel(tg_op_ctx *c, tg_red_fin fin)
{
    const tg_tensor *x = c->in[0];
    bool mask[TG_MAX_DIMS];
    tg__red_mask(c, mask);
    int64_t n = tg__red_count(x->ndim, x->shape, mask);
    int64_t corr = ((const tg_red_attrs *)c->attr)->correction;
    tg_tensor *mean = per_output(c);
    if (!mean)
        return TG_ERR_NOMEM;
    tg_red_spec pass1 = {TG_RED_SUM, TG_FIN_DIV, (double)n, NULL};
    tg_status s = tg__reduce(x, mask, &pass1, mean);
    if (s == TG_OK) {
        tg_red_spec pass2 = {TG_RED_SQDEV, fin, dof_of(n, corr),
                             (const double *)tg__base(mean)};
        s = tg__reduce(x, mask, &pass2, c->out[0]);
    }
    tg_release(mean);
    return s;
}

static tg_status var_kernel(tg_op_ctx *c) { return var_std_kernel(c, TG_FIN_DIV); }
static tg_status std_kernel(tg_op_ctx *c) { return var_std_kernel(c, TG_FIN_SQRT); }

/* d var = dvar * 2 (x - mean) / (n - correction) */
static tg_tensor *var_dx(tg_grad_ctx *g, tg_tensor *dvar)
{
    tg_tensor *x = g->in[0];
    bool mask[TG_MAX_DIMS];
    tg__red_grad_mask(g, mask);
    int axes[TG_MAX_DIMS], n = 0;
    for (int i = 0; i < x->ndim; i++)
        if (mask[i])
            axes[n++] = i;
    double dof = dof_of(tg__red_count(x->ndim, x->shape, mask),
                        ((const tg_red_attrs *)g->attr)->correction);
    tg_tensor *centred = n ? tg_sub(x, tg_mean(x, n, axes, true)) : tg_zeros_like(x);
    return tg_mul(tg__red_keep(g, tg_mul_scalar(dvar, 2.0 / dof)), centred);
}

static tg_status var_grad(tg_grad_ctx *g)
{
    g->dx[0] = var_dx(g, g->dy[0]);
    return TG_OK;
}

/* d std = d var / (2 std); zero where std is 0, like PyTorch */
static tg_status std_grad(tg_grad_ctx *g)
{
    tg_tensor *y = g->out[0], *dy = g->dy[0];
    tg_tensor *zero = tg_zeros_like(y);
    tg_tensor *dvar = tg_where(tg_eq(y, zero), zero, tg_div(dy, tg_mul_scalar(y, 2.0)));
    g->dx[0] = var_dx(g, dvar);
    return TG_OK;
}

/* ---- logsumexp ------------------------------------------------------------------ */
static tg_status logsumexp_kernel(tg_op_ctx *c)
{
    bool mask[TG_MAX_DIMS];
    tg__red_mask(c, mask);
    tg_tensor *x = tg__as_dtype(c->in[0], c->out[0]->dtype); /* ints: float32 */
    tg_tensor *shift = per_output(c);
    tg_status s = x && shift ? TG_OK : TG_ERR_NOMEM;
    if (s == TG_OK) {
        /* the max, or 0 when it is infinite (all -inf, or +inf present) */
        tg_red_spec pass1 = {TG_RED_MAX, TG_FIN_SHIFT, 1, NULL};
        s = tg__reduce(x, mask, &pass1, shift);
    }
    if (s == TG_OK) {
        tg_red_spec pass2 = {TG_RED_SUMEXP, TG_FIN_LOGADD, 1,
                             (const double *)tg__base(shift)};
        s = tg__reduce(x, mask, &pass2, c->out[0]);
    }
    tg_release(x);
    tg_release(shift);
    return s;
}

/* d/dx log sum exp x = exp(x - y) (the softmax) */
static tg_status logsumexp_grad(tg_grad_ctx *g)
{
    tg_tensor *p = tg_exp(tg_sub(g->in[0], tg__red_keep(g, g->out[0])));
    g->dx[0] = tg_mul(tg__red_keep(g, g->dy[0]), p);
    return TG_OK;
}

/* ---- vector_norm (ord 1 or 2) ----------------------------------------------------- */
static tg_status norm_kernel(tg_op_ctx *c)
{
    bool mask[TG_MAX_DIMS];
    tg__red_mask(c, mask);
    bool l1 = ((const tg_red_attrs *)c->attr)->ord == 1;
    tg_red_spec spec = {l1 ? TG_RED_ABSSUM : TG_RED_SQSUM, l1 ? TG_FIN_PLAIN : TG_FIN_SQRT, 1,
                        NULL};
    return tg__reduce(c->in[0], mask, &spec, c->out[0]);
}

/* t / y, and 0 where the norm y is 0 (PyTorch's masked_fill: no NaN) */
static tg_tensor *norm_scale(tg_tensor *t, tg_tensor *y)
{
    tg_tensor *zero = tg_zeros_like(y);
    tg_tensor *is0 = tg_eq(y, zero);
    return tg_where(is0, zero, tg_div(t, tg_where(is0, tg_ones_like(y), y)));
}

/* ord 1: dy sign(x) (0 at x == 0, as PyTorch); ord 2: dy x / y, and 0
 * where the norm is 0 */
static tg_status norm_grad(tg_grad_ctx *g)
{
    tg_tensor *x = g->in[0];
    if (((const tg_red_attrs *)g->attr)->ord == 1) {
        g->dx[0] = tg_mul(tg__red_keep(g, g->dy[0]), tg_sign(x));
    } else {
        /* PyTorch's dy * (x / y).masked_fill_(y == 0, 0), in its order: the
         * same rounding, and the same second derivative where y is 0 (the
         * masked quotient's own gradient is 0 / 0 there: NaN, as PyTorch's,
         * rather than a zero that a safe divisor would give) */
        tg_tensor *y = tg__red_keep(g, g->out[0]);
        tg_tensor *zero = tg_zeros_like(y);
        g->dx[0] = tg_mul(tg__red_keep(g, g->dy[0]),
                          tg_where(tg_eq(y, zero), zero, tg_div(x, y)));
    }
    return TG_OK;
}

/* ---- forward mode ------------------------------------------------------------ */
/* ord 1: sum(sign(x) t); ord 2: sum(x t) / y, 0 where y is 0 */
static tg_status norm_jvp(tg_jvp_ctx *c)
{
    const tg_red_attrs *a = c->attr;
    int axes[TG_MAX_DIMS];
    int n = tg__red_jvp_axes(c, axes);
    tg_tensor *x = c->in[0];
    if (a->ord == 1)
        return tg__jvp_set(c, 0, tg_sum(tg_mul(tg_sign(x), c->dx[0]), n, axes, a->keepdim));
    tg_tensor *dot = tg_sum(tg_mul(x, c->dx[0]), n, axes, a->keepdim);
    return tg__jvp_set(c, 0, norm_scale(dot, c->out[0]));
}

/* sum(t * softmax(x)) over the axes */
static tg_status logsumexp_jvp(tg_jvp_ctx *c)
{
    int axes[TG_MAX_DIMS];
    int n = tg__red_jvp_axes(c, axes);
    bool kd = ((const tg_red_attrs *)c->attr)->keepdim;
    tg_tensor *p = tg_exp(tg_sub(c->in[0], tg__red_jvp_keep(c, c->out[0], n, axes)));
    return tg__jvp_set(c, 0, tg_sum(tg_mul(c->dx[0], p), n, axes, kd));
}

/* d var = 2 / (N - correction) * sum((x - mean) t) */
static tg_tensor *var_tangent(tg_jvp_ctx *c)
{
    const tg_red_attrs *a = c->attr;
    int axes[TG_MAX_DIMS];
    int n = tg__red_jvp_axes(c, axes);
    const tg_meta *m = &c->in_meta[0];
    int64_t count = 1;
    for (int i = 0; i < n; i++)
        count *= m->shape[axes[i]];
    double dof = dof_of(count, a->correction); /* inf or NaN, as the op gives */
    tg_tensor *x = c->in[0];
    tg_tensor *centred = n ? tg_sub(x, tg_mean(x, n, axes, true)) : tg_zeros_like(x);
    return tg_mul_scalar(tg_sum(tg_mul(centred, c->dx[0]), n, axes, a->keepdim), 2.0 / dof);
}

static tg_status var_jvp(tg_jvp_ctx *c) { return tg__jvp_set(c, 0, var_tangent(c)); }

/* d std = d var / (2 std), zero where std is 0 (the gradient's convention) */
static tg_status std_jvp(tg_jvp_ctx *c)
{
    tg_tensor *z = tg__jvp_scalar(c, 0.0), *y = c->out[0];
    return tg__jvp_set(c, 0, tg_where(tg_eq(y, z), z,
                                      tg_div(var_tangent(c), tg_mul_scalar(y, 2.0))));
}

/* ---- definitions ------------------------------------------------------------------- */
static const tg_attr_spec var_specs[] = {
    TG_RED_AXES_SPECS, TG_SPEC_INT(tg_red_attrs, correction, 1, TG_MIN(0)), {0}};
static const tg_attr_spec lse_specs[] = {TG_RED_AXES_SPECS, {0}};
static const tg_attr_spec norm_specs[] = {
    TG_RED_AXES_SPECS, TG_SPEC_INT(tg_red_attrs, ord, 2, TG_RANGE(1, 2)), {0}};

const tg_red_def tg_op_var = {
    {.name = "var", .n_in = 1, .n_out = 1, .inputs = tg_red_float_in,
     .outputs = tg_red_float_out, .attrs = {var_specs, sizeof(tg_red_attrs)},
     .flags = TG_OP_PURE, .save_inputs = 1u, .infer = tg__red_infer,
     .kernel = {[TG_CPU] = var_kernel}, .grad = var_grad, .jvp = var_jvp},
    TG_RDT_FLOAT, false};
const tg_red_def tg_op_std = {
    {.name = "std", .n_in = 1, .n_out = 1, .inputs = tg_red_float_in,
     .outputs = tg_red_float_out, .attrs = {var_specs, sizeof(tg_red_attrs)},
     .flags = TG_OP_PURE, .save_inputs = 1u, .save_outputs = 1u, .infer = tg__red_infer,
     .kernel = {[TG_CPU] = std_kernel}, .grad = std_grad, .jvp = std_jvp},
    TG_RDT_FLOAT, false};
static const tg_arg_spec lse_in[] = {{"x", TG_DTS_ANY}, {0}}; /* bool too: 0 and 1 */
const tg_red_def tg_op_logsumexp = {
    {.name = "logsumexp", .n_in = 1, .n_out = 1, .inputs = lse_in,
     .outputs = tg_red_float_out, .attrs = {lse_specs, sizeof(tg_red_attrs)},
     .flags = TG_OP_PURE, .save_inputs = 1u, .save_outputs = 1u, .infer = tg__red_infer,
     .kernel = {[TG_CPU] = logsumexp_kernel}, .grad = logsumexp_grad, .jvp = logsumexp_jvp,
     .onnx = {"ReduceLogSumExp", 13}},
    TG_RDT_TO_FLOAT, false};

/* ONNX ReduceL2 (or ReduceL1, by ord: the exporter picks) */
const tg_red_def tg_op_vector_norm = {
    {.name = "vector_norm", .n_in = 1, .n_out = 1, .inputs = tg_red_float_in,
     .outputs = tg_red_float_out, .attrs = {norm_specs, sizeof(tg_red_attrs)},
     .flags = TG_OP_PURE, .save_inputs = 1u, .save_outputs = 1u, .infer = tg__red_infer,
     .kernel = {[TG_CPU] = norm_kernel}, .grad = norm_grad, .jvp = norm_jvp,
     .onnx = {"ReduceL2", 13}},
    TG_RDT_FLOAT, false};

tg_tensor *tg_vector_norm(tg_tensor *x, int ord, int n_axes, const int *axes, bool keepdim)
{
    if (ord != 1 && ord != 2)
        return tg__error_null(TG_ERR_UNSUPPORTED, "vector_norm: ord %d is not supported "
                              "(1 and 2 are)", ord);
    tg_attr a = TG_AI("ord", ord);
    return tg__red_call(&tg_op_vector_norm, x, n_axes, axes, keepdim, &a);
}

static tg_tensor *var_call(const tg_red_def *op, tg_tensor *x, int n_axes,
                           const int *axes, int correction, bool keepdim)
{
    if (correction < 0)
        return tg__error_null(TG_ERR_ARG, "%s: correction %d is negative; expected "
                              ">= 0 (1: unbiased)", op->def.name, correction);
    tg_attr a = TG_AI("correction", correction);
    return tg__red_call(op, x, n_axes, axes, keepdim, &a);
}

tg_tensor *tg_var(tg_tensor *x, int n_axes, const int *axes, int correction,
                  bool keepdim)
{
    return var_call(&tg_op_var, x, n_axes, axes, correction, keepdim);
}

tg_tensor *tg_std(tg_tensor *x, int n_axes, const int *axes, int correction,
                  bool keepdim)
{
    return var_call(&tg_op_std, x, n_axes, axes, correction, keepdim);
}

tg_tensor *tg_logsumexp(tg_tensor *x, int n_axes, const int *axes, bool keepdim)
{
    return tg__red_call(&tg_op_logsumexp, x, n_axes, axes, keepdim, NULL);
}
