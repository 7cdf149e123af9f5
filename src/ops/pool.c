/* 2-D pooling over [N, C, H, W] with PyTorch's semantics (output size,
 * padding, ceil_mode, count_include_pad): max_pool2d (which also yields
 * argmax indices for its gradient), avg_pool2d, their backward ops, and
 * global average pooling. Kernels work plane by plane over N*C. */
#include "autodiff/jvp.h"
#include "ops/nn_util.h"
#include "ops/pool.h"

#include <string.h>

/* ---- geometry --------------------------------------------------------------- */
typedef tg__pool_geom geom;

/* PyTorch's pooling_output_shape: floor (or ceil) division, and with
 * ceil_mode the last window must start inside the input or left padding;
 * in checked arithmetic (huge kernels, strides and paddings come from
 * attributes: "shape too large" instead of a wrapped size) */
static bool out_size(const char *op, int64_t in, int64_t k, int64_t s, int64_t p,
                     bool ceil_mode, int64_t *out)
{
    int64_t span; /* in + 2p - k */
    if (!tg__size_window_span(op, in, p, p, k, 1, &span))
        return false;
    int64_t o = span / s; /* truncated toward zero: round as asked */
    if (span % s != 0 && (span < 0) != ceil_mode)
        o += ceil_mode ? 1 : -1;
    o++;
    if (ceil_mode && o > 0 && tg__size_mul_exceeds(o - 1, s, in + p - 1))
        o--;
    *out = o;
    return true;
}

bool tg__pool_out_size(const char *op, int64_t in, int64_t k, int64_t s, int64_t p,
                       bool ceil_mode, int64_t *out)
{
    return out_size(op, in, k, s, p, ceil_mode, out);
}

/* the attributes: the window (max_pool2d, avg_pool2d and avg_pool2d_grad)
 * and the input plane size (the gradient ops) */
typedef tg__pool_attrs pool_attrs; /* ops/pool.h */
#define WINDOW_SPECS                                                            \
    TG_SPEC_INT_ARRAY(pool_attrs, kernel, NULL, TG_REQUIRED),                   \
    TG_SPEC_INT_ARRAY(pool_attrs, stride, NULL, TG_REQUIRED),                   \
    TG_SPEC_INT_ARRAY(pool_attrs, padding, NULL, TG_REQUIRED),                  \
    TG_SPEC_BOOL(pool_attrs, ceil_mode, 0)
#define INPUT_SIZE_SPEC TG_SPEC_INT_ARRAY(pool_attrs, input_size, NULL, TG_REQUIRED, TG_MIN(1))
static const tg_attr_spec max_specs[] = {WINDOW_SPECS, {0}};
static const tg_attr_spec avg_specs[] = {
    WINDOW_SPECS, TG_SPEC_BOOL(pool_attrs, count_include_pad, 1), {0}};
static const tg_attr_spec max_grad_specs[] = {INPUT_SIZE_SPEC, {0}};
static const tg_attr_spec avg_grad_specs[] = {
    WINDOW_SPECS, TG_SPEC_BOOL(pool_attrs, count_include_pad, 1), INPUT_SIZE_SPEC, {0}};

int tg__pool_nd_attrs(const tg__pool_nd *w, bool avg, bool input_size, tg_attr *out)
{
    out[0] = (tg_attr)TG_AINTS("kernel", w->kernel, w->nd);
    out[1] = (tg_attr)TG_AINTS("stride", w->stride, w->nd);
    out[2] = (tg_attr)TG_AINTS("padding", w->padding, w->nd);
    out[3] = (tg_attr)TG_AI("ceil_mode", *w->ceil_mode);
    int n = 4;
    if (avg)
        out[n++] = (tg_attr)TG_AI("count_include_pad", *w->count_include_pad);
    if (input_size)
        out[n++] = (tg_attr)TG_AINTS("input_size", w->input_size, w->nd);
    return n;
}

/* a as an attribute list for avg_pool2d (avg), max_pool2d, or, with
 * input_size, for avg_pool2d_grad; returns the count */
static int attr_list(const pool_attrs *a, bool avg, bool input_size, tg_attr *out)
{
    pool_attrs *m = (pool_attrs *)a; /* only read */
    return tg__pool_nd_attrs(&TG_POOL_ND(2, m), avg, input_size, out);
}

/* the window of a, checked against an H x W plane */
static tg_status read_geom(const char *op, const pool_attrs *a, int64_t H, int64_t W,
                           geom *g)
{
    const int64_t *k = a->kernel, *s = a->stride, *p = a->padding;
    if (k[0] < 1 || k[1] < 1 || s[0] < 1 || s[1] < 1 || p[0] < 0 || p[1] < 0)
        return tg__error(TG_ERR_ARG, "%s: kernel %lldx%lld and stride %lldx%lld must be "
                         "positive and padding %lldx%lld non-negative", op,
                         (long long)k[0], (long long)k[1], (long long)s[0],
                         (long long)s[1], (long long)p[0], (long long)p[1]);
    if (p[0] > k[0] / 2 || p[1] > k[1] / 2)
        return tg__error(TG_ERR_ARG, "%s: padding %lldx%lld must be at most half the "
                         "kernel %lldx%lld", op, (long long)p[0], (long long)p[1],
                         (long long)k[0], (long long)k[1]);
    *g = (geom){.H = H, .W = W, .kh = k[0], .kw = k[1], .sh = s[0], .sw = s[1],
                .ph = p[0], .pw = p[1], .ceil_mode = a->ceil_mode,
                .include_pad = a->count_include_pad};
    if (!out_size(op, H, g->kh, g->sh, g->ph, g->ceil_mode, &g->OH) ||
        !out_size(op, W, g->kw, g->sw, g->pw, g->ceil_mode, &g->OW))
        return tg_last_status();
    if (g->OH < 1 || g->OW < 1)
        return tg__error(TG_ERR_SHAPE, "%s: kernel %lldx%lld is larger than the padded "
                         "input %lldx%lld (input %lldx%lld, padding %lldx%lld): the "
                         "output would be %lldx%lld", op, (long long)g->kh,
                         (long long)g->kw, (long long)(H + 2 * g->ph),
                         (long long)(W + 2 * g->pw), (long long)H, (long long)W,
                         (long long)g->ph, (long long)g->pw, (long long)g->OH,
                         (long long)g->OW);
    return TG_OK;
}

tg_status tg__pool_read_geom(const char *op, const tg__pool_attrs *a, int64_t H, int64_t W,
                             tg__pool_geom *g)
{
    return read_geom(op, a, H, W, g);
}

int tg__pool_attr_list(const tg__pool_attrs *a, bool avg, bool input_size, tg_attr *out)
{
    return attr_list(a, avg, input_size, out);
}

/* argmax indices given to the grad ops must point inside their plane: the
 * kernels check as they go, and on a bad one this scan names it */
static tg_status check_indices(const char *op, const tg_tensor *idx, int64_t plane)
{
    tg_tensor *c = tg__nn_contig((tg_tensor *)idx, TG_INT64);
    if (!c)
        return TG_ERR_NOMEM;
    const int64_t *v = (const int64_t *)tg__base(c);
    tg_status s = TG_OK;
    for (int64_t i = 0; i < c->numel && s == TG_OK; i++)
        if (v[i] < 0 || v[i] >= plane)
            s = tg__error(TG_ERR_INDEX, "%s: index %lld at position %lld is outside "
                          "the plane of %lld elements", op, (long long)v[i],
                          (long long)i, (long long)plane);
    tg_release(c);
    return s;
}

/* runs kind k of op `op` from input `in` (made contiguous) into out */
typedef enum kind {
    K_MAX = TG_POOL_MAX,
    K_AVG = TG_POOL_AVG,
    K_AVG_GRAD = TG_POOL_AVG_GRAD,
    K_MAX_GRAD = TG_POOL_MAX_GRAD,
    K_SELECT = TG_POOL_SELECT
} kind;

/* runs kind k of op `op` from input `in` (made contiguous) into out */
static tg_status run_kind(const char *op, kind k, const geom *g, tg_tensor *in,
                          tg_tensor *out, tg_tensor *idx)
{
    tg_tensor *a = tg__nn_contig(in, out->dtype);
    tg_tensor *ix = idx ? tg__nn_contig(idx, TG_INT64) : NULL;
    if (!a || (idx && !ix)) {
        tg_release(a);
        tg_release(ix);
        return TG_ERR_NOMEM;
    }
    int64_t planes = out->shape[0] * out->shape[1];
    int64_t a_n = planes ? a->numel / planes : 0;
    int64_t b_n = planes ? out->numel / planes : 0;
    bool bad = tg__pool2d((tg__pool_kind)k, g, out->dtype, tg__base(a), tg__base(out),
                          ix ? (int64_t *)tg__base(ix) : NULL, planes, a_n, b_n);
    /* a bad index: the output is dropped and the scan names the culprit */
    tg_status s = bad ? check_indices(op, ix, k == K_SELECT ? a_n : b_n) : TG_OK;
    tg_release(a);
    tg_release(ix);
    return s;
}

static tg_status need_4d(const char *op, const tg_tensor *x, const char *what)
{
    char b[160];
    if (x->ndim != 4)
        return tg__error(TG_ERR_SHAPE, "%s: expected a 4-D %s [N, C, H, W], got %s", op,
                         what, tg_shape_str(x->ndim, x->shape, b, sizeof b));
    return tg_require_float(op, x, 0);
}

static tg_status pool_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    geom g;
    tg_status s = need_4d(c->op->name, x, "input");
    if (s == TG_OK && (x->shape[2] < 1 || x->shape[3] < 1))
        s = tg__error(TG_ERR_SHAPE, "%s: empty %lldx%lld input plane", c->op->name,
                      (long long)x->shape[2], (long long)x->shape[3]);
    if (s == TG_OK)
        s = read_geom(c->op->name, c->attr, x->shape[2], x->shape[3], &g);
    if (s != TG_OK)
        return s;
    int64_t shape[4] = {x->shape[0], x->shape[1], g.OH, g.OW};
    s = tg_infer_set(c, 0, x->dtype, 4, shape);
    if (s == TG_OK && c->op->n_out == 2)
        s = tg_infer_set(c, 1, TG_INT64, 4, shape);
    return s;
}

/* int64 indices matching `like` in N and C (and in every dim when `full`) */
static tg_status check_index_tensor(const char *op, const tg_tensor *ix,
                                    const tg_tensor *like, bool full)
{
    char a[160], b[160];
    if (ix->dtype != TG_INT64)
        return tg__error(TG_ERR_DTYPE, "%s: indices must be int64, got %s", op,
                         tg_dtype_name(ix->dtype));
    if (ix->ndim != 4 || ix->shape[0] != like->shape[0] || ix->shape[1] != like->shape[1] ||
        (full && !tg__shape_eq(4, ix->shape, 4, like->shape)))
        return tg__error(TG_ERR_SHAPE, "%s: indices of shape %s do not match %s", op,
                         tg_shape_str(ix->ndim, ix->shape, a, sizeof a),
                         tg_shape_str(like->ndim, like->shape, b, sizeof b));
    return TG_OK;
}

/* ---- max_pool2d ---------------------------------------------------------------------- */
extern const tg_op_def tg_op_max_pool2d_grad, tg_op_max_pool2d_select;

static tg_status max_pool2d_kernel(tg_op_ctx *c)
{
    geom g;
    read_geom(c->op->name, c->attr, c->in[0]->shape[2], c->in[0]->shape[3], &g);
    return run_kind(c->op->name, K_MAX, &g, c->in[0], c->out[0], c->out[1]);
}

static tg_tensor *max_grad_call(tg_tensor *dy, tg_tensor *idx, int64_t H, int64_t W)
{
    int64_t hw[2] = {H, W};
    tg_attr a = TG_AINTS("input_size", hw, 2);
    tg_tensor *in[2] = {dy, idx};
    return tg_op_call(&tg_op_max_pool2d_grad, 2, in, &a, 1);
}

static tg_status max_pool2d_rule(tg_grad_ctx *g)
{
    const tg_meta *m = &g->in_meta[0];
    g->dx[0] = max_grad_call(g->dy[0], g->out[1], m->shape[2], m->shape[3]);
    return TG_OK;
}

/* the tangent at the argmax indices (output 1, which has no tangent) */
static tg_status max_pool2d_jvp(tg_jvp_ctx *c)
{
    tg_tensor *in[2] = {c->dx[0], c->out[1]};
    return tg__jvp_set(c, 0, tg_op_call(&tg_op_max_pool2d_select, 2, in, NULL, 0));
}

static const tg_arg_spec float_in[] = {{"x", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec float_out[] = {{"y", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec max_out[] = {
    {"y", TG_DTS_FLOAT}, {"indices", TG_DT(TG_INT64)}, {0}};
static const tg_arg_spec with_indices_in[] = {
    {"src", TG_DTS_FLOAT}, {"indices", TG_DT(TG_INT64)}, {0}};

/* outputs: the pooled values and, for the gradient, the argmax indices */
const tg_op_def tg_op_max_pool2d = {
    .name = "max_pool2d", .n_in = 1, .n_out = 2, .inputs = float_in, .outputs = max_out,
    .attrs = {max_specs, sizeof(pool_attrs)}, .flags = TG_OP_PURE, .save_outputs = 2u,
    .infer = pool_infer, .kernel = {[TG_CPU] = max_pool2d_kernel}, .grad = max_pool2d_rule,
    .jvp = max_pool2d_jvp, .onnx = {"MaxPool", 12}};

/* max_pool2d_grad(dy, indices): dy scattered (added) into zeros of the
 * input's shape at the argmax indices */
static tg_status max_grad_infer(tg_op_ctx *c)
{
    const pool_attrs *a = c->attr;
    int64_t H = a->input_size[0], W = a->input_size[1];
    tg_status s = need_4d(c->op->name, c->in[0], "gradient");
    if (s == TG_OK)
        s = check_index_tensor(c->op->name, c->in[1], c->in[0], true);
    if (s != TG_OK)
        return s;
    int64_t shape[4] = {c->in[0]->shape[0], c->in[0]->shape[1], H, W};
    return tg_infer_set(c, 0, c->in[0]->dtype, 4, shape);
}

static tg_status max_grad_kernel(tg_op_ctx *c)
{
    /* the planes' sizes: where the indices keep to 2 x 2 windows, the
     * kernel writes windows whole instead of zeroing and adding */
    geom g = {.H = c->out[0]->shape[2], .W = c->out[0]->shape[3],
              .OH = c->in[0]->shape[2], .OW = c->in[0]->shape[3]};
    return run_kind(c->op->name, K_MAX_GRAD, &g, c->in[0], c->out[0], c->in[1]);
}

static tg_status max_grad_rule(tg_grad_ctx *g)
{
    if (g->needs_grad[0]) {
        tg_tensor *in[2] = {g->dy[0], g->in[1]};
        g->dx[0] = tg_op_call(&tg_op_max_pool2d_select, 2, in, NULL, 0);
    }
    return TG_OK;
}

const tg_op_def tg_op_max_pool2d_grad = {
    .name = "max_pool2d_grad", .n_in = 2, .n_out = 1, .inputs = with_indices_in,
    .outputs = float_out, .attrs = {max_grad_specs, sizeof(pool_attrs)},
    .flags = TG_OP_PURE, .save_inputs = 2u, .infer = max_grad_infer,
    .kernel = {[TG_CPU] = max_grad_kernel}, .grad = max_grad_rule, .jvp = tg__jvp_linear};

/* max_pool2d_select(src, indices): src's elements at the argmax indices,
 * the adjoint of max_pool2d_grad (its gradient, and so grad of grad) */
static tg_status select_infer(tg_op_ctx *c)
{
    tg_status s = need_4d(c->op->name, c->in[0], "input");
    if (s == TG_OK)
        s = check_index_tensor(c->op->name, c->in[1], c->in[0], false);
    return s != TG_OK ? s : tg_infer_set(c, 0, c->in[0]->dtype, 4, c->in[1]->shape);
}

static tg_status select_kernel(tg_op_ctx *c)
{
    return run_kind(c->op->name, K_SELECT, NULL, c->in[0], c->out[0], c->in[1]);
}

static tg_status select_rule(tg_grad_ctx *g)
{
    if (g->needs_grad[0]) {
        const tg_meta *m = &g->in_meta[0];
        g->dx[0] = max_grad_call(g->dy[0], g->in[1], m->shape[2], m->shape[3]);
    }
    return TG_OK;
}

const tg_op_def tg_op_max_pool2d_select = {
    .name = "max_pool2d_select", .n_in = 2, .n_out = 1, .inputs = with_indices_in,
    .outputs = float_out, .flags = TG_OP_PURE, .save_inputs = 2u, .infer = select_infer,
    .kernel = {[TG_CPU] = select_kernel}, .grad = select_rule, .jvp = tg__jvp_linear};

/* ---- avg_pool2d ------------------------------------------------------------------------ */
extern const tg_op_def tg_op_avg_pool2d, tg_op_avg_pool2d_grad;

static tg_status avg_pool2d_kernel(tg_op_ctx *c)
{
    geom g;
    read_geom(c->op->name, c->attr, c->in[0]->shape[2], c->in[0]->shape[3], &g);
    return run_kind(c->op->name, K_AVG, &g, c->in[0], c->out[0], NULL);
}

/* avg_pool2d_grad with the window of the pooling and its input plane size */
static tg_status avg_pool2d_rule(tg_grad_ctx *g)
{
    pool_attrs p = *(const pool_attrs *)g->attr;
    p.input_size[0] = g->in_meta[0].shape[2];
    p.input_size[1] = g->in_meta[0].shape[3];
    tg_attr a[6];
    int n = attr_list(&p, true, true, a);
    g->dx[0] = tg_op_call(&tg_op_avg_pool2d_grad, 1, &g->dy[0], a, n);
    return TG_OK;
}

const tg_op_def tg_op_avg_pool2d = {
    .name = "avg_pool2d", .n_in = 1, .n_out = 1, .inputs = float_in, .outputs = float_out,
    .attrs = {avg_specs, sizeof(pool_attrs)}, .flags = TG_OP_PURE, .infer = pool_infer,
    .kernel = {[TG_CPU] = avg_pool2d_kernel}, .grad = avg_pool2d_rule,
    .jvp = tg__jvp_linear, .onnx = {"AveragePool", 11}};

/* avg_pool2d_grad(dy): each dy spread over its window of the input */
static tg_status avg_grad_geom(tg_op_ctx *c, geom *g)
{
    const pool_attrs *a = c->attr;
    int64_t H = a->input_size[0], W = a->input_size[1];
    const tg_tensor *dy = c->in[0];
    tg_status s = need_4d(c->op->name, dy, "gradient");
    if (s == TG_OK)
        s = read_geom(c->op->name, a, H, W, g);
    if (s == TG_OK && (dy->shape[2] != g->OH || dy->shape[3] != g->OW))
        s = tg__error(TG_ERR_SHAPE, "avg_pool2d_grad: gradient of %lldx%lld, but pooling "
                      "a %lldx%lld input gives %lldx%lld", (long long)dy->shape[2],
                      (long long)dy->shape[3], (long long)H, (long long)W,
                      (long long)g->OH, (long long)g->OW);
    return s;
}

static tg_status avg_grad_infer(tg_op_ctx *c)
{
    geom g;
    tg_status s = avg_grad_geom(c, &g);
    if (s != TG_OK)
        return s;
    int64_t shape[4] = {c->in[0]->shape[0], c->in[0]->shape[1], g.H, g.W};
    return tg_infer_set(c, 0, c->in[0]->dtype, 4, shape);
}

static tg_status avg_grad_kernel(tg_op_ctx *c)
{
    geom g;
    avg_grad_geom(c, &g);
    return run_kind(c->op->name, K_AVG_GRAD, &g, c->in[0], c->out[0], NULL);
}

static tg_status avg_grad_rule(tg_grad_ctx *g)
{
    /* linear in dy: its adjoint is the pooling itself */
    if (g->needs_grad[0]) {
        tg_attr a[6];
        int n = attr_list(g->attr, true, false, a);
        g->dx[0] = tg_op_call(&tg_op_avg_pool2d, 1, &g->dy[0], a, n);
    }
    return TG_OK;
}

const tg_op_def tg_op_avg_pool2d_grad = {
    .name = "avg_pool2d_grad", .n_in = 1, .n_out = 1, .inputs = float_in,
    .outputs = float_out, .attrs = {avg_grad_specs, sizeof(pool_attrs)},
    .flags = TG_OP_PURE, .infer = avg_grad_infer, .kernel = {[TG_CPU] = avg_grad_kernel},
    .grad = avg_grad_rule, .jvp = tg__jvp_linear};

/* ---- public functions ---------------------------------------------------------------- */
int tg__pool_prepare(const char *op, const tg_tensor *x, const tg__pool_opts_nd *o, bool avg,
                     const tg__pool_nd *w, tg_attr *a)
{
    if (!tg__nn_have(op, x, "input"))
        return -1;
    if (!o) {
        tg__error(TG_ERR_ARG, "%s: opts is NULL (the kernel size is required)", op);
        return -1;
    }
    for (int i = 0; i < w->nd; i++) {
        w->kernel[i] = o->kernel[i];
        w->stride[i] = o->stride[i] == 0 ? o->kernel[i] : o->stride[i];
        w->padding[i] = o->padding[i];
    }
    *w->ceil_mode = o->ceil_mode;
    *w->count_include_pad = o->count_include_pad;
    return tg__pool_nd_attrs(w, avg, false, a);
}

/* the checks both public pooling functions start with; their attributes
 * in a (backed by p); returns the count, or -1 with an error */
static int pool_prepare(const char *op, tg_tensor *x, const tg_pool2d_opts *o,
                        bool avg, pool_attrs *p, tg_attr *a)
{
    return tg__pool_prepare(op, x, o ? &TG_POOL_OPTS_ND(o) : NULL, avg, &TG_POOL_ND(2, p), a);
}

tg_tensor *tg__pool_max_values(const tg_op_def *op, tg_tensor *x, const tg_attr *a, int n)
{
    tg_tensor *out[2];
    TG_LOCAL_BEGIN();
    tg_tensor *y = tg_op_run(op, 1, &x, a, n, out) == TG_OK ? out[0] : NULL;
    TG_LOCAL_RETURN(y); /* the indices go with the scope (the node keeps its own) */
}

tg_tensor *tg_max_pool2d(tg_tensor *x, const tg_pool2d_opts *opts)
{
    pool_attrs p;
    tg_attr a[5];
    int n = pool_prepare("max_pool2d", x, opts, false, &p, a);
    return n < 0 ? NULL : tg__pool_max_values(&tg_op_max_pool2d, x, a, n);
}

tg_tensor *tg_avg_pool2d(tg_tensor *x, const tg_pool2d_opts *opts)
{
    pool_attrs p;
    tg_attr a[5];
    int n = pool_prepare("avg_pool2d", x, opts, true, &p, a);
    return n < 0 ? NULL : tg_op_call(&tg_op_avg_pool2d, 1, &x, a, n);
}

tg_tensor *tg_global_avg_pool2d(tg_tensor *x)
{
    if (!tg__nn_have("global_avg_pool2d", x, "input"))
        return NULL;
    if (need_4d("global_avg_pool2d", x, "input") != TG_OK)
        return NULL;
    int64_t hw = x->shape[2] * x->shape[3];
    if (hw == 0)
        return tg__error_null(TG_ERR_SHAPE, "global_avg_pool2d: empty %lldx%lld plane",
                              (long long)x->shape[2], (long long)x->shape[3]);
    TG_LOCAL_BEGIN();
    tg_tensor *y = tg_mul_scalar(tg_sum(x, 2, (const int[]){2, 3}, true), 1.0 / (double)hw);
    TG_LOCAL_RETURN(y);
}

const tg_op_def *const tg_ops_pool[] = {
    &tg_op_max_pool2d, &tg_op_max_pool2d_grad, &tg_op_max_pool2d_select,
    &tg_op_avg_pool2d, &tg_op_avg_pool2d_grad, NULL,
};
