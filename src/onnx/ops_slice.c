/* ONNX Slice (versions 1, 10, 11, 13) -> tensorgraph: constant bounds
 * as views (index_select for negative steps), bounds computed in the
 * graph or a sliced dim known only when it runs as slice_by. */
#include "onnx/ops.h"

static tg_status done(onnx_ictx *c, int i, tg_tensor *y)
{
    c->out[i] = y;
    return y ? TG_OK : tg_last_status();
}


/* elements start, start+step, ... (step < 0) as an index_select */
static tg_tensor *reverse_slice(tg_tensor *x, int axis, int64_t start, int64_t end, int64_t step)
{
    int64_t cnt = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    int tok = onnx_eager_begin();
    tg_tensor *idx = tg_arange(TG_INT64, (double)start, (double)start + (double)step * (double)cnt - (double)step / 2,
                               (double)step);
    onnx_eager_end(tok);
    if (idx && tg_numel(idx) != cnt) /* guard against rounding in arange */
        return tg__error_null(TG_ERR_INTERNAL, "onnx: Slice index count");
    return tg_index_select(x, axis, idx);
}

/* Slice as slice_by, whose bounds are tensors: for bounds computed from
 * values the graph has only when it runs, and for a sliced dim unknown
 * until then. Absent axes are 0, 1, ...; absent steps are 1. */
static tg_status slice_at_run(onnx_ictx *c, tg_tensor *x)
{
    tg_tensor *st = c->in[1], *en = oi_req(c, 2, "ends");
    if (!en)
        return tg_last_status();
    if (tg_ndim(st) != 1)
        return onnx_err(c, TG_ERR_IO, "starts should be 1-D, got %d dims", tg_ndim(st));
    int64_t n = tg_shape(st)[0];
    tg_tensor *ax = c->n_in > 3 && c->in[3] ? c->in[3] : tg_range(TG_INT64, 0, (double)n, 1);
    tg_tensor *sp = c->n_in > 4 && c->in[4] ? c->in[4] : tg_full(TG_INT64, 1, &n, 1);
    return done(c, 0, tg_slice_by(x, st, en, ax, sp));
}

tg_status onnx_map_slice(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data");
    if (x && oi_req(c, 1, "starts") &&
        !(onnx_known(c, 1) && onnx_known(c, 2) && onnx_known(c, 3) && onnx_known(c, 4)))
        return slice_at_run(c, x);
    int64_t *st, *en, *ax = NULL, *sp = NULL, n, ne, na = 0, ns = 0;
    tg_status s = x ? oi_ints(c, 1, "starts", &st, &n) : tg_last_status();
    if (s == TG_OK)
        s = oi_ints(c, 2, "ends", &en, &ne);
    if (s == TG_OK && c->n_in > 3 && c->in[3])
        s = oi_ints(c, 3, "axes", &ax, &na);
    if (s == TG_OK && c->n_in > 4 && c->in[4])
        s = oi_ints(c, 4, "steps", &sp, &ns);
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x);
    if (ne != n || (ax && na != n) || (sp && ns != n) || n > r)
        return onnx_err(c, TG_ERR_IO, "starts, ends, axes and steps should have the same "
                        "length (at most the rank %d)", r);
    for (int64_t i = 0; i < n; i++) { /* a sliced dim known only when the graph runs */
        int64_t a = ax ? ax[i] : i;
        a = a < 0 ? a + r : a;
        if (a >= 0 && a < r && tg_shape(x)[a] < 0)
            return slice_at_run(c, x);
    }
    bool seen[TG_MAX_DIMS] = {false};
    tg_tensor *y = x;
    for (int64_t i = 0; i < n; i++) {
        int a;
        if ((s = onnx_axis(c, ax ? ax[i] : i, r, "axes value", &a)) != TG_OK)
            return s;
        if (seen[a])
            return onnx_err(c, TG_ERR_IO, "axes repeats axis %d", a);
        seen[a] = true;
        int64_t dim = tg_shape(x)[a], step = sp ? sp[i] : 1;
        int64_t b = st[i], e = en[i];
        if (step == 0)
            return onnx_err(c, TG_ERR_IO, "steps must not be 0");
        /* a step longer than the axis takes one element: bound it */
        if (step > dim + 1)
            step = dim + 1;
        if (step < -(dim + 1))
            step = -(dim + 1);
        if (b < 0)
            b = b < -dim ? 0 : b + dim;
        if (e < 0)
            e = e < -dim ? -1 : e + dim;
        if (step > 0) {
            b = onnx_clamp64(b, 0, dim);
            e = onnx_clamp64(e, 0, dim);
            y = tg_slice(y, a, b, e < b ? b : e, step);
        } else {
            b = onnx_clamp64(b, 0, dim - 1);
            e = onnx_clamp64(e, -1, dim - 1);
            y = dim ? reverse_slice(y, a, b, e, step) : y;
        }
        if (!y)
            return tg_last_status();
    }
    return done(c, 0, y);
}
