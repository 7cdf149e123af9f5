/* slice_by: ONNX Slice-13 with its bounds as tensors, for slices whose
 * bounds or whose sliced dims are known only when a graph runs (a start
 * computed from a loop's iteration number, an end read from the shape of
 * a nonzero's result, `1:` of a dim a feed fixes).
 *
 *   y = slice_by(x, starts, ends, axes, steps)   int64/int32 [n] each
 *
 * Per axis, ONNX's rule: negative start and end count from the end, then
 * start is clamped to [0, dim] and end to [0, dim] for a positive step,
 * to [0, dim - 1] and [-1, dim - 1] for a negative one; the length is
 * ceil((end - start) / step), at least 0. Inference computes it wherever
 * the bounds have data and the dim is known; elsewhere the dim is unknown
 * (-1) and the executor infers it from the actual inputs when the graph
 * runs (docs/GRAPHS.md, "Dims that depend on values"); axes without
 * data leave every dim unknown. The output is a copy.
 *
 * Gradient: slice_by_grad places dy into zeros of x's shape at the same
 * positions; it is linear in dy and its adjoint is slice_by itself. */
#include "autodiff/jvp.h"
#include "ops/elementwise.h"

#include <string.h>

static const tg_arg_spec slice_in[] = {
    {"x", TG_DTS_ANY},
    {"starts", TG_DTS_INDEX | TG_ARG_NO_GRAD},
    {"ends", TG_DTS_INDEX | TG_ARG_NO_GRAD},
    {"axes", TG_DTS_INDEX | TG_ARG_NO_GRAD},
    {"steps", TG_DTS_INDEX | TG_ARG_NO_GRAD},
    {0}};
static const tg_arg_spec grad_in[] = {
    {"dy", TG_DTS_ANY},
    {"x", TG_DTS_ANY | TG_ARG_NO_GRAD}, /* read for its shape */
    {"starts", TG_DTS_INDEX | TG_ARG_NO_GRAD},
    {"ends", TG_DTS_INDEX | TG_ARG_NO_GRAD},
    {"axes", TG_DTS_INDEX | TG_ARG_NO_GRAD},
    {"steps", TG_DTS_INDEX | TG_ARG_NO_GRAD},
    {0}};
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};

/* element i of an int32 or int64 tensor, exactly (a double would round
 * the INT64_MAX ends exporters write) */
static int64_t int_at(const tg_tensor *t, int64_t i)
{
    const void *p = tg__elem_ptr(t, i);
    return t->dtype == TG_INT64 ? *(const int64_t *)p : *(const int32_t *)p;
}

/* one axis's window, per ONNX: its first index, step and length */
typedef struct window {
    int64_t start, step, len;
} window;

static window axis_window(int64_t dim, int64_t start, int64_t end, int64_t step)
{
    if (dim == 0) /* the clamp ranges below are empty */
        return (window){0, step, 0};
    if (start < 0)
        start = start < -dim ? 0 : start + dim;
    if (end < 0)
        end = end < -dim ? -1 : end + dim;
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? dim : dim - 1;
    start = start < 0 ? 0 : start > hi ? hi : start;
    end = end < lo ? lo : end > hi ? hi : end;
    int64_t span = step > 0 ? end - start : start - end, mag = step > 0 ? step : -step;
    int64_t len = span > 0 ? (span - 1) / mag + 1 : 0; /* no overflow: span <= dim */
    return (window){start, step, len};
}

/* the four index inputs (from input `first` on) read into per-axis
 * windows of x's shape; *known false when a bound has no data (a graph's
 * value). Checks the counts, the axes and the steps. */
typedef struct bounds {
    int n;
    int axis[TG_MAX_DIMS];
    int64_t start[TG_MAX_DIMS], end[TG_MAX_DIMS], step[TG_MAX_DIMS];
    bool axes_known, known; /* axes; every bound */
} bounds;

static tg_status read_bounds(const char *op, tg_tensor *const *in, int ndim, bounds *b)
{
    static const char *const what[4] = {"starts", "ends", "axes", "steps"};
    const tg_tensor *st = in[0], *en = in[1], *ax = in[2], *sp = in[3];
    for (int k = 0; k < 4; k++)
        if (in[k]->dtype != TG_INT64 && in[k]->dtype != TG_INT32)
            return tg__error(TG_ERR_DTYPE, "%s: %s must be int64 or int32, got %s", op,
                             what[k], tg_dtype_name(in[k]->dtype));
    for (int k = 0; k < 4; k++)
        if (in[k]->ndim != 1)
            return tg__error(TG_ERR_SHAPE, "%s: starts, ends, axes and steps must be 1-D, "
                             "input %d has %d dims", op, k + 1, in[k]->ndim);
    int64_t n = ax->shape[0];
    if (n > ndim || st->shape[0] != n || en->shape[0] != n || sp->shape[0] != n)
        return tg__error(TG_ERR_SHAPE, "%s: starts, ends, axes and steps must have the same "
                         "length, at most the rank %d (got %lld, %lld, %lld, %lld)", op, ndim,
                         (long long)st->shape[0], (long long)en->shape[0],
                         (long long)ax->shape[0], (long long)sp->shape[0]);
    b->n = (int)n;
    b->axes_known = ax->storage != NULL;
    bool seen[TG_MAX_DIMS] = {false};
    for (int i = 0; b->axes_known && i < b->n; i++) {
        int64_t a = int_at(ax, i);
        if (a < -ndim || a >= ndim)
            return tg__error(TG_ERR_INDEX, "%s: axis %lld is out of range for %d dims", op,
                             (long long)a, ndim);
        b->axis[i] = (int)(a < 0 ? a + ndim : a);
        if (seen[b->axis[i]])
            return tg__error(TG_ERR_ARG, "%s: axis %d is sliced twice", op, b->axis[i]);
        seen[b->axis[i]] = true;
    }
    b->known = b->axes_known && st->storage && en->storage && sp->storage;
    for (int i = 0; b->known && i < b->n; i++) {
        b->start[i] = int_at(st, i);
        b->end[i] = int_at(en, i);
        b->step[i] = int_at(sp, i);
        if (b->step[i] == 0)
            return tg__error(TG_ERR_ARG, "%s: step %d is 0", op, i);
        if (b->step[i] == INT64_MIN) /* its magnitude does not fit */
            b->step[i] = INT64_MIN + 1;
    }
    return TG_OK;
}

/* the sliced shape of x; dims unknown (-1) where the bounds or x's dim are */
static void sliced_shape(const tg_tensor *x, const bounds *b, int64_t *shape)
{
    memcpy(shape, x->shape, sizeof(int64_t) * TG_MAX_DIMS);
    for (int d = 0; !b->axes_known && d < x->ndim; d++)
        shape[d] = -1; /* any dim may be sliced */
    for (int i = 0; b->axes_known && i < b->n; i++) {
        int a = b->axis[i];
        shape[a] = b->known && x->shape[a] >= 0
                       ? axis_window(x->shape[a], b->start[i], b->end[i], b->step[i]).len
                       : -1;
    }
}

/* the view of t (of x's shape) that the slice reads or writes */
static tg_tensor *window_of(const tg_tensor *t, const bounds *b)
{
    int64_t shape[TG_MAX_DIMS], strides[TG_MAX_DIMS], offset = t->offset;
    memcpy(shape, t->shape, sizeof shape);
    memcpy(strides, t->strides, sizeof strides);
    for (int i = 0; i < b->n; i++) {
        int a = b->axis[i];
        window w = axis_window(t->shape[a], b->start[i], b->end[i], b->step[i]);
        shape[a] = w.len;
        if (w.len > 0)
            offset += w.start * t->strides[a];
        if (w.len > 1) /* step is then below the axis's extent: no overflow */
            strides[a] *= w.step;
    }
    return tg__alias(t, t->ndim, shape, strides, offset);
}

/* the output's meta: x's shape sliced, unknown dims where it cannot tell */
static tg_status set_sliced(tg_op_ctx *c, const tg_tensor *x, tg_tensor *const *idx,
                            const int64_t *out_shape_or_null)
{
    bounds b;
    tg_status s = read_bounds(c->op->name, idx, x->ndim, &b);
    if (s != TG_OK)
        return s;
    int64_t shape[TG_MAX_DIMS];
    if (out_shape_or_null)
        memcpy(shape, out_shape_or_null, sizeof shape);
    else
        sliced_shape(x, &b, shape);
    /* tg_infer_set takes known dims only */
    c->out_meta[0] = (tg_meta){.dtype = c->in[0]->dtype, .ndim = x->ndim};
    memcpy(c->out_meta[0].shape, shape, (size_t)x->ndim * sizeof *shape);
    return TG_OK;
}

static tg_status slice_by_infer(tg_op_ctx *c)
{
    return set_sliced(c, c->in[0], c->in + 1, NULL);
}

static tg_status slice_by_kernel(tg_op_ctx *c)
{
    bounds b;
    tg_status s = read_bounds(c->op->name, c->in + 1, c->in[0]->ndim, &b);
    if (s != TG_OK)
        return s;
    tg_tensor *w = window_of(c->in[0], &b);
    if (!w)
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", c->op->name);
    tg__convert_into(c->out[0], w);
    tg_release(w);
    return TG_OK;
}

static const tg_op_def tg_op_slice_by_grad;

static tg_status slice_by_vjp(tg_grad_ctx *g)
{
    tg_tensor *in[6] = {g->dy[0], g->in[0], g->in[1], g->in[2], g->in[3], g->in[4]};
    g->dx[0] = tg_op_call(&tg_op_slice_by_grad, 6, in, NULL, 0);
    return TG_OK;
}

const tg_op_def tg_op_slice_by = {
    .name = "slice_by", .n_in = 5, .n_out = 1, .inputs = slice_in, .outputs = any_out,
    .flags = TG_OP_PURE, .infer = slice_by_infer, .kernel = {[TG_CPU] = slice_by_kernel},
    .grad = slice_by_vjp, .save_inputs = 0x1f, .jvp = tg__jvp_linear, .onnx = {"Slice", 13}};

/* ---- the gradient: dy into zeros of x's shape ------------------------------------ */
static tg_status slice_by_grad_infer(tg_op_ctx *c)
{
    const tg_tensor *dy = c->in[0], *x = c->in[1];
    if (dy->ndim != x->ndim)
        return tg__error(TG_ERR_SHAPE, "%s: the gradient has %d dims, the input %d",
                         c->op->name, dy->ndim, x->ndim);
    tg_status s = set_sliced(c, x, c->in + 2, x->shape);
    c->out_meta[0].dtype = dy->dtype;
    return s;
}

static tg_status slice_by_grad_kernel(tg_op_ctx *c)
{
    bounds b;
    tg_tensor *out = c->out[0];
    tg_status s = read_bounds(c->op->name, c->in + 2, out->ndim, &b);
    if (s != TG_OK)
        return s;
    memset(tg__base(out), 0, (size_t)out->numel * tg_dtype_size(out->dtype));
    tg_tensor *w = window_of(out, &b);
    if (!w)
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", c->op->name);
    const tg_tensor *dy = c->in[0];
    if (!tg__shape_eq(w->ndim, w->shape, dy->ndim, dy->shape)) {
        char b1[160], b2[160];
        s = tg__error(TG_ERR_SHAPE, "%s: a gradient of shape %s for a slice of shape %s",
                      c->op->name, tg_shape_str(dy->ndim, dy->shape, b1, sizeof b1),
                      tg_shape_str(w->ndim, w->shape, b2, sizeof b2));
    } else {
        tg__convert_into(w, dy);
    }
    tg_release(w);
    return s;
}

/* linear in dy: its adjoint is the slice */
static tg_status slice_by_grad_vjp(tg_grad_ctx *g)
{
    tg_tensor *in[5] = {g->dy[0], g->in[2], g->in[3], g->in[4], g->in[5]};
    g->dx[0] = tg_op_call(&tg_op_slice_by, 5, in, NULL, 0);
    return TG_OK;
}

static const tg_op_def tg_op_slice_by_grad = {
    .name = "slice_by_grad", .n_in = 6, .n_out = 1, .inputs = grad_in, .outputs = any_out,
    .flags = TG_OP_PURE, .infer = slice_by_grad_infer,
    .kernel = {[TG_CPU] = slice_by_grad_kernel}, .grad = slice_by_grad_vjp, .save_inputs = 0x3c,
    .jvp = tg__jvp_linear};

tg_tensor *tg_slice_by(tg_tensor *x, tg_tensor *starts, tg_tensor *ends, tg_tensor *axes,
                       tg_tensor *steps)
{
    tg_tensor *in[5] = {x, starts, ends, axes, steps};
    for (int i = 0; i < 5; i++)
        if (!in[i]) {
            if (!tg__error_is_set())
                tg__error(TG_ERR_ARG, "slice_by: input %d is NULL", i);
            return NULL;
        }
    return tg_op_call(&tg_op_slice_by, 5, in, NULL, 0);
}

const tg_op_def *const tg_ops_slice_by[] = {&tg_op_slice_by, &tg_op_slice_by_grad, NULL};
