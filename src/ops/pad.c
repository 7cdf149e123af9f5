/* pad: constant (torch's F.pad(mode='constant'), ONNX Pad "constant"),
 * reflect (mirrored without repeating the edge) and replicate (ONNX
 * "edge"), and pad_grad, the adjoint of the reflect and replicate modes:
 * each output position reads one input position, and the gradient adds
 * every output position's gradient into that one. */
#include "autodiff/jvp.h"
#include "core/size_math.h"
#include "kernels/cpu/fill.h"
#include "ops/array.h"

#include <stdlib.h>
#include <string.h>

/* pads: (before, after) per leading axis; value: what the border holds in
 * constant mode; mode: tg_pad_mode. pad_grad also has input_shape. */
typedef struct pad_attrs {
    tg_ints pads;
    double value;
    int64_t mode;
    tg_ints input_shape;
} pad_attrs;
static const tg_attr_spec pad_specs[] = {
    TG_SPEC_INTS(pad_attrs, pads), TG_SPEC_FLOAT(pad_attrs, value, 0),
    TG_SPEC_INT(pad_attrs, mode, TG_PAD_CONSTANT, TG_RANGE(0, 2)), {0}};
static const tg_attr_spec pad_grad_specs[] = {
    TG_SPEC_INTS(pad_attrs, pads),
    TG_SPEC_INT(pad_attrs, mode, TG_PAD_REFLECT, TG_RANGE(1, 2)),
    TG_SPEC_INTS(pad_attrs, input_shape), {0}};

/* can `value` be stored in dt without undefined conversion? */
static bool value_fits(tg_dtype dt, double v)
{
    switch (dt) {
    case TG_INT32: return v > -2147483649.0 && v < 2147483648.0;
    case TG_INT64: return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    case TG_UINT8: return v > -1.0 && v < 256.0;
    default: return true; /* floats take anything; bool tests != 0 */
    }
}

/* checks pads against the input shape `in` (nd dims) and writes the
 * padded shape; PyTorch's checks: reflect needs pads < the dim, replicate
 * a non-empty dim */
static tg_status padded_shape(const char *op, const pad_attrs *a, int nd, const int64_t *in,
                              int64_t *shape)
{
    const int64_t *pads = a->pads.v;
    int n = a->pads.n;
    char buf[160];
    if (n % 2 != 0 || n > 2 * nd || n < 0)
        return tg__error(TG_ERR_ARG, "%s: %d pad values for a tensor of shape %s "
                         "(expected an even count <= %d)", op, n,
                         tg_shape_str(nd, in, buf, sizeof buf), 2 * nd);
    memcpy(shape, in, sizeof(int64_t) * (size_t)nd);
    for (int i = 0; i < n; i++) {
        int ax = i / 2;
        if (pads[i] < 0)
            return tg__error(TG_ERR_ARG, "%s: pad %lld at position %d (axis %d) is "
                             "negative; pads must be >= 0", op, (long long)pads[i], i, ax);
        if (a->mode == TG_PAD_REFLECT && pads[i] >= in[ax])
            return tg__error(TG_ERR_ARG, "%s: reflect padding must be less than the size of "
                             "the dim: pads (%lld, %lld) at axis %d of shape %s", op,
                             (long long)pads[2 * ax], (long long)pads[2 * ax + 1], ax,
                             tg_shape_str(nd, in, buf, sizeof buf));
        if (a->mode == TG_PAD_REPLICATE && pads[i] > 0 && in[ax] == 0)
            return tg__error(TG_ERR_ARG, "%s: replicate padding of the empty axis %d of shape "
                             "%s", op, ax, tg_shape_str(nd, in, buf, sizeof buf));
        if (!tg__size_add(op, "a padded dim", shape[ax], pads[i], &shape[ax]))
            return tg_last_status();
    }
    return TG_OK;
}

/* ---- the position maps: output index -> input index, per axis ----------- */
static int64_t source(int64_t mode, int64_t i, int64_t n)
{
    if (mode == TG_PAD_REPLICATE)
        return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (i < 0) /* reflect: pads < n, so one reflection lands inside */
        return -i;
    return i >= n ? 2 * (n - 1) - i : i;
}

/* maps[ax] (sum of the output dims entries in one block) times the input's
 * contiguous stride: the element offset each output index reads */
static int64_t *make_maps(const pad_attrs *a, int nd, const int64_t *in, const int64_t *out,
                          int64_t **maps)
{
    int64_t total = 0;
    for (int i = 0; i < nd; i++)
        total += out[i];
    int64_t *block = malloc((size_t)(total ? total : 1) * sizeof *block);
    if (!block)
        return NULL;
    int64_t stride = 1;
    for (int ax = nd - 1; ax >= 0; ax--) {
        int64_t before = 2 * ax < a->pads.n ? a->pads.v[2 * ax] : 0;
        maps[ax] = block + (total -= out[ax]); /* axes laid out in order */
        for (int64_t o = 0; o < out[ax]; o++)
            maps[ax][o] = source(a->mode, o - before, in[ax]) * stride;
        stride *= in[ax];
    }
    return block;
}

/* every output position (C order) with the input offset it reads: `fn`
 * gets (output offset, input offset) runs of the last axis */
#define PAD_WALK(T, NAME, BODY)                                                 \
    static void NAME(const T *restrict src, T *restrict dst, int nd,           \
                     const int64_t *out, int64_t *const *maps)                 \
    {                                                                           \
        int64_t idx[TG_MAX_DIMS] = {0}, rows = 1, last = out[nd - 1];          \
        for (int i = 0; i < nd - 1; i++)                                        \
            rows *= out[i];                                                     \
        const int64_t *m = maps[nd - 1];                                        \
        for (int64_t r = 0; r < rows; r++) {                                    \
            int64_t base = 0;                                                   \
            for (int i = 0; i < nd - 1; i++)                                    \
                base += maps[i][idx[i]];                                        \
            const int64_t o0 = r * last;                                        \
            for (int64_t j = 0; j < last; j++) {                                \
                BODY;                                                           \
            }                                                                   \
            for (int i = nd - 2; i >= 0 && ++idx[i] == out[i]; i--)             \
                idx[i] = 0;                                                     \
        }                                                                       \
    }
/* the forward copy (by element size) and the gradient's sums (by dtype) */
PAD_WALK(uint8_t, gather_1, dst[o0 + j] = src[base + m[j]])
PAD_WALK(uint32_t, gather_4, dst[o0 + j] = src[base + m[j]])
PAD_WALK(uint64_t, gather_8, dst[o0 + j] = src[base + m[j]])
/* here src is dy (the padded shape) and dst the input-shaped sum */
PAD_WALK(float, scatter_f32, dst[base + m[j]] += src[o0 + j])
PAD_WALK(double, scatter_f64, dst[base + m[j]] += src[o0 + j])
PAD_WALK(int32_t, scatter_i32, dst[base + m[j]] = (int32_t)((uint32_t)dst[base + m[j]] +
                                                            (uint32_t)src[o0 + j]))
PAD_WALK(int64_t, scatter_i64, dst[base + m[j]] = (int64_t)((uint64_t)dst[base + m[j]] +
                                                            (uint64_t)src[o0 + j]))
PAD_WALK(uint8_t, scatter_u8, dst[base + m[j]] = (uint8_t)(dst[base + m[j]] + src[o0 + j]))

/* ---- pad ------------------------------------------------------------------------ */
static tg_status pad_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    const pad_attrs *a = c->attr;
    int64_t shape[TG_MAX_DIMS];
    tg_status s = padded_shape(c->op->name, a, x->ndim, x->shape, shape);
    if (s != TG_OK)
        return s;
    if (a->mode == TG_PAD_CONSTANT && !value_fits(x->dtype, a->value))
        return tg__error(TG_ERR_ARG, "pad: value %g does not fit in %s", a->value,
                         tg_dtype_name(x->dtype));
    return tg_infer_set(c, 0, x->dtype, x->ndim, shape);
}

/* reflect / replicate: every output element read through the maps */
static tg_status pad_gather(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0], *x = tg__contig(c->in[0]);
    int64_t *maps[TG_MAX_DIMS], *block = x ? make_maps(c->attr, x->ndim, x->shape, out->shape,
                                                       maps) : NULL;
    if (!block) {
        tg_release(x);
        return tg__error(TG_ERR_NOMEM, "pad: out of memory");
    }
    size_t es = tg_dtype_size(x->dtype);
    if (out->numel > 0) {
        if (es == 1)
            gather_1((const uint8_t *)tg__base(x), (uint8_t *)tg__base(out), x->ndim,
                     out->shape, maps);
        else if (es == 4)
            gather_4((const uint32_t *)tg__base(x), (uint32_t *)tg__base(out), x->ndim,
                     out->shape, maps);
        else
            gather_8((const uint64_t *)tg__base(x), (uint64_t *)tg__base(out), x->ndim,
                     out->shape, maps);
    }
    free(block);
    tg_release(x);
    return TG_OK;
}

static tg_status pad_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    const tg_tensor *x = c->in[0];
    const pad_attrs *a = c->attr;
    if (a->mode != TG_PAD_CONSTANT && x->ndim > 0)
        return pad_gather(c);
    tg__fill_contiguous(out->dtype, tg__base(out), out->numel, a->value);
    if (x->numel == 0)
        return TG_OK;
    int64_t offset = out->offset;
    for (int i = 0; i < a->pads.n / 2; i++)
        offset += a->pads.v[2 * i] * out->strides[i];
    tg_tensor *win = tg__alias(out, x->ndim, x->shape, out->strides, offset);
    if (!win)
        return TG_ERR_NOMEM;
    tg__copy_into(win, x);
    tg_release(win);
    return TG_OK;
}

/* constant: the interior of dy (one slice per padded axis); reflect and
 * replicate: pad_grad sums each output's gradient into its source */
static tg_status pad_grad(tg_grad_ctx *g)
{
    const pad_attrs *a = g->attr;
    const tg_meta *m = &g->in_meta[0];
    tg_tensor *d = g->dy[0];
    if (a->mode != TG_PAD_CONSTANT && m->ndim > 0) {
        tg_attr at[3] = {TG_AINTS("pads", a->pads.v, a->pads.n), TG_AI("mode", a->mode),
                         TG_AINTS("input_shape", m->shape, m->ndim)};
        g->dx[0] = tg_op_call(&tg_op_pad_grad, 1, &d, at, 3);
        return g->dx[0] ? TG_OK : tg_last_status();
    }
    for (int i = 0; i < a->pads.n / 2 && d; i++)
        if (a->pads.v[2 * i] || a->pads.v[2 * i + 1])
            d = tg_slice(d, i, a->pads.v[2 * i], a->pads.v[2 * i] + m->shape[i], 1);
    g->dx[0] = d;
    return d ? TG_OK : tg_last_status();
}

/* pad is affine: the tangent is padded the same way, with zeros, not with
 * `value` */
static tg_status pad_jvp(tg_jvp_ctx *c)
{
    const pad_attrs *p = c->attr;
    tg_attr a[3] = {TG_AINTS("pads", p->pads.v, p->pads.n), TG_AF("value", 0.0),
                    TG_AI("mode", p->mode)};
    return tg__jvp_set(c, 0, tg_op_call(c->op, 1, &c->dx[0], a, 3));
}

static const tg_arg_spec pad_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec pad_out[] = {{"y", TG_DTS_ANY}, {0}};

const tg_op_def tg_op_pad = {
    .name = "pad", .n_in = 1, .n_out = 1, .inputs = pad_in, .outputs = pad_out,
    .attrs = {pad_specs, sizeof(pad_attrs)}, .flags = TG_OP_PURE,
    .infer = pad_infer, .kernel = {[TG_CPU] = pad_kernel}, .grad = pad_grad,
    .jvp = pad_jvp, .onnx = {"Pad", 13}};

/* ---- pad_grad: dy (the padded shape) summed into input_shape ------------------------ */
static tg_status pad_grad_infer(tg_op_ctx *c)
{
    const tg_tensor *dy = c->in[0];
    const pad_attrs *a = c->attr;
    int nd = a->input_shape.n;
    int64_t shape[TG_MAX_DIMS];
    char b1[160], b2[160];
    if (dy->dtype == TG_BOOL)
        return tg__error(TG_ERR_DTYPE, "pad_grad: bool gradients are not supported");
    if (!tg__check_shape(c->op->name, nd, a->input_shape.v))
        return tg_last_status();
    tg_status s = padded_shape(c->op->name, a, nd, a->input_shape.v, shape);
    if (s != TG_OK)
        return s;
    if (nd == 0 || !tg__shape_eq(dy->ndim, dy->shape, nd, shape))
        return tg__error(TG_ERR_SHAPE, "pad_grad: dy of shape %s is not input_shape padded "
                         "(%s)", tg_shape_str(dy->ndim, dy->shape, b1, sizeof b1),
                         tg_shape_str(nd, shape, b2, sizeof b2));
    return tg_infer_set(c, 0, dy->dtype, nd, a->input_shape.v);
}

static tg_status pad_grad_kernel(tg_op_ctx *c)
{
    tg_tensor *dx = c->out[0], *dy = tg__contig(c->in[0]);
    int64_t *maps[TG_MAX_DIMS], *block = dy ? make_maps(c->attr, dx->ndim, dx->shape,
                                                        dy->shape, maps) : NULL;
    if (!block) {
        tg_release(dy);
        return tg__error(TG_ERR_NOMEM, "pad_grad: out of memory");
    }
    tg__fill_contiguous(dx->dtype, tg__base(dx), dx->numel, 0);
    const void *s = tg__base(dy);
    void *d = tg__base(dx);
    int nd = dx->ndim;
    if (dy->numel > 0) {
        switch (dx->dtype) {
        case TG_FLOAT32: scatter_f32(s, d, nd, dy->shape, maps); break;
        case TG_FLOAT64: scatter_f64(s, d, nd, dy->shape, maps); break;
        case TG_INT32: scatter_i32(s, d, nd, dy->shape, maps); break;
        case TG_INT64: scatter_i64(s, d, nd, dy->shape, maps); break;
        default: scatter_u8(s, d, nd, dy->shape, maps); break;
        }
    }
    free(block);
    tg_release(dy);
    return TG_OK;
}

/* the adjoint of a sum into the sources is the pad itself */
static tg_status pad_grad_grad(tg_grad_ctx *g)
{
    const pad_attrs *a = g->attr;
    g->dx[0] = tg_pad_ex(g->dy[0], a->pads.n, a->pads.v, (tg_pad_mode)a->mode, 0);
    return g->dx[0] ? TG_OK : tg_last_status();
}

static const tg_arg_spec pad_grad_in[] = {{"dy", TG_DTS_NUMBER}, {0}};
static const tg_arg_spec pad_grad_out[] = {{"dx", TG_DTS_NUMBER}, {0}};

const tg_op_def tg_op_pad_grad = {
    .name = "pad_grad", .n_in = 1, .n_out = 1, .inputs = pad_grad_in, .outputs = pad_grad_out,
    .attrs = {pad_grad_specs, sizeof(pad_attrs)}, .flags = TG_OP_PURE,
    .infer = pad_grad_infer, .kernel = {[TG_CPU] = pad_grad_kernel}, .grad = pad_grad_grad,
    .jvp = tg__jvp_linear};

/* ---- public functions -------------------------------------------------------------------- */
tg_tensor *tg_pad_ex(tg_tensor *x, int n_pads, const int64_t *pads, tg_pad_mode mode,
                       double value)
{
    if (n_pads < 0 || (n_pads > 0 && !pads))
        return tg__error_null(TG_ERR_ARG, "pad: bad pads (%d values)", n_pads);
    if ((unsigned)mode > TG_PAD_REPLICATE)
        return tg__error_null(TG_ERR_ARG, "pad: unknown mode %d", (int)mode);
    tg_attr a[3] = {TG_AINTS("pads", pads, n_pads), TG_AF("value", value),
                    TG_AI("mode", (int64_t)mode)};
    return tg_op_call(&tg_op_pad, 1, &x, a, 3);
}

tg_tensor *tg_pad(tg_tensor *x, int n_pads, const int64_t *pads, double value)
{
    return tg_pad_ex(x, n_pads, pads, TG_PAD_CONSTANT, value);
}
