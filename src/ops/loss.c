/* Losses with mean/sum/none reduction: mse_loss (composite), nll_loss (a
 * gather op with its own kernel and gradient op), cross_entropy
 * (nll_loss of log_softmax) and bce_with_logits (a fused, numerically
 * stable elementwise op). Their ops are listed in nn.c's table. */
#include "autodiff/jvp.h"
#include "kernels/cpu/iter.h"
#include "ops/nn_util.h"

#include <math.h>
#include <string.h>

/* ---- reduction ------------------------------------------------------------------- */
static bool check_reduction(const char *op, tg_reduction r)
{
    if (r == TG_REDUCTION_MEAN || r == TG_REDUCTION_SUM || r == TG_REDUCTION_NONE)
        return true;
    tg__error(TG_ERR_ARG, "%s: unknown reduction %d (expected TG_REDUCTION_MEAN, "
              "_SUM or _NONE)", op, (int)r);
    return false;
}

/* the per-element losses l reduced; call inside a local scope */
static tg_tensor *reduce(tg_tensor *l, tg_reduction r)
{
    if (!l || r == TG_REDUCTION_NONE)
        return l;
    tg_tensor *s = tg_sum(l, 0, NULL, false);
    if (r == TG_REDUCTION_SUM)
        return s;
    if (tg_numel(l) < 0) /* unknown dims (graph mode): the count at run time */
        return tg__count_divide(s, l);
    /* divided by the count, as PyTorch's mean losses and the weighted path
     * below (sum / sum of the weights): a multiply by 1/N would round
     * differently from the graph form of the same loss. Empty: 0/0 = NaN */
    TG_LOCAL_BEGIN();
    tg_tensor *n = tg_scalar(tg_dtype_of(s), (double)tg_numel(l));
    tg_tensor *y = n ? tg_div(s, n) : NULL;
    TG_LOCAL_RETURN(y);
}

static tg_status same_shape(const char *op, const tg_tensor *x, const tg_tensor *t,
                            const char *xname, const char *tname)
{
    char a[160], b[160];
    if (tg__shape_eq(x->ndim, x->shape, t->ndim, t->shape))
        return TG_OK;
    return tg__error(TG_ERR_SHAPE, "%s: %s of shape %s must have the shape of the "
                     "%s %s", op, tname, tg_shape_str(t->ndim, t->shape, a, sizeof a),
                     xname, tg_shape_str(x->ndim, x->shape, b, sizeof b));
}

/* ---- mse_loss ----------------------------------------------------------------------- */
tg_tensor *tg_mse_loss(tg_tensor *pred, tg_tensor *target, tg_reduction r)
{
    const char *op = "mse_loss";
    if (!tg__nn_have(op, pred, "prediction") || !tg__nn_have(op, target, "target") ||
        !check_reduction(op, r) || tg_require_float(op, pred, 0) != TG_OK ||
        same_shape(op, pred, target, "prediction", "target") != TG_OK)
        return NULL;
    TG_LOCAL_BEGIN();
    tg_tensor *d = tg_sub(pred, target);
    tg_tensor *y = reduce(tg_mul(d, d), r);
    TG_LOCAL_RETURN(y);
}

/* ---- labels ---------------------------------------------------------------------------- */
/* scores [N, C, d...] and labels [N, d...] of int32/int64 */
static tg_status check_label_shapes(const char *op, const tg_tensor *x,
                                    const tg_tensor *labels, const char *xname)
{
    char a[160], b[160];
    if (x->ndim < 2)
        return tg__error(TG_ERR_SHAPE, "%s: expected %s of shape [N, C, ...], got %s", op,
                         xname, tg_shape_str(x->ndim, x->shape, a, sizeof a));
    if (labels->dtype != TG_INT32 && labels->dtype != TG_INT64)
        return tg__error(TG_ERR_DTYPE, "%s: labels must be int32 or int64, got %s", op,
                         tg_dtype_name(labels->dtype));
    bool ok = labels->ndim == x->ndim - 1 && labels->shape[0] == x->shape[0];
    for (int i = 1; ok && i < labels->ndim; i++)
        ok = labels->shape[i] == x->shape[i + 1];
    if (!ok)
        return tg__error(TG_ERR_SHAPE, "%s: labels of shape %s do not match %s %s "
                         "(expected [N, ...] without the class dim 1)", op,
                         tg_shape_str(labels->ndim, labels->shape, a, sizeof a), xname,
                         tg_shape_str(x->ndim, x->shape, b, sizeof b));
    return TG_OK;
}

/* every label in 0..C-1; lab is a contiguous int64 copy */
static tg_status check_label_values(const char *op, const tg_tensor *lab, int64_t C)
{
    const int64_t *v = (const int64_t *)tg__base(lab);
    for (int64_t i = 0; i < lab->numel; i++)
        if (v[i] < 0 || v[i] >= C)
            return tg__error(TG_ERR_INDEX, "%s: label %lld at position %lld is out of "
                             "range for C = %lld classes (expected 0 <= label < %lld)",
                             op, (long long)v[i], (long long)i, (long long)C,
                             (long long)C);
    return TG_OK;
}

static tg_status check_labels(const char *op, const tg_tensor *x, tg_tensor *labels,
                              const char *xname)
{
    tg_status s = check_label_shapes(op, x, labels, xname);
    if (s != TG_OK || labels->graph)
        return s; /* symbolic labels (graph mode): the kernel checks them */
    tg_tensor *lab = tg__nn_contig(labels, TG_INT64);
    if (!lab)
        return TG_ERR_NOMEM;
    s = check_label_values(op, lab, x->shape[1]);
    tg_release(lab);
    return s;
}

/* ---- nll_loss: out[n, d] = -x[n, label[n, d], d] ---------------------------------------- */
#define NLL_KERNELS(SFX, T)                                                     \
    static void nll_fwd_##SFX(const T *x, const int64_t *lab, T *out, int64_t N, \
                              int64_t C, int64_t in)                            \
    {                                                                           \
        for (int64_t n = 0; n < N; n++)                                         \
            for (int64_t j = 0; j < in; j++)                                    \
                out[n * in + j] = -x[(n * C + lab[n * in + j]) * in + j];       \
    }                                                                           \
    static void nll_bwd_##SFX(const T *dy, const int64_t *lab, T *dx, int64_t N, \
                              int64_t C, int64_t in)                            \
    {                                                                           \
        memset(dx, 0, (size_t)(N * C * in) * sizeof(T));                        \
        for (int64_t n = 0; n < N; n++)                                         \
            for (int64_t j = 0; j < in; j++)                                    \
                dx[(n * C + lab[n * in + j]) * in + j] = -dy[n * in + j];       \
    }
NLL_KERNELS(f32, float)
NLL_KERNELS(f64, double)

extern const tg_op_def tg_op_nll_loss, tg_op_nll_loss_grad;

static tg_status nll_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    tg_status s = check_label_shapes(c->op->name, x, c->in[1], "log-probabilities");
    if (s == TG_OK)
        s = tg_require_float(c->op->name, x, 0);
    return s != TG_OK ? s : tg_infer_set(c, 0, x->dtype, c->in[1]->ndim, c->in[1]->shape);
}

/* runs the nll kernel `fwd` or its gradient between the [N, C, d...] tensor
 * `full` and the [N, d...] tensor `part` */
static tg_status nll_run(const tg_op_ctx *c, bool fwd, tg_tensor *full, tg_tensor *part,
                         tg_tensor *labels)
{
    tg_tensor *lab = tg__nn_contig(labels, TG_INT64);
    tg_tensor *in = fwd ? tg__nn_contig(full, full->dtype) : tg__nn_contig(part, part->dtype);
    tg_status s = lab && in ? check_label_values(c->op->name, lab, full->shape[1])
                            : TG_ERR_NOMEM;
    if (s == TG_OK) {
        int64_t N = full->shape[0], C = full->shape[1];
        int64_t inner = N * C != 0 ? full->numel / (N * C) : 0;
        const int64_t *L = (const int64_t *)tg__base(lab);
        if (fwd && full->dtype == TG_FLOAT64)
            nll_fwd_f64((const double *)tg__base(in), L, (double *)tg__base(part), N, C, inner);
        else if (fwd)
            nll_fwd_f32((const float *)tg__base(in), L, (float *)tg__base(part), N, C, inner);
        else if (full->dtype == TG_FLOAT64)
            nll_bwd_f64((const double *)tg__base(in), L, (double *)tg__base(full), N, C, inner);
        else
            nll_bwd_f32((const float *)tg__base(in), L, (float *)tg__base(full), N, C, inner);
    }
    tg_release(lab);
    tg_release(in);
    return s;
}

static tg_status nll_kernel(tg_op_ctx *c)
{
    return nll_run(c, true, c->in[0], c->out[0], c->in[1]);
}

typedef struct nll_grad_attrs {
    int64_t num_classes;
} nll_grad_attrs;
static const tg_attr_spec nll_grad_specs[] = {
    TG_SPEC_INT(nll_grad_attrs, num_classes, -1), {0}};

static tg_tensor *nll_grad_call(tg_tensor *dy, tg_tensor *labels, int64_t C)
{
    tg_attr a = TG_AI("num_classes", C);
    tg_tensor *in[2] = {dy, labels};
    return tg_op_call(&tg_op_nll_loss_grad, 2, in, &a, 1);
}

static tg_status nll_rule(tg_grad_ctx *g)
{
    if (g->needs_grad[0])
        g->dx[0] = nll_grad_call(g->dy[0], g->in[1], g->in_meta[0].shape[1]);
    return TG_OK;
}

static const tg_arg_spec nll_in[] = {
    {"log_probs", TG_DTS_FLOAT}, {"labels", TG_DTS_INDEX}, {0}};
static const tg_arg_spec float_out[] = {{"y", TG_DTS_FLOAT}, {0}};

/* per element (the reduction is done by tg_nll_loss) */
const tg_op_def tg_op_nll_loss = {
    .name = "nll_loss", .n_in = 2, .n_out = 1, .inputs = nll_in, .outputs = float_out,
    .flags = TG_OP_PURE, .save_inputs = 2u, .infer = nll_infer,
    .kernel = {[TG_CPU] = nll_kernel}, .grad = nll_rule, .jvp = tg__jvp_linear};

/* nll_loss_grad(dy [N, d...], labels) -> [N, C, d...]: -dy at each label */
static tg_status nll_grad_infer(tg_op_ctx *c)
{
    const tg_tensor *dy = c->in[0], *lab = c->in[1];
    int64_t C = ((const nll_grad_attrs *)c->attr)->num_classes;
    char a[160], b[160];
    tg_status s = tg_require_float(c->op->name, dy, 0);
    if (s == TG_OK && C < 1)
        s = tg__error(TG_ERR_ARG, "nll_loss_grad: needs a positive num_classes "
                      "attribute, got %lld", (long long)C);
    if (s == TG_OK && lab->dtype != TG_INT32 && lab->dtype != TG_INT64)
        s = tg__error(TG_ERR_DTYPE, "nll_loss_grad: labels must be int32 or int64, got %s",
                      tg_dtype_name(lab->dtype));
    if (s == TG_OK && (dy->ndim < 1 || dy->ndim >= TG_MAX_DIMS ||
                       !tg__shape_eq(dy->ndim, dy->shape, lab->ndim, lab->shape)))
        s = tg__error(TG_ERR_SHAPE, "nll_loss_grad: gradient %s and labels %s must have "
                      "one shape [N, ...]", tg_shape_str(dy->ndim, dy->shape, a, sizeof a),
                      tg_shape_str(lab->ndim, lab->shape, b, sizeof b));
    if (s != TG_OK)
        return s;
    int64_t shape[TG_MAX_DIMS];
    shape[0] = dy->shape[0];
    shape[1] = C;
    for (int i = 1; i < dy->ndim; i++)
        shape[i + 1] = dy->shape[i];
    return tg_infer_set(c, 0, dy->dtype, dy->ndim + 1, shape);
}

static tg_status nll_grad_kernel(tg_op_ctx *c)
{
    return nll_run(c, false, c->out[0], c->in[0], c->in[1]);
}

/* linear in dy; its adjoint picks -ddx at the labels: nll_loss itself */
static tg_status nll_grad_rule(tg_grad_ctx *g)
{
    if (g->needs_grad[0]) {
        tg_tensor *in[2] = {g->dy[0], g->in[1]};
        g->dx[0] = tg_op_call(&tg_op_nll_loss, 2, in, NULL, 0);
    }
    return TG_OK;
}

static const tg_arg_spec nll_grad_in[] = {{"dy", TG_DTS_FLOAT}, {"labels", TG_DTS_INDEX}, {0}};

const tg_op_def tg_op_nll_loss_grad = {
    .name = "nll_loss_grad", .n_in = 2, .n_out = 1, .inputs = nll_grad_in,
    .outputs = float_out, .attrs = {nll_grad_specs, sizeof(nll_grad_attrs)},
    .flags = TG_OP_PURE, .save_inputs = 2u, .infer = nll_grad_infer,
    .kernel = {[TG_CPU] = nll_grad_kernel}, .grad = nll_grad_rule, .jvp = tg__jvp_linear};

tg_tensor *tg_nll_loss(tg_tensor *log_probs, tg_tensor *labels, tg_reduction r)
{
    const char *op = "nll_loss";
    if (!tg__nn_have(op, log_probs, "log_probs") || !tg__nn_have(op, labels, "labels") ||
        !check_reduction(op, r) ||
        check_labels(op, log_probs, labels, "log-probabilities") != TG_OK)
        return NULL;
    TG_LOCAL_BEGIN();
    tg_tensor *in[2] = {log_probs, labels};
    tg_tensor *y = reduce(tg_op_call(&tg_op_nll_loss, 2, in, NULL, 0), r);
    TG_LOCAL_RETURN(y);
}

tg_tensor *tg_cross_entropy(tg_tensor *logits, tg_tensor *labels, tg_reduction r)
{
    const char *op = "cross_entropy";
    if (!tg__nn_have(op, logits, "logits") || !tg__nn_have(op, labels, "labels") ||
        !check_reduction(op, r) || tg_require_float(op, logits, 0) != TG_OK ||
        check_labels(op, logits, labels, "logits") != TG_OK)
        return NULL;
    TG_LOCAL_BEGIN();
    tg_tensor *in[2] = {tg_log_softmax(logits, 1), labels};
    tg_tensor *y = in[0] ? reduce(tg_op_call(&tg_op_nll_loss, 2, in, NULL, 0), r) : NULL;
    TG_LOCAL_RETURN(y);
}

/* ---- class weights and an ignored label (PyTorch's weight, ignore_index) ------------
 * l = -w[label] * x[label] per element, 0 where label == ignore_index;
 * "mean" divides by the sum of the weights taken (NaN when all are
 * ignored, as in PyTorch). Ignored labels go to the nll op as class 0,
 * then are masked, so they need not be valid classes. A composite of the
 * nll op, index_select, where and sums: its gradients and forward-mode
 * rules are theirs, and it runs the same in graph mode. */
static tg_tensor *nll_weighted(tg_tensor *log_probs, tg_tensor *labels, const tg_nll_opts *o)
{
    tg_tensor *lab = labels, *keep = NULL;
    if (o->has_ignore_index) {
        tg_tensor *ii = tg_full_like(labels, (double)o->ignore_index);
        keep = tg_ne(labels, ii);
        lab = tg_where(keep, labels, tg_zeros_like(labels));
    }
    tg_tensor *in[2] = {log_probs, lab};
    tg_tensor *l = tg_op_call(&tg_op_nll_loss, 2, in, NULL, 0), *w = NULL;
    tg_dtype dt = tg_dtype_of(log_probs);
    if (o->weight) {
        int64_t n = tg_numel(lab);
        w = tg_reshape(tg_index_select(tg_cast(o->weight, dt), 0, tg_reshape(lab, 1, &n)),
                       tg_ndim(lab), tg_shape(lab));
    }
    if (keep)
        w = w ? tg_where(keep, w, tg_zeros_like(w)) : tg_cast(keep, dt);
    if (w)
        l = tg_mul(l, w);
    if (o->reduction == TG_REDUCTION_NONE)
        return l;
    tg_tensor *total = tg_sum(l, 0, NULL, false);
    if (o->reduction == TG_REDUCTION_SUM || !w)
        return o->reduction == TG_REDUCTION_SUM ? total : reduce(l, o->reduction);
    /* all weights zero (every label ignored): the value is 0/0 = NaN as
     * PyTorch's, but the gradient is zero as PyTorch's, not w * inf = NaN:
     * divide by 1 there and add the NaN as a constant */
    tg_tensor *den = tg_sum(w, 0, NULL, false);
    tg_tensor *none = tg_eq(den, tg_zeros_like(den));
    tg_tensor *safe = tg_where(none, tg_ones_like(den), den);
    tg_tensor *nan = tg_where(none, tg_full_like(den, NAN), tg_zeros_like(den));
    return tg_add(tg_div(total, safe), nan);
}

static bool check_nll_opts(const char *op, const tg_tensor *x, const tg_nll_opts *o)
{
    if (!o) {
        tg__error(TG_ERR_ARG, "%s: opts is NULL", op);
        return false;
    }
    if (!check_reduction(op, o->reduction))
        return false;
    const tg_tensor *w = o->weight;
    if (w && (w->ndim != 1 || w->shape[0] != x->shape[1] || !tg_dtype_is_float(w->dtype))) {
        char a[160];
        tg__error(TG_ERR_SHAPE, "%s: weight must be floating point of shape [C] = [%lld], "
                  "got %s %s", op, (long long)x->shape[1], tg_dtype_name(w->dtype),
                  tg_shape_str(w->ndim, w->shape, a, sizeof a));
        return false;
    }
    return true;
}

/* the labels' checks, the ignored ones left out of the range check */
static tg_status check_labels_ignoring(const char *op, const tg_tensor *x, tg_tensor *labels,
                                       const tg_nll_opts *o, const char *xname)
{
    if (!o->has_ignore_index)
        return check_labels(op, x, labels, xname);
    tg_status s = check_label_shapes(op, x, labels, xname);
    if (s != TG_OK || labels->graph)
        return s;
    tg_tensor *lab = tg__alloc(TG_INT64, labels->ndim, labels->shape); /* our own copy */
    if (!lab)
        return TG_ERR_NOMEM;
    tg__convert_into(lab, labels);
    int64_t *v = (int64_t *)tg__base(lab);
    for (int64_t i = 0; i < lab->numel; i++)
        if (v[i] == o->ignore_index)
            v[i] = 0;
    s = check_label_values(op, lab, x->shape[1]);
    tg_release(lab);
    return s;
}

tg_tensor *tg_nll_loss_ex(tg_tensor *log_probs, tg_tensor *labels, const tg_nll_opts *o)
{
    const char *op = "nll_loss";
    if (!tg__nn_have(op, log_probs, "log_probs") || !tg__nn_have(op, labels, "labels") ||
        check_label_shapes(op, log_probs, labels, "log-probabilities") != TG_OK ||
        !check_nll_opts(op, log_probs, o) ||
        check_labels_ignoring(op, log_probs, labels, o, "log-probabilities") != TG_OK)
        return NULL;
    TG_LOCAL_BEGIN();
    tg_tensor *y = nll_weighted(log_probs, labels, o);
    TG_LOCAL_RETURN(y);
}

tg_tensor *tg_cross_entropy_ex(tg_tensor *logits, tg_tensor *labels, const tg_nll_opts *o)
{
    const char *op = "cross_entropy";
    if (!tg__nn_have(op, logits, "logits") || !tg__nn_have(op, labels, "labels") ||
        tg_require_float(op, logits, 0) != TG_OK ||
        check_label_shapes(op, logits, labels, "logits") != TG_OK ||
        !check_nll_opts(op, logits, o) ||
        check_labels_ignoring(op, logits, labels, o, "logits") != TG_OK)
        return NULL;
    TG_LOCAL_BEGIN();
    tg_tensor *lp = tg_log_softmax(logits, 1);
    tg_tensor *y = lp ? nll_weighted(lp, labels, o) : NULL;
    TG_LOCAL_RETURN(y);
}

/* ---- bce_with_logits: max(x, 0) - x t + log1p(exp(-|x|)) ---------------------------- */
#define BCE_ROW(SFX, T)                                                         \
    static void bce_row_##SFX(char **p, const int64_t *s, int64_t n, void *ctx) \
    {                                                                           \
        (void)ctx;                                                              \
        for (int64_t i = 0; i < n; i++) {                                       \
            T x = *(const T *)(p[1] + i * s[1]), t = *(const T *)(p[2] + i * s[2]); \
            *(T *)(p[0] + i * s[0]) =                                           \
                (x > 0 ? x : (T)0) - x * t + (T)log1p(exp(-fabs((double)x)));   \
        }                                                                       \
    }
BCE_ROW(f32, float)
BCE_ROW(f64, double)

static tg_status bce_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    const tg_tensor *x = c->in[0], *t = c->in[1];
    tg_status s = tg_require_float(op, x, 0);
    if (s == TG_OK)
        s = tg_require_float(op, t, 1);
    if (s == TG_OK)
        s = same_shape(op, x, t, "logits", "targets");
    if (s != TG_OK)
        return s;
    return tg_infer_set(c, 0, tg_promote_types(x->dtype, t->dtype), x->ndim, x->shape);
}

static tg_status bce_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg_tensor *x = tg__as_dtype(c->in[0], out->dtype);
    tg_tensor *t = tg__as_dtype(c->in[1], out->dtype);
    if (x && t) {
        const tg_tensor *ops[3] = {out, x, t};
        tg_iter it;
        tg_iter_init(&it, 3, ops);
        tg_iter_run(&it, out->dtype == TG_FLOAT64 ? bce_row_f64 : bce_row_f32, NULL);
    }
    tg_status s = x && t ? TG_OK : TG_ERR_NOMEM;
    tg_release(x);
    tg_release(t);
    return s;
}

/* d/dx = sigmoid(x) - t, d/dt = -x */
static tg_status bce_rule(tg_grad_ctx *g)
{
    tg_tensor *x = g->in[0], *t = g->in[1], *dy = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = tg_mul(dy, tg_sub(tg_sigmoid(x), t));
    if (g->needs_grad[1])
        g->dx[1] = tg_neg(tg_mul(dy, x));
    return TG_OK;
}

/* d/dx = sigmoid(x) - target, d/dtarget = -x */
static tg_status bce_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL, *x = c->in[0];
    if (c->dx[0])
        TG_JVP_TERM(c, acc, tg_mul(c->dx[0], tg_sub(tg_sigmoid(x), c->in[1])));
    if (c->dx[1])
        TG_JVP_TERM(c, acc, tg_neg(tg_mul(c->dx[1], x)));
    c->dy[0] = acc;
    return TG_OK;
}

static const tg_arg_spec bce_in[] = {{"logits", TG_DTS_FLOAT}, {"targets", TG_DTS_FLOAT}, {0}};

/* per element (the reduction is done by tg_bce_with_logits) */
const tg_op_def tg_op_bce_with_logits = {
    .name = "bce_with_logits", .n_in = 2, .n_out = 1, .inputs = bce_in,
    .outputs = float_out, .flags = TG_OP_PURE | TG_OP_ELEMENTWISE, .save_inputs = 3u,
    .infer = bce_infer, .kernel = {[TG_CPU] = bce_kernel}, .grad = bce_rule,
    .jvp = bce_jvp};

tg_tensor *tg_bce_with_logits(tg_tensor *logits, tg_tensor *targets, tg_reduction r)
{
    const char *op = "bce_with_logits";
    if (!tg__nn_have(op, logits, "logits") || !tg__nn_have(op, targets, "targets") ||
        !check_reduction(op, r))
        return NULL;
    TG_LOCAL_BEGIN();
    tg_tensor *in[2] = {logits, targets};
    tg_tensor *y = reduce(tg_op_call(&tg_op_bce_with_logits, 2, in, NULL, 0), r);
    TG_LOCAL_RETURN(y);
}
