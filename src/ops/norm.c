/* Normalisation: batch_norm (training: batch statistics and running-stat
 * updates; eval: running stats) and layer_norm. The training forms are
 * fused ops with fused backward ops; under create_graph the same gradient
 * is built from public ops instead, so it can be differentiated again. */
#include "autodiff/jvp.h"
#include "graph/graph_impl.h"
#include "ops/nn_util.h"
#include "ops/norm_ln_f32.h"
#include "ops/norm_ln_grad.h"
#include "tg/autograd.h"

#include <math.h>
#include <string.h>

/* ---- shared ------------------------------------------------------------------- */

/* the attributes: eps (both families) and, for layer norm, how many
 * trailing axes are normalised */
typedef struct norm_attrs {
    double eps;
    int64_t n_axes;
} norm_attrs;
static const tg_attr_spec bn_specs[] = {TG_SPEC_FLOAT(norm_attrs, eps, 1e-5), {0}};
static const tg_attr_spec ln_specs[] = {
    TG_SPEC_INT(norm_attrs, n_axes, 1), TG_SPEC_FLOAT(norm_attrs, eps, 1e-5), {0}};
static const tg_arg_spec norm_in[] = {
    {"x", TG_DTS_FLOAT}, {"weight", TG_DTS_FLOAT}, {"bias", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec norm_out[] = {
    {"y", TG_DTS_FLOAT}, {"mean", TG_DTS_FLOAT}, {"var", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec norm_grad_in[] = {
    {"x", TG_DTS_FLOAT}, {"dy", TG_DTS_FLOAT}, {"mean", TG_DTS_FLOAT}, {"var", TG_DTS_FLOAT},
    {"weight", TG_DTS_FLOAT}, {"dmean", TG_DTS_FLOAT}, {"dvar", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec norm_grad_out[] = {
    {"dx", TG_DTS_FLOAT}, {"dweight", TG_DTS_FLOAT}, {"dbias", TG_DTS_FLOAT}, {0}};

/* What every norm kernel works on, all owned: x (and for the gradient ops
 * dy, the next input) contiguous in x's dtype, contiguous float64 copies of
 * the n_p small parameter inputs after them, and a float64 buffer res for
 * results. io_close releases whatever io_open got. */
typedef struct norm_io {
    tg_tensor *x, *dy, *res, *p[5];
    int n_p;
} norm_io;

static tg_status io_open(tg_op_ctx *c, bool with_dy, int n_p, int64_t n_res,
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

static void io_close(norm_io *io)
{
    for (int i = 0; i < io->n_p; i++)
        tg_release(io->p[i]);
    tg_release(io->x);
    tg_release(io->dy);
    tg_release(io->res);
}

#define F64(t) ((double *)tg__base(t))

/* converts two results a kernel computed in float64 into the outputs o1 and
 * o2: they lie in buf at element 0 and at element off2, each laid out like
 * its output (contiguous) */
static tg_status convert_pair(const tg_tensor *buf, tg_tensor *o1, tg_tensor *o2,
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
static tg_status check_param(const char *op, const char *name, const tg_tensor *t,
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
static tg_status fused_rule(tg_grad_ctx *g, const tg_op_def *grad_op, const tg_attr *a,
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
static tg_status norm_jvp(tg_jvp_ctx *c, int n, const int *axes, tg_tensor *mean,
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
    return check_param(op, name, t, 1, &x->shape[1], "the channels", x);
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
    tg_status s = io_open(c, false, 2, 2 * C, &io);
    if (s == TG_OK) {
        bn_task t = {.x = tg__base(io.x), .y = tg__base(c->out[0]), .w = F64(io.p[0]),
                     .b = F64(io.p[1]), .mean = F64(io.res), .var = F64(io.res) + C,
                     .eps = ((const norm_attrs *)c->attr)->eps};
        bn_dims(io.x, &t);
        tg__nn_parallel(C, 3 * t.N * t.S, bn_fwd_range, &t);
        s = convert_pair(io.res, c->out[1], c->out[2], C);
    }
    io_close(&io);
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
        s = check_param(op, names[1], c->in[1], x->ndim, x->shape, "the shape", x);
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
    tg_status s = io_open(c, true, 5, 2 * C, &io);
    if (s == TG_OK) {
        bn_task t = {.x = tg__base(io.x), .dy = tg__base(io.dy),
                     .dx = tg__base(c->out[0]), .mean_in = F64(io.p[0]),
                     .var_in = F64(io.p[1]), .w = F64(io.p[2]), .dmean = F64(io.p[3]),
                     .dvar = F64(io.p[4]), .dw = F64(io.res), .db = F64(io.res) + C,
                     .eps = ((const norm_attrs *)c->attr)->eps};
        bn_dims(io.x, &t);
        tg__nn_parallel(C, 4 * t.N * t.S, bn_bwd_range, &t);
        s = convert_pair(io.res, c->out[1], c->out[2], C);
    }
    io_close(&io);
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
        return fused_rule(g, &tg_op_batch_norm_grad, g->attrs, g->n_attrs);
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
    return norm_jvp(c, n, axes, per_channel(c->out[1], m), per_channel(c->out[2], m),
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
    return check_param(op, name, t, nd, x->shape + x->ndim - nd,
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
    tg_status s = io_open(c, false, 2, 2 * t.R, &io);
    if (s == TG_OK) {
        t.x = F64(io.x);
        t.y = F64(c->out[0]);
        t.w = F64(io.p[0]);
        t.b = F64(io.p[1]);
        t.mean = F64(io.res);
        t.var = F64(io.res) + t.R;
        tg__nn_parallel(t.R, 3 * t.K, ln_fwd_range, &t);
        s = convert_pair(io.res, c->out[1], c->out[2], t.R);
    }
    io_close(&io);
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
        s = check_param(op, "gradient", c->in[1], x->ndim, x->shape, "the shape", x);
    static const char *names[7] = {"", "", "mean", "var", "weight", "mean gradient",
                                   "var gradient"};
    for (int i = 2; i < 7 && s == TG_OK; i++)
        s = i == 4 ? ln_check_param(op, names[i], c->in[i], x, n)
                   : check_param(op, names[i], c->in[i], x->ndim, st, "the statistics", x);
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
    tg_status s = io_open(c, true, 5, 2 * t.K + t.R, &io);
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
        s = convert_pair(io.res, c->out[1], c->out[2], t.K);
    }
    io_close(&io);
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
    return fused_rule(g, &tg_op_layer_norm_grad, g->attrs, g->n_attrs);
}

static tg_status ln_jvp(tg_jvp_ctx *c)
{
    int n = (int)((const norm_attrs *)c->attr)->n_axes, axes[TG_MAX_DIMS];
    for (int i = 0; i < n; i++)
        axes[i] = c->in_meta[0].ndim - n + i;
    return norm_jvp(c, n, axes, c->out[1], c->out[2], c->in[1], c->dx[1], c->dx[2]);
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

const tg_op_def *const tg_ops_norm[] = {
    &tg_op_batch_norm, &tg_op_batch_norm_grad, &tg_op_layer_norm,
    &tg_op_layer_norm_grad, NULL,
};
