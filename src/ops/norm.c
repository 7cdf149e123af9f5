/* Normalisation: batch_norm (training: batch statistics and running-stat
 * updates; eval: running stats) and what layer_norm (layer_norm.c) shares
 * with it. The training forms are
 * fused ops with fused backward ops; under create_graph the same gradient
 * is built from public ops instead, so it can be differentiated again. */
#include "autodiff/jvp.h"
#include "graph/graph_impl.h"
#include "ops/nn_util.h"
#include "ops/norm_shared.h"
#include "tg/autograd.h"

#include <math.h>
#include <string.h>

/* ---- shared with layer_norm.c (norm_shared.h) ------------------------------------- */
static const tg_attr_spec bn_specs[] = {TG_SPEC_FLOAT(norm_attrs, eps, 1e-5), {0}};

tg_status tg__norm_io_open(tg_op_ctx *c, bool with_dy, int n_p, int64_t n_res,
                         norm_io *io)
{
    tg_dtype dt = c->in[0]->dtype;
    *io = (norm_io){.n_p = n_p};
    io->x = tg__nn_contig(c->in[0], dt);
    io->dy = with_dy ? tg__nn_contig(c->in[1], dt) : NULL;
    io->res = tg__alloc(TG_FLOAT64, 1, &n_res);
    if (!io->x || (with_dy && !io->dy) || !io->res)
        return TG_ERR_NOMEM;
    tg_tensor *const *params = c->in + (with_dy ? 2 : 1);
    for (int i = 0; i < n_p; i++)
        if (!(io->p[i] = tg__nn_contig(params[i], TG_FLOAT64)))
            return TG_ERR_NOMEM;
    return TG_OK;
}

void tg__norm_io_close(norm_io *io)
{
    for (int i = 0; i < io->n_p; i++)
        tg_release(io->p[i]);
    tg_release(io->x);
    tg_release(io->dy);
    tg_release(io->res);
}

/* converts two results a kernel computed in float64 into the outputs o1 and
 * o2: they lie in buf at element 0 and at element off2, each laid out like
 * its output (contiguous) */
tg_status tg__norm_convert_pair(const tg_tensor *buf, tg_tensor *o1, tg_tensor *o2,
                              int64_t off2)
{
    tg_status s = TG_OK;
    tg_tensor *a = tg__alias(buf, o1->ndim, o1->shape, o1->strides, 0);
    tg_tensor *b = tg__alias(buf, o2->ndim, o2->shape, o2->strides, off2);
    if (a && b) {
        tg__convert_into(o1, a);
        tg__convert_into(o2, b);
    } else {
        s = TG_ERR_NOMEM;
    }
    tg_release(a);
    tg_release(b);
    return s;
}

/* t (1-D or any shape) must have exactly `shape` */
tg_status tg__norm_check_param(const char *op, const char *name, const tg_tensor *t,
                             int nd, const int64_t *shape, const char *meaning,
                             const tg_tensor *x)
{
    char a[160], b[160], c[160];
    if (!tg__shape_eq(t->ndim, t->shape, nd, shape))
        return tg__error(TG_ERR_SHAPE, "%s: %s has shape %s, expected %s (%s of the "
                         "input %s)", op, name, tg_shape_str(t->ndim, t->shape, a, sizeof a),
                         tg_shape_str(nd, shape, b, sizeof b), meaning,
                         tg_shape_str(x->ndim, x->shape, c, sizeof c));
    if (!tg_dtype_is_float(t->dtype))
        return tg__error(TG_ERR_DTYPE, "%s: %s must be float32 or float64, got %s", op,
                         name, tg_dtype_name(t->dtype));
    return TG_OK;
}

/* ---- the gradient from public ops (create_graph) ---------------------------------
 * x, dy: full shape; mean, var, w, dmean, dvar broadcastable to x; the
 * statistics reduce `axes` (M elements each). dw_b, db_b come out in the
 * broadcast shape `pshape` of w. */
static void composite_backward(tg_tensor *x, tg_tensor *dy, tg_tensor *mean,
                               tg_tensor *var, tg_tensor *w, tg_tensor *dmean,
                               tg_tensor *dvar, double eps, int n_axes,
                               const int *axes, double M, int pnd,
                               const int64_t *pshape, tg_tensor **dx,
                               tg_tensor **dw, tg_tensor **db)
{
    tg_tensor *invstd = tg_rsqrt(tg_add_scalar(var, eps));
    tg_tensor *xc = tg_sub(x, mean);
    tg_tensor *gdy = tg_mul(dy, w);
    tg_tensor *sg = tg_sum(gdy, n_axes, axes, true);
    tg_tensor *sgx = tg_sum(tg_mul(gdy, xc), n_axes, axes, true);
    if (dx) {
        /* invstd (g - sg/M) + xc (2 dvar - invstd^3 sgx)/M + dmean/M */
        tg_tensor *k2 = tg_mul_scalar(tg_sub(tg_mul_scalar(dvar, 2.0),
                                             tg_mul(tg_pow_scalar(invstd, 3.0), sgx)),
                                      1.0 / M);
        tg_tensor *t = tg_mul(invstd, tg_sub(gdy, tg_mul_scalar(sg, 1.0 / M)));
        *dx = tg_add(tg_add(t, tg_mul(xc, k2)), tg_mul_scalar(dmean, 1.0 / M));
    }
    if (dw)
        *dw = tg_sum_to(tg_mul(dy, tg_mul(xc, invstd)), pnd, pshape);
    if (db)
        *db = tg_sum_to(dy, pnd, pshape);
}

/* the first-order gradient, from the fused grad_op(x, dy, mean, var, weight,
 * dmean, dvar) -> dx, dweight, dbias */
tg_status tg__norm_fused_rule(tg_grad_ctx *g, const tg_op_def *grad_op, const tg_attr *a,
                            int n_attrs)
{
    tg_tensor *in[7] = {g->in[0], g->dy[0], g->out[1], g->out[2], g->in[1], g->dy[1],
                        g->dy[2]};
    tg_tensor *out[3];
    tg_status s = tg_op_run(grad_op, 7, in, a, n_attrs, out);
    for (int i = 0; s == TG_OK && i < 3; i++)
        if (g->needs_grad[i])
            g->dx[i] = out[i];
    return s;
}

/* Forward mode of y = (x - mean) invstd w + b, mean and var over `axes`
 * (mean, var, w and the tangents dw, db broadcast against x):
 *   dmean = mean(dx), dvar = 2 mean((x - mean)(dx - dmean)),
 *   dxhat = invstd (dx - dmean - xhat invstd dvar / 2),
 *   dy = dxhat w + xhat dw + db.
 * The statistics' tangents are reshaped to outputs 1 and 2. */
tg_status tg__norm_jvp(tg_jvp_ctx *c, int n, const int *axes, tg_tensor *mean,
                          tg_tensor *var, tg_tensor *w, tg_tensor *dw, tg_tensor *db)
{
    tg_tensor *x = c->in[0], *dx = c->dx[0], *t = NULL;
    tg_tensor *invstd = tg_rsqrt(tg_add_scalar(var, ((const norm_attrs *)c->attr)->eps));
    tg_tensor *xc = tg_sub(x, mean), *xhat = tg_mul(xc, invstd);
    if (dx) {
        tg_tensor *dmean = tg_mean(dx, n, axes, true), *dc = tg_sub(dx, dmean);
        tg_tensor *dvar = tg_mul_scalar(tg_mean(tg_mul(xc, dc), n, axes, true), 2.0);
        tg_tensor *shrink = tg_mul(xhat, tg_mul(invstd, tg_mul_scalar(dvar, 0.5)));
        TG_JVP_TERM(c, t, tg_mul(tg_mul(invstd, tg_sub(dc, shrink)), w));
        for (int o = 1; o < 3; o++) {
            tg_status s = tg__jvp_set(c, o, tg_reshape(o == 1 ? dmean : dvar,
                                                       c->out_meta[o].ndim,
                                                       c->out_meta[o].shape));
            if (s != TG_OK)
                return s;
        }
    }
    if (dw)
        TG_JVP_TERM(c, t, tg_mul(xhat, dw));
    if (db)
        TG_JVP_TERM(c, t, db);
    return tg__jvp_set(c, 0, t);
}

/* NAME_range: the tg_range_fn running NAME_f32 or NAME_f64 (by the task's
 * dtype) on each item (channel or row) of [b, e) */
#define BY_ITEM_RANGE(NAME, TASK)                                               \
    static void NAME##_range(void *ctx, int64_t b, int64_t e)                   \
    {                                                                           \
        const TASK *t = ctx;                                                    \
        for (int64_t i = b; i < e; i++)                                         \
            t->f64 ? NAME##_f64(t, i) : NAME##_f32(t, i);                       \
    }

/* ---- batch_norm kernels: x viewed as [N, C, S], statistics per channel ---------- */
typedef struct bn_task {
    bool f64;
    const char *x, *dy;
    char *y, *dx;
    const double *w, *b, *mean_in, *var_in, *dmean, *dvar;
    double *mean, *var, *dw, *db;
    int64_t N, C, S;
    double eps;
} bn_task;

#define BN_KERNELS(SFX, T)                                                      \
    static void bn_fwd_##SFX(const bn_task *t, int64_t c)                       \
    {                                                                           \
        const int64_t C = t->C, S = t->S;                                       \
        const double M = (double)(t->N * S);                                    \
        double s = 0, q = 0;                                                    \
        for (int64_t n = 0; n < t->N; n++)                                      \
            s += tg__nn_sum_##SFX((const T *)t->x + (n * C + c) * S, S);        \
        const double mean = s / M;                                              \
        for (int64_t n = 0; n < t->N; n++)                                      \
            q += tg__nn_sqdev_##SFX((const T *)t->x + (n * C + c) * S, S, mean); \
        const double var = q / M, invstd = 1.0 / sqrt(var + t->eps);            \
        const T scale = (T)(t->w[c] * invstd);                                  \
        const T shift = (T)(t->b[c] - mean * t->w[c] * invstd);                 \
        for (int64_t n = 0; n < t->N; n++) {                                    \
            const T *r = (const T *)t->x + (n * C + c) * S;                     \
            T *o = (T *)t->y + (n * C + c) * S;                                 \
            for (int64_t i = 0; i < S; i++)                                     \
                o[i] = r[i] * scale + shift;                                    \
        }                                                                       \
        t->mean[c] = mean;                                                      \
        t->var[c] = var;                                                        \
    }                                                                           \
    static void bn_bwd_##SFX(const bn_task *t, int64_t c)                       \
    {                                                                           \
        const int64_t C = t->C, S = t->S;                                       \
        const double M = (double)(t->N * S), mean = t->mean_in[c];              \
        const T fm = (T)mean;                                                   \
        double sdy = 0, sdyx = 0;                                               \
        for (int64_t n = 0; n < t->N; n++)                                      \
            tg__nn_dots_##SFX((const T *)t->dy + (n * C + c) * S,               \
                              (const T *)t->x + (n * C + c) * S, NULL, S, mean, \
                              &sdy, &sdyx);                                     \
        const double invstd = 1.0 / sqrt(t->var_in[c] + t->eps), w = t->w[c];   \
        const T k1 = (T)(w * invstd);                                           \
        const T k2 = (T)((2 * t->dvar[c] - w * invstd * invstd * invstd * sdyx) / M); \
        const T k3 = (T)((t->dmean[c] - w * invstd * sdy) / M);                 \
        for (int64_t n = 0; n < t->N; n++) {                                    \
            const T *r = (const T *)t->x + (n * C + c) * S;                     \
            const T *d = (const T *)t->dy + (n * C + c) * S;                    \
            T *o = (T *)t->dx + (n * C + c) * S;                                \
            for (int64_t i = 0; i < S; i++)                                     \
                o[i] = k1 * d[i] + k2 * (r[i] - fm) + k3;                       \
        }                                                                       \
        t->dw[c] = sdyx * invstd;                                               \
        t->db[c] = sdy;                                                         \
    }

BN_KERNELS(f32, float)
BN_KERNELS(f64, double)

BY_ITEM_RANGE(bn_fwd, bn_task)
BY_ITEM_RANGE(bn_bwd, bn_task)

/* ---- batch_norm ops ----------------------------------------------------------- */
static tg_status bn_check_input(const char *op, const tg_tensor *x)
{
    char a[160];
    if (x->ndim < 2)
        return tg__error(TG_ERR_SHAPE, "%s: expected an input [N, C, ...] of at least "
                         "2 dims, got %s", op, tg_shape_str(x->ndim, x->shape, a, sizeof a));
    return tg_require_float(op, x, 0);
}

static tg_status bn_check_channel(const char *op, const char *name, const tg_tensor *t,
                                  const tg_tensor *x)
{
    return tg__norm_check_param(op, name, t, 1, &x->shape[1], "the channels", x);
}

/* batch_norm(x, weight, bias) -> y, batch mean [C], biased batch var [C] */
static tg_status bn_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    const tg_tensor *x = c->in[0];
    tg_status s = bn_check_input(op, x);
    if (s == TG_OK)
        s = bn_check_channel(op, "weight", c->in[1], x);
    if (s == TG_OK)
        s = bn_check_channel(op, "bias", c->in[2], x);
    if (s != TG_OK)
        return s;
    if (x->shape[1] == 0 || x->numel / x->shape[1] <= 1) {
        char a[160];
        return tg__error(TG_ERR_SHAPE, "%s: expected more than 1 value per channel when "
                         "training, got input %s", op,
                         tg_shape_str(x->ndim, x->shape, a, sizeof a));
    }
    s = tg_infer_set(c, 0, x->dtype, x->ndim, x->shape);
    if (s == TG_OK)
        s = tg_infer_set(c, 1, x->dtype, 1, &x->shape[1]);
    if (s == TG_OK)
        s = tg_infer_set(c, 2, x->dtype, 1, &x->shape[1]);
    return s;
}

static void bn_dims(const tg_tensor *x, bn_task *t)
{
    t->N = x->shape[0];
    t->C = x->shape[1];
    t->S = t->N * t->C != 0 ? x->numel / (t->N * t->C) : 0;
    t->f64 = x->dtype == TG_FLOAT64;
}

static tg_status bn_kernel(tg_op_ctx *c)
{
    int64_t C = c->in[0]->shape[1];
    norm_io io; /* res: mean, var */
    tg_status s = tg__norm_io_open(c, false, 2, 2 * C, &io);
    if (s == TG_OK) {
        bn_task t = {.x = tg__base(io.x), .y = tg__base(c->out[0]), .w = F64(io.p[0]),
                     .b = F64(io.p[1]), .mean = F64(io.res), .var = F64(io.res) + C,
                     .eps = ((const norm_attrs *)c->attr)->eps};
        bn_dims(io.x, &t);
        tg__nn_parallel(C, 3 * t.N * t.S, bn_fwd_range, &t);
        s = tg__norm_convert_pair(io.res, c->out[1], c->out[2], C);
    }
    tg__norm_io_close(&io);
    return s;
}

/* batch_norm_grad(x, dy, mean, var, weight, dmean, dvar) -> dx, dweight,
 * dbias. dmean/dvar are the gradients reaching the statistics outputs. */
static tg_status bn_grad_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    const tg_tensor *x = c->in[0];
    static const char *names[7] = {"input", "gradient", "mean", "var", "weight",
                                   "mean gradient", "var gradient"};
    tg_status s = bn_check_input(op, x);
    if (s == TG_OK)
        s = tg__norm_check_param(op, names[1], c->in[1], x->ndim, x->shape, "the shape", x);
    for (int i = 2; i < 7 && s == TG_OK; i++)
        s = bn_check_channel(op, names[i], c->in[i], x);
    if (s == TG_OK)
        s = tg_infer_set(c, 0, x->dtype, x->ndim, x->shape);
    if (s == TG_OK)
        s = tg_infer_set(c, 1, x->dtype, 1, &x->shape[1]);
    if (s == TG_OK)
        s = tg_infer_set(c, 2, x->dtype, 1, &x->shape[1]);
    return s;
}

static tg_status bn_grad_kernel(tg_op_ctx *c)
{
    int64_t C = c->in[0]->shape[1];
    norm_io io; /* res: dweight, dbias */
    tg_status s = tg__norm_io_open(c, true, 5, 2 * C, &io);
    if (s == TG_OK) {
        bn_task t = {.x = tg__base(io.x), .dy = tg__base(io.dy),
                     .dx = tg__base(c->out[0]), .mean_in = F64(io.p[0]),
                     .var_in = F64(io.p[1]), .w = F64(io.p[2]), .dmean = F64(io.p[3]),
                     .dvar = F64(io.p[4]), .dw = F64(io.res), .db = F64(io.res) + C,
                     .eps = ((const norm_attrs *)c->attr)->eps};
        bn_dims(io.x, &t);
        tg__nn_parallel(C, 4 * t.N * t.S, bn_bwd_range, &t);
        s = tg__norm_convert_pair(io.res, c->out[1], c->out[2], C);
    }
    tg__norm_io_close(&io);
    return s;
}

/* first-order only: create_graph uses the composite rule */
const tg_op_def tg_op_batch_norm_grad = {
    .name = "batch_norm_grad", .n_in = 7, .n_out = 3, .inputs = norm_grad_in,
    .outputs = norm_grad_out, .attrs = {bn_specs, sizeof(norm_attrs)},
    .flags = TG_OP_PURE | TG_OP_NO_VJP | TG_OP_NO_JVP, .infer = bn_grad_infer,
    .kernel = {[TG_CPU] = bn_grad_kernel}};

/* [1, C, 1, ...] for broadcasting per-channel values against x */
static tg_tensor *per_channel(tg_tensor *v, const tg_meta *x)
{
    int64_t shape[TG_MAX_DIMS] = {0};
    for (int i = 0; i < x->ndim; i++)
        shape[i] = i == 1 ? x->shape[1] : 1;
    return tg_reshape(v, x->ndim, shape);
}

static tg_status bn_rule(tg_grad_ctx *g)
{
    tg_tensor *x = g->in[0], *w = g->in[1], *mean = g->out[1], *var = g->out[2];
    double eps = ((const norm_attrs *)g->attr)->eps;
    const tg_meta *m = &g->in_meta[0];
    /* first order: the fused kernel; also with unknown dims (graph mode),
     * whose count M the composite would need at build time (a graph with
     * an unknown batch cannot be differentiated twice through batch_norm) */
    if (!tg_grad_enabled() || tg__shape_has_unknown(m->ndim, m->shape))
        return tg__norm_fused_rule(g, &tg_op_batch_norm_grad, g->attrs, g->n_attrs);
    int axes[TG_MAX_DIMS], n = 0;
    for (int i = 0; i < m->ndim; i++)
        if (i != 1)
            axes[n++] = i;
    int64_t pshape[TG_MAX_DIMS];
    for (int i = 0; i < m->ndim; i++)
        pshape[i] = i == 1 ? m->shape[1] : 1;
    double M = (double)(tg__shape_numel(m->ndim, m->shape) / m->shape[1]);
    tg_tensor *dw = NULL, *db = NULL;
    composite_backward(x, g->dy[0], per_channel(mean, m), per_channel(var, m),
                       per_channel(w, m), per_channel(g->dy[1], m),
                       per_channel(g->dy[2], m), eps, n, axes, M, m->ndim, pshape,
                       g->needs_grad[0] ? &g->dx[0] : NULL,
                       g->needs_grad[1] ? &dw : NULL, g->needs_grad[2] ? &db : NULL);
    if (dw)
        g->dx[1] = tg_reshape(dw, 1, &m->shape[1]);
    if (db)
        g->dx[2] = tg_reshape(db, 1, &m->shape[1]);
    return TG_OK;
}

static tg_status bn_jvp(tg_jvp_ctx *c)
{
    const tg_meta *m = &c->in_meta[0];
    int axes[TG_MAX_DIMS], n = 0;
    for (int i = 0; i < m->ndim; i++)
        if (i != 1)
            axes[n++] = i;
    tg_tensor *dw = c->dx[1] ? per_channel(c->dx[1], m) : NULL;
    tg_tensor *db = c->dx[2] ? per_channel(c->dx[2], m) : NULL;
    if ((c->dx[1] && !dw) || (c->dx[2] && !db))
        return tg__jvp_fail(c);
    return tg__norm_jvp(c, n, axes, per_channel(c->out[1], m), per_channel(c->out[2], m),
                    per_channel(c->in[1], m), dw, db);
}

/* training mode (batch statistics) */
const tg_op_def tg_op_batch_norm = {
    .name = "batch_norm", .n_in = 3, .n_out = 3, .inputs = norm_in, .outputs = norm_out,
    .attrs = {bn_specs, sizeof(norm_attrs)}, .flags = TG_OP_PURE,
    .save_inputs = 3u, .save_outputs = 6u, .infer = bn_infer,
    .kernel = {[TG_CPU] = bn_kernel}, .grad = bn_rule, .jvp = bn_jvp, .onnx = {"BatchNormalization", 15}};

/* ---- batch_norm, the public function ----------------------------------------------- */
/* running = (1 - momentum) running + momentum * batch, the variance
 * unbiased (times M / (M - 1), M = N * H * W counted from x when it runs:
 * count_scale). The new values come from the same ops in both modes, so
 * a graph's statistics are eager's bits: eagerly they are copied into the
 * running tensors; in a graph they are assign nodes on the running
 * tensors made variables (by reference), and y (*y) becomes a view that
 * depends on them, so computing y updates the statistics as eager code
 * does. */
static tg_status update_running(tg_tensor *x, tg_tensor *rm, tg_tensor *rv, tg_tensor *mean,
                                tg_tensor *var, double momentum, tg_tensor **y)
{
    tg_graph *g = x->graph ? x->graph : tg_graph_current();
    tg_status s = TG_OK;
    if (g && rm)
        s = tg__graph_state_variable(g, rm, "running_mean", "batch_norm");
    if (g && rv && s == TG_OK)
        s = tg__graph_state_variable(g, rv, "running_var", "batch_norm");
    if (s != TG_OK)
        return s;
    int axes[TG_MAX_DIMS], n = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != 1)
            axes[n++] = i;
    tg_no_grad_begin();
    tg_tensor *new_rm = rm ? tg_add(tg_mul_scalar(rm, 1.0 - momentum),
                                    tg_mul_scalar(mean, momentum)) : NULL;
    tg_tensor *new_rv = rv ? tg_add(tg_mul_scalar(rv, 1.0 - momentum),
                                    tg__count_scale(var, x, n, axes, momentum, true)) : NULL;
    if ((rm && !new_rm) || (rv && !new_rv))
        s = tg_last_status();
    tg_tensor *upd[2];
    int k = 0;
    if (s == TG_OK && g) {
        if (rm && !(upd[k++] = tg_assign(rm, new_rm)))
            s = tg_last_status();
        if (s == TG_OK && rv && !(upd[k++] = tg_assign(rv, new_rv)))
            s = tg_last_status();
    } else if (s == TG_OK) {
        if (rm)
            s = tg_copy_(rm, new_rm);
        if (s == TG_OK && rv)
            s = tg_copy_(rv, new_rv);
    }
    tg_no_grad_end();
    /* y's view on the updates is built with the caller's grad mode:
     * gradients flow through it (a node built under no_grad stops them) */
    if (s == TG_OK && g && !(*y = tg__graph_after_updates(*y, k, upd)))
        s = tg_last_status();
    return s;
}

/* eval: y = x * scale + shift with per-channel scale = w / sqrt(rv + eps)
 * and shift = b - rm * scale, from public ops (autograd comes for free) */
static tg_tensor *bn_eval(tg_tensor *x, tg_tensor *rm, tg_tensor *rv, tg_tensor *w,
                          tg_tensor *b, double eps)
{
    tg_meta m;
    tg_meta_of(x, &m);
    TG_LOCAL_BEGIN();
    tg_tensor *scale = tg_rsqrt(tg_add_scalar(rv, eps));
    if (w)
        scale = tg_mul(w, scale);
    tg_tensor *shift = tg_neg(tg_mul(rm, scale));
    if (b)
        shift = tg_add(b, shift);
    scale = per_channel(tg_cast(scale, x->dtype), &m);
    shift = per_channel(tg_cast(shift, x->dtype), &m);
    tg_tensor *y = tg_add(tg_mul(x, scale), shift);
    TG_LOCAL_RETURN(y);
}

tg_tensor *tg_batch_norm(tg_tensor *x, tg_tensor *running_mean, tg_tensor *running_var,
                         tg_tensor *weight, tg_tensor *bias, bool training,
                         double momentum, double eps)
{
    const char *op = "batch_norm";
    if (!tg__nn_have(op, x, "input") || bn_check_input(op, x) != TG_OK)
        return NULL;
    tg_tensor *params[4] = {running_mean, running_var, weight, bias};
    static const char *names[4] = {"running_mean", "running_var", "weight", "bias"};
    for (int i = 0; i < 4; i++)
        if (params[i] && bn_check_channel(op, names[i], params[i], x) != TG_OK)
            return NULL;
    if (!training) {
        if (!running_mean || !running_var)
            return tg__error_null(TG_ERR_ARG, "batch_norm: evaluation mode needs "
                                  "running_mean and running_var");
        return bn_eval(x, running_mean, running_var, weight, bias, eps);
    }
    int64_t C = x->shape[1];
    TG_LOCAL_BEGIN();
    tg_tensor *in[3] = {x, weight ? weight : tg_ones(x->dtype, 1, &C),
                        bias ? bias : tg_zeros(x->dtype, 1, &C)};
    tg_tensor *out[3], *y = NULL;
    tg_attr a = TG_AF("eps", eps);
    if (in[1] && in[2] && tg_op_run(&tg_op_batch_norm, 3, in, &a, 1, out) == TG_OK) {
        y = out[0];
        if ((running_mean || running_var) &&
            update_running(x, running_mean, running_var, out[1], out[2], momentum, &y) != TG_OK)
            y = NULL;
    }
    TG_LOCAL_RETURN(y);
}

/* layer_norm.c */
extern const tg_op_def tg_op_layer_norm, tg_op_layer_norm_grad;

const tg_op_def *const tg_ops_norm[] = {
    &tg_op_batch_norm, &tg_op_batch_norm_grad, &tg_op_layer_norm,
    &tg_op_layer_norm_grad, NULL,
};
