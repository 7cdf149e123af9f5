/* conv2d_pw_dw: y = act2(dwconv(act1(conv1x1(x, w1) + b1), w2) + b2), a
 * MobileNet block's expansion and depthwise layers as one op, made only
 * by the level-2 pass fuse_pw_dw for inference (docs/PASSES.md): the
 * expanded activation stays in cache (kernels/cpu/conv_pwdw.c). The bits
 * of the four ops apart. Not differentiated: passes run after gradients,
 * and the pass declines when anything else reads the activation. */
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_pwdw.h"
#include "ops/nn_util.h"

#include <stdlib.h>

/* the depthwise layer's geometry and the two activations (act: 0 none, 1
 * relu, 2 clamp to [lo, hi], 3 hardswish: tg__conv_act_kind) */
typedef struct pwdw_params {
    int64_t stride[2], padding[2], dilation[2];
    int64_t act1, act2;
    double lo1, hi1, lo2, hi2;
} pwdw_params;

static const tg_attr_spec pwdw_specs[] = {
    TG_SPEC_INT_ARRAY(pwdw_params, stride, ((const int64_t[]){1, 1}), TG_MIN(1)),
    TG_SPEC_INT_ARRAY(pwdw_params, padding, ((const int64_t[]){0, 0}), TG_MIN(0)),
    TG_SPEC_INT_ARRAY(pwdw_params, dilation, ((const int64_t[]){1, 1}), TG_MIN(1)),
    TG_SPEC_INT(pwdw_params, act1, 0, TG_RANGE(0, 3)),
    TG_SPEC_INT(pwdw_params, act2, 0, TG_RANGE(0, 3)),
    TG_SPEC_FLOAT(pwdw_params, lo1, 0.0),
    TG_SPEC_FLOAT(pwdw_params, hi1, 0.0),
    TG_SPEC_FLOAT(pwdw_params, lo2, 0.0),
    TG_SPEC_FLOAT(pwdw_params, hi2, 0.0),
    {0}};

/* the two layers' geometries from x [N, C, H, W], w1 [E, C, 1, 1] and w2
 * [E, 1, kh, kw]; false when the depthwise output would be empty */
static bool geoms(const pwdw_params *p, const int64_t *xs, const int64_t *w1s,
                  const int64_t *w2s, tg__conv_geom *pw, tg__conv_geom *dw)
{
    int64_t n = xs[0], h = xs[2], w = xs[3], e = w1s[0];
    *pw = (tg__conv_geom){.n = n, .c = xs[1], .h = h, .w = w, .o = e, .kh = 1, .kw = 1,
                          .oh = h, .ow = w, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .groups = 1};
    int64_t span_h = (w2s[2] - 1) * p->dilation[0] + 1, span_w = (w2s[3] - 1) * p->dilation[1] + 1;
    int64_t ph = h + 2 * p->padding[0] - span_h, pww = w + 2 * p->padding[1] - span_w;
    *dw = (tg__conv_geom){.n = n, .c = e, .h = h, .w = w, .o = e, .kh = w2s[2], .kw = w2s[3],
                          .oh = ph < 0 ? 0 : ph / p->stride[0] + 1,
                          .ow = pww < 0 ? 0 : pww / p->stride[1] + 1, .sh = p->stride[0],
                          .sw = p->stride[1], .ph = p->padding[0], .pw = p->padding[1],
                          .dh = p->dilation[0], .dw = p->dilation[1], .groups = e};
    return ph >= 0 && pww >= 0;
}

static tg_status shape_error(const char *op, const char *what, const tg_tensor *t,
                             const char *want)
{
    char s[160];
    return tg__error(TG_ERR_SHAPE, "%s: %s has shape %s, expected %s", op, what,
                     tg_shape_str(t->ndim, t->shape, s, sizeof s), want);
}

static tg_status pwdw_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    if (c->n_in != 5)
        return tg__error(TG_ERR_ARG, "%s: expected 5 inputs (x, w1, b1, w2, b2), got %d", op,
                         c->n_in);
    const tg_tensor *x = c->in[0], *w1 = c->in[1], *b1 = c->in[2], *w2 = c->in[3],
                    *b2 = c->in[4];
    for (int i = 0; i < 5; i++) {
        if (tg_require_float(op, c->in[i], i) != TG_OK)
            return tg_last_status();
        if (c->in[i]->dtype != x->dtype)
            return tg__error(TG_ERR_DTYPE, "%s: input %d is %s, x is %s (one dtype for all)",
                             op, i, tg_dtype_name(c->in[i]->dtype), tg_dtype_name(x->dtype));
    }
    if (x->ndim != 4)
        return shape_error(op, "x", x, "[N, C, H, W]");
    if (w1->ndim != 4 || w1->shape[1] != x->shape[1] || w1->shape[2] != 1 || w1->shape[3] != 1)
        return shape_error(op, "w1", w1, "[E, C, 1, 1] (C: the input's channels)");
    int64_t e = w1->shape[0];
    if (b1->ndim != 1 || b1->shape[0] != e)
        return shape_error(op, "b1", b1, "[E] (w1's output channels)");
    if (w2->ndim != 4 || w2->shape[0] != e || w2->shape[1] != 1 || w2->shape[2] < 1 ||
        w2->shape[3] < 1)
        return shape_error(op, "w2", w2, "[E, 1, kh, kw] (one filter per channel)");
    if (b2->ndim != 1 || b2->shape[0] != e)
        return shape_error(op, "b2", b2, "[E] (w1's output channels)");
    /* the padded input and the dilated filter within the size bound, so that
     * geoms' sums cannot overflow (the node's attributes may come from a
     * graph's wire form) */
    const pwdw_params *p = c->attr;
    int64_t span;
    for (int i = 0; i < 2; i++)
        if (!tg__size_window_span(op, x->shape[2 + i], p->padding[i], p->padding[i],
                                  w2->shape[2 + i], p->dilation[i], &span))
            return tg_last_status();
    tg__conv_geom pw, dw;
    if (!geoms(c->attr, x->shape, w1->shape, w2->shape, &pw, &dw))
        return tg__error(TG_ERR_SHAPE, "%s: the %lldx%lld depthwise filter (dilated, with "
                         "the padding) does not fit the %lldx%lld input", op,
                         (long long)w2->shape[2], (long long)w2->shape[3],
                         (long long)x->shape[2], (long long)x->shape[3]);
    int64_t shape[4] = {x->shape[0], e, dw.oh, dw.ow};
    return tg_infer_set(c, 0, x->dtype, 4, shape);
}

/* the two layers one after the other, through a buffer for the activation:
 * wherever pwdw_kernel does not take the fused kernel (weights not frozen,
 * a plane or level where it does not pay, a forced convolution path, a
 * geometry it does not take); the pass makes the node only where it does */
static tg_status two_steps(tg_dtype dt, const tg__conv_geom *pw, const tg__conv_geom *dw,
                           void *const *in, const tg__conv_act *a1, const tg__conv_act *a2,
                           void *y)
{
    void *mid = malloc((size_t)(pw->n * pw->o * pw->h * pw->w) * tg_dtype_size(dt) + 1);
    if (!mid)
        return TG_ERR_NOMEM;
    tg_status s = tg__conv2d_forward_act(dt, pw, in[0], in[1], in[2], a1, mid);
    if (s == TG_OK)
        s = tg__conv2d_forward_act(dt, dw, mid, in[3], in[4], a2, y);
    free(mid);
    return s;
}

static tg_status pwdw_kernel(tg_op_ctx *c)
{
    const pwdw_params *p = c->attr;
    tg_tensor *out = c->out[0];
    tg_dtype dt = out->dtype;
    tg__conv_geom pw, dw;
    geoms(p, c->in[0]->shape, c->in[1]->shape, c->in[3]->shape, &pw, &dw);
    tg__conv_geom_canon(&dw); /* a huge stride of a one-position output (conv.h) */
    tg__conv_act a1 = {(tg__conv_act_kind)p->act1, p->lo1, p->hi1},
                 a2 = {(tg__conv_act_kind)p->act2, p->lo2, p->hi2};
    tg_tensor *t[5];
    void *in[5];
    bool ok = true;
    for (int i = 0; i < 5; i++) {
        t[i] = tg__nn_contig(c->in[i], dt);
        ok = ok && t[i];
        in[i] = t[i] ? tg__base(t[i]) : NULL;
    }
    /* the pointwise layer's weights frozen (an imported model's): the
     * unfused layer then takes the built-in GEMM, whose bits the fused
     * kernel has; other weights may take OpenBLAS where it was measured
     * faster, so they run as two layers, whose bits level 0 has; so do
     * the planes where the fused kernel is slower */
    tg__conv_weight_tag(c->in[1], t[1], &pw.w_serial, &pw.w_version);
    tg_status s = TG_ERR_NOMEM;
    if (ok && pw.w_serial && tg__conv_get_mode() == TG_CONV_AUTO &&
        tg__conv_pwdw_fits(dt, &pw, &dw) && tg__conv_pwdw_pays(pw.h * pw.w))
        s = tg__conv_pwdw_forward(dt, &pw, &dw, in[0], in[1], in[2], &a1, in[3], in[4], &a2,
                                  tg__base(out));
    else if (ok)
        s = two_steps(dt, &pw, &dw, in, &a1, &a2, tg__base(out));
    for (int i = 0; i < 5; i++)
        tg_release(t[i]);
    return s == TG_OK || s != TG_ERR_NOMEM ? s : tg__error(s, "%s: out of memory", c->op->name);
}

static const tg_arg_spec pwdw_in[] = {{"x", TG_DTS_FLOAT}, {"w1", TG_DTS_FLOAT},
                                      {"b1", TG_DTS_FLOAT}, {"w2", TG_DTS_FLOAT},
                                      {"b2", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec pwdw_out[] = {{"y", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_conv2d_pw_dw = {
    .name = "conv2d_pw_dw", .n_in = 5, .n_out = 1, .inputs = pwdw_in, .outputs = pwdw_out,
    .attrs = {pwdw_specs, sizeof(pwdw_params)}, .flags = TG_OP_PURE, .nondiff = true,
    .infer = pwdw_infer, .kernel = {[TG_CPU] = pwdw_kernel}};
