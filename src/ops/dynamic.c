/* Ops whose result depends on the shape of a reference input, so that
 * graphs with unknown dims (-1, a symbolic batch) compute at run time
 * what eager code computes from concrete shapes at the call:
 *
 *   expand_as(x, ref)   x broadcast (a view) to ref's shape
 *   count_scale(x, ref) x * (alpha / n), or x * (alpha * n / (n - 1)) with
 *                       bessel, where n counts ref's elements over `axes`
 *                       (all when empty): the 1/N of a mean, the N/(N-1)
 *                       of an unbiased variance
 *
 * Gradient rules and composites use them only when a shape is unknown
 * (eager code keeps its scalar constants). ref is read for its shape
 * only: it gets no gradient. count_scale multiplies by the factor rounded
 * to x's dtype, exactly as tg_mul_scalar(x, alpha / n) does, so a graph
 * with unknown dims gives eager's bits. */
#include "autodiff/jvp.h"
#include "ops/elementwise.h"
#include "ops/op.h"
#include "ops/shape.h"

#include <string.h>

static const tg_arg_spec as_in[] = {
    {"x", TG_DTS_ANY}, {"ref", TG_DTS_ANY | TG_ARG_NO_GRAD}, {0}};
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};

/* ---- expand_as ---------------------------------------------------------------- */
static tg_status expand_as_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0], *r = c->in[1];
    char a[160], b[160];
    bool ok = x->ndim <= r->ndim;
    for (int i = 0; ok && i < x->ndim; i++) {
        int64_t have = x->shape[i], want = r->shape[i + r->ndim - x->ndim];
        ok = have == want || have == 1;
    }
    if (!ok)
        return tg__error(TG_ERR_SHAPE, "expand_as: cannot expand %s to %s (each dim "
                         "must be 1 or equal)", tg_shape_str(x->ndim, x->shape, a, sizeof a),
                         tg_shape_str(r->ndim, r->shape, b, sizeof b));
    return tg_infer_set(c, 0, x->dtype, r->ndim, r->shape);
}

const tg_op_def tg_op_expand_as = {
    .name = "expand_as", .n_in = 2, .n_out = 1, .inputs = as_in, .outputs = any_out,
    .flags = TG_OP_PURE | TG_OP_VIEW, .infer = expand_as_infer,
    .make_view = tg__expand_make, .grad = tg__expand_grad, .jvp = tg__jvp_linear};

tg_tensor *tg__expand_as(tg_tensor *x, tg_tensor *ref)
{
    tg_tensor *in[2] = {x, ref};
    return tg_op_call(&tg_op_expand_as, 2, in, NULL, 0);
}

/* ---- count_scale ---------------------------------------------------------------- */
typedef struct count_attrs {
    tg_ints axes;
    double alpha;
    bool bessel;
    bool divide; /* x / count in x's dtype (the losses' mean), not x * (alpha / count) */
} count_attrs;
static const tg_attr_spec count_specs[] = {
    TG_SPEC_INTS(count_attrs, axes), TG_SPEC_FLOAT(count_attrs, alpha, 1.0),
    TG_SPEC_BOOL(count_attrs, bessel, false), TG_SPEC_BOOL(count_attrs, divide, false), {0}};
static const tg_arg_spec count_in[] = {
    {"x", TG_DTS_FLOAT}, {"ref", TG_DTS_ANY | TG_ARG_NO_GRAD}, {0}};
static const tg_arg_spec float_out[] = {{"y", TG_DTS_FLOAT}, {0}};

static tg_status count_infer(tg_op_ctx *c)
{
    const count_attrs *a = c->attr;
    const tg_tensor *x = c->in[0], *r = c->in[1];
    for (int i = 0; i < a->axes.n; i++)
        if (a->axes.v[i] < 0 || a->axes.v[i] >= r->ndim)
            return tg__error(TG_ERR_INDEX, "count_scale: axis %lld is out of range for "
                             "a reference of %d dims", (long long)a->axes.v[i], r->ndim);
    if (tg_require_float("count_scale", x, 0) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, x->dtype, x->ndim, x->shape);
}

/* the count, from the concrete reference shape */
static double count_of(const count_attrs *a, const tg_tensor *r)
{
    double n = 1;
    if (a->axes.n == 0)
        n = (double)r->numel;
    for (int i = 0; i < a->axes.n; i++)
        n *= (double)r->shape[a->axes.v[i]];
    return n;
}

/* y / v or y * v in place, v rounded to y's dtype: tg_div's or
 * tg_mul_scalar's arithmetic by a scalar */
static void scale_by(tg_tensor *y, double v, bool divide)
{
    if (y->dtype == TG_FLOAT32) {
        float *d = (float *)tg__base(y), k = (float)v;
        for (int64_t i = 0; i < y->numel; i++)
            d[i] = divide ? d[i] / k : d[i] * k;
    } else {
        double *d = (double *)tg__base(y);
        for (int64_t i = 0; i < y->numel; i++)
            d[i] = divide ? d[i] / v : d[i] * v;
    }
}

static tg_status count_kernel(tg_op_ctx *c)
{
    const count_attrs *a = c->attr;
    double n = count_of(a, c->in[1]);
    tg__convert_into(c->out[0], c->in[0]);
    if (a->divide)
        scale_by(c->out[0], n, true);
    else
        scale_by(c->out[0], a->bessel ? a->alpha * n / (n - 1) : a->alpha / n, false);
    return TG_OK;
}

static tg_status count_grad(tg_grad_ctx *g)
{
    tg_tensor *in[2] = {g->dy[0], g->in[1]};
    g->dx[0] = tg_op_call(g->op, 2, in, g->attrs, g->n_attrs);
    return TG_OK;
}

const tg_op_def tg_op_count_scale = {
    .name = "count_scale", .n_in = 2, .n_out = 1, .inputs = count_in, .outputs = float_out,
    .attrs = {count_specs, sizeof(count_attrs)}, .flags = TG_OP_PURE,
    .save_inputs = 2u, .infer = count_infer, .kernel = {[TG_CPU] = count_kernel},
    .grad = count_grad, .jvp = tg__jvp_linear};

tg_tensor *tg__count_scale(tg_tensor *x, tg_tensor *ref, int n_axes, const int *axes,
                           double alpha, bool bessel)
{
    int64_t ax[TG_MAX_DIMS];
    for (int i = 0; i < n_axes && i < TG_MAX_DIMS; i++)
        ax[i] = axes[i];
    tg_attr a[3] = {TG_AINTS("axes", ax, n_axes), TG_AF("alpha", alpha),
                    TG_AI("bessel", bessel)};
    tg_tensor *in[2] = {x, ref};
    return tg_op_call(&tg_op_count_scale, 2, in, a, 3);
}

tg_tensor *tg__count_divide(tg_tensor *x, tg_tensor *ref)
{
    tg_attr a = TG_AI("divide", 1);
    tg_tensor *in[2] = {x, ref};
    return tg_op_call(&tg_op_count_scale, 2, in, &a, 1);
}

const tg_op_def *const tg_ops_dynamic[] = {&tg_op_expand_as, &tg_op_count_scale, NULL};
