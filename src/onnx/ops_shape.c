/* ONNX shape and data-movement ops -> tensorgraph: Reshape, Slice, Split,
 * Gather, Pad, Shape, Constant, Cast and the rest of that family. */
#include "onnx/ops.h"
#include "ops/op.h"
#include "core/size_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tg_status done(onnx_ictx *c, int i, tg_tensor *y)
{
    c->out[i] = y;
    return y ? TG_OK : tg_last_status();
}

/* axes from the attribute (opset < since) or the optional input 1 */
static tg_status read_axes(onnx_ictx *c, int since, int64_t **axes, int64_t *n, bool *given)
{
    *given = false;
    *n = 0;
    *axes = NULL;
    if (c->version < since) {
        const int64_t *v;
        int k;
        tg_status s = oa_ints(c, "axes", &v, &k);
        if (s != TG_OK || k < 0)
            return s;
        *axes = onnx_tmp_alloc(c, (size_t)k * sizeof **axes);
        if (!*axes)
            return tg_last_status();
        memcpy(*axes, v, (size_t)k * sizeof **axes);
        *n = k;
        *given = true;
        return TG_OK;
    }
    if (onnx_attr(c, "axes"))
        return onnx_err(c, TG_ERR_IO, "axes is an input from opset %d, not an attribute",
                        since);
    if (c->n_in < 2 || !c->in[1])
        return TG_OK;
    *given = true;
    return oi_ints(c, 1, "axes", axes, n);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze: computed shapes ------------------------------ */
/* Reshape to a target the graph computes: reshape_by, the values the
 * import knows (those beside marked dims) as its hint */
static tg_status reshape_at_run(onnx_ictx *c, int64_t allowzero)
{
    tg_tensor *x = c->in[0], *v = c->in[1];
    if (tg_ndim(v) != 1 || tg_shape(v)[0] < 0 || tg_shape(v)[0] > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "shape should be 1-D of a known length of at "
                        "most %d", TG_MAX_DIMS);
    int64_t hint[TG_MAX_DIMS], n = c->dims[1] ? tg_numel(c->dims[1]) : 0;
    if (n && tg_copy_to(c->dims[1], TG_INT64, hint) != TG_OK)
        return tg_last_status();
    for (int64_t d = 0; d < n; d++) /* reshape_by's mark: INT64_MIN */
        hint[d] = hint[d] == ONNX_RUN_TIME_DIM ? INT64_MIN : hint[d];
    return done(c, 0, tg__reshape_by(x, onnx_as(v, TG_INT64), allowzero != 0, (int)n, hint));
}

static tg_status s_reshape(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data");
    int64_t *v, n, allowzero = 0;
    tg_status s = x ? TG_OK : tg_last_status();
    if (s == TG_OK && c->version >= 14)
        s = oa_int(c, "allowzero", 0, &allowzero);
    if (s == TG_OK && oi_req(c, 1, "shape") && !onnx_known(c, 1) && !c->dims[1])
        return reshape_at_run(c, allowzero);
    bool from_dims = s == TG_OK && onnx_use_dims(c, 1);
    if (s == TG_OK)
        s = oi_ints(c, 1, "shape", &v, &n);
    if (s != TG_OK)
        return s;
    if (n > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "shape has %lld dims (at most %d)",
                        (long long)n, TG_MAX_DIMS);
    int64_t shape[TG_MAX_DIMS], known = 1;
    int infer = -1;
    for (int i = 0; i < n; i++) {
        shape[i] = v[i];
        if (v[i] == ONNX_RUN_TIME_DIM && from_dims) {
            shape[i] = -1; /* an unknown dim of some shape: tg_reshape's rule */
            continue;
        }
        if (v[i] == 0 && !allowzero) {
            if (i >= tg_ndim(x))
                return onnx_err(c, TG_ERR_SHAPE, "shape[%d] = 0 copies a dim the input "
                                "(rank %d) does not have", i, tg_ndim(x));
            shape[i] = tg_shape(x)[i];
        } else if (v[i] == -1) {
            if (infer >= 0)
                return onnx_err(c, TG_ERR_SHAPE, "shape has more than one -1");
            infer = i;
            continue;
        } else if (v[i] < 0) {
            return onnx_err(c, TG_ERR_SHAPE, "shape[%d] = %lld is negative", i,
                            (long long)v[i]);
        }
        if (tg__size_mul_exceeds(known, shape[i], ONNX_IMPORT_MAX_ELEMENTS))
            return onnx_err(c, TG_ERR_SHAPE, "shape too large: shape value %lld makes "
                            "more than %lld elements", (long long)shape[i],
                            (long long)ONNX_IMPORT_MAX_ELEMENTS);
        known *= shape[i]; /* at most ONNX_IMPORT_MAX_ELEMENTS */
    }
    if (infer >= 0 && tg_numel(x) < 0) {
        shape[infer] = -1; /* unknown dims (graph mode): the view infers it when fed */
    } else if (infer >= 0) {
        if (known == 0 || tg_numel(x) % known)
            return onnx_err(c, TG_ERR_SHAPE, "cannot infer the -1 in the shape: %lld "
                            "elements, %lld in the other dims", (long long)tg_numel(x),
                            (long long)known);
        shape[infer] = tg_numel(x) / known;
    }
    tg_tensor *y = tg_reshape(x, (int)n, shape);
    if (!y && from_dims) { /* the marks are not dims kept in place: as values */
        tg_clear_error();
        return reshape_at_run(c, allowzero);
    }
    return done(c, 0, y);
}

static tg_status s_flatten(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    int64_t a;
    tg_status s = x ? oa_int(c, "axis", 1, &a) : tg_last_status();
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x);
    if (a < -r || a > r)
        return onnx_err(c, TG_ERR_IO, "axis %lld is out of range for rank %d", (long long)a, r);
    if (a < 0)
        a += r;
    int64_t shape[2] = {1, 1};
    for (int i = 0; i < r; i++) /* an unknown dim (-1) makes its side unknown */
        shape[i >= a] = shape[i >= a] < 0 || tg_shape(x)[i] < 0 ? -1
                                                                 : shape[i >= a] * tg_shape(x)[i];
    return done(c, 0, tg_reshape(x, 2, shape));
}

static tg_status s_squeeze(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data");
    int64_t *axes, n;
    bool given;
    tg_status s = x ? read_axes(c, 13, &axes, &n, &given) : tg_last_status();
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x);
    bool drop[TG_MAX_DIMS] = {false};
    for (int i = 0; i < r; i++)
        drop[i] = !given && tg_shape(x)[i] == 1;
    for (int64_t i = 0; given && i < n; i++) {
        int a;
        if ((s = onnx_axis(c, axes[i], r, "axes value", &a)) != TG_OK)
            return s;
        if (tg_shape(x)[a] != 1)
            return onnx_err(c, TG_ERR_SHAPE, "cannot squeeze axis %d of size %lld", a,
                            (long long)tg_shape(x)[a]);
        drop[a] = true;
    }
    int64_t shape[TG_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < r; i++)
        if (!drop[i])
            shape[k++] = tg_shape(x)[i];
    return done(c, 0, tg_reshape(x, k, shape));
}

static tg_status s_unsqueeze(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data");
    int64_t *axes, n;
    bool given;
    tg_status s = x ? read_axes(c, 13, &axes, &n, &given) : tg_last_status();
    if (s != TG_OK)
        return s;
    if (!given)
        return onnx_err(c, TG_ERR_IO, "axes is required");
    int r = tg_ndim(x) + (int)n;
    if (r > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "the result would have rank %d (at most %d)",
                        r, TG_MAX_DIMS);
    bool ins[TG_MAX_DIMS] = {false};
    for (int64_t i = 0; i < n; i++) {
        int a;
        if ((s = onnx_axis(c, axes[i], r, "axes value", &a)) != TG_OK)
            return s;
        if (ins[a])
            return onnx_err(c, TG_ERR_IO, "axes repeats axis %d", a);
        ins[a] = true;
    }
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0, k = 0; i < r; i++)
        shape[i] = ins[i] ? 1 : tg_shape(x)[k++];
    return done(c, 0, tg_reshape(x, r, shape));
}

static tg_status s_transpose(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data");
    const int64_t *p;
    int n;
    tg_status s = x ? oa_ints(c, "perm", &p, &n) : tg_last_status();
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x), perm[TG_MAX_DIMS];
    if (n >= 0 && n != r)
        return onnx_err(c, TG_ERR_IO, "perm has %d values for rank %d", n, r);
    for (int i = 0; i < r; i++) {
        if (n >= 0 && (p[i] < 0 || p[i] >= r))
            return onnx_err(c, TG_ERR_IO, "perm value %lld is out of range", (long long)p[i]);
        perm[i] = n >= 0 ? (int)p[i] : r - 1 - i;
    }
    return done(c, 0, tg_permute(x, perm));
}

/* ---- Concat, Split ----------------------------------------------------------------------------- */
static tg_status s_concat(onnx_ictx *c)
{
    int64_t a;
    tg_status s = oa_int(c, "axis", 0, &a);
    if (s != TG_OK)
        return s;
    if (!onnx_attr(c, "axis"))
        return onnx_err(c, TG_ERR_IO, "attribute axis is required");
    for (int i = 0; i < c->n_in; i++)
        if (!c->in[i])
            return onnx_err(c, TG_ERR_IO, "input %d is empty (\"\")", i);
    int axis;
    if ((s = onnx_axis(c, a, tg_ndim(c->in[0]), "axis", &axis)) != TG_OK)
        return s;
    if (c->n_in == 1)
        return done(c, 0, c->in[0]);
    return done(c, 0, tg_concat(c->n_in, c->in, axis));
}

static tg_status s_split(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    int64_t a, *sizes = NULL, n = 0;
    tg_status s = x ? oa_int(c, "axis", 0, &a) : tg_last_status();
    int axis;
    if (s == TG_OK)
        s = onnx_axis(c, a, tg_ndim(x), "axis", &axis);
    if (s != TG_OK)
        return s;
    int nout = c->n_out;
    if (c->version < 13) {
        const int64_t *v;
        int k;
        if ((s = oa_ints(c, "split", &v, &k)) != TG_OK)
            return s;
        if (k >= 0) {
            sizes = onnx_tmp_alloc(c, (size_t)k * sizeof *sizes);
            if (!sizes)
                return tg_last_status();
            memcpy(sizes, v, (size_t)k * sizeof *sizes);
            n = k;
        }
    } else if (c->n_in > 1 && c->in[1]) {
        if ((s = oi_ints(c, 1, "split", &sizes, &n)) != TG_OK)
            return s;
    }
    int64_t dim = tg_shape(x)[axis];
    if (!sizes) {
        if (dim % nout)
            return onnx_err(c, TG_ERR_SHAPE, "axis %d of size %lld does not split into %d "
                            "equal parts", axis, (long long)dim, nout);
        sizes = onnx_tmp_alloc(c, (size_t)nout * sizeof *sizes);
        if (!sizes)
            return tg_last_status();
        for (int i = 0; i < nout; i++)
            sizes[i] = dim / nout;
        n = nout;
    }
    if (n != nout)
        return onnx_err(c, TG_ERR_IO, "split has %lld sizes for %d outputs", (long long)n, nout);
    int64_t total = 0;
    for (int i = 0; i < nout; i++) {
        if (sizes[i] < 0 || sizes[i] > dim)
            return onnx_err(c, TG_ERR_IO, "split size %lld is negative or larger than "
                            "the axis (%lld)", (long long)sizes[i], (long long)dim);
        total += sizes[i];
    }
    if (total != dim)
        return onnx_err(c, TG_ERR_SHAPE, "split sizes add up to %lld, axis %d has %lld",
                        (long long)total, axis, (long long)dim);
    /* slices (views) rather than tg_split: zero-size parts are fine */
    int64_t at = 0;
    for (int i = 0; i < nout; at += sizes[i], i++)
        if ((c->out[i] = tg_slice(x, axis, at, at + sizes[i], 1)) == NULL)
            return tg_last_status();
    return TG_OK;
}

/* ---- Gather (numpy take along an axis), Expand, Tile ---------------------------------------- */
static tg_status s_gather(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data"), *idx = x ? oi_req(c, 1, "indices") : NULL;
    int64_t a;
    tg_status s = idx ? oa_int(c, "axis", 0, &a) : tg_last_status();
    int axis;
    if (s == TG_OK)
        s = onnx_axis(c, a, tg_ndim(x), "axis", &axis);
    if (s != TG_OK)
        return s;
    if (tg_dtype_of(idx) != TG_INT64 && tg_dtype_of(idx) != TG_INT32)
        return onnx_err(c, TG_ERR_IO, "indices should be int32 or int64, got %s",
                        tg_dtype_name(tg_dtype_of(idx)));
    int r = tg_ndim(x), q = tg_ndim(idx);
    if (r - 1 + q > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "the result would have rank %d", r - 1 + q);
    int64_t dim = tg_shape(x)[axis], cnt = tg_numel(idx);
    /* negative indices count from the end */
    tg_tensor *i64 = onnx_as(idx, TG_INT64);
    tg_tensor *flat = tg_reshape(i64, 1, &cnt);
    tg_tensor *norm = tg_where(tg_lt(flat, tg_scalar(TG_INT64, 0)),
                               tg_add_scalar(flat, (double)dim), flat);
    tg_tensor *y = tg_index_select(x, axis, norm);
    int64_t shape[TG_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < axis; i++)
        shape[k++] = tg_shape(x)[i];
    for (int i = 0; i < q; i++)
        shape[k++] = tg_shape(idx)[i];
    for (int i = axis + 1; i < r; i++)
        shape[k++] = tg_shape(x)[i];
    return done(c, 0, tg_reshape(y, k, shape));
}

/* Expand or Tile whose target or repeats a graph computes: expand_by or
 * tile_by on the value, with the dims the import knows (the known values
 * where the input carries marked dims) as the op's hint */
static tg_status by_at_run(onnx_ictx *c, bool expand)
{
    tg_tensor *x = c->in[0], *v = c->in[1];
    if (tg_ndim(v) != 1 || tg_shape(v)[0] < 0 || tg_shape(v)[0] > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "input 1 should be 1-D of a known length of "
                        "at most %d", TG_MAX_DIMS);
    if (!expand && tg_shape(v)[0] != tg_ndim(x))
        return onnx_err(c, TG_ERR_IO, "repeats has %lld values for rank %d",
                        (long long)tg_shape(v)[0], tg_ndim(x));
    int64_t hint[TG_MAX_DIMS], n = c->dims[1] ? tg_numel(c->dims[1]) : 0;
    if (n && tg_copy_to(c->dims[1], TG_INT64, hint) != TG_OK)
        return tg_last_status();
    for (int64_t d = 0; d < n; d++)
        hint[d] = hint[d] == ONNX_RUN_TIME_DIM ? -1 : hint[d];
    tg_tensor *vi = onnx_as(v, TG_INT64);
    return done(c, 0, expand ? tg__expand_by(x, vi, (int)n, hint)
                             : tg__tile_by(x, vi, (int)n, hint));
}

static tg_status s_expand(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    if (x && oi_req(c, 1, "shape") && !onnx_known(c, 1) && !c->dims[1])
        return by_at_run(c, true);
    int64_t *v, n;
    bool from_dims = onnx_use_dims(c, 1);
    tg_status s = x ? oi_ints(c, 1, "shape", &v, &n) : tg_last_status();
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x), nd = (int)(n > r ? n : r);
    if (n > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "shape has %lld dims", (long long)n);
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        int xi = i - (nd - r), si = i - (nd - (int)n);
        int64_t dx = xi >= 0 ? tg_shape(x)[xi] : 1, ds = si >= 0 ? v[si] : 1;
        if (from_dims && ds == ONNX_RUN_TIME_DIM) {
            /* a size known when the graph runs: the input's own dim there
             * (-1 keeps it), which ONNX's broadcast requires unless it is
             * 1; a 1 expanded to it takes the size from the shape's value */
            if (dx == 1)
                return by_at_run(c, true);
            shape[i] = dx;
            continue;
        }
        if (dx < 0 && ds != 1) /* the input's unknown dim must be 1 or ds */
            return by_at_run(c, true);
        if (dx != ds && dx != 1 && ds != 1)
            return onnx_err(c, TG_ERR_SHAPE, "input dim %lld and shape value %lld do not "
                            "broadcast", (long long)dx, (long long)ds);
        shape[i] = dx == 1 ? ds : dx;
    }
    int64_t sized[TG_MAX_DIMS]; /* an unknown dim (-1) counts as 1 */
    for (int i = 0; i < nd; i++)
        sized[i] = shape[i] < 0 ? 1 : shape[i];
    if ((s = onnx_check_numel(c, nd, sized, "the result")) != TG_OK)
        return s;
    return done(c, 0, tg_expand(x, nd, shape));
}

static tg_status s_tile(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    if (x && oi_req(c, 1, "repeats") && (!onnx_known(c, 1) || tg_numel(x) < 0))
        return by_at_run(c, false); /* repeats or dims known when the graph runs */
    int64_t *v, n;
    tg_status s = x ? oi_ints(c, 1, "repeats", &v, &n) : tg_last_status();
    if (s != TG_OK)
        return s;
    if (n != tg_ndim(x))
        return onnx_err(c, TG_ERR_IO, "repeats has %lld values for rank %d", (long long)n,
                        tg_ndim(x));
    int64_t shape[TG_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        if (v[i] < 0)
            return onnx_err(c, TG_ERR_IO, "repeats must be non-negative");
        if (tg__size_mul_exceeds(tg_shape(x)[i], v[i], ONNX_IMPORT_MAX_ELEMENTS))
            return onnx_err(c, TG_ERR_UNSUPPORTED, "shape too large: the result would "
                            "exceed %lld elements", (long long)ONNX_IMPORT_MAX_ELEMENTS);
        shape[i] = tg_shape(x)[i] * v[i];
    }
    if ((s = onnx_check_numel(c, (int)n, shape, "the result")) != TG_OK)
        return s;
    return done(c, 0, tg_tile(x, (int)n, v));
}

/* ---- Pad (constant, reflect, edge; negative pads crop first) ----------------------------------- */
static tg_status s_pad(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data");
    const char *mode;
    tg_status s = x ? oa_string(c, "mode", "constant", &mode) : tg_last_status();
    if (s != TG_OK)
        return s;
    tg_pad_mode pm = !strcmp(mode, "constant") ? TG_PAD_CONSTANT
                     : !strcmp(mode, "reflect") ? TG_PAD_REFLECT
                     : !strcmp(mode, "edge") ? TG_PAD_REPLICATE : (tg_pad_mode)-1;
    if ((int)pm < 0)
        return onnx_err(c, TG_ERR_IO, "Pad mode '%s' is not one of constant, reflect, edge",
                        mode);
    int64_t *p, n;
    double value = 0;
    if ((s = oi_ints(c, 1, "pads", &p, &n)) != TG_OK)
        return s;
    if (c->n_in > 2 && c->in[2] && (s = oi_scalar(c, 2, "constant_value", &value)) != TG_OK)
        return s;
    int r = tg_ndim(x);
    if (n != 2 * r)
        return onnx_err(c, TG_ERR_IO, "pads has %lld values for rank %d (expected %d)",
                        (long long)n, r, 2 * r);
    int64_t pads[2 * TG_MAX_DIMS], shape[TG_MAX_DIMS];
    tg_tensor *y = x;
    for (int i = 0; i < r; i++) {
        int64_t b = p[i], e = p[r + i];
        if (b < -ONNX_IMPORT_MAX_ELEMENTS || e < -ONNX_IMPORT_MAX_ELEMENTS)
            return onnx_err(c, TG_ERR_IO, "pads are too negative");
        /* negative pads remove elements */
        if (b < 0 || e < 0) {
            int64_t dim = tg_shape(y)[i];
            int64_t lo = b < 0 ? -b : 0, hi = dim - (e < 0 ? -e : 0);
            if (hi < lo)
                return onnx_err(c, TG_ERR_SHAPE, "negative pads remove more than axis %d "
                                "has", i);
            y = tg_slice(y, i, lo, hi, 1);
        }
        pads[2 * i] = b > 0 ? b : 0;
        pads[2 * i + 1] = e > 0 ? e : 0;
        if (pads[2 * i] > ONNX_IMPORT_MAX_ELEMENTS || pads[2 * i + 1] > ONNX_IMPORT_MAX_ELEMENTS)
            return onnx_err(c, TG_ERR_UNSUPPORTED, "pads are too large");
        shape[i] = tg_shape(y)[i] + pads[2 * i] + pads[2 * i + 1];
    }
    if ((s = onnx_check_numel(c, r, shape, "the result")) != TG_OK)
        return s;
    return done(c, 0, tg_pad_ex(y, 2 * r, pads, pm, value));
}

/* ---- Range(start, limit, delta): the output of start's type -------------------------------------
 * Known scalars give a range of known length; bounds the graph computes
 * give range_by, whose length is known when the graph runs. */
static tg_status s_range(onnx_ictx *c)
{
    static const char *const what[3] = {"start", "limit", "delta"};
    double v[3];
    for (int i = 0; i < 3; i++)
        if (!oi_req(c, i, what[i]))
            return tg_last_status();
    if (!onnx_known(c, 0) || !onnx_known(c, 1) || !onnx_known(c, 2))
        return done(c, 0, tg_range_by(c->in[0], c->in[1], c->in[2]));
    for (int i = 0; i < 3; i++) {
        tg_status s = oi_req(c, i, what[i]) ? oi_scalar(c, i, what[i], &v[i]) : tg_last_status();
        if (s != TG_OK)
            return s;
    }
    double n = v[2] != 0 ? ceil((v[1] - v[0]) / v[2]) : 0;
    int64_t len = n > 0 && n < (double)INT64_MAX / 2 ? (int64_t)n : n > 0 ? INT64_MAX : 0;
    tg_status s = onnx_check_numel(c, 1, &len, "the range");
    return s != TG_OK ? s : done(c, 0, tg_range(tg_dtype_of(c->in[0]), v[0], v[1], v[2]));
}

/* ---- Shape, Constant, ConstantOfShape: values known at import time ---------------------------- */
static tg_status s_shape(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data");
    int64_t start = 0, end, r;
    tg_status s = x ? TG_OK : tg_last_status();
    r = x ? tg_ndim(x) : 0;
    end = r;
    if (s == TG_OK && c->version >= 15)
        s = oa_int(c, "start", 0, &start);
    if (s == TG_OK && c->version >= 15)
        s = oa_int(c, "end", r, &end);
    if (s != TG_OK)
        return s;
    if (start < 0)
        start += r;
    if (end < 0)
        end += r;
    start = onnx_clamp64(start, 0, r);
    end = onnx_clamp64(end, 0, r);
    int64_t n = end > start ? end - start : 0;
    int64_t dims[TG_MAX_DIMS];
    bool run_time = false;
    for (int64_t d = start; d < end; d++) {
        dims[d - start] = tg_shape(x)[d] < 0 ? ONNX_RUN_TIME_DIM : tg_shape(x)[d];
        run_time |= tg_shape(x)[d] < 0;
    }
    if (run_time) { /* known when the graph runs: read then */
        c->dims_out[0] = tg_from_data(TG_INT64, 1, &n, dims);
        return done(c, 0, tg_slice(tg_shape_of(x), 0, start, end, 1));
    }
    c->out[0] = tg_from_data(TG_INT64, 1, &n, dims);
    c->out_known[0] = true;
    return c->out[0] ? TG_OK : tg_last_status();
}

static tg_status s_constant(onnx_ictx *c)
{
    if (c->node->n_attribute != 1)
        return onnx_err(c, TG_ERR_IO, "needs exactly one attribute (value, value_float, ...), "
                        "has %zu", c->node->n_attribute);
    const char *nm = c->node->attribute[0].name;
    tg_tensor *t = NULL;
    tg_status s;
    if (!strcmp(nm, "value")) {
        s = oa_tensor(c, "value", &t);
    } else if (!strcmp(nm, "value_float") || !strcmp(nm, "value_int")) {
        double f = 0;
        int64_t i = 0;
        bool is_f = nm[6] == 'f';
        s = is_f ? oa_float(c, nm, 0, &f) : oa_int(c, nm, 0, &i);
        if (s == TG_OK)
            t = is_f ? tg_scalar(TG_FLOAT32, f) : tg_from_data(TG_INT64, 0, NULL, &i);
    } else if (!strcmp(nm, "value_floats") || !strcmp(nm, "value_ints")) {
        if (!strcmp(nm, "value_ints")) {
            const int64_t *v;
            int n;
            s = oa_ints(c, nm, &v, &n);
            int64_t len = n;
            if (s == TG_OK)
                t = tg_from_data(TG_INT64, 1, &len, v);
        } else {
            const float *v;
            int n;
            s = oa_floats(c, nm, &v, &n);
            int64_t len = n;
            if (s == TG_OK)
                t = tg_from_data(TG_FLOAT32, 1, &len, v);
        }
    } else {
        return onnx_err(c, TG_ERR_UNSUPPORTED, "Constant with attribute '%s' is not "
                        "supported (value, value_float(s) and value_int(s) are)", nm);
    }
    if (s != TG_OK)
        return s;
    c->out_known[0] = true;
    return done(c, 0, t);
}

/* ConstantOfShape on a shape computed when the graph runs: full_by, its
 * dims the input's marked dims where the import has them */
static tg_status fill_at_run(onnx_ictx *c, tg_tensor *val)
{
    tg_tensor *shape = c->in[0];
    if (tg_ndim(shape) != 1 || tg_shape(shape)[0] < 0 || tg_shape(shape)[0] > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "input should be 1-D of a known length of at "
                        "most %d", TG_MAX_DIMS);
    int64_t hint[TG_MAX_DIMS], n = c->dims[0] ? tg_numel(c->dims[0]) : 0;
    if (n && tg_copy_to(c->dims[0], TG_INT64, hint) != TG_OK)
        return tg_last_status();
    for (int64_t d = 0; d < n; d++)
        hint[d] = hint[d] == ONNX_RUN_TIME_DIM ? -1 : hint[d];
    tg_dtype dt = val ? tg_dtype_of(val) : TG_FLOAT32;
    return done(c, 0, tg__full_by(onnx_as(shape, TG_INT64), dt, val ? tg_item(val) : 0,
                                  (int)n, hint));
}

static tg_status s_constant_of_shape(onnx_ictx *c)
{
    int64_t *v, n;
    tg_tensor *val = NULL;
    if (oi_req(c, 0, "input") && !onnx_known(c, 0)) {
        tg_status s = oa_tensor(c, "value", &val);
        if (s == TG_OK && val && tg_numel(val) != 1)
            s = onnx_err(c, TG_ERR_IO, "value should have one element, has %lld",
                         (long long)tg_numel(val));
        return s != TG_OK ? s : fill_at_run(c, val);
    }
    tg_status s = oi_ints(c, 0, "input", &v, &n);
    if (s == TG_OK)
        s = oa_tensor(c, "value", &val);
    if (s != TG_OK)
        return s;
    if (val && tg_numel(val) != 1)
        return onnx_err(c, TG_ERR_IO, "value should have one element, has %lld",
                        (long long)tg_numel(val));
    if (n > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "shape has %lld dims", (long long)n);
    if ((s = onnx_check_numel(c, (int)n, v, "the result")) != TG_OK)
        return s;
    tg_dtype dt = val ? tg_dtype_of(val) : TG_FLOAT32;
    double fill = val ? tg_item(val) : 0;
    c->out_known[0] = true;
    if (dt == TG_INT64 && val) { /* exact for large int64 values */
        tg_tensor *z = tg_zeros(dt, (int)n, v);
        return done(c, 0, z ? tg_add(z, tg_reshape(val, 0, NULL)) : NULL);
    }
    return done(c, 0, tg_full(dt, (int)n, v, fill));
}

/* ConstantFill (ONNX's experimental op, dropped from the standard; torch.onnx
 * writes it below opset 9 for the zero initial states of LSTM/GRU/RNN): a
 * tensor of `value` (default 0) in `dtype` (default FLOAT), whose shape is
 * the input's values (input_as_shape 1), the input's shape (0), or without
 * an input the `shape` attribute; `extra_shape` appended in every case */
static tg_status s_constant_fill(onnx_ictx *c)
{
    int64_t dtype, as_shape;
    double value;
    const int64_t *shape_attr, *extra;
    int n_shape_attr, n_extra;
    tg_status s = oa_int(c, "dtype", ONNX_FLOAT, &dtype);
    if (s == TG_OK)
        s = oa_int(c, "input_as_shape", 0, &as_shape);
    if (s == TG_OK)
        s = oa_float(c, "value", 0, &value);
    if (s == TG_OK)
        s = oa_ints(c, "shape", &shape_attr, &n_shape_attr);
    if (s == TG_OK)
        s = oa_ints(c, "extra_shape", &extra, &n_extra);
    if (s != TG_OK)
        return s;
    tg_dtype dt;
    if (dtype < INT32_MIN || dtype > INT32_MAX ||
        onnx_storage_dtype((int32_t)dtype, &dt) != TG_OK)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "dtype %s (%lld) is not supported",
                        onnx_data_type_name((int32_t)dtype), (long long)dtype);
    int64_t dims[TG_MAX_DIMS];
    int64_t n = 0;
    const int64_t *from = NULL;
    int64_t *vals;
    bool has_input = c->n_in > 0 && c->in[0];
    if (has_input && n_shape_attr >= 0)
        return onnx_err(c, TG_ERR_IO, "an input and a shape attribute: give one of them");
    if (has_input && as_shape) {
        if (tg_ndim(c->in[0]) != 1)
            return onnx_err(c, TG_ERR_IO, "with input_as_shape the input should be 1-D, is "
                            "%d-D", tg_ndim(c->in[0]));
        if ((s = oi_ints(c, 0, "input", &vals, &n)) != TG_OK)
            return s;
        from = vals;
    } else if (has_input) {
        n = tg_ndim(c->in[0]);
        from = tg_shape(c->in[0]);
    } else if (n_shape_attr >= 0) {
        n = n_shape_attr;
        from = shape_attr;
    } else if (as_shape) {
        return onnx_err(c, TG_ERR_IO, "input_as_shape is set but there is no input");
    }
    int64_t rank = n + (n_extra > 0 ? n_extra : 0);
    if (rank > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "the result has %lld dims", (long long)rank);
    for (int64_t i = 0; i < rank; i++) {
        dims[i] = i < n ? from[i] : extra[i - n];
        if (dims[i] < 0)
            return onnx_err(c, TG_ERR_IO, "dim %lld of the shape is negative (%lld)",
                            (long long)i, (long long)dims[i]);
    }
    if ((s = onnx_check_numel(c, (int)rank, dims, "the result")) != TG_OK)
        return s;
    c->out_known[0] = true;
    return done(c, 0, tg_full(dt, (int)rank, dims, value));
}

/* ---- Cast, Identity ------------------------------------------------------------------------------- */
/* x rounded to the nearest FLOAT16 (ties to even, overflow to inf) or
 * truncated to BFLOAT16, as a composite: m = 2^(exponent - mantissa bits)
 * and x = round(x / m) * m */
tg_tensor *onnx_round_to_half(tg_tensor *x, bool bfloat)
{
    tg_dtype dt = tg_dtype_of(x);
    tg_tensor *xd = onnx_as(x, TG_FLOAT64);
    tg_tensor *ax = tg_abs(xd);
    /* non-zero finite values; others pass through */
    tg_tensor *finite = tg_logical_and(tg_lt(ax, tg_scalar(TG_FLOAT64, INFINITY)),
                                       tg_gt(ax, tg_scalar(TG_FLOAT64, 0)));
    tg_tensor *safe = tg_where(finite, ax, tg_scalar(TG_FLOAT64, 1));
    tg_tensor *e = tg_floor(tg_div(tg_log(safe), tg_scalar(TG_FLOAT64, log(2.0))));
    /* log rounding: fix e so that 2^e <= |x| < 2^(e+1) */
    tg_tensor *two = tg_scalar(TG_FLOAT64, 2);
    e = tg_where(tg_gt(tg_pow(two, e), safe), tg_add_scalar(e, -1), e);
    e = tg_where(tg_le(tg_pow(two, tg_add_scalar(e, 1)), safe), tg_add_scalar(e, 1), e);
    if (!bfloat)
        e = tg_maximum(e, tg_scalar(TG_FLOAT64, -14)); /* subnormals */
    tg_tensor *m = tg_pow(two, tg_add_scalar(e, bfloat ? -7 : -10));
    tg_tensor *q = tg_div(safe, m);
    tg_tensor *r = tg_mul(bfloat ? tg_floor(q) : tg_round(q), m);
    if (!bfloat) /* beyond the largest half (65504) */
        r = tg_where(tg_ge(r, tg_scalar(TG_FLOAT64, 65520)), tg_scalar(TG_FLOAT64, INFINITY), r);
    tg_tensor *y = tg_where(finite, tg_mul(tg_sign(xd), r), xd);
    return onnx_as(y, dt == TG_FLOAT64 ? TG_FLOAT64 : TG_FLOAT32);
}

static tg_status s_cast(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    int64_t to;
    tg_status s = x ? oa_int(c, "to", 0, &to) : tg_last_status();
    if (s != TG_OK)
        return s;
    if (!onnx_attr(c, "to"))
        return onnx_err(c, TG_ERR_IO, "attribute to is required");
    tg_dtype dt;
    if (to < INT32_MIN || to > INT32_MAX || onnx_storage_dtype((int32_t)to, &dt) != TG_OK)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "Cast to %s (%lld) is not supported",
                        onnx_data_type_name((int32_t)to), (long long)to);
    tg_tensor *y = onnx_as(x, dt);
    /* narrow integer targets are held wider: values out of their range
     * stay as they are instead of wrapping around */
    if (to == ONNX_FLOAT16 || to == ONNX_BFLOAT16)
        y = onnx_round_to_half(y, to == ONNX_BFLOAT16);
    return done(c, 0, y);
}

static tg_status s_identity(onnx_ictx *c)
{
    if (c->seq_in[0] || c->none_in[0]) /* a sequence, or an optional without a value */
        return onnx_identity_any(c);
    return done(c, 0, oi_req(c, 0, "input"));
}

/* GatherElements: torch.gather (tg_gather); negative indices count from
 * the end of the axis */
static tg_status s_gather_elements(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data"), *idx = x ? oi_req(c, 1, "indices") : NULL;
    int64_t a;
    tg_status s = idx ? oa_int(c, "axis", 0, &a) : tg_last_status();
    int axis;
    if (s == TG_OK)
        s = onnx_axis(c, a, tg_ndim(x), "axis", &axis);
    if (s != TG_OK)
        return s;
    if (tg_dtype_of(idx) != TG_INT64 && tg_dtype_of(idx) != TG_INT32)
        return onnx_err(c, TG_ERR_IO, "indices should be int32 or int64, got %s",
                        tg_dtype_name(tg_dtype_of(idx)));
    tg_tensor *i64 = onnx_as(idx, TG_INT64);
    tg_tensor *norm = tg_where(tg_lt(i64, tg_scalar(TG_INT64, 0)),
                               tg_add_scalar(i64, (double)tg_shape(x)[axis]), i64);
    c->out[0] = tg_gather(x, axis, norm);
    return c->out[0] ? TG_OK : tg_last_status();
}

const onnx_op_entry onnx_ops_shape[] = {
    {"Reshape", {1, 5, 13, 14}, 2, 2, 1, 1, s_reshape, 0},
    {"Flatten", {1, 9, 11, 13}, 1, 1, 1, 1, s_flatten, 0},
    {"Squeeze", {1, 11, 13}, 1, 2, 1, 1, s_squeeze, 0},
    {"Unsqueeze", {1, 11, 13}, 1, 2, 1, 1, s_unsqueeze, 0},
    {"Transpose", {1, 13}, 1, 1, 1, 1, s_transpose, 0},
    {"Slice", {1, 10, 11, 13}, 3, 5, 1, 1, onnx_map_slice, 0},
    {"Concat", {1, 4, 11, 13}, 1, -1, 1, 1, s_concat, 0},
    {"Split", {1, 2, 11, 13}, 1, 2, 1, ONNX_MAX_IO, s_split, 0},
    {"Gather", {1, 11, 13}, 2, 2, 1, 1, s_gather, 0},
    {"GatherElements", {11, 13}, 2, 2, 1, 1, s_gather_elements, 0},
    {"Expand", {8, 13}, 2, 2, 1, 1, s_expand, 0},
    {"Tile", {1, 6, 13}, 2, 2, 1, 1, s_tile, 0},
    {"Pad", {1, 2, 11, 13}, 2, 3, 1, 1, s_pad, 0},
    {"Shape", {1, 13, 15}, 1, 1, 1, 1, s_shape, 0},
    {"Constant", {1, 9, 11, 12, 13}, 0, 0, 1, 1, s_constant, 0},
    {"ConstantOfShape", {9}, 1, 1, 1, 1, s_constant_of_shape, 0},
    {"ConstantFill", {1}, 0, 1, 1, 1, s_constant_fill, 0},
    {"Range", {11}, 3, 3, 1, 1, s_range, 0},
    {"Cast", {1, 6, 9, 13}, 1, 1, 1, 1, s_cast, 0},
    {"Identity", {1, 13, 14, 16}, 1, 1, 1, 1, s_identity, ONNX_OP_SEQ},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
