/* scatter (torch.scatter(input, dim, index, src), ONNX ScatterElements
 * without reduction): a copy of x with src[p] written at p with its axis
 * coordinate replaced by index[p], for every position p of index (index
 * no larger than src, nor than x off the axis; the three of one rank).
 * Writes run in index order, so of repeated indices the last one wins.
 * Linear in x and src together: x's gradient is dy with the written
 * positions zeroed (scatter of zeros), src's is dy gathered at index
 * (zero beyond index's extent; PyTorch fails there instead). */
#include "autodiff/jvp.h"
#include "ops/array.h"
#include "ops/nn_util.h"

#include <string.h>

typedef struct scatter_attrs {
    int64_t axis;
} scatter_attrs;
static const tg_attr_spec scatter_specs[] = {TG_SPEC_INT(scatter_attrs, axis, 0), {0}};

static tg_status scatter_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0], *index = c->in[1], *src = c->in[2];
    const char *op = "scatter";
    int64_t a = ((const scatter_attrs *)c->attr)->axis;
    int axis;
    if (a < -TG_MAX_DIMS - 1 || a > TG_MAX_DIMS)
        return tg__error(TG_ERR_INDEX, "scatter: dim %lld is out of range for a tensor of %d "
                         "dims", (long long)a, x->ndim);
    if (!tg__norm_axis(op, (int)a, x->ndim ? x->ndim : 1, &axis))
        return tg_last_status();
    tg_status s = tg__require_index(op, index);
    if (s != TG_OK)
        return s;
    if (src->dtype != x->dtype)
        return tg__error(TG_ERR_DTYPE, "scatter(): Expected self.dtype to be equal to "
                         "src.dtype (got %s and %s)", tg_dtype_name(x->dtype),
                         tg_dtype_name(src->dtype));
    if (index->ndim != x->ndim || src->ndim != x->ndim)
        return tg__error(TG_ERR_SHAPE, "scatter: index (%d dims) and src (%d dims) must have "
                         "the same number of dimensions as self (%d)", index->ndim,
                         src->ndim, x->ndim);
    bool ok = true;
    for (int d = 0; d < x->ndim; d++)
        ok = ok && index->shape[d] <= src->shape[d] &&
             (d == axis || index->shape[d] <= x->shape[d]);
    if (!ok) {
        char a[160], b[160], e[160];
        return tg__error(TG_ERR_SHAPE, "scatter: Expected index %s to be smaller than self "
                         "%s apart from dimension %d and to be smaller size than src %s",
                         tg_shape_str(index->ndim, index->shape, a, sizeof a),
                         tg_shape_str(x->ndim, x->shape, b, sizeof b), axis,
                         tg_shape_str(src->ndim, src->shape, e, sizeof e));
    }
    return tg_infer_set(c, 0, x->dtype, x->ndim, x->shape);
}

static tg_status scatter_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg__convert_into(out, c->in[0]);
    tg_tensor *index = c->in[1];
    if (index->numel == 0)
        return TG_OK;
    int nd = out->ndim, axis = (int)((const scatter_attrs *)c->attr)->axis;
    axis = axis < 0 ? axis + (nd ? nd : 1) : axis;
    tg_tensor *idx = tg__nn_contig(index, TG_INT64), *src = tg__nn_contig(c->in[2], out->dtype);
    if (!idx || !src) {
        tg_release(idx);
        tg_release(src);
        return TG_ERR_NOMEM;
    }
    const int64_t *iv = (const int64_t *)tg__base(idx);
    const char *sv = tg__base(src);
    char *ov = tg__base(out);
    size_t es = tg_dtype_size(out->dtype);
    int64_t bound = nd ? out->shape[axis] : 1, pos[TG_MAX_DIMS] = {0};
    tg_status s = TG_OK;
    /* serial, in index order: repeated indices write in a fixed order */
    for (int64_t e = 0; e < idx->numel; e++) {
        int64_t v = iv[e], so = 0, oo = 0;
        if (v < 0 || v >= bound) {
            s = tg__error(TG_ERR_INDEX, "scatter: index %lld is out of bounds for dimension "
                          "%d with size %lld", (long long)v, axis, (long long)bound);
            break;
        }
        for (int d = 0; d < nd; d++) {
            so += pos[d] * src->strides[d];
            oo += (d == axis ? v : pos[d]) * out->strides[d];
        }
        memcpy(ov + (size_t)oo * es, sv + (size_t)so * es, es);
        for (int d = nd - 1; d >= 0 && ++pos[d] == idx->shape[d]; d--)
            pos[d] = 0;
    }
    tg_release(idx);
    tg_release(src);
    return s;
}

/* zeros of the index's shape in t's dtype (what scatter writes for x's
 * gradient and tangent) */
static tg_tensor *zeros_at(const tg_tensor *index, tg_dtype dt)
{
    return tg_zeros(dt, index->ndim, index->shape);
}

static tg_tensor *scatter_call(tg_tensor *x, int64_t axis, tg_tensor *index, tg_tensor *src);

static tg_status scatter_grad(tg_grad_ctx *g)
{
    tg_tensor *dy = g->dy[0], *index = g->in[1];
    int64_t axis = ((const scatter_attrs *)g->attr)->axis;
    if (g->needs_grad[0] &&
        !(g->dx[0] = scatter_call(dy, axis, index, zeros_at(index, dy->dtype))))
        return tg_last_status();
    if (g->needs_grad[2]) {
        const tg_meta *m = &g->in_meta[2];
        tg_tensor *d = tg_gather(dy, (int)axis, index);
        /* zeros beyond index's extent of src */
        int64_t pads[2 * TG_MAX_DIMS] = {0};
        bool pad = false;
        for (int i = 0; i < m->ndim; i++) {
            pads[2 * i + 1] = m->shape[i] - index->shape[i];
            pad = pad || pads[2 * i + 1] > 0;
        }
        if (pad && d)
            d = tg_pad(d, 2 * m->ndim, pads, 0);
        if (!(g->dx[2] = d))
            return tg_last_status();
    }
    return TG_OK;
}

/* linear in (x, src) together: the same scatter of their tangents (zeros
 * for an absent one); the index has none */
static tg_status scatter_jvp(tg_jvp_ctx *c)
{
    const tg_meta *mx = &c->in_meta[0], *ms = &c->in_meta[2];
    tg_tensor *tx = c->dx[0] ? c->dx[0] : tg_zeros(mx->dtype, mx->ndim, mx->shape);
    tg_tensor *ts = c->dx[2] ? c->dx[2] : tg_zeros(ms->dtype, ms->ndim, ms->shape);
    return tg__jvp_set(c, 0, scatter_call(tx, ((const scatter_attrs *)c->attr)->axis,
                                          c->in[1], ts));
}

static const tg_arg_spec scatter_in[] = {
    {"x", TG_DTS_ANY}, {"index", TG_DTS_INDEX}, {"src", TG_DTS_ANY}, {0}};
static const tg_arg_spec scatter_out[] = {{"y", TG_DTS_ANY}, {0}};

const tg_op_def tg_op_scatter = {
    .name = "scatter", .n_in = 3, .n_out = 1, .inputs = scatter_in, .outputs = scatter_out,
    .attrs = {scatter_specs, sizeof(scatter_attrs)}, .flags = TG_OP_PURE,
    .save_inputs = 1u << 1, .infer = scatter_infer, .kernel = {[TG_CPU] = scatter_kernel},
    .grad = scatter_grad, .jvp = scatter_jvp, .onnx = {"ScatterElements", 16}};

static tg_tensor *scatter_call(tg_tensor *x, int64_t axis, tg_tensor *index, tg_tensor *src)
{
    tg_tensor *in[3] = {x, index, src};
    tg_attr a[1] = {TG_AI("axis", axis)};
    return tg_op_call(&tg_op_scatter, 3, in, a, 1);
}

tg_tensor *tg_scatter(tg_tensor *x, int axis, tg_tensor *index, tg_tensor *src)
{
    return scatter_call(x, axis, index, src);
}

const tg_op_def *const tg_ops_scatter[] = {&tg_op_scatter, NULL};
