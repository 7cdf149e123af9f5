/* 2-D convolution (NCHW) with stride, padding, dilation, groups and an
 * optional bias: the op definitions. The two gradients are ops of their
 * own, conv2d_grad_input and conv2d_grad_weight, each differentiable
 * again through the others (grad of grad). The kernels live in
 * kernels/cpu/conv.c. */
#include "autodiff/jvp.h"
#include "kernels/cpu/conv.h"
#include "ops/conv_args.h"
#include "ops/elementwise.h"
#include "ops/fused.h"
#include "ops/nn_util.h"

#include <stdlib.h>
#include <string.h>

/* ---- parameters and geometry ------------------------------------------------ */
/* the attributes, absent ones taking PyTorch's defaults; the gradient ops
 * also give the shape they produce */
typedef struct conv_params {
    int64_t stride[2], padding[2], dilation[2], groups;
    int64_t output_padding[2]; /* conv_transpose2d */
    int64_t input_shape[4];  /* conv2d_grad_input */
    int64_t weight_shape[4]; /* conv2d_grad_weight */
} conv_params;
#define CONV_SPECS                                                              \
    TG_SPEC_INT_ARRAY(conv_params, stride, ((const int64_t[]){1, 1}), TG_MIN(1)),   \
    TG_SPEC_INT_ARRAY(conv_params, padding, ((const int64_t[]){0, 0}), TG_MIN(0)),  \
    TG_SPEC_INT_ARRAY(conv_params, dilation, ((const int64_t[]){1, 1}), TG_MIN(1)), \
    TG_SPEC_INT(conv_params, groups, 1, TG_MIN(1))
static const tg_attr_spec conv2d_specs[] = {CONV_SPECS, {0}};
static const tg_attr_spec transpose_specs[] = {
    CONV_SPECS,
    TG_SPEC_INT_ARRAY(conv_params, output_padding, ((const int64_t[]){0, 0}), TG_MIN(0)),
    {0}};
static const tg_attr_spec grad_input_specs[] = {
    CONV_SPECS, TG_SPEC_INT_ARRAY(conv_params, input_shape, NULL, TG_REQUIRED), {0}};
static const tg_attr_spec grad_weight_specs[] = {
    CONV_SPECS, TG_SPEC_INT_ARRAY(conv_params, weight_shape, NULL, TG_REQUIRED), {0}};
static const tg_arg_spec float_out[] = {{"y", TG_DTS_FLOAT}, {0}};

/* the kernels' scratch per image must be countable: the im2col patch
 * matrix (channels per group x taps x output pixels) and the padded input
 * planes; sizes past TG_SIZE_MAX fail here as "shape too large", so the
 * kernels' own size arithmetic cannot wrap */
static tg_status check_scratch(const char *op, const tg__conv_geom *g)
{
    int64_t col, img, hp, wp;
    bool ok = tg__size_mul(op, "the im2col buffer", g->c / g->groups, g->kh, &col) &&
              tg__size_mul(op, "the im2col buffer", col, g->kw, &col) &&
              tg__size_mul(op, "the im2col buffer", col, g->oh, &col) &&
              tg__size_mul(op, "the im2col buffer", col, g->ow, &col) &&
              tg__size_add(op, "the padded input", g->h, 2 * g->ph, &hp) &&
              tg__size_add(op, "the padded input", g->w, 2 * g->pw, &wp) &&
              tg__size_mul(op, "the padded input", g->c, hp, &img) &&
              tg__size_mul(op, "the padded input", img, wp, &img);
    return ok ? TG_OK : tg_last_status();
}

/* the geometry of input shape xs with weight shape ws (both 4-D) */
static tg_status make_geom(const char *op, const conv_params *p, const int64_t *xs,
                           const int64_t *ws, tg__conv_geom *g)
{
    char sx[160], sw[160];
    tg_shape_str(4, xs, sx, sizeof sx);
    tg_shape_str(4, ws, sw, sizeof sw);
    int64_t G = p->groups;
    if (xs[1] % G != 0 || ws[0] % G != 0)
        return tg__error(TG_ERR_SHAPE, "%s: groups = %lld must divide the input "
                         "channels (%lld, input %s) and the output channels "
                         "(%lld, weight %s)", op, (long long)G, (long long)xs[1], sx,
                         (long long)ws[0], sw);
    if (tg__conv_check_channels(op, xs, ws, G, sx, sw) != TG_OK)
        return tg_last_status();
    *g = (tg__conv_geom){
        .n = xs[0], .c = xs[1], .h = xs[2], .w = xs[3],
        .o = ws[0], .kh = ws[2], .kw = ws[3],
        .sh = p->stride[0], .sw = p->stride[1], .ph = p->padding[0],
        .pw = p->padding[1], .dh = p->dilation[0], .dw = p->dilation[1], .groups = G};
    int64_t span_h = -1, span_w = -1;
    if (g->kh < 1 || g->kw < 1) /* an empty weight (nn.Conv2d(c, o, 0)) */
        return tg__error(TG_ERR_SHAPE, "%s: kernel size %lldx%lld must be greater than zero "
                         "(weight %s)", op, (long long)g->kh, (long long)g->kw, sw);
    if (!tg__size_window_span(op, g->h, g->ph, g->ph, g->kh, g->dh, &span_h) ||
        !tg__size_window_span(op, g->w, g->pw, g->pw, g->kw, g->dw, &span_w))
        return tg_last_status();
    if (span_h < 0 || span_w < 0)
        return tg__error(TG_ERR_SHAPE, "%s: kernel %lldx%lld (dilation %lldx%lld) "
                         "is larger than the padded input %lldx%lld (input %s, "
                         "padding %lldx%lld)", op, (long long)g->kh, (long long)g->kw,
                         (long long)g->dh, (long long)g->dw,
                         (long long)(g->h + 2 * g->ph), (long long)(g->w + 2 * g->pw),
                         sx, (long long)g->ph, (long long)g->pw);
    g->oh = span_h / g->sh + 1;
    g->ow = span_w / g->sw + 1;
    return check_scratch(op, g);
}

static tg_status require_4d(const char *op, const tg_tensor *t, const char *what,
                            const char *layout)
{
    return tg__conv_require_rank(op, t, 4, what, layout);
}

/* checks dy against the convolution's output shape */
static tg_status check_dy(const char *op, const tg_tensor *dy,
                          const tg__conv_geom *g)
{
    return tg__conv_check_dy(op, dy, 4, (int64_t[]){g->n, g->o, g->oh, g->ow});
}



/* ---- conv2d ---------------------------------------------------------------------- */
static tg_status conv2d_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    if (c->n_in != 2 && c->n_in != 3)
        return tg__error(TG_ERR_ARG, "%s: expected 2 or 3 inputs (x, w[, b]), got %d",
                         op, c->n_in);
    const tg_tensor *x = c->in[0], *w = c->in[1];
    tg_dtype dt;
    tg__conv_geom g;
    if (require_4d(op, x, "input", "[N, C, H, W]") != TG_OK ||
        require_4d(op, w, "weight", "[O, C/groups, kh, kw]") != TG_OK ||
        tg__conv_float_inputs(c, &dt) != TG_OK ||
        make_geom(op, c->attr, x->shape, w->shape, &g) != TG_OK ||
        tg__conv_check_bias(c, g.o) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, dt, 4, (int64_t[]){g.n, g.o, g.oh, g.ow});
}

static tg_status conv2d_run(tg_op_ctx *c, const tg__conv_act *act)
{
    tg_tensor *out = c->out[0];
    tg__conv_geom g;
    make_geom(c->op->name, c->attr, c->in[0]->shape, c->in[1]->shape, &g);
    tg_tensor *x = tg__nn_contig(c->in[0], out->dtype), *w = tg__nn_contig(c->in[1], out->dtype);
    tg_tensor *b = c->n_in == 3 ? tg__nn_contig(c->in[2], out->dtype) : NULL;
    tg_status s = TG_ERR_NOMEM;
    if (x && w && (c->n_in == 2 || b))
        s = tg__conv2d_forward_act(out->dtype, &g, tg__base(x), tg__base(w),
                                   b ? tg__base(b) : NULL, act, tg__base(out));
    tg_release(x);
    tg_release(w);
    tg_release(b);
    return s;
}

static tg_status conv2d_kernel(tg_op_ctx *c)
{
    return conv2d_run(c, &(tg__conv_act){TG_CONV_ACT_NONE, 0, 0});
}

tg_status tg__conv2d_relu_kernel(tg_op_ctx *c)
{
    return conv2d_run(c, &(tg__conv_act){TG_CONV_ACT_RELU, 0, 0});
}

tg_status tg__conv2d_clamp_kernel(tg_op_ctx *c, double lo, double hi)
{
    return conv2d_run(c, &(tg__conv_act){TG_CONV_ACT_CLAMP, lo, hi});
}

extern const tg_op_def tg_op_conv2d, tg_op_conv2d_grad_input,
    tg_op_conv2d_grad_weight, tg_op_conv_transpose2d;

/* runs a conv op with parameters p and, for the gradient ops, the shape
 * attribute (name, 4 dims) they produce */
static tg_tensor *conv_run(const tg_op_def *op, tg_tensor *a, tg_tensor *b,
                           tg_tensor *bias, const conv_params *p,
                           const char *shape_name, const int64_t *shape)
{
    return tg__conv_call(op, 2, a, b, bias, p->stride, p->padding, p->dilation, p->groups,
                         shape_name, shape);
}

static tg_status conv2d_grad(tg_grad_ctx *g)
{
    const conv_params *p = g->attr;
    tg_tensor *x = g->in[0], *w = g->in[1], *dy = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = conv_run(&tg_op_conv2d_grad_input, dy, w, NULL, p, "input_shape",
                            g->in_meta[0].shape);
    if (g->needs_grad[1])
        g->dx[1] = conv_run(&tg_op_conv2d_grad_weight, dy, x, NULL, p,
                            "weight_shape", g->in_meta[1].shape);
    if (g->n_in == 3 && g->needs_grad[2])
        g->dx[2] = tg_sum(dy, 3, (const int[]){0, 2, 3}, false);
    return TG_OK;
}

/* bilinear in x and w, plus the bias */
static tg_status conv2d_jvp(tg_jvp_ctx *c)
{
    tg_status s;
    tg_tensor *acc = tg__jvp_multilinear_terms(c, 2, &s);
    if (s != TG_OK)
        return s;
    if (c->n_in == 3 && c->dx[2])
        TG_JVP_TERM(c, acc, tg_reshape(c->dx[2], 4,
                                       (int64_t[]){1, c->in_meta[2].shape[0], 1, 1}));
    c->dy[0] = acc;
    return TG_OK;
}

static const tg_arg_spec conv2d_in[] = {
    {"x", TG_DTS_FLOAT}, {"w", TG_DTS_FLOAT}, {"b", TG_DTS_FLOAT | TG_ARG_OPTIONAL}, {0}};

const tg_op_def tg_op_conv2d = {
    .name = "conv2d", .n_in = -1, .n_out = 1, .inputs = conv2d_in, .outputs = float_out,
    .attrs = {conv2d_specs, sizeof(conv_params)}, .flags = TG_OP_PURE, .save_inputs = 0x3,
    .infer = conv2d_infer, .kernel = {[TG_CPU] = conv2d_kernel}, .grad = conv2d_grad,
    .jvp = conv2d_jvp, .onnx = {"Conv", 11}};

tg_tensor *tg_conv2d(tg_tensor *x, tg_tensor *w, tg_tensor *b,
                     const tg_conv2d_opts *opts)
{
    tg_conv2d_opts o = {{1, 1}, {0, 0}, {1, 1}, 1};
    if (opts)
        o = *opts;
    conv_params p = {.stride = {o.stride[0], o.stride[1]},
                     .padding = {o.padding[0], o.padding[1]},
                     .dilation = {o.dilation[0], o.dilation[1]}, .groups = o.groups};
    return conv_run(&tg_op_conv2d, x, w, b, &p, NULL, NULL);
}

/* ---- conv2d_grad_input(dy, w): the input gradient, of shape input_shape --------- */
/* shared inference of the two gradient ops: input 1 is w (grad_input) or
 * x (grad_weight); the attribute gives the other shape */
static tg_status grad_infer(tg_op_ctx *c, bool for_input)
{
    const char *op = c->op->name;
    const tg_tensor *dy = c->in[0], *other = c->in[1];
    const conv_params *p = c->attr;
    int64_t shape[4];
    memcpy(shape, for_input ? p->input_shape : p->weight_shape, sizeof shape);
    /* an unknown batch (graph mode: -1 when the rule ran) is dy's */
    if (for_input && shape[0] == -1 && dy->ndim == 4)
        shape[0] = dy->shape[0];
    tg__conv_geom g;
    if (require_4d(op, dy, "output gradient", "[N, O, OH, OW]") != TG_OK ||
        require_4d(op, other, for_input ? "weight" : "input",
                   for_input ? "[O, C/groups, kh, kw]" : "[N, C, H, W]") != TG_OK ||
        tg_require_float(op, dy, 0) != TG_OK || tg_require_float(op, other, 1) != TG_OK ||
        make_geom(op, p, for_input ? shape : other->shape,
                  for_input ? other->shape : shape, &g) != TG_OK ||
        check_dy(op, dy, &g) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, tg_promote_types(dy->dtype, other->dtype), 4, shape);
}

static tg_status grad_input_infer(tg_op_ctx *c) { return grad_infer(c, true); }
static tg_status grad_weight_infer(tg_op_ctx *c) { return grad_infer(c, false); }

static tg_status grad_input_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg__conv_geom g;
    make_geom(c->op->name, c->attr, out->shape, c->in[1]->shape, &g);
    tg_tensor *dy = tg__nn_contig(c->in[0], out->dtype), *w = tg__nn_contig(c->in[1], out->dtype);
    tg_status s = TG_ERR_NOMEM;
    if (dy && w)
        s = tg__conv2d_grad_input(out->dtype, &g, tg__base(dy), tg__base(w),
                                  tg__base(out));
    tg_release(dy);
    tg_release(w);
    return s;
}

/* d<gx, J_x^T dy> : w.r.t. dy it is conv2d(gx, w); w.r.t. w it is the
 * weight gradient of dy against gx */
static tg_status grad_input_grad(tg_grad_ctx *g)
{
    const conv_params *p = g->attr;
    tg_tensor *dy = g->in[0], *w = g->in[1], *gx = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = conv_run(&tg_op_conv2d, gx, w, NULL, p, NULL, NULL);
    if (g->needs_grad[1])
        g->dx[1] = conv_run(&tg_op_conv2d_grad_weight, dy, gx, NULL, p,
                            "weight_shape", g->in_meta[1].shape);
    return TG_OK;
}

static const tg_arg_spec grad_input_in[] = {{"dy", TG_DTS_FLOAT}, {"w", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_conv2d_grad_input = {
    .name = "conv2d_grad_input", .n_in = 2, .n_out = 1, .inputs = grad_input_in,
    .outputs = float_out, .attrs = {grad_input_specs, sizeof(conv_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = grad_input_infer,
    .kernel = {[TG_CPU] = grad_input_kernel}, .grad = grad_input_grad,
    .jvp = tg__jvp_multilinear};

/* ---- conv2d_grad_weight(dy, x): the weight gradient, of shape weight_shape ------ */
static tg_status grad_weight_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg__conv_geom g;
    make_geom(c->op->name, c->attr, c->in[1]->shape, out->shape, &g);
    tg_tensor *dy = tg__nn_contig(c->in[0], out->dtype), *x = tg__nn_contig(c->in[1], out->dtype);
    tg_status s = TG_ERR_NOMEM;
    if (dy && x)
        s = tg__conv2d_grad_weight(out->dtype, &g, tg__base(dy), tg__base(x),
                                   tg__base(out));
    tg_release(dy);
    tg_release(x);
    return s;
}

/* d<gw, J_w^T dy> : w.r.t. dy it is conv2d(x, gw); w.r.t. x it is the
 * input gradient of dy through gw */
static tg_status grad_weight_grad(tg_grad_ctx *g)
{
    const conv_params *p = g->attr;
    tg_tensor *dy = g->in[0], *x = g->in[1], *gw = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = conv_run(&tg_op_conv2d, x, gw, NULL, p, NULL, NULL);
    if (g->needs_grad[1])
        g->dx[1] = conv_run(&tg_op_conv2d_grad_input, dy, gw, NULL, p, "input_shape",
                            g->in_meta[1].shape);
    return TG_OK;
}

static const tg_arg_spec grad_weight_in[] = {{"dy", TG_DTS_FLOAT}, {"x", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_conv2d_grad_weight = {
    .name = "conv2d_grad_weight", .n_in = 2, .n_out = 1, .inputs = grad_weight_in,
    .outputs = float_out, .attrs = {grad_weight_specs, sizeof(conv_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = grad_weight_infer,
    .kernel = {[TG_CPU] = grad_weight_kernel}, .grad = grad_weight_grad,
    .jvp = tg__jvp_multilinear};

/* ---- conv_transpose2d(x, w[, b]): the input gradient of a conv2d as an op -------- */
/* y [N, Cout, Hout, Wout] is conv2d_grad_input of "output gradient" x
 * [N, Cin, H, W] through the conv2d weight w [Cin, Cout/groups, kh, kw],
 * so the kernel is conv2d's input-gradient kernel; Hout is PyTorch's
 * (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1.
 * output_padding < stride keeps the conv2d geometry of Hout exactly H
 * (PyTorch also allows output_padding < dilation; then a conv2d over the
 * output would see more than H rows, which this op does not model). */
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
    *out = a - 2 * pad;
    if (*out < 1)
        return tg__error(TG_ERR_SHAPE, "%s: padding %lld leaves no output (input size "
                         "%lld, kernel %lld, stride %lld, dilation %lld)", op,
                         (long long)pad, (long long)in, (long long)k, (long long)s,
                         (long long)d);
    return TG_OK;
}

/* the output shape and the conv2d geometry of the transposed product */
static tg_status transpose_geom(const char *op, const conv_params *p, const int64_t *xs,
                                const int64_t *ws, int64_t *ys, tg__conv_geom *g)
{
    char sx[160], sw[160];
    if (ws[0] != xs[1])
        return tg__error(TG_ERR_SHAPE, "%s: input %s has %lld channels but weight %s "
                         "expects %lld (weight is [in, out/groups, kh, kw])", op,
                         tg_shape_str(4, xs, sx, sizeof sx), (long long)xs[1],
                         tg_shape_str(4, ws, sw, sizeof sw), (long long)ws[0]);
    if (xs[2] < 1 || xs[3] < 1 || ws[2] < 1 || ws[3] < 1)
        return tg__error(TG_ERR_SHAPE, "%s: empty input plane %s or kernel %s", op,
                         tg_shape_str(4, xs, sx, sizeof sx), tg_shape_str(4, ws, sw, sizeof sw));
    ys[0] = xs[0];
    if (!tg__size_mul(op, "the output channels", ws[1], p->groups, &ys[1]))
        return tg_last_status();
    for (int i = 0; i < 2; i++)
        if (transpose_out_size(op, p, i, xs[2 + i], ws[2 + i], &ys[2 + i]) != TG_OK)
            return tg_last_status();
    if (make_geom(op, p, ys, ws, g) != TG_OK)
        return tg_last_status();
    if (g->oh != xs[2] || g->ow != xs[3]) /* cannot happen with output_padding < stride */
        return tg__error(TG_ERR_INTERNAL, "%s: inconsistent geometry", op);
    return TG_OK;
}

static tg_status transpose_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    if (c->n_in != 2 && c->n_in != 3)
        return tg__error(TG_ERR_ARG, "%s: expected 2 or 3 inputs (x, w[, b]), got %d",
                         op, c->n_in);
    const tg_tensor *x = c->in[0], *w = c->in[1];
    tg_dtype dt;
    int64_t ys[4];
    tg__conv_geom g;
    if (require_4d(op, x, "input", "[N, C, H, W]") != TG_OK ||
        require_4d(op, w, "weight", "[C, O/groups, kh, kw]") != TG_OK ||
        tg__conv_float_inputs(c, &dt) != TG_OK ||
        transpose_geom(op, c->attr, x->shape, w->shape, ys, &g) != TG_OK ||
        tg__conv_check_bias(c, ys[1]) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, dt, 4, ys);
}

#define ADD_BIAS(T)                                                                   \
    do {                                                                              \
        T *yv = (T *)tg__base(out);                                                   \
        const T *bv = (const T *)tg__base(b);                                         \
        for (int64_t i = 0; i < nc; i++)                                              \
            for (int64_t j = 0; j < plane; j++)                                       \
                yv[i * plane + j] += bv[i % ch];                                      \
    } while (0)

static tg_status transpose_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    int64_t ys[4];
    tg__conv_geom g;
    transpose_geom(c->op->name, c->attr, c->in[0]->shape, c->in[1]->shape, ys, &g);
    tg_tensor *x = tg__nn_contig(c->in[0], out->dtype), *w = tg__nn_contig(c->in[1], out->dtype);
    tg_tensor *b = c->n_in == 3 ? tg__nn_contig(c->in[2], out->dtype) : NULL;
    tg_status s = TG_ERR_NOMEM;
    if (x && w && (c->n_in == 2 || b))
        s = tg__conv2d_grad_input(out->dtype, &g, tg__base(x), tg__base(w), tg__base(out));
    if (s == TG_OK && b) { /* the bias per output channel */
        int64_t ch = ys[1], nc = ys[0] * ys[1], plane = ys[2] * ys[3];
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

/* the rules of conv2d_grad_input with x as the output gradient: w.r.t. x
 * a conv2d of dy, w.r.t. w conv2d's weight gradient of x against dy */
static tg_status transpose_grad(tg_grad_ctx *g)
{
    const conv_params *p = g->attr;
    tg_tensor *x = g->in[0], *w = g->in[1], *dy = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = conv_run(&tg_op_conv2d, dy, w, NULL, p, NULL, NULL);
    if (g->needs_grad[1])
        g->dx[1] = conv_run(&tg_op_conv2d_grad_weight, x, dy, NULL, p, "weight_shape",
                            g->in_meta[1].shape);
    if (g->n_in == 3 && g->needs_grad[2])
        g->dx[2] = tg_sum(dy, 3, (const int[]){0, 2, 3}, false);
    return TG_OK;
}

const tg_op_def tg_op_conv_transpose2d = {
    .name = "conv_transpose2d", .n_in = -1, .n_out = 1, .inputs = conv2d_in,
    .outputs = float_out, .attrs = {transpose_specs, sizeof(conv_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = transpose_infer,
    .kernel = {[TG_CPU] = transpose_kernel}, .grad = transpose_grad, .jvp = conv2d_jvp,
    .onnx = {"ConvTranspose", 11}};

tg_tensor *tg_conv_transpose2d(tg_tensor *x, tg_tensor *w, tg_tensor *b,
                               const tg_conv_transpose2d_opts *opts)
{
    tg_conv_transpose2d_opts o = {{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1};
    if (opts)
        o = *opts;
    int64_t v[8] = {o.stride[0], o.stride[1], o.padding[0], o.padding[1],
                    o.output_padding[0], o.output_padding[1], o.dilation[0], o.dilation[1]};
    tg_attr attrs[5] = {TG_AINTS("stride", v, 2), TG_AINTS("padding", v + 2, 2),
                        TG_AINTS("output_padding", v + 4, 2),
                        TG_AINTS("dilation", v + 6, 2), TG_AI("groups", o.groups)};
    tg_tensor *in[3] = {x, w, b};
    return tg_op_call(&tg_op_conv_transpose2d, b ? 3 : 2, in, attrs, 5);
}

const tg_op_def *const tg_ops_conv[] = {&tg_op_conv2d, &tg_op_conv2d_grad_input,
                                        &tg_op_conv2d_grad_weight,
                                        &tg_op_conv_transpose2d, NULL};
