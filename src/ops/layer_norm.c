/* layer_norm: statistics per row over the trailing n_axes dims, a fused op
 * with a fused backward op (float64 kernels here, float32 in
 * norm_ln_f32.c); what it shares with batch_norm is in norm_shared.h. */
#include "graph/graph_impl.h"
#include "ops/nn_util.h"
#include "ops/norm_ln_f32.h"
#include "ops/norm_ln_grad.h"
#include "ops/norm_shared.h"
#include "tg/autograd.h"

#include <math.h>
#include <string.h>

static const tg_attr_spec ln_specs[] = {
    TG_SPEC_INT(norm_attrs, n_axes, 1), TG_SPEC_FLOAT(norm_attrs, eps, 1e-5), {0}};

/* ---- layer_norm kernels: x viewed as [R, K], statistics per row, float64 (float32:
 * norm_ln_f32.c) --------------------------------------------------------------------- */
typedef struct ln_task {
    bool f64;
    const double *x, *dy, *w, *b, *mean_in, *var_in, *dmean, *dvar;
    double *y, *dx, *mean, *var, *dw, *db;
    double *invstd; /* per row, for dweight */
    int64_t R, K;
    double eps;
} ln_task;

/* rows [r0, r1): y, mean, var */
static void ln_fwd_range(void *ctx, int64_t r0, int64_t r1)
{
    const ln_task *t = ctx;
    for (int64_t r = r0; r < r1; r++) {
        const double *x = t->x + r * t->K;
        double *y = t->y + r * t->K;
        const double mean = tg__nn_sum_f64(x, t->K) / (double)t->K;
        const double var = tg__nn_sqdev_f64(x, t->K, mean) / (double)t->K;
        const double invstd = 1.0 / sqrt(var + t->eps);
        for (int64_t k = 0; k < t->K; k++)
            y[k] = (x[k] - mean) * invstd * t->w[k] + t->b[k];
        t->mean[r] = mean;
        t->var[r] = var;
    }
}

/* rows [r0, r1) of dx */
static void ln_bwd_range(void *ctx, int64_t r0, int64_t r1)
{
    const ln_task *t = ctx;
    const int64_t K = t->K;
    for (int64_t r = r0; r < r1; r++) {
        const double *x = t->x + r * K, *dy = t->dy + r * K;
        double *dx = t->dx + r * K;
        const double mean = t->mean_in[r], invstd = 1.0 / sqrt(t->var_in[r] + t->eps);
        double sg = 0, sgx = 0;
        tg__nn_dots_f64(dy, x, t->w, K, mean, &sg, &sgx);
        const double k2 = (2 * t->dvar[r] - invstd * invstd * invstd * sgx) / (double)K;
        const double k3 = t->dmean[r] / (double)K - invstd * sg / (double)K;
        for (int64_t k = 0; k < K; k++)
            dx[k] = invstd * dy[k] * t->w[k] + (x[k] - mean) * k2 + k3;
    }
}

/* columns [k0, k1) of dweight and dbias, summed over the rows */
static void ln_wb_range(void *ctx, int64_t k0, int64_t k1)
{
    const ln_task *t = ctx;
    for (int64_t r = 0; r < t->R; r++) {
        const double *x = t->x + r * t->K, *dy = t->dy + r * t->K;
        const double mean = t->mean_in[r], invstd = t->invstd[r];
        for (int64_t k = k0; k < k1; k++) {
            t->dw[k] += dy[k] * (x[k] - mean) * invstd;
            t->db[k] += dy[k];
        }
    }
}

/* ---- layer_norm ops -------------------------------------------------------------- */
static tg_status ln_check(const char *op, const tg_tensor *x, int64_t n_axes)
{
    tg_status s = tg_require_float(op, x, 0);
    if (s == TG_OK && (n_axes < 1 || n_axes > x->ndim)) {
        char a[160];
        return tg__error(TG_ERR_INDEX, "%s: cannot normalise over the last %lld axes "
                         "of an input %s (expected 1 to %d)", op, (long long)n_axes,
                         tg_shape_str(x->ndim, x->shape, a, sizeof a), x->ndim);
    }
    return s;
}

static tg_status ln_check_param(const char *op, const char *name, const tg_tensor *t,
                                const tg_tensor *x, int64_t n_axes)
{
    int nd = (int)n_axes;
    return tg__norm_check_param(op, name, t, nd, x->shape + x->ndim - nd,
                       "the normalised shape", x);
}

/* the statistics' shape: the leading dims, then n_axes ones */
static void ln_stat_shape(const int64_t *shape, int nd, int n_axes, int64_t *out)
{
    for (int i = 0; i < nd; i++)
        out[i] = i < nd - n_axes ? shape[i] : 1;
}

/* layer_norm(x, weight, bias) -> y, mean, biased var (kept dims) */
static tg_status ln_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    const tg_tensor *x = c->in[0];
    int64_t n = ((const norm_attrs *)c->attr)->n_axes;
    tg_status s = ln_check(op, x, n);
    if (s == TG_OK)
        s = ln_check_param(op, "weight", c->in[1], x, n);
    if (s == TG_OK)
        s = ln_check_param(op, "bias", c->in[2], x, n);
    int64_t st[TG_MAX_DIMS];
    if (s == TG_OK) /* n is checked only now (a graph's wire form may carry any) */
        ln_stat_shape(x->shape, x->ndim, (int)n, st);
    for (int i = 0; s == TG_OK && i < 3; i++)
        s = tg_infer_set(c, i, x->dtype, x->ndim, i == 0 ? x->shape : st);
    return s;
}

static void ln_dims(const tg_op_ctx *c, ln_task *t)
{
    const tg_tensor *x = c->in[0];
    const norm_attrs *a = c->attr;
    int64_t n = a->n_axes;
    t->K = tg__shape_numel((int)n, x->shape + x->ndim - n);
    t->R = t->K ? x->numel / t->K : tg__shape_numel(x->ndim - (int)n, x->shape);
    t->f64 = x->dtype == TG_FLOAT64;
    t->eps = a->eps;
}

static tg_status ln_kernel(tg_op_ctx *c)
{
    ln_task t = {0};
    ln_dims(c, &t);
    if (!t.f64)
        return tg__ln32_kernel(c, t.R, t.K, t.eps);
    norm_io io; /* res: mean, var */
    tg_status s = tg__norm_io_open(c, false, 2, 2 * t.R, &io);
    if (s == TG_OK) {
        t.x = F64(io.x);
        t.y = F64(c->out[0]);
        t.w = F64(io.p[0]);
        t.b = F64(io.p[1]);
        t.mean = F64(io.res);
        t.var = F64(io.res) + t.R;
        tg__nn_parallel(t.R, 3 * t.K, ln_fwd_range, &t);
        s = tg__norm_convert_pair(io.res, c->out[1], c->out[2], t.R);
    }
    tg__norm_io_close(&io);
    return s;
}

/* layer_norm_grad(x, dy, mean, var, weight, dmean, dvar) -> dx, dw, db */
static tg_status ln_grad_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    const tg_tensor *x = c->in[0];
    int64_t n = ((const norm_attrs *)c->attr)->n_axes;
    tg_status s = ln_check(op, x, n);
    int64_t st[TG_MAX_DIMS];
    if (s == TG_OK) /* as in ln_infer: n is known good only now */
        ln_stat_shape(x->shape, x->ndim, (int)n, st);
    if (s == TG_OK)
        s = tg__norm_check_param(op, "gradient", c->in[1], x->ndim, x->shape, "the shape", x);
    static const char *names[7] = {"", "", "mean", "var", "weight", "mean gradient",
                                   "var gradient"};
    for (int i = 2; i < 7 && s == TG_OK; i++)
        s = i == 4 ? ln_check_param(op, names[i], c->in[i], x, n)
                   : tg__norm_check_param(op, names[i], c->in[i], x->ndim, st, "the statistics", x);
    if (s == TG_OK)
        s = tg_infer_set(c, 0, x->dtype, x->ndim, x->shape);
    for (int i = 1; s == TG_OK && i < 3; i++)
        s = tg_infer_set(c, i, x->dtype, (int)n, x->shape + x->ndim - n);
    return s;
}

static tg_status ln_grad_kernel(tg_op_ctx *c)
{
    ln_task t = {0};
    ln_dims(c, &t);
    if (!t.f64)
        return tg__ln32_grad_kernel(c, t.R, t.K, t.eps);
    norm_io io; /* res: dweight, dbias, invstd per row */
    tg_status s = tg__norm_io_open(c, true, 5, 2 * t.K + t.R, &io);
    if (s == TG_OK) {
        t.x = F64(io.x);
        t.dy = F64(io.dy);
        t.dx = F64(c->out[0]);
        t.mean_in = F64(io.p[0]);
        t.var_in = F64(io.p[1]);
        t.w = F64(io.p[2]);
        t.dmean = F64(io.p[3]);
        t.dvar = F64(io.p[4]);
        t.dw = F64(io.res);
        t.db = F64(io.res) + t.K;
        t.invstd = F64(io.res) + 2 * t.K;
        tg__nn_parallel(t.R, 4 * t.K, ln_bwd_range, &t);
        memset(t.dw, 0, (size_t)(2 * t.K) * sizeof(double));
        for (int64_t r = 0; r < t.R; r++)
            t.invstd[r] = 1.0 / sqrt(t.var_in[r] + t.eps);
        tg__nn_parallel(t.K, 2 * t.R, ln_wb_range, &t);
        s = tg__norm_convert_pair(io.res, c->out[1], c->out[2], t.K);
    }
    tg__norm_io_close(&io);
    return s;
}

/* differentiable (norm_ln_grad.c), so layer norm's backward is this one
 * kernel at every order and in graphs */
static tg_status ln_grad_vjp(tg_grad_ctx *g)
{
    const norm_attrs *a = g->attr;
    return tg__ln_grad_vjp(g, (int)a->n_axes, a->eps);
}

static tg_status ln_grad_jvp(tg_jvp_ctx *c)
{
    const norm_attrs *a = c->attr;
    return tg__ln_grad_jvp(c, (int)a->n_axes, a->eps);
}

const tg_op_def tg_op_layer_norm_grad = {
    .name = "layer_norm_grad", .n_in = 7, .n_out = 3, .inputs = norm_grad_in,
    .outputs = norm_grad_out, .attrs = {ln_specs, sizeof(norm_attrs)},
    .flags = TG_OP_PURE, .save_inputs = TG_SAVE_ALL, .infer = ln_grad_infer,
    .kernel = {[TG_CPU] = ln_grad_kernel}, .grad = ln_grad_vjp, .jvp = ln_grad_jvp};

static tg_status ln_rule(tg_grad_ctx *g)
{
    return tg__norm_fused_rule(g, &tg_op_layer_norm_grad, g->attrs, g->n_attrs);
}

static tg_status ln_jvp(tg_jvp_ctx *c)
{
    int n = (int)((const norm_attrs *)c->attr)->n_axes, axes[TG_MAX_DIMS];
    for (int i = 0; i < n; i++)
        axes[i] = c->in_meta[0].ndim - n + i;
    return tg__norm_jvp(c, n, axes, c->out[1], c->out[2], c->in[1], c->dx[1], c->dx[2]);
}

const tg_op_def tg_op_layer_norm = {
    .name = "layer_norm", .n_in = 3, .n_out = 3, .inputs = norm_in, .outputs = norm_out,
    .attrs = {ln_specs, sizeof(norm_attrs)}, .flags = TG_OP_PURE,
    .save_inputs = 3u, .save_outputs = 6u, .infer = ln_infer,
    .kernel = {[TG_CPU] = ln_kernel}, .grad = ln_rule, .jvp = ln_jvp, .onnx = {"LayerNormalization", 17}};

tg_tensor *tg_layer_norm(tg_tensor *x, int n_axes, tg_tensor *weight, tg_tensor *bias,
                         double eps)
{
    const char *op = "layer_norm";
    if (!tg__nn_have(op, x, "input") || ln_check(op, x, n_axes) != TG_OK)
        return NULL;
    if ((weight && ln_check_param(op, "weight", weight, x, n_axes) != TG_OK) ||
        (bias && ln_check_param(op, "bias", bias, x, n_axes) != TG_OK))
        return NULL;
    const int64_t *pshape = x->shape + x->ndim - n_axes;
    TG_LOCAL_BEGIN();
    tg_tensor *in[3] = {x, weight ? weight : tg_ones(x->dtype, n_axes, pshape),
                        bias ? bias : tg_zeros(x->dtype, n_axes, pshape)};
    tg_tensor *out[3], *y = NULL;
    tg_attr a[2] = {TG_AI("n_axes", n_axes), TG_AF("eps", eps)};
    if (in[1] && in[2] && tg_op_run(&tg_op_layer_norm, 3, in, a, 2, out) == TG_OK)
        y = out[0];
    TG_LOCAL_RETURN(y);
}
