/* ONNX Det and MaxUnpool, composed of differentiable tensorgraph ops.
 * Det: Gaussian elimination with partial pivoting unrolled over the
 * matrix size, each step's row swap a gather at a permutation computed
 * from the values (argmax of the column's magnitudes), so it works in
 * graph mode and gradients flow through the pivots' products.
 * MaxUnpool: the values written into zeros at their flat positions (one
 * scatter; MaxPool's Indices count over the whole output tensor). */
#include "onnx/ops_misc.h"

#include <string.h>

/* the most rows Det unrolls its elimination over (each a dozen ops) */
#define DET_MAX_ROWS 256

/* ---- Det ----------------------------------------------------------------------------------- */
/* one elimination step k over a [B, M, M]: pivots row k on the largest
 * magnitude at or below it, multiplies *det by the pivot (negated when
 * rows swapped), and clears column k below the pivot */
static tg_tensor *det_step(tg_tensor *a, tg_tensor *rows, int64_t k, int64_t B, int64_t M,
                           tg_tensor **det)
{
    tg_dtype dt = tg_dtype_of(a);
    tg_tensor *kk = tg_scalar(TG_INT64, (double)k);
    tg_tensor *col = tg_reshape(tg_slice(a, 2, k, k + 1, 1), 2, (int64_t[]){B, M});
    tg_tensor *score = tg_where(tg_ge(rows, kk), tg_abs(col), tg_scalar(dt, -1));
    tg_tensor *p = tg_argmax(score, 1, true); /* [B, 1] */
    tg_tensor *perm = tg_where(tg_eq(rows, kk), p, tg_where(tg_eq(rows, p), kk, rows));
    perm = tg_expand(tg_reshape(perm, 3, (int64_t[]){B, M, 1}), 3, (int64_t[]){B, M, M});
    a = tg_gather(a, 1, perm);
    tg_tensor *flip = tg_where(tg_ne(p, kk), tg_scalar(dt, -1), tg_scalar(dt, 1));
    tg_tensor *row_k = tg_slice(a, 1, k, k + 1, 1); /* [B, 1, M] */
    tg_tensor *pivot = tg_slice(row_k, 2, k, k + 1, 1); /* [B, 1, 1] */
    tg_tensor *f = tg_mul(tg_reshape(pivot, 1, &B), tg_reshape(flip, 1, &B));
    *det = *det ? tg_mul(*det, f) : f;
    if (k + 1 == M)
        return a;
    /* a zero pivot: the column is zero at and below k (the largest
     * magnitude was picked), the determinant 0; divide by 1 instead */
    tg_tensor *safe = tg_where(tg_eq(pivot, tg_scalar(dt, 0)), tg_scalar(dt, 1), pivot);
    tg_tensor *below = tg_gt(tg_reshape(rows, 3, (int64_t[]){1, M, 1}), kk);
    tg_tensor *l = tg_where(below, tg_div(tg_slice(a, 2, k, k + 1, 1), safe),
                            tg_scalar(dt, 0));
    return tg_sub(a, tg_mul(l, row_k));
}

tg_status misc_det(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    if (!x)
        return tg_last_status();
    int r = tg_ndim(x);
    const int64_t *xs = tg_shape(x);
    if (r < 2 || xs[r - 1] != xs[r - 2] || !tg_dtype_is_float(tg_dtype_of(x)))
        return onnx_err(c, TG_ERR_IO, "X should be floating-point square matrices [..., M, "
                        "M], is %s of rank %d", tg_dtype_name(tg_dtype_of(x)), r);
    int64_t M = xs[r - 1], B = 1;
    if (M > DET_MAX_ROWS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "matrices of %lld rows (at most %d)",
                        (long long)M, DET_MAX_ROWS);
    for (int d = 0; d < r - 2; d++)
        B *= xs[d];
    tg_tensor *det = NULL;
    if (M == 0) { /* the empty product */
        det = tg_ones(tg_dtype_of(x), 1, &B);
    } else {
        int tok = onnx_eager_begin();
        tg_tensor *rows = tg_reshape(tg_arange(TG_INT64, 0, (double)M, 1), 2,
                                     (int64_t[]){1, M});
        onnx_eager_end(tok);
        tg_tensor *a = tg_reshape(x, 3, (int64_t[]){B, M, M});
        for (int64_t k = 0; k < M && a; k++)
            a = det_step(a, rows, k, B, M, &det);
        if (!a)
            return tg_last_status();
    }
    return misc_done(c, det ? tg_reshape(det, r - 2, xs) : NULL);
}

/* ---- MaxUnpool(kernel_shape, strides, pads): X, I, output_shape -------------------------- */
static tg_status unpool_shape(onnx_ictx *c, tg_tensor *x, int64_t *out)
{
    int r = tg_ndim(x), ns = r - 2;
    const int64_t *k, *st, *pads;
    int nk, nst, np;
    tg_status s = oa_ints(c, "kernel_shape", &k, &nk);
    if (s == TG_OK)
        s = oa_ints(c, "strides", &st, &nst);
    if (s == TG_OK)
        s = oa_ints(c, "pads", &pads, &np);
    if (s != TG_OK)
        return s;
    if (ns < 1 || nk != ns || (nst >= 0 && nst != ns) || (np >= 0 && np != 2 * ns))
        return onnx_err(c, TG_ERR_IO, "kernel_shape (%d values), strides and pads should "
                        "fit X's %d spatial dims (X of rank %d)", nk, ns, r);
    out[0] = tg_shape(x)[0];
    out[1] = tg_shape(x)[1];
    for (int d = 0; d < ns; d++) {
        int64_t sd = nst >= 0 ? st[d] : 1, pb = np >= 0 ? pads[d] : 0;
        int64_t pe = np >= 0 ? pads[ns + d] : 0;
        if (k[d] < 1 || sd < 1 || pb < 0 || pe < 0 || k[d] > ONNX_IMPORT_MAX_ELEMENTS ||
            sd > ONNX_IMPORT_MAX_ELEMENTS || pb > ONNX_IMPORT_MAX_ELEMENTS ||
            pe > ONNX_IMPORT_MAX_ELEMENTS)
            return onnx_err(c, TG_ERR_IO, "kernel_shape and strides should be in [1, "
                            "2^28] and pads in [0, 2^28] (spatial dim %d)", d);
        out[2 + d] = (tg_shape(x)[2 + d] - 1) * sd + k[d] - pb - pe;
        if (out[2 + d] < 0)
            return onnx_err(c, TG_ERR_IO, "pads leave spatial dim %d with a negative size", d);
    }
    if (c->n_in > 2 && c->in[2]) { /* the output's shape given */
        int64_t *v, n;
        if ((s = oi_ints(c, 2, "output_shape", &v, &n)) != TG_OK)
            return s;
        if (n != r || v[0] != out[0] || v[1] != out[1])
            return onnx_err(c, TG_ERR_IO, "output_shape should have %d values starting with "
                            "X's batch and channels", r);
        for (int d = 2; d < r; d++) {
            if (v[d] < 0)
                return onnx_err(c, TG_ERR_IO, "output_shape[%d] = %lld is negative", d,
                                (long long)v[d]);
            out[d] = v[d];
        }
    }
    return onnx_check_numel(c, r, out, "the output");
}

tg_status misc_max_unpool(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X"), *idx = x ? oi_req(c, 1, "I") : NULL;
    if (!idx)
        return tg_last_status();
    int r = tg_ndim(x);
    if (r < 3 || r > TG_MAX_DIMS || tg_ndim(idx) != r ||
        memcmp(tg_shape(idx), tg_shape(x), (size_t)r * sizeof(int64_t)) ||
        tg_dtype_of(idx) != TG_INT64)
        return onnx_err(c, TG_ERR_IO, "I should be int64 of X's shape, X [N, C, D1, ...]");
    int64_t out[TG_MAX_DIMS];
    tg_status s = unpool_shape(c, x, out);
    if (s != TG_OK)
        return s;
    int64_t total = 1, n = tg_numel(x);
    for (int d = 0; d < r; d++)
        total *= out[d];
    tg_tensor *known = misc_value(c, 1);
    if (known) { /* indices are checked where the import has them */
        void *v;
        bool f;
        if ((s = misc_host_values(c, known, &v, &f)) != TG_OK)
            return s;
        for (int64_t i = 0; i < n; i++)
            if (((int64_t *)v)[i] < 0 || ((int64_t *)v)[i] >= total)
                return onnx_err(c, TG_ERR_IO, "I[%lld] = %lld is outside the output's %lld "
                                "elements", (long long)i, (long long)((int64_t *)v)[i],
                                (long long)total);
    }
    int tok = onnx_eager_begin();
    tg_tensor *zeros = tg_zeros(tg_dtype_of(x), 1, &total);
    onnx_eager_end(tok);
    tg_tensor *y = tg_scatter(zeros, 0, tg_reshape(idx, 1, &n), tg_reshape(x, 1, &n));
    return misc_done(c, y ? tg_reshape(y, r, out) : NULL);
}
