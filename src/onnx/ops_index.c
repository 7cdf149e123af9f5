/* ONNX's index ops composed of tensorgraph ops: ScatterElements (scatter;
 * reductions add, x + scatter_add, and mul), ScatterND (scatter of rows at the
 * tuples' linear positions), GatherND (the index tuples made linear
 * positions into the data flattened over the indexed dims, then one
 * index_select) and OneHot (positions compared with the indices). Negative
 * indices count from the end, as ONNX says. */
#include "onnx/ops.h"

#include "ops/array.h"

#include <string.h>

static tg_status done(onnx_ictx *c, tg_tensor *y)
{
    c->out[0] = y;
    return y ? TG_OK : tg_last_status();
}

/* idx as int64 with negative values moved up by n (idx + n where idx < 0);
 * n is a tensor (0-d, or broadcasting against idx) or NULL for a number */
static tg_tensor *wrap(tg_tensor *idx, tg_tensor *n_t, int64_t n)
{
    tg_tensor *i64 = onnx_as(idx, TG_INT64);
    tg_tensor *up = n_t ? tg_add(i64, n_t) : tg_add_scalar(i64, (double)n);
    return tg_where(tg_lt(i64, tg_scalar(TG_INT64, 0)), up, i64);
}

static tg_status need_index(onnx_ictx *c, tg_tensor *idx, const char *what)
{
    if (tg_dtype_of(idx) == TG_INT64 || tg_dtype_of(idx) == TG_INT32)
        return TG_OK;
    return onnx_err(c, TG_ERR_IO, "%s should be int32 or int64, got %s", what,
                    tg_dtype_name(tg_dtype_of(idx)));
}

/* zeros of x's shape with u added at idx along axis (the op scatter_add) */
static tg_tensor *scatter_add(tg_tensor *x, int axis, tg_tensor *idx, tg_tensor *u)
{
    tg_tensor *in[2] = {u, idx};
    tg_attr a[2] = {TG_AI("axis", axis), TG_AINTS("shape", tg_shape(x), tg_ndim(x))};
    return tg_op_call(&tg_op_scatter_add, 2, in, a, 2);
}

/* x times the product of the updates u landing on each of its elements
 * (at idx along axis; 1 where none does), in x's type. The product is
 * taken in float64 as a magnitude exp(sum of log |u|) (a zero gives
 * exp(-inf) = 0) and a sign from the parity of the negatives, so that
 * repeated indices all multiply (the scatter ops add); integer data is
 * rounded back, the float product being within an ulp of the integer */
static tg_tensor *scatter_mul(tg_tensor *x, int axis, tg_tensor *idx, tg_tensor *u)
{
    tg_tensor *x64 = onnx_as(x, TG_FLOAT64), *u64 = onnx_as(u, TG_FLOAT64);
    tg_tensor *logs = scatter_add(x64, axis, idx, tg_log(tg_abs(u64)));
    tg_tensor *neg = onnx_as(tg_lt(u64, tg_scalar(TG_FLOAT64, 0)), TG_FLOAT64);
    tg_tensor *odd = tg_remainder(scatter_add(x64, axis, idx, neg), tg_scalar(TG_FLOAT64, 2));
    tg_tensor *sign = tg_sub(tg_scalar(TG_FLOAT64, 1), tg_mul_scalar(odd, 2));
    tg_tensor *y = tg_mul(x64, tg_mul(tg_exp(logs), sign));
    return onnx_as(tg_dtype_is_float(tg_dtype_of(x)) ? y : tg_round(y), tg_dtype_of(x));
}

/* ---- ScatterElements(axis, reduction) ----------------------------------------------- */
static tg_status x_scatter_elements(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data"), *idx = x ? oi_req(c, 1, "indices") : NULL;
    tg_tensor *upd = idx ? oi_req(c, 2, "updates") : NULL;
    int64_t a;
    const char *red = "none";
    tg_status s = upd ? oa_int(c, "axis", 0, &a) : tg_last_status();
    if (s == TG_OK && c->version >= 16)
        s = oa_string(c, "reduction", "none", &red);
    int axis;
    if (s == TG_OK)
        s = onnx_axis(c, a, tg_ndim(x), "axis", &axis);
    if (s == TG_OK)
        s = need_index(c, idx, "indices");
    if (s != TG_OK)
        return s;
    if (tg_ndim(idx) != tg_ndim(upd) ||
        memcmp(tg_shape(idx), tg_shape(upd), (size_t)tg_ndim(idx) * sizeof(int64_t)))
        return onnx_err(c, TG_ERR_SHAPE, "updates should have the shape of indices");
    tg_tensor *norm = wrap(idx, NULL, tg_shape(x)[axis]);
    tg_tensor *u = onnx_as(upd, tg_dtype_of(x));
    if (!strcmp(red, "none"))
        return done(c, tg_scatter(x, axis, norm, u));
    if (!strcmp(red, "add")) /* repeated indices all add */
        return done(c, onnx_as(tg_add(x, scatter_add(x, axis, norm, u)), tg_dtype_of(x)));
    if (!strcmp(red, "mul"))
        return done(c, scatter_mul(x, axis, norm, u));
    return onnx_err(c, TG_ERR_UNSUPPORTED, "reduction '%s' is not supported (none, add and "
                    "mul are)", red);
}

/* the linear positions [B, M, 1] of index tuples i3 [B, M, k] into the
 * k dims `dims` (P elements) flattened: each index (negative ones from
 * the end) times its dim's stride */
static tg_tensor *tuple_positions(tg_tensor *i3, const int64_t *dims, int64_t k, int64_t P)
{
    tg_tensor *lin = NULL;
    int64_t stride = P;
    for (int64_t j = 0; j < k; j++) {
        stride /= dims[j] ? dims[j] : 1;
        tg_tensor *ij = wrap(tg_slice(i3, 2, j, j + 1, 1), NULL, dims[j]);
        tg_tensor *term = tg_mul(ij, tg_scalar(TG_INT64, (double)stride));
        lin = lin ? tg_add(lin, term) : term;
    }
    return lin;
}

/* ---- ScatterND(reduction) ---------------------------------------------------------------
 * updates [indices.shape[:-1], data.shape[k:]] written (or added) at the
 * k-tuples of indices: the data as [P, S] rows (P the indexed dims'
 * elements, S the rest's), one scatter of the update rows at their
 * tuples' linear positions */
static tg_status x_scatter_nd(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data"), *idx = x ? oi_req(c, 1, "indices") : NULL;
    tg_tensor *upd = idx ? oi_req(c, 2, "updates") : NULL;
    const char *red = "none";
    tg_status s = upd ? TG_OK : tg_last_status();
    if (s == TG_OK && c->version >= 16)
        s = oa_string(c, "reduction", "none", &red);
    if (s == TG_OK)
        s = need_index(c, idx, "indices");
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x), q = tg_ndim(idx), nu = tg_ndim(upd);
    const int64_t *xs = tg_shape(x), *is = tg_shape(idx), *us = tg_shape(upd);
    int64_t k = q ? is[q - 1] : 0;
    if (q < 1 || k < 1 || k > r)
        return onnx_err(c, TG_ERR_SHAPE, "indices should end in a dim of 1 to %d (data's "
                        "rank), has shape rank %d ending in %lld", r, q, (long long)k);
    bool shape_ok = nu == q - 1 + r - k;
    for (int i = 0; shape_ok && i < q - 1; i++)
        shape_ok = us[i] == is[i];
    for (int i = 0; shape_ok && i < r - k; i++)
        shape_ok = us[q - 1 + i] == xs[k + i];
    if (!shape_ok)
        return onnx_err(c, TG_ERR_SHAPE, "updates should have the shape indices.shape[:-1] "
                        "+ data.shape[%lld:]", (long long)k);
    int64_t M = 1, P = 1, S = 1;
    for (int i = 0; i < q - 1; i++)
        M *= is[i];
    for (int i = 0; i < k; i++)
        P *= xs[i];
    for (int i = (int)k; i < r; i++)
        S *= xs[i];
    tg_tensor *lin = tuple_positions(tg_reshape(idx, 3, (int64_t[]){1, M, k}), xs, k, P);
    tg_tensor *rows = tg_expand(tg_reshape(lin, 2, (int64_t[]){M, 1}), 2, (int64_t[]){M, S});
    tg_tensor *x2 = tg_reshape(x, 2, (int64_t[]){P, S});
    tg_tensor *u2 = tg_reshape(onnx_as(upd, tg_dtype_of(x)), 2, (int64_t[]){M, S});
    tg_tensor *y;
    if (!strcmp(red, "none"))
        y = tg_scatter(x2, 0, rows, u2);
    else if (!strcmp(red, "add")) /* repeated tuples all add */
        y = onnx_as(tg_add(x2, scatter_add(x2, 0, rows, u2)), tg_dtype_of(x));
    else if (!strcmp(red, "mul"))
        y = scatter_mul(x2, 0, rows, u2);
    else
        return onnx_err(c, TG_ERR_UNSUPPORTED, "reduction '%s' is not supported (none, add "
                        "and mul are)", red);
    return done(c, tg_reshape(y, r, xs));
}

/* ---- GatherND(batch_dims) ----------------------------------------------------------- */
static tg_status x_gather_nd(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data"), *idx = x ? oi_req(c, 1, "indices") : NULL;
    int64_t b;
    tg_status s = idx ? oa_int(c, "batch_dims", 0, &b) : tg_last_status();
    if (s == TG_OK)
        s = need_index(c, idx, "indices");
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x), q = tg_ndim(idx);
    const int64_t *xs = tg_shape(x), *is = tg_shape(idx);
    if (b < 0 || b >= q || b >= r || q < 1)
        return onnx_err(c, TG_ERR_IO, "batch_dims %lld should be below the ranks of data "
                        "(%d) and indices (%d)", (long long)b, r, q);
    int64_t k = is[q - 1];
    if (k < 1 || k > r - b)
        return onnx_err(c, TG_ERR_SHAPE, "the last dim of indices (%lld) should be in [1, "
                        "%lld]", (long long)k, (long long)(r - b));
    for (int i = 0; i < b; i++)
        if (xs[i] != is[i])
            return onnx_err(c, TG_ERR_SHAPE, "batch dim %d differs: %lld in data, %lld in "
                            "indices", i, (long long)xs[i], (long long)is[i]);
    /* indices as [B, M, k]; data as [B * P, rest] with P the product of the
     * k indexed dims; the linear position of a tuple is its batch's
     * offset plus the sum of each index times its dim's stride in P */
    int64_t B = 1, M = 1, P = 1, rest[TG_MAX_DIMS];
    int nrest = 0;
    for (int i = 0; i < b; i++)
        B *= xs[i];
    for (int i = (int)b; i < q - 1; i++)
        M *= is[i];
    for (int i = (int)b; i < b + k; i++)
        P *= xs[i];
    for (int i = (int)(b + k); i < r; i++)
        rest[nrest++] = xs[i];
    tg_tensor *lin = tuple_positions(tg_reshape(idx, 3, (int64_t[]){B, M, k}), xs + b, k, P);
    /* each batch's first position (P == 0: the data is empty, and no
     * tuple is valid unless there are none) */
    int tok = onnx_eager_begin();
    tg_tensor *base = P ? tg_arange(TG_INT64, 0, (double)(B * P), (double)P)
                        : tg_zeros(TG_INT64, 1, &B);
    base = tg_reshape(base, 3, (int64_t[]){B, 1, 1});
    onnx_eager_end(tok);
    lin = tg_reshape(tg_add(lin, base), 1, (int64_t[]){B * M});
    int64_t flat[TG_MAX_DIMS + 1], out[TG_MAX_DIMS];
    flat[0] = B * P;
    memcpy(flat + 1, rest, (size_t)nrest * sizeof rest[0]);
    tg_tensor *g = tg_index_select(tg_reshape(x, nrest + 1, flat), 0, lin);
    int no = 0;
    for (int i = 0; i < q - 1; i++)
        out[no++] = is[i];
    if (no + nrest > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "the output would have %d dims (at most %d)",
                        no + nrest, TG_MAX_DIMS);
    memcpy(out + no, rest, (size_t)nrest * sizeof rest[0]);
    return done(c, tg_reshape(g, no + nrest, out));
}

/* ---- OneHot(axis): indices, depth (a known scalar), values [off, on] ---------------- */
static tg_status x_one_hot(onnx_ictx *c)
{
    tg_tensor *idx = oi_req(c, 0, "indices"), *vals = idx ? oi_req(c, 2, "values") : NULL;
    int64_t a;
    double depth_d;
    tg_status s = vals ? oa_int(c, "axis", -1, &a) : tg_last_status();
    if (s == TG_OK)
        s = oi_scalar(c, 1, "depth", &depth_d);
    if (s != TG_OK)
        return s;
    if (!(depth_d >= 1 && depth_d <= (double)ONNX_IMPORT_MAX_ELEMENTS))
        return onnx_err(c, TG_ERR_IO, "depth %g should be a positive count", depth_d);
    if (tg_numel(vals) != 2)
        return onnx_err(c, TG_ERR_IO, "values should have 2 elements (off, on), has %lld",
                        (long long)tg_numel(vals));
    int64_t depth = (int64_t)depth_d;
    int r = tg_ndim(idx), axis;
    if (r + 1 > TG_MAX_DIMS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "indices of rank %d: the output would have "
                        "more than %d dims", r, TG_MAX_DIMS);
    if ((s = onnx_axis(c, a, r + 1, "axis", &axis)) != TG_OK)
        return s;
    /* float indices are truncated, as ONNX's reference casts them */
    tg_tensor *i = wrap(tg_unsqueeze(onnx_as(idx, TG_INT64), axis), NULL, depth);
    int64_t shape[TG_MAX_DIMS];
    for (int d = 0; d <= r; d++)
        shape[d] = d == axis ? depth : 1;
    int tok = onnx_eager_begin();
    tg_tensor *pos = tg_reshape(tg_arange(TG_INT64, 0, (double)depth, 1), r + 1, shape);
    onnx_eager_end(tok);
    tg_tensor *off = tg_reshape(tg_slice(vals, 0, 0, 1, 1), 0, NULL);
    tg_tensor *on = tg_reshape(tg_slice(vals, 0, 1, 2, 1), 0, NULL);
    /* out-of-range indices match no position: all off */
    return done(c, tg_where(tg_eq(pos, i), on, off));
}

const onnx_op_entry onnx_ops_index[] = {
    {"ScatterElements", {11, 13, 16}, 3, 3, 1, 1, x_scatter_elements, 0},
    /* Scatter-9/11: ScatterElements under its older name (deprecated at 11) */
    {"Scatter", {9, 11}, 3, 3, 1, 1, x_scatter_elements, 0},
    {"GatherND", {11, 12, 13}, 2, 2, 1, 1, x_gather_nd, 0},
    {"ScatterND", {11, 13, 16}, 3, 3, 1, 1, x_scatter_nd, 0},
    {"OneHot", {9, 11}, 3, 3, 1, 1, x_one_hot, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
