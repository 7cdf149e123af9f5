/* The argument checks the convolution ops share (see conv_args.h). */
#include "ops/conv_args.h"

#include "core/size_math.h"

tg_status tg__conv_require_rank(const char *op, const tg_tensor *t, int ndim, const char *what,
                                const char *layout)
{
    char s[160];
    if (t->ndim == ndim)
        return TG_OK;
    return tg__error(TG_ERR_SHAPE, "%s: %s must be %d-D %s, got %s", op, what, ndim, layout,
                     tg_shape_str(t->ndim, t->shape, s, sizeof s));
}

tg_status tg__conv_float_inputs(const tg_op_ctx *c, tg_dtype *dt)
{
    *dt = c->in[0]->dtype;
    for (int i = 0; i < c->n_in; i++) {
        if (tg_require_float(c->op->name, c->in[i], i) != TG_OK)
            return tg_last_status();
        *dt = tg_promote_types(*dt, c->in[i]->dtype);
    }
    return TG_OK;
}

tg_status tg__conv_check_bias(const tg_op_ctx *c, int64_t channels)
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

tg_status tg__conv_check_channels(const char *op, const int64_t *xs, const int64_t *ws,
                                  int64_t groups, const char *sx, const char *sw)
{
    int64_t channels;
    if (!tg__size_mul(op, "the input channels", ws[1], groups, &channels))
        return tg_last_status();
    if (channels != xs[1])
        return tg__error(TG_ERR_SHAPE, "%s: input %s has %lld channels but weight %s "
                         "expects %lld (%lld per group x %lld groups)", op, sx,
                         (long long)xs[1], sw, (long long)channels, (long long)ws[1],
                         (long long)groups);
    return TG_OK;
}

tg_status tg__conv_check_dy(const char *op, const tg_tensor *dy, int ndim, const int64_t *want)
{
    char a[160], b[160];
    if (tg__shape_eq(dy->ndim, dy->shape, ndim, want))
        return TG_OK;
    return tg__error(TG_ERR_SHAPE, "%s: output gradient has shape %s, expected %s", op,
                     tg_shape_str(dy->ndim, dy->shape, a, sizeof a),
                     tg_shape_str(ndim, want, b, sizeof b));
}

tg_tensor *tg__conv_call(const tg_op_def *op, int nd, tg_tensor *a, tg_tensor *b,
                         tg_tensor *bias, const int64_t *stride, const int64_t *padding,
                         const int64_t *dilation, int64_t groups, const char *shape_name,
                         const int64_t *shape)
{
    tg_attr attrs[5] = {TG_AINTS("stride", stride, nd), TG_AINTS("padding", padding, nd),
                        TG_AINTS("dilation", dilation, nd), TG_AI("groups", groups)};
    if (shape_name)
        attrs[4] = (tg_attr)TG_AINTS(shape_name, shape, nd + 2);
    tg_tensor *in[3] = {a, b, bias};
    return tg_op_call(op, bias ? 3 : 2, in, attrs, shape_name ? 5 : 4);
}
