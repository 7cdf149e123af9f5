/* 3-D convolution (NCDHW) with stride, padding, dilation, groups and an
 * optional bias, its two gradient ops (each differentiable again through
 * the others), and the transposed convolution, which is the input
 * gradient as an op of its own: the structure of conv.c one dimension up.
 * The kernels (vol2col and GEMM) live in kernels/cpu/conv3d.c. */
#include "autodiff/jvp.h"
#include "kernels/cpu/conv3d.h"
#include "ops/conv_args.h"
#include "ops/nn_util.h"

#include <string.h>

/* ---- parameters and geometry ------------------------------------------------ */
typedef struct conv3_params {
    int64_t stride[3], padding[3], dilation[3], groups;
    int64_t output_padding[3]; /* conv_transpose3d */
    int64_t input_shape[5];    /* conv3d_grad_input */
    int64_t weight_shape[5];   /* conv3d_grad_weight */
} conv3_params;
#define CONV3_SPECS                                                                          \
    TG_SPEC_INT_ARRAY(conv3_params, stride, ((const int64_t[]){1, 1, 1}), TG_MIN(1)),        \
    TG_SPEC_INT_ARRAY(conv3_params, padding, ((const int64_t[]){0, 0, 0}), TG_MIN(0)),       \
    TG_SPEC_INT_ARRAY(conv3_params, dilation, ((const int64_t[]){1, 1, 1}), TG_MIN(1)),      \
    TG_SPEC_INT(conv3_params, groups, 1, TG_MIN(1))
static const tg_attr_spec conv3d_specs[] = {CONV3_SPECS, {0}};
static const tg_attr_spec grad_input_specs[] = {
    CONV3_SPECS, TG_SPEC_INT_ARRAY(conv3_params, input_shape, NULL, TG_REQUIRED), {0}};
static const tg_attr_spec grad_weight_specs[] = {
    CONV3_SPECS, TG_SPEC_INT_ARRAY(conv3_params, weight_shape, NULL, TG_REQUIRED), {0}};
static const tg_attr_spec transpose_specs[] = {
    CONV3_SPECS,
    TG_SPEC_INT_ARRAY(conv3_params, output_padding, ((const int64_t[]){0, 0, 0}), TG_MIN(0)),
    {0}};
static const tg_arg_spec float_out[] = {{"y", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec conv_in[] = {
    {"x", TG_DTS_FLOAT}, {"w", TG_DTS_FLOAT}, {"b", TG_DTS_FLOAT | TG_ARG_OPTIONAL}, {0}};

/* the geometry of input shape xs with weight shape ws (both 5-D); the
 * sizes the kernels compute with (a block of the patch matrix, the
 * output) must be countable */
static tg_status make_geom(const char *op, const conv3_params *p, const int64_t *xs,
                           const int64_t *ws, tg__conv3_geom *g)
{
    char sx[160], sw[160];
    tg_shape_str(5, xs, sx, sizeof sx);
    tg_shape_str(5, ws, sw, sizeof sw);
    int64_t G = p->groups;
    if (xs[1] % G != 0 || ws[0] % G != 0)
        return tg__error(TG_ERR_SHAPE, "%s: groups = %lld must divide the input channels "
                         "(input %s) and the output channels (weight %s)", op, (long long)G,
                         sx, sw);
    if (tg__conv_check_channels(op, xs, ws, G, sx, sw) != TG_OK)
        return tg_last_status();
    *g = (tg__conv3_geom){.n = xs[0], .c = xs[1], .d = xs[2], .h = xs[3], .w = xs[4],
                          .o = ws[0], .kd = ws[2], .kh = ws[3], .kw = ws[4], .groups = G};
    int64_t out[3];
    for (int i = 0; i < 3; i++) {
        g->s[i] = p->stride[i];
        g->p[i] = p->padding[i];
        g->dl[i] = p->dilation[i];
        int64_t span = -1;
        if (ws[2 + i] >= 1 && !tg__size_window_span(op, xs[2 + i], g->p[i], g->p[i],
                                                     ws[2 + i], g->dl[i], &span))
            return tg_last_status();
        if (span < 0)
            return tg__error(TG_ERR_SHAPE, "%s: kernel %s (dilation %lld) is larger than "
                             "the padded input in spatial dim %d (input %s, padding %lld)",
                             op, sw, (long long)g->dl[i], i, sx, (long long)g->p[i]);
        out[i] = span / g->s[i] + 1;
    }
    g->od = out[0];
    g->oh = out[1];
    g->ow = out[2];
    int64_t rows, block;
    bool ok = tg__size_mul(op, "the vol2col buffer", g->c / G, g->kd * g->kh, &rows) &&
              tg__size_mul(op, "the vol2col buffer", rows, g->kw, &rows) &&
              tg__size_mul(op, "the vol2col buffer", rows, g->oh, &block) &&
              tg__size_mul(op, "the vol2col buffer", block, g->ow, &block) &&
              tg__size_numel(op, 5, (int64_t[]){g->n, g->o, g->od, g->oh, g->ow}, &rows);
    return ok ? TG_OK : tg_last_status();
}

static tg_status require_5d(const char *op, const tg_tensor *t, const char *what,
                            const char *layout)
{
    return tg__conv_require_rank(op, t, 5, what, layout);
}

/* inputs 0..n-1 float; the promoted dtype in *dt; the bias [o] if given */
static tg_status check_inputs(tg_op_ctx *c, int64_t channels, tg_dtype *dt)
{
    if (tg__conv_float_inputs(c, dt) != TG_OK)
        return tg_last_status();
    return tg__conv_check_bias(c, channels);
}

extern const tg_op_def tg_op_conv3d, tg_op_conv3d_grad_input, tg_op_conv3d_grad_weight,
    tg_op_conv_transpose3d;

/* runs a conv op with parameters p and, for the gradient ops, the shape
 * attribute (name, 5 dims) they produce */
static tg_tensor *conv_run(const tg_op_def *op, tg_tensor *a, tg_tensor *b, tg_tensor *bias,
                           const conv3_params *p, const char *shape_name, const int64_t *shape)
{
    return tg__conv_call(op, 3, a, b, bias, p->stride, p->padding, p->dilation, p->groups,
                         shape_name, shape);
}

/* bilinear in x and w, plus the bias */
static tg_status conv_jvp(tg_jvp_ctx *c)
{
    tg_status s;
    tg_tensor *acc = tg__jvp_multilinear_terms(c, 2, &s);
    if (s != TG_OK)
        return s;
    if (c->n_in == 3 && c->dx[2])
        TG_JVP_TERM(c, acc, tg_reshape(c->dx[2], 5,
                                       (int64_t[]){1, c->in_meta[2].shape[0], 1, 1, 1}));
    c->dy[0] = acc;
    return TG_OK;
}

/* ---- conv3d ---------------------------------------------------------------------- */
static tg_status conv3d_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    tg__conv3_geom g;
    tg_dtype dt;
    if (require_5d(op, c->in[0], "input", "[N, C, D, H, W]") != TG_OK ||
        require_5d(op, c->in[1], "weight", "[O, C/groups, kd, kh, kw]") != TG_OK ||
        check_inputs(c, c->in[1]->shape[0], &dt) != TG_OK ||
        make_geom(op, c->attr, c->in[0]->shape, c->in[1]->shape, &g) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, dt, 5, (int64_t[]){g.n, g.o, g.od, g.oh, g.ow});
}

static tg_status conv3d_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg__conv3_geom g;
    make_geom(c->op->name, c->attr, c->in[0]->shape, c->in[1]->shape, &g);
    tg_tensor *x = tg__nn_contig(c->in[0], out->dtype), *w = tg__nn_contig(c->in[1], out->dtype);
    tg_tensor *b = c->n_in == 3 ? tg__nn_contig(c->in[2], out->dtype) : NULL;
    tg_status s = TG_ERR_NOMEM;
    if (x && w && (c->n_in == 2 || b))
        s = tg__conv3d_forward(out->dtype, &g, tg__base(x), tg__base(w),
                               b ? tg__base(b) : NULL, tg__base(out));
    tg_release(x);
    tg_release(w);
    tg_release(b);
    return s;
}

static tg_status conv3d_grad(tg_grad_ctx *g)
{
    const conv3_params *p = g->attr;
    tg_tensor *x = g->in[0], *w = g->in[1], *dy = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = conv_run(&tg_op_conv3d_grad_input, dy, w, NULL, p, "input_shape",
                            g->in_meta[0].shape);
    if (g->needs_grad[1])
        g->dx[1] = conv_run(&tg_op_conv3d_grad_weight, dy, x, NULL, p, "weight_shape",
                            g->in_meta[1].shape);
    if (g->n_in == 3 && g->needs_grad[2])
        g->dx[2] = tg_sum(dy, 4, (const int[]){0, 2, 3, 4}, false);
    return TG_OK;
}

const tg_op_def tg_op_conv3d = {
    .name = "conv3d", .n_in = -1, .n_out = 1, .inputs = conv_in, .outputs = float_out,
    .attrs = {conv3d_specs, sizeof(conv3_params)}, .flags = TG_OP_PURE, .save_inputs = 0x3,
    .infer = conv3d_infer, .kernel = {[TG_CPU] = conv3d_kernel}, .grad = conv3d_grad,
    .jvp = conv_jvp, .onnx = {"Conv", 11}};

/* ---- the gradient ops: input 1 is w (grad_input) or x (grad_weight) ----------- */
static tg_status grad_infer(tg_op_ctx *c, bool for_input)
{
    const char *op = c->op->name;
    const tg_tensor *dy = c->in[0], *other = c->in[1];
    const conv3_params *p = c->attr;
    const int64_t *shape = for_input ? p->input_shape : p->weight_shape;
    tg__conv3_geom g;
    if (require_5d(op, dy, "output gradient", "[N, O, OD, OH, OW]") != TG_OK ||
        require_5d(op, other, for_input ? "weight" : "input",
                   for_input ? "[O, C/groups, kd, kh, kw]" : "[N, C, D, H, W]") != TG_OK ||
        tg_require_float(op, dy, 0) != TG_OK || tg_require_float(op, other, 1) != TG_OK ||
        make_geom(op, p, for_input ? shape : other->shape, for_input ? other->shape : shape,
                  &g) != TG_OK ||
        tg__conv_check_dy(op, dy, 5, (int64_t[]){g.n, g.o, g.od, g.oh, g.ow}) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, tg_promote_types(dy->dtype, other->dtype), 5, shape);
}

static tg_status grad_input_infer(tg_op_ctx *c) { return grad_infer(c, true); }
static tg_status grad_weight_infer(tg_op_ctx *c) { return grad_infer(c, false); }

static tg_status grad_input_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg__conv3_geom g;
    make_geom(c->op->name, c->attr, out->shape, c->in[1]->shape, &g);
    tg_tensor *dy = tg__nn_contig(c->in[0], out->dtype);
    tg_tensor *w = tg__nn_contig(c->in[1], out->dtype);
    tg_status s = TG_ERR_NOMEM;
    if (dy && w)
        s = tg__conv3d_grad_input(out->dtype, &g, tg__base(dy), tg__base(w), tg__base(out));
    tg_release(dy);
    tg_release(w);
    return s;
}

/* w.r.t. dy: conv3d(gx, w); w.r.t. w: the weight gradient of dy against gx */
static tg_status grad_input_grad(tg_grad_ctx *g)
{
    const conv3_params *p = g->attr;
    tg_tensor *dy = g->in[0], *w = g->in[1], *gx = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = conv_run(&tg_op_conv3d, gx, w, NULL, p, NULL, NULL);
    if (g->needs_grad[1])
        g->dx[1] = conv_run(&tg_op_conv3d_grad_weight, dy, gx, NULL, p, "weight_shape",
                            g->in_meta[1].shape);
    return TG_OK;
}

static const tg_arg_spec grad_input_in[] = {{"dy", TG_DTS_FLOAT}, {"w", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_conv3d_grad_input = {
    .name = "conv3d_grad_input", .n_in = 2, .n_out = 1, .inputs = grad_input_in,
    .outputs = float_out, .attrs = {grad_input_specs, sizeof(conv3_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = grad_input_infer,
    .kernel = {[TG_CPU] = grad_input_kernel}, .grad = grad_input_grad,
    .jvp = tg__jvp_multilinear};

static tg_status grad_weight_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg__conv3_geom g;
    make_geom(c->op->name, c->attr, c->in[1]->shape, out->shape, &g);
    tg_tensor *dy = tg__nn_contig(c->in[0], out->dtype);
    tg_tensor *x = tg__nn_contig(c->in[1], out->dtype);
    tg_status s = TG_ERR_NOMEM;
    if (dy && x)
        s = tg__conv3d_grad_weight(out->dtype, &g, tg__base(dy), tg__base(x), tg__base(out));
    tg_release(dy);
    tg_release(x);
    return s;
}

/* w.r.t. dy: conv3d(x, gw); w.r.t. x: the input gradient of dy through gw */
static tg_status grad_weight_grad(tg_grad_ctx *g)
{
    const conv3_params *p = g->attr;
    tg_tensor *dy = g->in[0], *x = g->in[1], *gw = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = conv_run(&tg_op_conv3d, x, gw, NULL, p, NULL, NULL);
    if (g->needs_grad[1])
        g->dx[1] = conv_run(&tg_op_conv3d_grad_input, dy, gw, NULL, p, "input_shape",
                            g->in_meta[1].shape);
    return TG_OK;
}

static const tg_arg_spec grad_weight_in[] = {{"dy", TG_DTS_FLOAT}, {"x", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_conv3d_grad_weight = {
    .name = "conv3d_grad_weight", .n_in = 2, .n_out = 1, .inputs = grad_weight_in,
    .outputs = float_out, .attrs = {grad_weight_specs, sizeof(conv3_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = grad_weight_infer,
    .kernel = {[TG_CPU] = grad_weight_kernel}, .grad = grad_weight_grad,
    .jvp = tg__jvp_multilinear};

/* ---- conv_transpose3d(x, w[, b]): conv3d's input gradient as an op -------------- */
/* the output shape (PyTorch's) and the conv3d geometry of the product;
 * output_padding < stride keeps that geometry's output exactly x's size */
static tg_status transpose_geom(const char *op, const conv3_params *p, const int64_t *xs,
                                const int64_t *ws, int64_t *ys, tg__conv3_geom *g)
{
    char sx[160], sw[160];
    tg_shape_str(5, xs, sx, sizeof sx);
    tg_shape_str(5, ws, sw, sizeof sw);
    if (ws[0] != xs[1])
        return tg__error(TG_ERR_SHAPE, "%s: input %s has %lld channels but weight %s "
                         "expects %lld (weight is [in, out/groups, kd, kh, kw])", op, sx,
                         (long long)xs[1], sw, (long long)ws[0]);
    ys[0] = xs[0];
    if (!tg__size_mul(op, "the output channels", ws[1], p->groups, &ys[1]))
        return tg_last_status();
    for (int i = 0; i < 3; i++) {
        int64_t s = p->stride[i], d = p->dilation[i], opad = p->output_padding[i], a, b;
        if (xs[2 + i] < 1 || ws[2 + i] < 1)
            return tg__error(TG_ERR_SHAPE, "%s: empty input %s or kernel %s", op, sx, sw);
        if (opad >= s && opad >= d)
            return tg__error(TG_ERR_ARG, "%s: output_padding %lld must be smaller than "
                             "either stride %lld or dilation %lld", op, (long long)opad,
                             (long long)s, (long long)d);
        if (opad >= s)
            return tg__error(TG_ERR_UNSUPPORTED, "%s: output_padding %lld not smaller than "
                             "stride %lld is not supported", op, (long long)opad,
                             (long long)s);
        if (!tg__size_mul(op, "the output size", xs[2 + i] - 1, s, &a) ||
            !tg__size_mul(op, "the output size", ws[2 + i] - 1, d, &b) ||
            !tg__size_add(op, "the output size", a, b, &a) ||
            !tg__size_add(op, "the output size", a, opad + 1, &a))
            return tg_last_status();
        ys[2 + i] = a - 2 * p->padding[i];
        if (ys[2 + i] < 1)
            return tg__error(TG_ERR_SHAPE, "%s: padding %lld leaves no output in spatial "
                             "dim %d (input %s, weight %s)", op, (long long)p->padding[i], i,
                             sx, sw);
    }
    if (make_geom(op, p, ys, ws, g) != TG_OK)
        return tg_last_status();
    if (g->od != xs[2] || g->oh != xs[3] || g->ow != xs[4])
        return tg__error(TG_ERR_INTERNAL, "%s: inconsistent geometry", op);
    return TG_OK;
}

static tg_status transpose_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    int64_t ys[5];
    tg__conv3_geom g;
    tg_dtype dt;
    if (require_5d(op, c->in[0], "input", "[N, C, D, H, W]") != TG_OK ||
        require_5d(op, c->in[1], "weight", "[C, O/groups, kd, kh, kw]") != TG_OK ||
        transpose_geom(op, c->attr, c->in[0]->shape, c->in[1]->shape, ys, &g) != TG_OK ||
        check_inputs(c, ys[1], &dt) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, dt, 5, ys);
}

static tg_status transpose_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    int64_t ys[5];
    tg__conv3_geom g;
    transpose_geom(c->op->name, c->attr, c->in[0]->shape, c->in[1]->shape, ys, &g);
    tg_tensor *x = tg__nn_contig(c->in[0], out->dtype), *w = tg__nn_contig(c->in[1], out->dtype);
    tg_tensor *b = c->n_in == 3 ? tg__nn_contig(c->in[2], out->dtype) : NULL;
    tg_status s = TG_ERR_NOMEM;
    if (x && w && (c->n_in == 2 || b))
        s = tg__conv3d_grad_input(out->dtype, &g, tg__base(x), tg__base(w), tg__base(out));
    int64_t vol = ys[2] * ys[3] * ys[4];
    for (int64_t i = 0; s == TG_OK && b && i < ys[0] * ys[1]; i++) /* the bias */
        for (int64_t j = 0; j < vol; j++) {
            if (out->dtype == TG_FLOAT32)
                ((float *)tg__base(out))[i * vol + j] += ((const float *)tg__base(b))[i % ys[1]];
            else
                ((double *)tg__base(out))[i * vol + j] +=
                    ((const double *)tg__base(b))[i % ys[1]];
        }
    tg_release(x);
    tg_release(w);
    tg_release(b);
    return s;
}

/* conv3d_grad_input's rules with x as the output gradient */
static tg_status transpose_grad(tg_grad_ctx *g)
{
    const conv3_params *p = g->attr;
    tg_tensor *x = g->in[0], *w = g->in[1], *dy = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = conv_run(&tg_op_conv3d, dy, w, NULL, p, NULL, NULL);
    if (g->needs_grad[1])
        g->dx[1] = conv_run(&tg_op_conv3d_grad_weight, x, dy, NULL, p, "weight_shape",
                            g->in_meta[1].shape);
    if (g->n_in == 3 && g->needs_grad[2])
        g->dx[2] = tg_sum(dy, 4, (const int[]){0, 2, 3, 4}, false);
    return TG_OK;
}

const tg_op_def tg_op_conv_transpose3d = {
    .name = "conv_transpose3d", .n_in = -1, .n_out = 1, .inputs = conv_in,
    .outputs = float_out, .attrs = {transpose_specs, sizeof(conv3_params)},
    .flags = TG_OP_PURE, .save_inputs = 0x3, .infer = transpose_infer,
    .kernel = {[TG_CPU] = transpose_kernel}, .grad = transpose_grad, .jvp = conv_jvp,
    .onnx = {"ConvTranspose", 11}};

/* ---- public functions ---------------------------------------------------------- */
tg_tensor *tg_conv3d(tg_tensor *x, tg_tensor *w, tg_tensor *b, const tg_conv3d_opts *opts)
{
    tg_conv3d_opts o = {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1};
    if (opts)
        o = *opts;
    conv3_params p = {.groups = o.groups};
    for (int i = 0; i < 3; i++) {
        p.stride[i] = o.stride[i];
        p.padding[i] = o.padding[i];
        p.dilation[i] = o.dilation[i];
    }
    return conv_run(&tg_op_conv3d, x, w, b, &p, NULL, NULL);
}

tg_tensor *tg_conv_transpose3d(tg_tensor *x, tg_tensor *w, tg_tensor *b,
                               const tg_conv_transpose3d_opts *opts)
{
    tg_conv_transpose3d_opts o = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 1};
    if (opts)
        o = *opts;
    int64_t v[12];
    for (int i = 0; i < 3; i++) {
        v[i] = o.stride[i];
        v[3 + i] = o.padding[i];
        v[6 + i] = o.output_padding[i];
        v[9 + i] = o.dilation[i];
    }
    tg_attr attrs[5] = {TG_AINTS("stride", v, 3), TG_AINTS("padding", v + 3, 3),
                        TG_AINTS("output_padding", v + 6, 3),
                        TG_AINTS("dilation", v + 9, 3), TG_AI("groups", o.groups)};
    tg_tensor *in[3] = {x, w, b};
    return tg_op_call(&tg_op_conv_transpose3d, b ? 3 : 2, in, attrs, 5);
}

const tg_op_def *const tg_ops_conv3d[] = {&tg_op_conv3d, &tg_op_conv3d_grad_input,
                                          &tg_op_conv3d_grad_weight, &tg_op_conv_transpose3d,
                                          NULL};
