/* Pooling as one op family over 2 or 3 spatial dims ([N, C, H, W] and
 * [N, C, D, H, W]; 1-D is the 2-D ops on views, conv1d.c) with PyTorch's
 * semantics (output size, padding at most half the kernel, ceil_mode,
 * count_include_pad): max_pool2d/3d (which also yield argmax indices, the
 * position in the plane or volume, for the gradient), avg_pool2d/3d,
 * avg_pool2d/3d_grad, and the rank-free max_pool2d_grad and
 * max_pool2d_select (positions in a plane: a volume is the plane
 * [D*H, W] of reshaped views), and global average pooling. Checks, shape
 * inference, kernels and rules are written once: an op's rank is the
 * length of its array attributes (the names, persisted in saved graphs
 * and the wire format, are the ones these ops always had). Kernels work
 * plane by plane (volume by volume) over N*C (kernels/cpu/pool.c). */
#include "autodiff/forward_ad.h"
#include "autodiff/jvp.h"
#include "ops/nn_util.h"
#include "ops/pool.h"
#include "tg/autograd.h"
#include "tg/graph.h"

#include <stdio.h>
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

/* the attributes of rank N: the window (max_poolNd, avg_poolNd and
 * avg_poolNd_grad) and the input size (the gradient ops) */
typedef tg__pool_attrs pool_attrs; /* ops/pool.h */
#define WINDOW_SPECS(N)                                                         \
    TG_SPEC_INT_ARRAY_N(pool_attrs, kernel, N, NULL, TG_REQUIRED),              \
    TG_SPEC_INT_ARRAY_N(pool_attrs, stride, N, NULL, TG_REQUIRED),              \
    TG_SPEC_INT_ARRAY_N(pool_attrs, padding, N, NULL, TG_REQUIRED),             \
    TG_SPEC_BOOL(pool_attrs, ceil_mode, 0)
#define INPUT_SIZE_SPEC(N) \
    TG_SPEC_INT_ARRAY_N(pool_attrs, input_size, N, NULL, TG_REQUIRED, TG_MIN(1))
#define AVG_SPECS(N) WINDOW_SPECS(N), TG_SPEC_BOOL(pool_attrs, count_include_pad, 1)
static const tg_attr_spec max2_specs[] = {WINDOW_SPECS(2), {0}};
static const tg_attr_spec max3_specs[] = {WINDOW_SPECS(3), {0}};
static const tg_attr_spec avg2_specs[] = {AVG_SPECS(2), {0}};
static const tg_attr_spec avg3_specs[] = {AVG_SPECS(3), {0}};
static const tg_attr_spec max_grad_specs[] = {INPUT_SIZE_SPEC(2), {0}};
static const tg_attr_spec avg2_grad_specs[] = {AVG_SPECS(2), INPUT_SIZE_SPEC(2), {0}};
static const tg_attr_spec avg3_grad_specs[] = {AVG_SPECS(3), INPUT_SIZE_SPEC(3), {0}};

/* the rank of a pooling op: the length of its (first) array attribute */
static int rank_of(const tg_op_def *op)
{
    return op->attrs.specs[0].count;
}

int tg__pool_attr_list_nd(int nd, const pool_attrs *a, bool avg, bool input_size,
                          tg_attr *out)
{
    out[0] = (tg_attr)TG_AINTS("kernel", a->kernel, nd);
    out[1] = (tg_attr)TG_AINTS("stride", a->stride, nd);
    out[2] = (tg_attr)TG_AINTS("padding", a->padding, nd);
    out[3] = (tg_attr)TG_AI("ceil_mode", a->ceil_mode);
    int n = 4;
    if (avg)
        out[n++] = (tg_attr)TG_AI("count_include_pad", a->count_include_pad);
    if (input_size)
        out[n++] = (tg_attr)TG_AINTS("input_size", a->input_size, nd);
    return n;
}

int tg__pool_attr_list(const pool_attrs *a, bool avg, bool input_size, tg_attr *out)
{
    return tg__pool_attr_list_nd(2, a, avg, input_size, out);
}

const char *tg__dims_str(int nd, const int64_t *v, char *b, size_t len)
{
    size_t at = 0;
    b[0] = 0;
    for (int i = 0; i < nd && at < len; i++)
        at += (size_t)snprintf(b + at, len - at, i ? "x%lld" : "%lld", (long long)v[i]);
    return b;
}

/* the window of a over nd spatial dims of sizes in[nd], checked: g holds
 * it right-aligned (pool.h), with the output size */
static tg_status read_geom(const char *op, int nd, const pool_attrs *a, const int64_t *in,
                           geom *g)
{
    char k[64], s[64], p[64], x[64], o[64], pad[64];
    *g = (geom){.nd = nd, .in = {1, 1, 1}, .out = {1, 1, 1}, .k = {1, 1, 1},
                .s = {1, 1, 1}, .ceil_mode = a->ceil_mode,
                .include_pad = a->count_include_pad};
    bool positive = true, half = true;
    int64_t padded[TG_POOL_MAX_ND];
    for (int i = 0; i < nd; i++) {
        positive &= a->kernel[i] >= 1 && a->stride[i] >= 1 && a->padding[i] >= 0;
        half &= a->padding[i] <= a->kernel[i] / 2;
    }
    if (!positive)
        return tg__error(TG_ERR_ARG, "%s: kernel %s and stride %s must be positive and "
                         "padding %s non-negative", op,
                         tg__dims_str(nd, a->kernel, k, sizeof k),
                         tg__dims_str(nd, a->stride, s, sizeof s),
                         tg__dims_str(nd, a->padding, p, sizeof p));
    if (!half)
        return tg__error(TG_ERR_ARG, "%s: padding %s must be at most half the kernel %s", op,
                         tg__dims_str(nd, a->padding, p, sizeof p),
                         tg__dims_str(nd, a->kernel, k, sizeof k));
    bool empty = false;
    for (int i = 0, j = 3 - nd; i < nd; i++, j++) {
        g->in[j] = in[i];
        g->k[j] = a->kernel[i];
        g->s[j] = a->stride[i];
        g->p[j] = a->padding[i];
        if (!out_size(op, in[i], g->k[j], g->s[j], g->p[j], g->ceil_mode, &g->out[j]))
            return tg_last_status();
        padded[i] = in[i] + 2 * a->padding[i]; /* out_size checked that it fits */
        empty |= g->out[j] < 1;
    }
    if (empty)
        return tg__error(TG_ERR_SHAPE, "%s: kernel %s is larger than the padded input %s "
                         "(input %s, padding %s): the output would be %s", op,
                         tg__dims_str(nd, a->kernel, k, sizeof k),
                         tg__dims_str(nd, padded, pad, sizeof pad),
                         tg__dims_str(nd, in, x, sizeof x),
                         tg__dims_str(nd, a->padding, p, sizeof p),
                         tg__dims_str(nd, g->out + 3 - nd, o, sizeof o));
    return TG_OK;
}

tg_status tg__pool_read_geom_nd(const char *op, int nd, const pool_attrs *a,
                                const int64_t *in, geom *g)
{
    return read_geom(op, nd, a, in, g);
}

tg_status tg__pool_read_geom(const char *op, const pool_attrs *a, int64_t H, int64_t W,
                             geom *g)
{
    return read_geom(op, 2, a, (const int64_t[]){H, W}, g);
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
static tg_status run_kind(const char *op, tg__pool_kind k, const geom *g, tg_tensor *in,
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
    bool bad = tg__pool_run(k, g, out->dtype, tg__base(a), tg__base(out),
                            ix ? (int64_t *)tg__base(ix) : NULL, planes, a_n, b_n);
    /* a bad index: the output is dropped and the scan names the culprit;
     * the values alone fail only for want of a row's scratch */
    tg_status s = !bad ? TG_OK
                  : k == TG_POOL_MAX_VALUES ? tg__error(TG_ERR_NOMEM, "%s: out of memory", op)
                                            : check_indices(op, ix, k == TG_POOL_SELECT ? a_n : b_n);
    tg_release(a);
    tg_release(ix);
    return s;
}

/* x must be [N, C] and nd spatial dims, floating point */
static tg_status need_rank(const char *op, int nd, const tg_tensor *x, const char *what)
{
    static const char *const layout[] = {"", "[N, C, L]", "[N, C, H, W]", "[N, C, D, H, W]"};
    char b[160];
    if (x->ndim != nd + 2)
        return tg__error(TG_ERR_SHAPE, "%s: expected a %d-D %s %s, got %s", op, nd + 2, what,
                         layout[nd], tg_shape_str(x->ndim, x->shape, b, sizeof b));
    return tg_require_float(op, x, 0);
}

/* x [N, C, spatial...] pooled by g: [N, C, g's output] in shape; the count */
static int pooled_shape(int nd, const tg_tensor *x, const int64_t *spatial, int64_t *shape)
{
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    memcpy(shape + 2, spatial, (size_t)nd * sizeof *shape);
    return nd + 2;
}

/* the geometry of a pooling (not gradient) op over its input c->in[0] */
static tg_status input_geom(tg_op_ctx *c, geom *g)
{
    const char *op = c->op->name;
    const tg_tensor *x = c->in[0];
    int nd = rank_of(c->op);
    char b[64];
    tg_status s = need_rank(op, nd, x, "input");
    if (s != TG_OK)
        return s;
    for (int i = 0; i < nd; i++)
        if (x->shape[2 + i] < 1)
            return tg__error(TG_ERR_SHAPE, "%s: empty %s input %s", op,
                             tg__dims_str(nd, x->shape + 2, b, sizeof b),
                             nd == 3 ? "volume" : "plane");
    return read_geom(op, nd, c->attr, x->shape + 2, g);
}

static tg_status pool_infer(tg_op_ctx *c)
{
    geom g;
    int64_t shape[2 + TG_POOL_MAX_ND];
    tg_status s = input_geom(c, &g);
    if (s != TG_OK)
        return s;
    int nd = rank_of(c->op), n = pooled_shape(nd, c->in[0], g.out + 3 - nd, shape);
    s = tg_infer_set(c, 0, c->in[0]->dtype, n, shape);
    if (s == TG_OK && c->op->n_out == 2)
        s = tg_infer_set(c, 1, TG_INT64, n, shape);
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

/* ---- max_pool2d, max_pool3d ----------------------------------------------------------- */
extern const tg_op_def tg_op_max_pool2d_grad, tg_op_max_pool2d_select, tg_op_max_pool2d_values;

static tg_status max_pool_kernel(tg_op_ctx *c)
{
    geom g;
    input_geom(c, &g);
    return run_kind(c->op->name, TG_POOL_MAX, &g, c->in[0], c->out[0], c->out[1]);
}

/* max_pool2d_values: max_pool2d's values without the indices (inference) */
static tg_status max_values_kernel(tg_op_ctx *c)
{
    geom g;
    input_geom(c, &g);
    return run_kind(c->op->name, TG_POOL_MAX_VALUES, &g, c->in[0], c->out[0], NULL);
}

/* t [N, C, spatial...] as the plane max_pool2d_grad and _select work on:
 * itself in 2-D, else [N, C, (all but the last spatial dim), last] (a
 * view of the contiguous indices and gradients; no copy) */
static tg_tensor *as_plane(tg_tensor *t)
{
    const int64_t *s = tg_shape(t);
    int nd = tg_ndim(t) - 2;
    if (nd == 2)
        return t;
    int64_t rows = 1;
    for (int i = 2; i < 1 + nd; i++)
        rows *= s[i];
    return tg_reshape(t, 4, (int64_t[]){s[0], s[1], rows, s[1 + nd]});
}

/* dy [N, C, pooled...] added into zeros of shape in_shape (the input's:
 * [N, C, spatial...]) at the argmax positions idx */
static tg_tensor *max_grad_call(tg_tensor *dy, tg_tensor *idx, int ndim, const int64_t *in_shape)
{
    int64_t hw[2] = {1, in_shape[ndim - 1]};
    for (int i = 2; i < ndim - 1; i++)
        hw[0] *= in_shape[i];
    tg_attr a = TG_AINTS("input_size", hw, 2);
    tg_tensor *in[2] = {as_plane(dy), as_plane(idx)};
    tg_tensor *dx = tg_op_call(&tg_op_max_pool2d_grad, 2, in, &a, 1);
    return ndim == 4 ? dx : tg_reshape(dx, ndim, in_shape);
}

static tg_status max_pool_rule(tg_grad_ctx *g)
{
    const tg_meta *m = &g->in_meta[0];
    g->dx[0] = tg__grad_of_input(max_grad_call(g->dy[0], g->out[1], m->ndim, m->shape),
                                 g->in[0]);
    return TG_OK;
}

/* the tangent at the argmax indices (output 1, which has no tangent) */
static tg_status max_pool_jvp(tg_jvp_ctx *c)
{
    tg_tensor *in[2] = {as_plane(c->dx[0]), as_plane(c->out[1])};
    tg_tensor *y = tg_op_call(&tg_op_max_pool2d_select, 2, in, NULL, 0);
    if (tg_ndim(c->out[1]) != 4)
        y = tg_reshape(y, tg_ndim(c->out[1]), tg_shape(c->out[1]));
    return tg__jvp_set(c, 0, y);
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
    .attrs = {max2_specs, sizeof(pool_attrs)}, .flags = TG_OP_PURE, .save_outputs = 2u,
    .save_inputs = 1u,
    .infer = pool_infer, .kernel = {[TG_CPU] = max_pool_kernel}, .grad = max_pool_rule,
    .jvp = max_pool_jvp, .onnx = {"MaxPool", 12}};

/* max_pool2d's values, bitwise, without computing or storing the indices:
 * made by the level-2 pass pool_values from a max_pool2d whose indices
 * nothing reads, and by tg_max_pool2d where nothing will differentiate it */
const tg_op_def tg_op_max_pool2d_values = {
    .name = "max_pool2d_values", .n_in = 1, .n_out = 1, .inputs = float_in,
    .outputs = float_out, .attrs = {max2_specs, sizeof(pool_attrs)}, .flags = TG_OP_PURE,
    .nondiff = true, .infer = pool_infer, .kernel = {[TG_CPU] = max_values_kernel},
    .onnx = {"MaxPool", 12}};

const tg_op_def tg_op_max_pool3d = {
    .name = "max_pool3d", .n_in = 1, .n_out = 2, .inputs = float_in, .outputs = max_out,
    .attrs = {max3_specs, sizeof(pool_attrs)}, .flags = TG_OP_PURE, .save_outputs = 2u,
    .save_inputs = 1u,
    .infer = pool_infer, .kernel = {[TG_CPU] = max_pool_kernel}, .grad = max_pool_rule,
    .jvp = max_pool_jvp, .onnx = {"MaxPool", 12}};

/* max_pool2d_grad(dy, indices): dy scattered (added) into zeros of the
 * input's shape at the argmax indices (positions in a plane, so every
 * rank's: see as_plane) */
static tg_status max_grad_infer(tg_op_ctx *c)
{
    const pool_attrs *a = c->attr;
    int64_t H = a->input_size[0], W = a->input_size[1];
    tg_status s = need_rank(c->op->name, 2, c->in[0], "gradient");
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
    geom g = {.nd = 2, .in = {1, c->out[0]->shape[2], c->out[0]->shape[3]},
              .out = {1, c->in[0]->shape[2], c->in[0]->shape[3]}};
    return run_kind(c->op->name, TG_POOL_MAX_GRAD, &g, c->in[0], c->out[0], c->in[1]);
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
    tg_status s = need_rank(c->op->name, 2, c->in[0], "input");
    if (s == TG_OK)
        s = check_index_tensor(c->op->name, c->in[1], c->in[0], false);
    return s != TG_OK ? s : tg_infer_set(c, 0, c->in[0]->dtype, 4, c->in[1]->shape);
}

static tg_status select_kernel(tg_op_ctx *c)
{
    return run_kind(c->op->name, TG_POOL_SELECT, NULL, c->in[0], c->out[0], c->in[1]);
}

static tg_status select_rule(tg_grad_ctx *g)
{
    if (g->needs_grad[0]) {
        const tg_meta *m = &g->in_meta[0];
        g->dx[0] = max_grad_call(g->dy[0], g->in[1], 4, m->shape);
    }
    return TG_OK;
}

const tg_op_def tg_op_max_pool2d_select = {
    .name = "max_pool2d_select", .n_in = 2, .n_out = 1, .inputs = with_indices_in,
    .outputs = float_out, .flags = TG_OP_PURE, .save_inputs = 2u, .infer = select_infer,
    .kernel = {[TG_CPU] = select_kernel}, .grad = select_rule, .jvp = tg__jvp_linear};

/* ---- avg_pool2d, avg_pool3d ----------------------------------------------------------- */
extern const tg_op_def tg_op_avg_pool2d, tg_op_avg_pool2d_grad, tg_op_avg_pool3d,
    tg_op_avg_pool3d_grad;

static tg_status avg_pool_kernel(tg_op_ctx *c)
{
    geom g;
    input_geom(c, &g);
    return run_kind(c->op->name, TG_POOL_AVG, &g, c->in[0], c->out[0], NULL);
}

/* avg_poolNd_grad with the window of the pooling and its input size */
static tg_status avg_pool_rule(tg_grad_ctx *g)
{
    int nd = g->in_meta[0].ndim - 2;
    pool_attrs p = *(const pool_attrs *)g->attr;
    memcpy(p.input_size, g->in_meta[0].shape + 2, (size_t)nd * sizeof *p.input_size);
    tg_attr a[6];
    int n = tg__pool_attr_list_nd(nd, &p, true, true, a);
    g->dx[0] = tg__grad_of_input(
        tg_op_call(nd == 2 ? &tg_op_avg_pool2d_grad : &tg_op_avg_pool3d_grad, 1, &g->dy[0], a, n),
        g->in[0]);
    return TG_OK;
}

const tg_op_def tg_op_avg_pool2d = {
    .name = "avg_pool2d", .n_in = 1, .n_out = 1, .inputs = float_in, .outputs = float_out,
    .attrs = {avg2_specs, sizeof(pool_attrs)}, .flags = TG_OP_PURE, .save_inputs = 1u,
    .infer = pool_infer,
    .kernel = {[TG_CPU] = avg_pool_kernel}, .grad = avg_pool_rule,
    .jvp = tg__jvp_linear, .onnx = {"AveragePool", 11}};

const tg_op_def tg_op_avg_pool3d = {
    .name = "avg_pool3d", .n_in = 1, .n_out = 1, .inputs = float_in, .outputs = float_out,
    .attrs = {avg3_specs, sizeof(pool_attrs)}, .flags = TG_OP_PURE, .save_inputs = 1u,
    .infer = pool_infer,
    .kernel = {[TG_CPU] = avg_pool_kernel}, .grad = avg_pool_rule,
    .jvp = tg__jvp_linear, .onnx = {"AveragePool", 11}};

/* avg_poolNd_grad(dy): each dy spread over its window of the input */
static tg_status avg_grad_geom(tg_op_ctx *c, geom *g)
{
    const pool_attrs *a = c->attr;
    const char *op = c->op->name;
    const tg_tensor *dy = c->in[0];
    int nd = rank_of(c->op);
    char d[64], in[64], o[64];
    tg_status s = need_rank(op, nd, dy, "gradient");
    if (s == TG_OK)
        s = read_geom(op, nd, a, a->input_size, g);
    if (s == TG_OK && memcmp(dy->shape + 2, g->out + 3 - nd, (size_t)nd * sizeof *g->out))
        s = tg__error(TG_ERR_SHAPE, "%s: gradient of %s, but pooling a %s input gives %s", op,
                      tg__dims_str(nd, dy->shape + 2, d, sizeof d),
                      tg__dims_str(nd, a->input_size, in, sizeof in),
                      tg__dims_str(nd, g->out + 3 - nd, o, sizeof o));
    return s;
}

static tg_status avg_grad_infer(tg_op_ctx *c)
{
    geom g;
    int64_t shape[2 + TG_POOL_MAX_ND];
    tg_status s = avg_grad_geom(c, &g);
    if (s != TG_OK)
        return s;
    int nd = rank_of(c->op), n = pooled_shape(nd, c->in[0], g.in + 3 - nd, shape);
    return tg_infer_set(c, 0, c->in[0]->dtype, n, shape);
}

static tg_status avg_grad_kernel(tg_op_ctx *c)
{
    geom g;
    avg_grad_geom(c, &g);
    return run_kind(c->op->name, TG_POOL_AVG_GRAD, &g, c->in[0], c->out[0], NULL);
}

static tg_status avg_grad_rule(tg_grad_ctx *g)
{
    /* linear in dy: its adjoint is the pooling itself */
    if (g->needs_grad[0]) {
        int nd = g->in_meta[0].ndim - 2;
        tg_attr a[6];
        int n = tg__pool_attr_list_nd(nd, g->attr, true, false, a);
        g->dx[0] = tg_op_call(nd == 2 ? &tg_op_avg_pool2d : &tg_op_avg_pool3d, 1, &g->dy[0],
                              a, n);
    }
    return TG_OK;
}

const tg_op_def tg_op_avg_pool2d_grad = {
    .name = "avg_pool2d_grad", .n_in = 1, .n_out = 1, .inputs = float_in,
    .outputs = float_out, .attrs = {avg2_grad_specs, sizeof(pool_attrs)},
    .flags = TG_OP_PURE, .infer = avg_grad_infer, .kernel = {[TG_CPU] = avg_grad_kernel},
    .grad = avg_grad_rule, .jvp = tg__jvp_linear};

const tg_op_def tg_op_avg_pool3d_grad = {
    .name = "avg_pool3d_grad", .n_in = 1, .n_out = 1, .inputs = float_in,
    .outputs = float_out, .attrs = {avg3_grad_specs, sizeof(pool_attrs)},
    .flags = TG_OP_PURE, .infer = avg_grad_infer, .kernel = {[TG_CPU] = avg_grad_kernel},
    .grad = avg_grad_rule, .jvp = tg__jvp_linear};

/* ---- public functions ---------------------------------------------------------------- */
/* a public function's options (tg_pool2d_opts, tg_pool3d_opts): int
 * arrays of nd, a stride of 0 meaning the kernel */
typedef struct opts_nd {
    const int *kernel, *stride, *padding;
    bool ceil_mode, count_include_pad;
} opts_nd;
#define OPTS_ND(o) \
    ((opts_nd){(o)->kernel, (o)->stride, (o)->padding, (o)->ceil_mode, (o)->count_include_pad})

/* the opening of the public pooling functions: x and the options o
 * (NULL: the caller's opts was NULL) must be given; p is set from o and
 * listed in a (avg: count_include_pad too). Returns the count, or -1
 * with an error naming op. */
static int prepare(const char *op, int nd, const tg_tensor *x, const opts_nd *o, bool avg,
                   pool_attrs *p, tg_attr *a)
{
    if (!tg__nn_have(op, x, "input"))
        return -1;
    if (!o) {
        tg__error(TG_ERR_ARG, "%s: opts is NULL (the kernel size is required)", op);
        return -1;
    }
    for (int i = 0; i < nd; i++) {
        p->kernel[i] = o->kernel[i];
        p->stride[i] = o->stride[i] == 0 ? o->kernel[i] : o->stride[i];
        p->padding[i] = o->padding[i];
    }
    p->ceil_mode = o->ceil_mode;
    p->count_include_pad = o->count_include_pad;
    return tg__pool_attr_list_nd(nd, p, avg, false, a);
}

/* runs a max pooling op (values and indices) and returns the values: the
 * indices go with a local scope (a recorded node keeps its own) */
static tg_tensor *max_values(const tg_op_def *op, tg_tensor *x, const tg_attr *a, int n)
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
    int n = prepare("max_pool2d", 2, x, opts ? &OPTS_ND(opts) : NULL, false, &p, a);
    if (n < 0)
        return NULL;
    /* nothing will differentiate it (eager, no gradient recorded, no
     * tangent): the values alone, without the indices' time and memory;
     * a graph keeps max_pool2d for its gradients, and pool_values drops
     * unread indices */
    if (!tg_is_symbolic(x) && !(tg_grad_enabled() && tg_requires_grad(x)) &&
        !tg__dual_carries(x)) {
        tg_tensor *y;
        return tg_op_run(&tg_op_max_pool2d_values, 1, &x, a, n, &y) == TG_OK ? y : NULL;
    }
    return max_values(&tg_op_max_pool2d, x, a, n);
}

tg_tensor *tg_avg_pool2d(tg_tensor *x, const tg_pool2d_opts *opts)
{
    pool_attrs p;
    tg_attr a[5];
    int n = prepare("avg_pool2d", 2, x, opts ? &OPTS_ND(opts) : NULL, true, &p, a);
    return n < 0 ? NULL : tg_op_call(&tg_op_avg_pool2d, 1, &x, a, n);
}

tg_tensor *tg_max_pool3d(tg_tensor *x, const tg_pool3d_opts *opts)
{
    pool_attrs p;
    tg_attr a[5];
    int n = prepare("max_pool3d", 3, x, opts ? &OPTS_ND(opts) : NULL, false, &p, a);
    return n < 0 ? NULL : max_values(&tg_op_max_pool3d, x, a, n);
}

tg_tensor *tg_avg_pool3d(tg_tensor *x, const tg_pool3d_opts *opts)
{
    pool_attrs p;
    tg_attr a[5];
    int n = prepare("avg_pool3d", 3, x, opts ? &OPTS_ND(opts) : NULL, true, &p, a);
    return n < 0 ? NULL : tg_op_call(&tg_op_avg_pool3d, 1, &x, a, n);
}

tg_tensor *tg_global_avg_pool2d(tg_tensor *x)
{
    if (!tg__nn_have("global_avg_pool2d", x, "input"))
        return NULL;
    if (need_rank("global_avg_pool2d", 2, x, "input") != TG_OK)
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
    &tg_op_avg_pool2d, &tg_op_avg_pool2d_grad, &tg_op_max_pool3d,
    &tg_op_avg_pool3d, &tg_op_avg_pool3d_grad, &tg_op_max_pool2d_values, NULL,
};
