/* Reductions over any set of axes, with keepdim: sum, mean, prod, max,
 * min, and sum_to (the gradient of broadcasting); the shared axis handling
 * of the family and its registry table. var/std/logsumexp live in
 * reduce_stat.c, argmax/argmin in reduce_arg.c, the loops in reduce_engine.c. */
#include "ops/reduce.h"
#include "autodiff/jvp.h"

#include <string.h>

/* ---- axes ------------------------------------------------------------------- */
/* the axes as a mask (no axes: all); errors name the op and the axis */
static tg_status axes_mask(const char *op, int ndim, const int64_t *axes, int n,
                           bool *mask)
{
    memset(mask, 0, TG_MAX_DIMS * sizeof *mask);
    if (n == 0) {
        for (int i = 0; i < ndim; i++)
            mask[i] = true;
        return TG_OK;
    }
    for (int i = 0; i < n; i++) {
        int a;
        if (axes[i] < -TG_MAX_DIMS - 1 || axes[i] > TG_MAX_DIMS) /* fits an int */
            return tg__error(TG_ERR_INDEX, "%s: axis %lld is out of range for a "
                             "tensor of %d dims", op, (long long)axes[i], ndim);
        if (!tg__norm_axis(op, (int)axes[i], ndim, &a))
            return tg_last_status();
        if (mask[a])
            return tg__error(TG_ERR_INDEX, "%s: axis %d appears twice in the axes "
                             "(axis %lld and %d are the same for %d dims)", op, a,
                             (long long)axes[i], a, ndim);
        mask[a] = true;
    }
    return TG_OK;
}

/* argmax/argmin take one "axis"; the others "axes" */
static tg_status attrs_mask(const tg_op_def *op, const tg_red_attrs *a, int ndim,
                            bool *mask)
{
    const tg_red_def *d = (const tg_red_def *)op;
    if (d->dtype_rule == TG_RDT_INDEX)
        return axes_mask(op->name, ndim, &a->axis, 1, mask);
    return axes_mask(op->name, ndim, a->axes.v, a->axes.n, mask);
}

void tg__red_mask(const tg_op_ctx *c, bool *mask)
{
    attrs_mask(c->op, c->attr, c->in[0]->ndim, mask);
}

void tg__red_grad_mask(const tg_grad_ctx *g, bool *mask)
{
    attrs_mask(g->op, g->attr, g->in_meta[0].ndim, mask);
}

int tg__red_jvp_axes(const tg_jvp_ctx *c, int *axes)
{
    bool mask[TG_MAX_DIMS];
    attrs_mask(c->op, c->attr, c->in_meta[0].ndim, mask);
    int n = 0;
    for (int i = 0; i < c->in_meta[0].ndim; i++)
        if (mask[i])
            axes[n++] = i;
    return n;
}

tg_tensor *tg__red_jvp_keep(const tg_jvp_ctx *c, tg_tensor *t, int n, const int *axes)
{
    const tg_meta *m = &c->in_meta[0];
    int64_t shape[TG_MAX_DIMS];
    memcpy(shape, m->shape, sizeof shape);
    for (int i = 0; i < n; i++)
        shape[axes[i]] = 1;
    return tg_reshape(t, m->ndim, shape);
}

int64_t tg__red_count(int ndim, const int64_t *shape, const bool *mask)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        if (mask[i])
            n *= shape[i];
    return n;
}

static tg_status check_dtype(const tg_red_def *d, const tg_tensor *x)
{
    const char *name = d->def.name;
    if (x->dtype == TG_BOOL && d->dtype_rule != TG_RDT_TO_FLOAT) /* bool: as 0 and 1 */
        return tg__error(TG_ERR_DTYPE, "%s: bool input is not supported; cast it "
                         "first", name);
    if (d->dtype_rule == TG_RDT_FLOAT && !tg_dtype_is_float(x->dtype))
        return tg__error(TG_ERR_DTYPE, "%s: expected a float32 or float64 input, "
                         "got %s; cast it first", name, tg_dtype_name(x->dtype));
    return TG_OK;
}

static tg_dtype out_dtype(tg_red_dtype rule, tg_dtype dt)
{
    bool is_int = !tg_dtype_is_float(dt);
    switch (rule) {
    case TG_RDT_INT64: return is_int ? TG_INT64 : dt;
    case TG_RDT_TO_FLOAT: return is_int ? tg_default_float() : dt;
    case TG_RDT_INDEX: return TG_INT64;
    default: return dt;
    }
}

tg_status tg__red_infer(tg_op_ctx *c)
{
    const tg_red_def *d = (const tg_red_def *)c->op;
    const tg_tensor *x = c->in[0];
    const tg_red_attrs *a = c->attr;
    bool mask[TG_MAX_DIMS];
    tg_status s = attrs_mask(c->op, a, x->ndim, mask);
    if (s != TG_OK || (s = check_dtype(d, x)) != TG_OK)
        return s;
    bool keepdim = a->keepdim;
    int64_t shape[TG_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (mask[i] && d->nonempty && x->shape[i] == 0) {
            char b[160];
            return tg__error(TG_ERR_SHAPE, "%s: cannot reduce over axis %d of size "
                             "0 (input shape %s): the result is undefined",
                             c->op->name, i, tg_shape_str(x->ndim, x->shape, b, sizeof b));
        }
        if (!mask[i])
            shape[nd++] = x->shape[i];
        else if (keepdim)
            shape[nd++] = 1;
    }
    return tg_infer_set(c, 0, out_dtype(d->dtype_rule, x->dtype), nd, shape);
}

/* ---- gradient helpers -------------------------------------------------------- */
tg_tensor *tg__red_keep(const tg_grad_ctx *g, tg_tensor *t)
{
    const tg_meta *m = &g->in_meta[0];
    bool mask[TG_MAX_DIMS];
    tg__red_grad_mask(g, mask);
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < m->ndim; i++)
        shape[i] = mask[i] ? 1 : m->shape[i];
    if (tg__shape_has_unknown(m->ndim, m->shape)) {
        /* unknown dims (graph mode): size-1 dims put back one by one, not
         * a reshape (which takes one unknown dim at most) */
        if (t && t->ndim == m->ndim)
            return t; /* keepdim */
        for (int i = 0; i < m->ndim && t; i++)
            if (mask[i])
                t = tg_unsqueeze(t, i);
        return t;
    }
    return tg_reshape(t, m->ndim, shape);
}

tg_tensor *tg__red_expand(const tg_grad_ctx *g, tg_tensor *t)
{
    const tg_meta *m = &g->in_meta[0];
    if (tg__shape_has_unknown(m->ndim, m->shape)) /* g->in[0]: graph mode gives it */
        return tg__expand_as(tg__red_keep(g, t), g->in[0]);
    return tg_expand(tg__red_keep(g, t), m->ndim, m->shape);
}

/* ---- calls ---------------------------------------------------------------------- */
tg_tensor *tg__red_call(const tg_red_def *op, tg_tensor *x, int n_axes,
                        const int *axes, bool keepdim, const tg_attr *extra)
{
    int64_t ax[TG_MAX_DIMS];
    if (n_axes < 0 || n_axes > TG_MAX_DIMS || (n_axes > 0 && !axes))
        return tg__error_null(TG_ERR_ARG, "%s: bad axes (%d axes, %s); expected "
                              "0 to %d", op->def.name, n_axes, axes ? "given" : "NULL",
                              TG_MAX_DIMS);
    for (int i = 0; i < n_axes; i++)
        ax[i] = axes[i];
    tg_attr attrs[3] = {TG_AINTS("axes", ax, n_axes), TG_AI("keepdim", keepdim)};
    int n_attrs = 2;
    if (extra)
        attrs[n_attrs++] = *extra;
    return tg_op_call(&op->def, 1, &x, attrs, n_attrs);
}

/* runs one engine pass of the op's kind over c->in[0] into c->out[0] */
static tg_status run_kind(tg_op_ctx *c, tg_red_kind kind, tg_red_fin fin, double div)
{
    bool mask[TG_MAX_DIMS];
    tg__red_mask(c, mask);
    tg_red_spec spec = {kind, fin, div, NULL};
    return tg__reduce(c->in[0], mask, &spec, c->out[0]);
}

/* ---- sum, prod, max, min, mean ---------------------------------------------- */
static tg_status sum_kernel(tg_op_ctx *c) { return run_kind(c, TG_RED_SUM, TG_FIN_PLAIN, 1); }
static tg_status prod_kernel(tg_op_ctx *c) { return run_kind(c, TG_RED_PROD, TG_FIN_PLAIN, 1); }
static tg_status max_kernel(tg_op_ctx *c) { return run_kind(c, TG_RED_MAX, TG_FIN_PLAIN, 1); }
static tg_status min_kernel(tg_op_ctx *c) { return run_kind(c, TG_RED_MIN, TG_FIN_PLAIN, 1); }

static tg_status mean_kernel(tg_op_ctx *c)
{
    bool mask[TG_MAX_DIMS];
    tg__red_mask(c, mask);
    const tg_tensor *x = c->in[0];
    /* sum / n like PyTorch: an empty reduction gives 0 / 0 = NaN */
    return run_kind(c, TG_RED_SUM, TG_FIN_DIV, (double)tg__red_count(x->ndim, x->shape, mask));
}

static tg_status sum_grad(tg_grad_ctx *g)
{
    g->dx[0] = tg__red_expand(g, g->dy[0]);
    return TG_OK;
}

static tg_status mean_grad(tg_grad_ctx *g)
{
    bool mask[TG_MAX_DIMS];
    tg__red_grad_mask(g, mask);
    const tg_meta *m = &g->in_meta[0];
    if (tg__shape_has_unknown(m->ndim, m->shape)) { /* the count at run time */
        int axes[TG_MAX_DIMS], n = 0;
        for (int i = 0; i < m->ndim; i++)
            if (mask[i])
                axes[n++] = i;
        g->dx[0] = tg__red_expand(g, tg__count_scale(g->dy[0], g->in[0],
                                                     n == m->ndim ? 0 : n, axes, 1.0, false));
        return TG_OK;
    }
    double n = (double)tg__red_count(m->ndim, m->shape, mask);
    g->dx[0] = tg__red_expand(g, tg_mul_scalar(g->dy[0], 1.0 / n));
    return TG_OK;
}

/* amax semantics: the gradient is shared evenly by the tied extremes */
static tg_status minmax_grad(tg_grad_ctx *g)
{
    tg_tensor *x = g->in[0];
    tg_tensor *hit = tg_cast(tg_eq(x, tg__red_keep(g, g->out[0])), x->dtype);
    bool mask[TG_MAX_DIMS];
    tg__red_grad_mask(g, mask);
    int axes[TG_MAX_DIMS], n = 0;
    for (int i = 0; i < x->ndim; i++)
        if (mask[i])
            axes[n++] = i;
    tg_tensor *count = n ? tg_sum(hit, n, axes, true) : tg_ones_like(hit);
    g->dx[0] = tg_mul(tg__red_keep(g, g->dy[0]), tg_div(hit, count));
    return TG_OK;
}

/* The product of the others (x's shape), safe with zeros: with no zero in
 * a reduction it is y / x; with one zero, only the zero's entry is nonzero
 * (the product of the rest); with two or more, all are zero. The gradient
 * and the forward rule of prod both scale by it. Written so that its own
 * derivatives are right too (a second derivative of prod): with one zero
 * x_j, entry i != j is (p / x_i) x_j, and with two, x_j and x_l, entry j
 * is x_l p (p: the product of the non-zeros); zs, the sum of the zero
 * entries, is 0 but carries their derivative */
static tg_tensor *prod_others(tg_tensor *x, int n, const int *axes)
{
    int64_t count = 1;
    for (int i = 0; i < n; i++)
        count *= x->shape[axes[i]];
    if (count == 1) /* each its own product: no others, and no x / x rounding */
        return tg__grad_of_input(tg_ones_like(x), x);
    tg_tensor *zero = tg_zeros_like(x), *one = tg_ones_like(x);
    tg_tensor *is_zero = tg_eq(x, zero);
    tg_tensor *safe = tg_where(is_zero, one, x);
    tg_tensor *p_safe = n ? tg_prod(safe, n, axes, true) : safe;
    tg_tensor *zeros_of_x = tg_where(is_zero, x, zero);
    tg_tensor *zs = n ? tg_sum(zeros_of_x, n, axes, true) : zeros_of_x;
    tg_tensor *nz = n ? tg_sum(tg_cast(is_zero, x->dtype), n, axes, true)
                      : tg_cast(is_zero, x->dtype);
    tg_tensor *none = tg_eq(nz, tg_zeros_like(nz));
    tg_tensor *one_zero = tg_eq(nz, tg_ones_like(nz));
    tg_tensor *two_zeros = tg_eq(nz, tg_full_like(nz, 2));
    tg_tensor *rest = tg_div(p_safe, safe);
    tg_tensor *with_one = tg_where(is_zero, tg_expand(p_safe, x->ndim, x->shape),
                                   tg_mul(rest, zs));
    tg_tensor *with_two = tg_where(is_zero, tg_mul(tg_sub(zs, x), p_safe), zero);
    return tg_where(none, rest,
                    tg_where(one_zero, with_one, tg_where(two_zeros, with_two, zero)));
}

static tg_status prod_grad(tg_grad_ctx *g)
{
    tg_tensor *x = g->in[0];
    bool mask[TG_MAX_DIMS];
    tg__red_grad_mask(g, mask);
    int axes[TG_MAX_DIMS], n = 0;
    for (int i = 0; i < x->ndim; i++)
        if (mask[i])
            axes[n++] = i;
    g->dx[0] = tg_mul(tg__red_keep(g, g->dy[0]), prod_others(x, n, axes));
    return TG_OK;
}

/* the tangent summed with the same weights: sum(dx * others) */
static tg_status prod_jvp(tg_jvp_ctx *c)
{
    int axes[TG_MAX_DIMS];
    int n = tg__red_jvp_axes(c, axes);
    bool kd = ((const tg_red_attrs *)c->attr)->keepdim;
    tg_tensor *t = tg_mul(c->dx[0], prod_others(c->in[0], n, axes));
    return tg__jvp_set(c, 0, n ? tg_sum(t, n, axes, kd) : t);
}

/* amax: the mean of the tangents of the tied extremes */
static tg_status minmax_jvp(tg_jvp_ctx *c)
{
    int axes[TG_MAX_DIMS];
    int n = tg__red_jvp_axes(c, axes);
    bool kd = ((const tg_red_attrs *)c->attr)->keepdim;
    tg_tensor *hit = tg_cast(tg_eq(c->in[0], tg__red_jvp_keep(c, c->out[0], n, axes)),
                             c->out_meta[0].dtype);
    return tg__jvp_set(c, 0, tg_div(tg_sum(tg_mul(c->dx[0], hit), n, axes, kd),
                                    tg_sum(hit, n, axes, kd)));
}

/* ---- definitions ------------------------------------------------------------ */
const tg_arg_spec tg_red_number_in[] = {{"x", TG_DTS_NUMBER}, {0}};
const tg_arg_spec tg_red_float_in[] = {{"x", TG_DTS_FLOAT}, {0}};
const tg_arg_spec tg_red_number_out[] = {{"y", TG_DTS_NUMBER}, {0}};
const tg_arg_spec tg_red_float_out[] = {{"y", TG_DTS_FLOAT}, {0}};
static const tg_attr_spec axes_specs[] = {TG_RED_AXES_SPECS, {0}};
#define RED_COMMON(OP, IN, OUT)                                             \
    .name = #OP, .n_in = 1, .n_out = 1, .inputs = IN, .outputs = OUT,       \
    .attrs = {axes_specs, sizeof(tg_red_attrs)},                            \
    .infer = tg__red_infer, .kernel = {[TG_CPU] = OP##_kernel}

const tg_red_def tg_op_sum = {
    {RED_COMMON(sum, tg_red_number_in, tg_red_number_out), .flags = TG_OP_PURE, .grad = sum_grad,
     .jvp = tg__jvp_linear, .onnx = {"ReduceSum", 13}},
    TG_RDT_INT64, false};
const tg_red_def tg_op_mean = {
    {RED_COMMON(mean, tg_red_float_in, tg_red_float_out), .flags = TG_OP_PURE, .grad = mean_grad,
     .jvp = tg__jvp_linear, .onnx = {"ReduceMean", 13}},
    TG_RDT_FLOAT, false};
const tg_red_def tg_op_prod = {
    {RED_COMMON(prod, tg_red_number_in, tg_red_number_out), .flags = TG_OP_PURE,
     .save_inputs = 1u, .grad = prod_grad, .jvp = prod_jvp, .onnx = {"ReduceProd", 13}},
    TG_RDT_INT64, false};
const tg_red_def tg_op_max = {
    {RED_COMMON(max, tg_red_number_in, tg_red_number_out), .flags = TG_OP_PURE, .save_inputs = 1u,
     .save_outputs = 1u, .grad = minmax_grad, .jvp = minmax_jvp, .onnx = {"ReduceMax", 13}},
    TG_RDT_SAME, true};
const tg_red_def tg_op_min = {
    {RED_COMMON(min, tg_red_number_in, tg_red_number_out), .flags = TG_OP_PURE, .save_inputs = 1u,
     .save_outputs = 1u, .grad = minmax_grad, .jvp = minmax_jvp, .onnx = {"ReduceMin", 13}},
    TG_RDT_SAME, true};

tg_tensor *tg_sum(tg_tensor *x, int n_axes, const int *axes, bool keepdim)
{
    return tg__red_call(&tg_op_sum, x, n_axes, axes, keepdim, NULL);
}

tg_tensor *tg_mean(tg_tensor *x, int n_axes, const int *axes, bool keepdim)
{
    return tg__red_call(&tg_op_mean, x, n_axes, axes, keepdim, NULL);
}

tg_tensor *tg_prod(tg_tensor *x, int n_axes, const int *axes, bool keepdim)
{
    return tg__red_call(&tg_op_prod, x, n_axes, axes, keepdim, NULL);
}

tg_tensor *tg_max(tg_tensor *x, int n_axes, const int *axes, bool keepdim)
{
    return tg__red_call(&tg_op_max, x, n_axes, axes, keepdim, NULL);
}

tg_tensor *tg_min(tg_tensor *x, int n_axes, const int *axes, bool keepdim)
{
    return tg__red_call(&tg_op_min, x, n_axes, axes, keepdim, NULL);
}

/* ---- sum_to ---------------------------------------------------------------- */
tg_tensor *tg_sum_to(tg_tensor *x, int ndim, const int64_t *shape)
{
    if (!x)
        return NULL;
    char a[160], b[160];
    if (ndim > x->ndim || ndim < 0 || (ndim > 0 && !shape))
        return tg__error_null(TG_ERR_SHAPE, "sum_to: cannot sum %s to %s",
                              tg_shape_str(x->ndim, x->shape, a, sizeof a),
                              shape ? tg_shape_str(ndim, shape, b, sizeof b) : "NULL");
    int axes[TG_MAX_DIMS], n = 0, lead = x->ndim - ndim;
    for (int i = 0; i < x->ndim; i++) {
        int j = i - lead;
        if (j < 0 || (shape[j] == 1 && x->shape[i] != 1))
            axes[n++] = i;
        else if (shape[j] != x->shape[i])
            return tg__error_null(TG_ERR_SHAPE, "sum_to: cannot sum %s to %s "
                                  "(dim %d)", tg_shape_str(x->ndim, x->shape, a, sizeof a),
                                  tg_shape_str(ndim, shape, b, sizeof b), i);
    }
    if (n == 0 && x->ndim == ndim)
        return tg__publish(tg_retain(x));
    TG_LOCAL_BEGIN();
    /* bools sum as int64 counts, as PyTorch's sum_to_size (sum refuses them) */
    tg_tensor *src = x->dtype == TG_BOOL ? tg_cast(x, TG_INT64) : x;
    tg_tensor *y = tg_reshape(tg_sum(src, n, axes, true), ndim, shape);
    TG_LOCAL_RETURN(y);
}

const tg_op_def *const tg_ops_reduce[] = {
    &tg_op_sum.def, &tg_op_mean.def, &tg_op_prod.def, &tg_op_max.def,
    &tg_op_min.def, &tg_op_var.def, &tg_op_std.def, &tg_op_logsumexp.def,
    &tg_op_vector_norm.def, &tg_op_argmax.def, &tg_op_argmin.def, NULL,
};
