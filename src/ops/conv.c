/* Convolution as one op family over 2 or 3 spatial dims (NCHW, NCDHW;
 * 1-D is the 2-D ops on views, conv1d.c) with stride, padding, dilation,
 * groups and an optional bias: convNd, its two gradient ops
 * convNd_grad_input and convNd_grad_weight (each differentiable again
 * through the others: grad of grad), and conv_transposeNd, which runs the
 * input gradient's kernel and whose gradients are convNd and
 * convNd_grad_weight with the roles swapped. Parameters, checks, shape
 * inference and rules are written once for every rank: an op's rank is
 * the length of its array attributes (the op names, persisted in saved
 * graphs, the wire format and ONNX export, are the ones these ops always
 * had). The kernels (kernels/cpu/conv_nd.h) dispatch 2-D products to the
 * 2-D kernels and the others to the general path. */
#include "autodiff/jvp.h"
#include "core/size_math.h"
#include "kernels/cpu/conv_nd.h"
#include "kernels/cpu/conv_pw.h"
#include "ops/conv.h"
#include "ops/fused.h"
#include "ops/nn_util.h"

#include <stdio.h>
#include <string.h>

/* ---- parameters ---------------------------------------------------------------- */
#define ND_MAX TG_CONV_ND_MAX
#define CONV_SPECS(N)                                                                  \
    TG_SPEC_INT_ARRAY_N(conv_params, stride, N, ((const int64_t[]){1, 1, 1}), TG_MIN(1)),  \
    TG_SPEC_INT_ARRAY_N(conv_params, padding, N, ((const int64_t[]){0, 0, 0}), TG_MIN(0)), \
    TG_SPEC_INT_ARRAY_N(conv_params, dilation, N, ((const int64_t[]){1, 1, 1}), TG_MIN(1)), \
    TG_SPEC_INT(conv_params, groups, 1, TG_MIN(1))
#define TRANSPOSE_SPECS(N)                                                             \
    CONV_SPECS(N), TG_SPEC_INT_ARRAY_N(conv_params, output_padding, N,                 \
                                       ((const int64_t[]){0, 0, 0}), TG_MIN(0))
static const tg_attr_spec conv2_specs[] = {CONV_SPECS(2), {0}};
static const tg_attr_spec conv3_specs[] = {CONV_SPECS(3), {0}};
static const tg_attr_spec transpose2_specs[] = {TRANSPOSE_SPECS(2), {0}};
static const tg_attr_spec transpose3_specs[] = {TRANSPOSE_SPECS(3), {0}};
static const tg_attr_spec grad_input2_specs[] = {
    CONV_SPECS(2), TG_SPEC_INT_ARRAY_N(conv_params, input_shape, 4, NULL, TG_REQUIRED), {0}};
static const tg_attr_spec grad_input3_specs[] = {
    CONV_SPECS(3), TG_SPEC_INT_ARRAY_N(conv_params, input_shape, 5, NULL, TG_REQUIRED), {0}};
static const tg_attr_spec grad_weight2_specs[] = {
    CONV_SPECS(2), TG_SPEC_INT_ARRAY_N(conv_params, weight_shape, 4, NULL, TG_REQUIRED), {0}};
static const tg_attr_spec grad_weight3_specs[] = {
    CONV_SPECS(3), TG_SPEC_INT_ARRAY_N(conv_params, weight_shape, 5, NULL, TG_REQUIRED), {0}};

/* the rank of a convolution op: the length of its stride attribute */
static int rank_of(const tg_op_def *op)
{
    return op->attrs.specs[0].count;
}

/* the layouts the messages name, per rank */
typedef struct layouts {
    const char *x, *w, *wt, *dy, *wt_short;
} layouts;
static const layouts layout[ND_MAX + 1] = {
    [2] = {"[N, C, H, W]", "[O, C/groups, kh, kw]", "[C, O/groups, kh, kw]",
           "[N, O, OH, OW]", "[in, out/groups, kh, kw]"},
    [3] = {"[N, C, D, H, W]", "[O, C/groups, kd, kh, kw]", "[C, O/groups, kd, kh, kw]",
           "[N, O, OD, OH, OW]", "[in, out/groups, kd, kh, kw]"}};


/* ---- checks and geometry --------------------------------------------------------- */
static tg_status require_rank(const char *op, const tg_tensor *t, int ndim, const char *what,
                              const char *lay)
{
    char s[160];
    if (t->ndim == ndim)
        return TG_OK;
    return tg__error(TG_ERR_SHAPE, "%s: %s must be %d-D %s, got %s", op, what, ndim, lay,
                     tg_shape_str(t->ndim, t->shape, s, sizeof s));
}

/* every input floating point; their promoted dtype in *dt */
static tg_status float_inputs(const tg_op_ctx *c, tg_dtype *dt)
{
    *dt = c->in[0]->dtype;
    for (int i = 0; i < c->n_in; i++) {
        if (tg_require_float(c->op->name, c->in[i], i) != TG_OK)
            return tg_last_status();
        *dt = tg_promote_types(*dt, c->in[i]->dtype);
    }
    return TG_OK;
}

/* the bias (input 2), when given, is [channels] */
static tg_status check_bias(const tg_op_ctx *c, int64_t channels)
{
    if (c->n_in != 3)
        return TG_OK;
    const tg_tensor *b = c->in[2];
    char sb[160];
    if (b->ndim != 1 || b->shape[0] != channels)
        return tg__error(TG_ERR_SHAPE, "%s: bias has shape %s, expected [%lld] (the output "
                         "channels)", c->op->name, tg_shape_str(b->ndim, b->shape, sb, sizeof sb),
                         (long long)channels);
    return TG_OK;
}

/* groups divide both channel counts, and the weight's channels per group
 * times the groups are the input's channels (sx, sw: the shapes as text) */
static tg_status check_channels(const char *op, const int64_t *xs, const int64_t *ws,
                                int64_t G, const char *sx, const char *sw)
{
    int64_t channels;
    if (xs[1] % G != 0 || ws[0] % G != 0)
        return tg__error(TG_ERR_SHAPE, "%s: groups = %lld must divide the input "
                         "channels (%lld, input %s) and the output channels "
                         "(%lld, weight %s)", op, (long long)G, (long long)xs[1], sx,
                         (long long)ws[0], sw);
    if (!tg__size_mul(op, "the input channels", ws[1], G, &channels))
        return tg_last_status();
    if (channels != xs[1])
        return tg__error(TG_ERR_SHAPE, "%s: input %s has %lld channels but weight %s "
                         "expects %lld (%lld per group x %lld groups)", op, sx,
                         (long long)xs[1], sw, (long long)channels, (long long)ws[1],
                         (long long)G);
    return TG_OK;
}

/* the kernels' scratch must be countable: the patch matrix of a block
 * (channels per group x taps x the output's last two dims) and the
 * output. Sizes past TG_SIZE_MAX fail here as "shape too large", so the
 * kernels' own size arithmetic cannot wrap. The padded input planes are
 * not limited here: a dilation and padding of 2^30 around a small input
 * is a small convolution (torch computes it), which the kernels run by
 * im2col rather than pad (tg__conv_pads_bounded, kernels/cpu/conv.h). */
static tg_status check_scratch(const char *op, const tg__conv_nd *g)
{
    int64_t col = g->c / g->groups, numel = g->n * g->o;
    bool ok = true;
    for (int i = 0; i < 3 && ok; i++)
        ok = tg__size_mul(op, "the im2col buffer", col, g->k[i], &col) &&
             tg__size_mul(op, "the output", numel, g->out[i], &numel);
    ok = ok && tg__size_mul(op, "the im2col buffer", col, g->out[1], &col) &&
         tg__size_mul(op, "the im2col buffer", col, g->out[2], &col);
    return ok ? TG_OK : tg_last_status();
}

/* the geometry of input shape xs with weight shape ws (both nd + 2 dims),
 * right-aligned (conv_nd.h) */
static tg_status make_geom(const char *op, int nd, const conv_params *p, const int64_t *xs,
                           const int64_t *ws, tg__conv_nd *g)
{
    char sx[160], sw[160], k[64], d[64], pd[64], pad[64];
    tg_shape_str(nd + 2, xs, sx, sizeof sx);
    tg_shape_str(nd + 2, ws, sw, sizeof sw);
    if (check_channels(op, xs, ws, p->groups, sx, sw) != TG_OK)
        return tg_last_status();
    *g = (tg__conv_nd){.nd = nd, .n = xs[0], .c = xs[1], .o = ws[0], .groups = p->groups,
                       .in = {1, 1, 1}, .k = {1, 1, 1}, .out = {1, 1, 1}, .s = {1, 1, 1},
                       .d = {1, 1, 1}};
    bool empty = false, larger = false;
    int64_t span[ND_MAX], padded[ND_MAX];
    for (int i = 0, j = 3 - nd; i < nd; i++, j++) {
        g->in[j] = xs[2 + i];
        g->k[j] = ws[2 + i];
        g->s[j] = p->stride[i];
        g->p[j] = p->padding[i];
        g->d[j] = p->dilation[i];
        empty |= ws[2 + i] < 1;
    }
    if (empty) /* an empty weight (nn.Conv2d(c, o, 0)) */
        return tg__error(TG_ERR_SHAPE, "%s: kernel size %s must be greater than zero "
                         "(weight %s)", op, tg__dims_str(nd, ws + 2, k, sizeof k), sw);
    for (int i = 0, j = 3 - nd; i < nd; i++, j++) {
        if (!tg__size_window_span(op, g->in[j], g->p[j], g->p[j], g->k[j], g->d[j], &span[i]))
            return tg_last_status();
        padded[i] = g->in[j] + 2 * g->p[j]; /* the span's check said it fits */
        larger |= span[i] < 0;
    }
    if (larger)
        return tg__error(TG_ERR_SHAPE, "%s: kernel %s (dilation %s) is larger than the "
                         "padded input %s (input %s, padding %s)", op,
                         tg__dims_str(nd, ws + 2, k, sizeof k),
                         tg__dims_str(nd, p->dilation, d, sizeof d),
                         tg__dims_str(nd, padded, pad, sizeof pad), sx,
                         tg__dims_str(nd, p->padding, pd, sizeof pd));
    for (int i = 0, j = 3 - nd; i < nd; i++, j++)
        g->out[j] = span[i] / g->s[j] + 1;
    return check_scratch(op, g);
}

/* the output shape [N, O, out...] of g; its dims */
static int out_shape(const tg__conv_nd *g, int64_t *shape)
{
    shape[0] = g->n;
    shape[1] = g->o;
    memcpy(shape + 2, g->out + 3 - g->nd, (size_t)g->nd * sizeof *shape);
    return g->nd + 2;
}

/* runs a conv op of rank nd with parameters p and, for the gradient ops,
 * the shape attribute (name, nd + 2 dims) they produce */
static tg_tensor *conv_call(const tg_op_def *op, int nd, tg_tensor *a, tg_tensor *b,
                            tg_tensor *bias, const conv_params *p, const char *shape_name,
                            const int64_t *shape)
{
    tg_attr attrs[5] = {TG_AINTS("stride", p->stride, nd), TG_AINTS("padding", p->padding, nd),
                        TG_AINTS("dilation", p->dilation, nd), TG_AI("groups", p->groups)};
    if (shape_name)
        attrs[4] = (tg_attr)TG_AINTS(shape_name, shape, nd + 2);
    tg_tensor *in[3] = {a, b, bias};
    return tg_op_call(op, bias ? 3 : 2, in, attrs, shape_name ? 5 : 4);
}

/* the ops of each rank, by role */
extern const tg_op_def tg_op_conv2d, tg_op_conv2d_grad_input, tg_op_conv2d_grad_weight,
    tg_op_conv_transpose2d, tg_op_conv3d, tg_op_conv3d_grad_input, tg_op_conv3d_grad_weight,
    tg_op_conv_transpose3d;
typedef struct family {
    const tg_op_def *conv, *grad_input, *grad_weight;
} family;
static family family_of(int nd)
{
    return nd == 3 ? (family){&tg_op_conv3d, &tg_op_conv3d_grad_input, &tg_op_conv3d_grad_weight}
                   : (family){&tg_op_conv2d, &tg_op_conv2d_grad_input,
                              &tg_op_conv2d_grad_weight};
}

/* the bias gradient: dy [N, O, out...] summed over all but O */
static tg_tensor *bias_grad(tg_tensor *dy, int nd)
{
    int axes[ND_MAX + 1] = {0, 2, 3, 4};
    return tg_sum(dy, nd + 1, axes, false);
}

/* bilinear in x and w, plus the bias */
static tg_status conv_jvp(tg_jvp_ctx *c)
{
    tg_status s;
    tg_tensor *acc = tg__jvp_multilinear_terms(c, 2, &s);
    if (s != TG_OK)
        return s;
    if (c->n_in == 3 && c->dx[2]) {
        int ndim = c->in_meta[0].ndim;
        int64_t shape[ND_MAX + 2] = {1, c->in_meta[2].shape[0], 1, 1, 1};
        TG_JVP_TERM(c, acc, tg_reshape(c->dx[2], ndim, shape));
    }
    c->dy[0] = acc;
    return TG_OK;
}

static const tg_arg_spec float_out[] = {{"y", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec conv_in[] = {
    {"x", TG_DTS_FLOAT}, {"w", TG_DTS_FLOAT}, {"b", TG_DTS_FLOAT | TG_ARG_OPTIONAL}, {0}};

/* ---- convNd ---------------------------------------------------------------------- */
static tg_status conv_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    int nd = rank_of(c->op);
    if (c->n_in != 2 && c->n_in != 3)
        return tg__error(TG_ERR_ARG, "%s: expected 2 or 3 inputs (x, w[, b]), got %d",
                         op, c->n_in);
    const tg_tensor *x = c->in[0], *w = c->in[1];
    tg_dtype dt;
    tg__conv_nd g;
    int64_t shape[ND_MAX + 2];
    if (require_rank(op, x, nd + 2, "input", layout[nd].x) != TG_OK ||
        require_rank(op, w, nd + 2, "weight", layout[nd].w) != TG_OK ||
        float_inputs(c, &dt) != TG_OK ||
        make_geom(op, nd, c->attr, x->shape, w->shape, &g) != TG_OK ||
        check_bias(c, g.o) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, dt, out_shape(&g, shape), shape);
}

void tg__conv_weight_tag(const tg_tensor *given, const tg_tensor *w, uint64_t *serial,
                         uint64_t *version)
{
    *serial = *version = 0;
    if (w && given && w->storage == given->storage && w->storage->frozen) {
        *serial = w->storage->serial;
        *version = w->storage->version;
    }
}

static tg_status conv_run_act(tg_op_ctx *c, const tg__conv_act *act)
{
    tg_tensor *out = c->out[0];
    tg__conv_nd g;
    make_geom(c->op->name, rank_of(c->op), c->attr, c->in[0]->shape, c->in[1]->shape, &g);
    tg_tensor *x = tg__nn_contig(c->in[0], out->dtype), *w = tg__nn_contig(c->in[1], out->dtype);
    tg_tensor *b = c->n_in == 3 ? tg__nn_contig(c->in[2], out->dtype) : NULL;
    tg_status s = TG_ERR_NOMEM;
    tg__conv_weight_tag(c->in[1], w, &g.w_serial, &g.w_version);
    if (x && w && (c->n_in == 2 || b))
        s = tg__conv_forward(out->dtype, &g, tg__base(x), tg__base(w), b ? tg__base(b) : NULL,
                             act, tg__base(out));
    tg_release(x);
    tg_release(w);
    tg_release(b);
    return s;
}

static tg_status conv_kernel(tg_op_ctx *c)
{
    return conv_run_act(c, NULL);
}

tg_status tg__conv2d_relu_kernel(tg_op_ctx *c)
{
    return conv_run_act(c, &(tg__conv_act){TG_CONV_ACT_RELU, 0, 0});
}

tg_status tg__conv2d_clamp_kernel(tg_op_ctx *c, double lo, double hi)
{
    return conv_run_act(c, &(tg__conv_act){TG_CONV_ACT_CLAMP, lo, hi});
}

tg_status tg__conv2d_hardswish_kernel(tg_op_ctx *c)
{
    return conv_run_act(c, &(tg__conv_act){TG_CONV_ACT_HARDSWISH, 0, 0});
}

bool tg__conv2d_residual_kernel(tg_op_ctx *c, const tg_tensor *res, bool relu, tg_status *st)
{
    tg_tensor *out = c->out[0];
    tg__conv_nd g;
    tg__conv_geom p;
    if (rank_of(c->op) != 2 || res->dtype != out->dtype ||
        !tg__shape_eq(res->ndim, res->shape, out->ndim, out->shape) ||
        make_geom(c->op->name, 2, c->attr, c->in[0]->shape, c->in[1]->shape, &g) != TG_OK ||
        !tg__conv_nd_as_plane(&g, &p))
        return false;
    tg_tensor *x = tg__nn_contig(c->in[0], out->dtype), *w = tg__nn_contig(c->in[1], out->dtype);
    tg_tensor *b = c->n_in == 3 ? tg__nn_contig(c->in[2], out->dtype) : NULL;
    tg_tensor *r = tg__nn_contig((tg_tensor *)res, out->dtype);
    tg__conv_weight_tag(c->in[1], w, &p.w_serial, &p.w_version);
    *st = TG_ERR_NOMEM;
    if (x && w && r && (c->n_in == 2 || b))
        *st = tg__conv2d_forward_residual(out->dtype, &p, tg__base(x), tg__base(w),
                                          b ? tg__base(b) : NULL, tg__base(r), relu,
                                          tg__base(out));
    tg_release(x);
    tg_release(w);
    tg_release(b);
    tg_release(r);
    return true;
}

static tg_status conv_grad(tg_grad_ctx *g)
{
    const conv_params *p = g->attr;
    int nd = g->in_meta[0].ndim - 2;
    family f = family_of(nd);
    tg_tensor *x = g->in[0], *w = g->in[1], *dy = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = conv_call(f.grad_input, nd, dy, w, NULL, p, "input_shape",
                             g->in_meta[0].shape);
    if (g->needs_grad[1])
        g->dx[1] = conv_call(f.grad_weight, nd, dy, x, NULL, p, "weight_shape",
                             g->in_meta[1].shape);
    if (g->n_in == 3 && g->needs_grad[2])
        g->dx[2] = bias_grad(dy, nd);
    return TG_OK;
}

const tg_op_def tg_op_conv2d = {
    .name = "conv2d", .n_in = -1, .n_out = 1, .inputs = conv_in, .outputs = float_out,
    .attrs = {conv2_specs, sizeof(conv_params)}, .flags = TG_OP_PURE, .save_inputs = 0x3,
    .infer = conv_infer, .kernel = {[TG_CPU] = conv_kernel}, .grad = conv_grad,
    .jvp = conv_jvp, .onnx = {"Conv", 11}};

/* ---- conv2d_relu_pool ---------------------------------------------------------------
 * y, offsets = max_pool2d_compact(relu(conv2d(x, w[, b]))) with 2 x 2 windows, stride 2:
 * made only by the level-2 pass fuse_conv_pool (docs/PASSES.md), the bits of the three
 * ops (kernels/cpu/conv_pool.c). Not differentiated: passes run after gradients. */
static tg_status conv_pool_infer(tg_op_ctx *c)
{
    tg_status s = conv_infer(c);
    if (s != TG_OK)
        return s;
    tg_meta m = c->out_meta[0]; /* the convolution's output */
    if (m.shape[2] < 2 || m.shape[3] < 2)
        return tg__error(TG_ERR_SHAPE, "%s: a %lldx%lld output plane has no 2x2 window",
                         c->op->name, (long long)m.shape[2], (long long)m.shape[3]);
    int64_t shape[4] = {m.shape[0], m.shape[1], m.shape[2] / 2, m.shape[3] / 2};
    s = tg_infer_set(c, 0, m.dtype, 4, shape);
    return s == TG_OK ? tg_infer_set(c, 1, TG_UINT8, 4, shape) : s;
}

static tg_status conv_pool_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg__conv_nd g;
    tg__conv_geom p;
    make_geom(c->op->name, 2, c->attr, c->in[0]->shape, c->in[1]->shape, &g);
    tg__conv_nd_as_plane(&g, &p);
    tg_tensor *x = tg__nn_contig(c->in[0], out->dtype), *w = tg__nn_contig(c->in[1], out->dtype);
    tg_tensor *b = c->n_in == 3 ? tg__nn_contig(c->in[2], out->dtype) : NULL;
    tg_status s = TG_ERR_NOMEM;
    tg__conv_weight_tag(c->in[1], w, &g.w_serial, &g.w_version);
    if (x && w && (c->n_in == 2 || b))
        s = tg__conv2d_relu_pool(out->dtype, &p, tg__base(x), tg__base(w),
                                 b ? tg__base(b) : NULL, tg__base(out),
                                 (uint8_t *)tg__base(c->out[1]));
    tg_release(x);
    tg_release(w);
    tg_release(b);
    return s == TG_OK || s != TG_ERR_NOMEM ? s : tg__error(s, "%s: out of memory", c->op->name);
}

static const tg_arg_spec pool_out[] = {
    {"y", TG_DTS_FLOAT}, {"offsets", TG_DT(TG_UINT8)}, {0}};
const tg_op_def tg_op_conv2d_relu_pool = {
    .name = "conv2d_relu_pool", .n_in = -1, .n_out = 2, .inputs = conv_in, .outputs = pool_out,
    .attrs = {conv2_specs, sizeof(conv_params)}, .flags = TG_OP_PURE, .nondiff = true,
    .infer = conv_pool_infer, .kernel = {[TG_CPU] = conv_pool_kernel}};

const tg_op_def tg_op_conv3d = {
    .name = "conv3d", .n_in = -1, .n_out = 1, .inputs = conv_in, .outputs = float_out,
    .attrs = {conv3_specs, sizeof(conv_params)}, .flags = TG_OP_PURE, .save_inputs = 0x3,
    .infer = conv_infer, .kernel = {[TG_CPU] = conv_kernel}, .grad = conv_grad,
    .jvp = conv_jvp, .onnx = {"Conv", 11}};

/* ---- the gradient ops: input 1 is w (grad_input) or x (grad_weight) --------------- */
static tg_status grad_infer(tg_op_ctx *c, bool for_input)
{
    const char *op = c->op->name;
    int nd = rank_of(c->op);
    const tg_tensor *dy = c->in[0], *other = c->in[1];
    const conv_params *p = c->attr;
    int64_t shape[ND_MAX + 2], want[ND_MAX + 2];
    memcpy(shape, for_input ? p->input_shape : p->weight_shape, (size_t)(nd + 2) * sizeof *shape);
    /* an unknown batch (graph mode: -1 when the rule ran) is dy's */
    if (for_input && shape[0] == -1 && dy->ndim == nd + 2)
        shape[0] = dy->shape[0];
    tg__conv_nd g;
    char a[160], b[160];
    if (require_rank(op, dy, nd + 2, "output gradient", layout[nd].dy) != TG_OK ||
        require_rank(op, other, nd + 2, for_input ? "weight" : "input",
                     for_input ? layout[nd].w : layout[nd].x) != TG_OK ||
        tg_require_float(op, dy, 0) != TG_OK || tg_require_float(op, other, 1) != TG_OK ||
        make_geom(op, nd, p, for_input ? shape : other->shape,
                  for_input ? other->shape : shape, &g) != TG_OK)
        return tg_last_status();
    if (!tg__shape_eq(dy->ndim, dy->shape, out_shape(&g, want), want))
        return tg__error(TG_ERR_SHAPE, "%s: output gradient has shape %s, expected %s", op,
                         tg_shape_str(dy->ndim, dy->shape, a, sizeof a),
                         tg_shape_str(nd + 2, want, b, sizeof b));
    return tg_infer_set(c, 0, tg_promote_types(dy->dtype, other->dtype), nd + 2, shape);
}

static tg_status grad_input_infer(tg_op_ctx *c) { return grad_infer(c, true); }
static tg_status grad_weight_infer(tg_op_ctx *c) { return grad_infer(c, false); }

/* dx (grad_input: out has x's shape, input 1 is w) or dw (grad_weight:
 * out has w's shape, input 1 is x) */
static tg_status grad_kernel(tg_op_ctx *c, bool for_input)
{
    tg_tensor *out = c->out[0];
    const int64_t *other = c->in[1]->shape;
    tg__conv_nd g;
    make_geom(c->op->name, rank_of(c->op), c->attr, for_input ? out->shape : other,
              for_input ? other : out->shape, &g);
    tg_tensor *dy = tg__nn_contig(c->in[0], out->dtype), *in1 = tg__nn_contig(c->in[1], out->dtype);
    tg_status s = TG_ERR_NOMEM;
    if (dy && in1)
        s = (for_input ? tg__conv_grad_input : tg__conv_grad_weight)(
            out->dtype, &g, tg__base(dy), tg__base(in1), tg__base(out));
    tg_release(dy);
    tg_release(in1);
    return s;
}

static tg_status grad_input_kernel(tg_op_ctx *c) { return grad_kernel(c, true); }
static tg_status grad_weight_kernel(tg_op_ctx *c) { return grad_kernel(c, false); }

/* the gradients of dx = grad_input(dy, w) and dw = grad_weight(dy, x), both
 * bilinear: for an incoming gradient g of the output, d<g, J^T dy> w.r.t.
 * dy is convNd(g, w) (grad_input) or convNd(x, g) (grad_weight), and w.r.t.
 * input 1 the other gradient op of dy against g */
static tg_status grad_grad(tg_grad_ctx *g, bool for_input)
{
    const conv_params *p = g->attr;
    int nd = g->in_meta[0].ndim - 2;
    family f = family_of(nd);
    tg_tensor *dy = g->in[0], *in1 = g->in[1], *up = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = for_input ? conv_call(f.conv, nd, up, in1, NULL, p, NULL, NULL)
                             : conv_call(f.conv, nd, in1, up, NULL, p, NULL, NULL);
    if (g->needs_grad[1])
        g->dx[1] = conv_call(for_input ? f.grad_weight : f.grad_input, nd, dy, up, NULL, p,
                             for_input ? "weight_shape" : "input_shape", g->in_meta[1].shape);
    return TG_OK;
}

static tg_status grad_input_grad(tg_grad_ctx *g) { return grad_grad(g, true); }
static tg_status grad_weight_grad(tg_grad_ctx *g) { return grad_grad(g, false); }

static const tg_arg_spec grad_input_in[] = {{"dy", TG_DTS_FLOAT}, {"w", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_conv2d_grad_input = {
    .name = "conv2d_grad_input", .n_in = 2, .n_out = 1, .inputs = grad_input_in,
    .outputs = float_out, .attrs = {grad_input2_specs, sizeof(conv_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = grad_input_infer,
    .kernel = {[TG_CPU] = grad_input_kernel}, .grad = grad_input_grad,
    .jvp = tg__jvp_multilinear};

const tg_op_def tg_op_conv3d_grad_input = {
    .name = "conv3d_grad_input", .n_in = 2, .n_out = 1, .inputs = grad_input_in,
    .outputs = float_out, .attrs = {grad_input3_specs, sizeof(conv_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = grad_input_infer,
    .kernel = {[TG_CPU] = grad_input_kernel}, .grad = grad_input_grad,
    .jvp = tg__jvp_multilinear};

static const tg_arg_spec grad_weight_in[] = {{"dy", TG_DTS_FLOAT}, {"x", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_conv2d_grad_weight = {
    .name = "conv2d_grad_weight", .n_in = 2, .n_out = 1, .inputs = grad_weight_in,
    .outputs = float_out, .attrs = {grad_weight2_specs, sizeof(conv_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = grad_weight_infer,
    .kernel = {[TG_CPU] = grad_weight_kernel}, .grad = grad_weight_grad,
    .jvp = tg__jvp_multilinear};

const tg_op_def tg_op_conv3d_grad_weight = {
    .name = "conv3d_grad_weight", .n_in = 2, .n_out = 1, .inputs = grad_weight_in,
    .outputs = float_out, .attrs = {grad_weight3_specs, sizeof(conv_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = grad_weight_infer,
    .kernel = {[TG_CPU] = grad_weight_kernel}, .grad = grad_weight_grad,
    .jvp = tg__jvp_multilinear};

/* ---- conv_transposeNd(x, w[, b]): the input gradient of a convNd as an op ---------- */
/* y [N, Cout, out...] is convNd_grad_input of "output gradient" x [N, Cin,
 * in...] through the convNd weight w [Cin, Cout/groups, k...], so the
 * kernel is the input gradient's; each output size is PyTorch's
 * (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.
 * output_padding < stride keeps the convolution's geometry of that output
 * exactly x's size (PyTorch also allows output_padding < dilation; then a
 * convolution over the output would see more than x's size, which this op
 * does not model: the public functions, transpose_call, pad x for it). */
static tg_status transpose_out_size(const char *op, const conv_params *p, int i,
                                    int64_t in, int64_t k, int64_t *out)
{
    int64_t s = p->stride[i], pad = p->padding[i], d = p->dilation[i];
    int64_t opad = p->output_padding[i];
    if (opad >= s && opad >= d)
        return tg__error(TG_ERR_ARG, "%s: output_padding %lld must be smaller than "
                         "either stride %lld or dilation %lld", op, (long long)opad,
                         (long long)s, (long long)d);
    if (opad >= s)
        return tg__error(TG_ERR_UNSUPPORTED, "%s: output_padding %lld not smaller than "
                         "stride %lld is not supported", op, (long long)opad, (long long)s);
    int64_t a, b;
    if (!tg__size_mul(op, "the output size", in - 1, s, &a) ||
        !tg__size_mul(op, "the output size", k - 1, d, &b) ||
        !tg__size_add(op, "the output size", a, b, &a) ||
        !tg__size_add(op, "the output size", a, opad + 1, &a))
        return tg_last_status();
    /* a - 2 pad without overflow: a pad over half of a leaves nothing (the
     * padding of a graph's wire form may be near 2^63) */
    *out = pad > a / 2 ? 0 : a - 2 * pad;
    if (*out < 1)
        return tg__error(TG_ERR_SHAPE, "%s: padding %lld leaves no output (input size "
                         "%lld, kernel %lld, stride %lld, dilation %lld)", op,
                         (long long)pad, (long long)in, (long long)k, (long long)s,
                         (long long)d);
    return TG_OK;
}

/* the output shape ys and the convolution geometry of the transposed product */
static tg_status transpose_geom(const char *op, int nd, const conv_params *p,
                                const int64_t *xs, const int64_t *ws, int64_t *ys,
                                tg__conv_nd *g)
{
    char sx[160], sw[160];
    tg_shape_str(nd + 2, xs, sx, sizeof sx);
    tg_shape_str(nd + 2, ws, sw, sizeof sw);
    if (ws[0] != xs[1])
        return tg__error(TG_ERR_SHAPE, "%s: input %s has %lld channels but weight %s "
                         "expects %lld (weight is %s)", op, sx, (long long)xs[1], sw,
                         (long long)ws[0], layout[nd].wt_short);
    for (int i = 0; i < nd; i++)
        if (xs[2 + i] < 1 || ws[2 + i] < 1)
            return tg__error(TG_ERR_SHAPE, "%s: empty input plane %s or kernel %s", op, sx,
                             sw);
    ys[0] = xs[0];
    if (!tg__size_mul(op, "the output channels", ws[1], p->groups, &ys[1]))
        return tg_last_status();
    for (int i = 0; i < nd; i++)
        if (transpose_out_size(op, p, i, xs[2 + i], ws[2 + i], &ys[2 + i]) != TG_OK)
            return tg_last_status();
    if (make_geom(op, nd, p, ys, ws, g) != TG_OK)
        return tg_last_status();
    if (memcmp(g->out + 3 - nd, xs + 2, (size_t)nd * sizeof *xs)) /* not with opad < stride */
        return tg__error(TG_ERR_INTERNAL, "%s: inconsistent geometry", op);
    return TG_OK;
}

static tg_status transpose_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    int nd = rank_of(c->op);
    if (c->n_in != 2 && c->n_in != 3)
        return tg__error(TG_ERR_ARG, "%s: expected 2 or 3 inputs (x, w[, b]), got %d",
                         op, c->n_in);
    const tg_tensor *x = c->in[0], *w = c->in[1];
    tg_dtype dt;
    int64_t ys[ND_MAX + 2];
    tg__conv_nd g;
    if (require_rank(op, x, nd + 2, "input", layout[nd].x) != TG_OK ||
        require_rank(op, w, nd + 2, "weight", layout[nd].wt) != TG_OK ||
        float_inputs(c, &dt) != TG_OK ||
        transpose_geom(op, nd, c->attr, x->shape, w->shape, ys, &g) != TG_OK ||
        check_bias(c, ys[1]) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, dt, nd + 2, ys);
}

/* y [N, ch, vol] += b [ch] per channel */
#define ADD_BIAS(T)                                                                   \
    do {                                                                              \
        T *yv = (T *)tg__base(out);                                                   \
        const T *bv = (const T *)tg__base(b);                                         \
        for (int64_t i = 0; i < nc; i++)                                              \
            for (int64_t j = 0; j < vol; j++)                                         \
                yv[i * vol + j] += bv[i % ch];                                        \
    } while (0)

static tg_status transpose_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    int nd = rank_of(c->op);
    int64_t ys[ND_MAX + 2];
    tg__conv_nd g;
    transpose_geom(c->op->name, nd, c->attr, c->in[0]->shape, c->in[1]->shape, ys, &g);
    tg_tensor *x = tg__nn_contig(c->in[0], out->dtype), *w = tg__nn_contig(c->in[1], out->dtype);
    tg_tensor *b = c->n_in == 3 ? tg__nn_contig(c->in[2], out->dtype) : NULL;
    tg_status s = TG_ERR_NOMEM;
    tg__conv_weight_tag(c->in[1], w, &g.w_serial, &g.w_version);
    if (x && w && (c->n_in == 2 || b))
        s = tg__conv_grad_input(out->dtype, &g, tg__base(x), tg__base(w), tg__base(out));
    if (s == TG_OK && b) { /* the bias per output channel */
        int64_t ch = ys[1], nc = ys[0] * ys[1], vol = g.in[0] * g.in[1] * g.in[2];
        if (out->dtype == TG_FLOAT32)
            ADD_BIAS(float);
        else
            ADD_BIAS(double);
    }
    tg_release(x);
    tg_release(w);
    tg_release(b);
    return s;
}
#undef ADD_BIAS

/* the rules of convNd_grad_input with x as the output gradient: w.r.t. x
 * a convNd of dy, w.r.t. w the weight gradient of x against dy */
static tg_status transpose_grad(tg_grad_ctx *g)
{
    const conv_params *p = g->attr;
    int nd = g->in_meta[0].ndim - 2;
    family f = family_of(nd);
    tg_tensor *x = g->in[0], *w = g->in[1], *dy = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = conv_call(f.conv, nd, dy, w, NULL, p, NULL, NULL);
    if (g->needs_grad[1])
        g->dx[1] = conv_call(f.grad_weight, nd, x, dy, NULL, p, "weight_shape",
                             g->in_meta[1].shape);
    if (g->n_in == 3 && g->needs_grad[2])
        g->dx[2] = bias_grad(dy, nd);
    return TG_OK;
}

const tg_op_def tg_op_conv_transpose2d = {
    .name = "conv_transpose2d", .n_in = -1, .n_out = 1, .inputs = conv_in,
    .outputs = float_out, .attrs = {transpose2_specs, sizeof(conv_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = transpose_infer,
    .kernel = {[TG_CPU] = transpose_kernel}, .grad = transpose_grad, .jvp = conv_jvp,
    .onnx = {"ConvTranspose", 11}};

const tg_op_def tg_op_conv_transpose3d = {
    .name = "conv_transpose3d", .n_in = -1, .n_out = 1, .inputs = conv_in,
    .outputs = float_out, .attrs = {transpose3_specs, sizeof(conv_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = transpose_infer,
    .kernel = {[TG_CPU] = transpose_kernel}, .grad = transpose_grad, .jvp = conv_jvp,
    .onnx = {"ConvTranspose", 11}};

/* ---- public functions ------------------------------------------------------------ */
/* the transposed convolution of rank nd with p's attributes. PyTorch
 * allows an output_padding of a stride or more when it is below the
 * dilation; the op keeps it below the stride, so the whole strides become
 * zeros appended to x's dim (they add nothing to any output) and the op
 * gets the remainder: the same output size and values, and x's gradient
 * is the op's cropped back by the pad */
static tg_tensor *transpose_call(const tg_op_def *op, int nd, tg_tensor *x, tg_tensor *w,
                                 tg_tensor *b, const conv_params *p)
{
    conv_params q = *p;
    int64_t pads[2 * (ND_MAX + 2)] = {0};
    bool extend = false;
    for (int i = 0; i < nd; i++) {
        int64_t s = q.stride[i], opad = q.output_padding[i];
        if (s > 0 && opad >= s && opad < q.dilation[i]) {
            pads[2 * (2 + i) + 1] = opad / s;
            q.output_padding[i] = opad % s;
            extend = true;
        }
    }
    TG_LOCAL_BEGIN();
    tg_tensor *xe = extend && x ? tg_pad(x, 2 * (nd + 2), pads, 0) : x, *y = NULL;
    tg_attr attrs[5] = {TG_AINTS("stride", q.stride, nd), TG_AINTS("padding", q.padding, nd),
                        TG_AINTS("output_padding", q.output_padding, nd),
                        TG_AINTS("dilation", q.dilation, nd), TG_AI("groups", q.groups)};
    tg_tensor *in[3] = {xe, w, b};
    if (xe || !x) /* a NULL x reaches the op, which names it; a failed pad has set the error */
        y = tg_op_call(op, b ? 3 : 2, in, attrs, 5);
    TG_LOCAL_RETURN(y);
}

/* a public function's options (int arrays of nd) as parameters */
#define PARAMS_OF(o, nd, p)                                    \
    do {                                                       \
        (p).groups = (o).groups;                               \
        for (int i_ = 0; i_ < (nd); i_++) {                    \
            (p).stride[i_] = (o).stride[i_];                   \
            (p).padding[i_] = (o).padding[i_];                 \
            (p).dilation[i_] = (o).dilation[i_];               \
        }                                                      \
    } while (0)

tg_tensor *tg_conv2d(tg_tensor *x, tg_tensor *w, tg_tensor *b, const tg_conv2d_opts *opts)
{
    tg_conv2d_opts o = opts ? *opts : (tg_conv2d_opts){{1, 1}, {0, 0}, {1, 1}, 1};
    conv_params p = {0};
    PARAMS_OF(o, 2, p);
    return conv_call(&tg_op_conv2d, 2, x, w, b, &p, NULL, NULL);
}

tg_tensor *tg_conv3d(tg_tensor *x, tg_tensor *w, tg_tensor *b, const tg_conv3d_opts *opts)
{
    tg_conv3d_opts o = opts ? *opts : (tg_conv3d_opts){{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1};
    conv_params p = {0};
    PARAMS_OF(o, 3, p);
    return conv_call(&tg_op_conv3d, 3, x, w, b, &p, NULL, NULL);
}

tg_tensor *tg_conv_transpose2d(tg_tensor *x, tg_tensor *w, tg_tensor *b,
                               const tg_conv_transpose2d_opts *opts)
{
    tg_conv_transpose2d_opts o =
        opts ? *opts : (tg_conv_transpose2d_opts){{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1};
    conv_params p = {0};
    PARAMS_OF(o, 2, p);
    for (int i = 0; i < 2; i++)
        p.output_padding[i] = o.output_padding[i];
    return transpose_call(&tg_op_conv_transpose2d, 2, x, w, b, &p);
}

tg_tensor *tg_conv_transpose3d(tg_tensor *x, tg_tensor *w, tg_tensor *b,
                               const tg_conv_transpose3d_opts *opts)
{
    tg_conv_transpose3d_opts o = opts ? *opts
                                      : (tg_conv_transpose3d_opts){{1, 1, 1}, {0, 0, 0},
                                                                   {0, 0, 0}, {1, 1, 1}, 1};
    conv_params p = {0};
    PARAMS_OF(o, 3, p);
    for (int i = 0; i < 3; i++)
        p.output_padding[i] = o.output_padding[i];
    return transpose_call(&tg_op_conv_transpose3d, 3, x, w, b, &p);
}

extern const tg_op_def tg_op_conv2d_pw_dw; /* conv_pwdw.c */
const tg_op_def *const tg_ops_conv[] = {
    &tg_op_conv2d, &tg_op_conv2d_grad_input, &tg_op_conv2d_grad_weight,
    &tg_op_conv_transpose2d, &tg_op_conv3d, &tg_op_conv3d_grad_input,
    &tg_op_conv3d_grad_weight, &tg_op_conv_transpose3d, &tg_op_conv2d_relu_pool,
    &tg_op_conv2d_pw_dw, NULL};
