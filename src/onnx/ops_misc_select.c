/* ONNX ops that pick, move or shift elements, composed of tensorgraph ops:
 * BitShift (a multiply or a floor division by 2^shift in int64, wrapped to
 * the unsigned type's width), ReverseSequence (one gather along the time
 * axis at indices reversed within each batch entry's length), and the ops
 * whose output length depends on values, computed at import from the
 * value where the import has it (ops_misc.h's misc_value): Compress (an
 * index_select of the true positions, so gradients reach the data; where
 * the condition is computed when a graph runs, tg_nonzero's positions),
 * NonZero (tg_nonzero in both modes) and Unique (the unique op in both
 * modes, whose Y is an index_select of the first occurrences). */
#include "onnx/ops_misc.h"
#include "ops/op.h"

#include <string.h>

/* ---- BitShift(direction) ------------------------------------------------------------ */
/* the width of the unsigned type the operands hold: the declared ONNX
 * type where the import knows it, else the dtype's (UINT16 is held as
 * int32; an int64 of unknown declaration is taken as UINT64) */
static int shift_width(const onnx_ictx *c, tg_tensor *x)
{
    int32_t t = c->in_type[0] ? c->in_type[0] : c->in_type[1];
    switch (t) {
    case ONNX_UINT8: return 8;
    case ONNX_UINT16: return 16;
    case ONNX_UINT32: return 32;
    case ONNX_UINT64: return 64;
    default: break;
    }
    tg_dtype dt = tg_dtype_of(x);
    return dt == TG_UINT8 ? 8 : dt == TG_INT32 ? 16 : 64;
}

tg_status misc_bitshift(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X"), *y = x ? oi_req(c, 1, "Y") : NULL;
    const char *dir;
    tg_status s = y ? oa_string(c, "direction", NULL, &dir) : tg_last_status();
    if (s != TG_OK)
        return s;
    if (!dir || (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT")))
        return onnx_err(c, TG_ERR_IO, "direction should be LEFT or RIGHT, got %s",
                        dir ? dir : "none");
    tg_dtype dt = tg_dtype_of(x);
    if (dt != tg_dtype_of(y) || (dt != TG_UINT8 && dt != TG_INT32 && dt != TG_INT64))
        return onnx_err(c, TG_ERR_IO, "X and Y should be one unsigned integer type, got %s "
                        "and %s", tg_dtype_name(dt), tg_dtype_name(tg_dtype_of(y)));
    int bits = shift_width(c, x);
    tg_tensor *xi = onnx_as(x, TG_INT64), *yi = onnx_as(y, TG_INT64);
    bool left = !strcmp(dir, "LEFT");
    /* shifts of the width or more leave 0; uint64 values are held in
     * int64, so 63 bits are the most a left shift keeps */
    int limit = bits < 63 ? bits : 63;
    tg_tensor *yc = tg_clamp(yi, left && bits == 64 ? 1 : 0, 62);
    tg_tensor *pow2 = onnx_as(tg_pow(tg_scalar(TG_FLOAT64, 2), onnx_as(yc, TG_FLOAT64)),
                              TG_INT64);
    tg_tensor *r;
    if (!left) {
        r = tg_floor_divide(xi, pow2);
    } else if (bits < 64) { /* x mod 2^(bits - y), then shifted: below 2^bits */
        tg_tensor *room = onnx_as(tg_pow(tg_scalar(TG_FLOAT64, 2),
                                         onnx_as(tg_clamp(tg_sub(tg_scalar(TG_INT64, bits),
                                                                 yc), 0, 62),
                                                 TG_FLOAT64)),
                                  TG_INT64);
        r = tg_mul(tg_remainder(xi, room), pow2);
    } else { /* bits that would pass bit 62 are dropped before the product */
        tg_tensor *room = onnx_as(tg_pow(tg_scalar(TG_FLOAT64, 2),
                                         onnx_as(tg_sub(tg_scalar(TG_INT64, 63), yc),
                                                 TG_FLOAT64)),
                                  TG_INT64);
        r = tg_where(tg_eq(yi, tg_scalar(TG_INT64, 0)), xi,
                     tg_mul(tg_remainder(xi, room), pow2));
    }
    tg_tensor *gone = tg_logical_or(tg_ge(yi, tg_scalar(TG_INT64, limit)),
                                    tg_lt(yi, tg_scalar(TG_INT64, 0)));
    return misc_done(c, onnx_as(tg_where(gone, tg_scalar(TG_INT64, 0), r), dt));
}

/* ---- ReverseSequence(time_axis, batch_axis) ----------------------------------------- */
tg_status misc_reverse_sequence(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input"), *lens = x ? oi_req(c, 1, "sequence_lens") : NULL;
    int64_t ta, ba;
    tg_status s = lens ? oa_int(c, "time_axis", 0, &ta) : tg_last_status();
    if (s == TG_OK)
        s = oa_int(c, "batch_axis", 1, &ba);
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x);
    if (r < 2 || (ta != 0 && ta != 1) || (ba != 0 && ba != 1) || ta == ba)
        return onnx_err(c, TG_ERR_IO, "time_axis (%lld) and batch_axis (%lld) should be 0 "
                        "and 1 in some order over an input of rank >= 2 (rank %d)",
                        (long long)ta, (long long)ba, r);
    int64_t T = tg_shape(x)[ta], B = tg_shape(x)[ba];
    tg_dtype ldt = tg_dtype_of(lens);
    if ((ldt != TG_INT64 && ldt != TG_INT32) || tg_ndim(lens) != 1 || tg_shape(lens)[0] != B)
        return onnx_err(c, TG_ERR_IO, "sequence_lens should be int64 of shape [%lld] (the "
                        "batch dim), is %s of rank %d", (long long)B, tg_dtype_name(ldt),
                        tg_ndim(lens));
    tg_tensor *known = misc_value(c, 1);
    if (known) { /* a length past the time dim is the model's error */
        void *v;
        bool f;
        if ((s = misc_host_values(c, known, &v, &f)) != TG_OK)
            return s;
        for (int64_t i = 0; i < B; i++)
            if (((int64_t *)v)[i] < 0 || ((int64_t *)v)[i] > T)
                return onnx_err(c, TG_ERR_IO, "sequence_lens[%lld] = %lld is outside [0, "
                                "%lld]", (long long)i, (long long)((int64_t *)v)[i],
                                (long long)T);
    }
    int64_t tshape[TG_MAX_DIMS], bshape[TG_MAX_DIMS];
    for (int d = 0; d < r; d++)
        tshape[d] = bshape[d] = 1;
    tshape[ta] = T;
    bshape[ba] = B;
    int tok = onnx_eager_begin();
    tg_tensor *t = tg_reshape(tg_arange(TG_INT64, 0, (double)T, 1), r, tshape);
    onnx_eager_end(tok);
    /* unknown lengths are clamped: an index never leaves the dim */
    tg_tensor *L = tg_reshape(tg_clamp(onnx_as(lens, TG_INT64), 0, (double)T), r, bshape);
    tg_tensor *rev = tg_sub(tg_sub(L, tg_scalar(TG_INT64, 1)), t);
    tg_tensor *idx = tg_where(tg_lt(t, L), rev, t);
    idx = tg_expand(idx, r, tg_shape(x));
    return misc_done(c, tg_gather(x, (int)ta, idx));
}

/* ---- Compress(axis) ----------------------------------------------------------------------- */
tg_status misc_compress(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    tg_tensor *cond = x ? oi_req(c, 1, "condition") : NULL;
    if (!cond)
        return tg_last_status();
    if (tg_ndim(cond) != 1)
        return onnx_err(c, TG_ERR_IO, "condition should be 1-D, has rank %d", tg_ndim(cond));
    int axis = 0;
    tg_status s = TG_OK;
    if (onnx_attr(c, "axis")) {
        int64_t a;
        if ((s = oa_int(c, "axis", 0, &a)) != TG_OK ||
            (s = onnx_axis(c, a, tg_ndim(x), "axis", &axis)) != TG_OK)
            return s;
    } else { /* no axis: over the input flattened */
        int64_t n = tg_numel(x);
        x = tg_reshape(x, 1, &n);
    }
    tg_tensor *known = misc_value(c, 1);
    if (!known) /* computed when the graph runs: so is the length */
        return misc_done(c, tg_index_select(x, axis, tg_reshape(tg_nonzero(cond), 1,
                                                                 (int64_t[]){-1})));
    cond = known;
    int64_t dim = tg_shape(x)[axis], n = tg_numel(cond);
    void *v;
    bool f;
    if ((s = misc_host_values(c, cond, &v, &f)) != TG_OK)
        return s;
    int64_t *pick = onnx_tmp_alloc(c, (size_t)(n < dim ? n : dim) * sizeof *pick);
    if (!pick)
        return tg_last_status();
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        bool on = f ? ((double *)v)[i] != 0 : ((int64_t *)v)[i] != 0;
        if (on && i >= dim)
            return onnx_err(c, TG_ERR_IO, "condition[%lld] is true but the axis has %lld "
                            "elements", (long long)i, (long long)dim);
        if (on)
            pick[k++] = i;
    }
    return misc_done(c, tg_index_select(x, axis, misc_int64s(pick, k)));
}

/* ---- NonZero ------------------------------------------------------------------------------
 * tg_nonzero's [count, rank] transposed; a 0-d input counts as 1-D, as
 * numpy's nonzero. The count needs no value at import: in a graph it is
 * an unknown dim until run time. */
tg_status misc_nonzero(onnx_ictx *c)
{
    tg_tensor *x = c->in[0];
    if (tg_ndim(x) == 0)
        x = tg_reshape(x, 1, (int64_t[]){1});
    return misc_done(c, tg_transpose(tg_nonzero(x), 0, 1));
}

/* ---- Unique(axis, sorted) -----------------------------------------------------------------
 * The unique op (src/ops/unique.c) in both modes, its length known when a
 * graph runs; Y is an index_select of X at the first occurrences, so
 * gradients reach X. */
tg_status misc_unique(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    int64_t sorted_attr;
    tg_status s = x ? oa_int(c, "sorted", 1, &sorted_attr) : tg_last_status();
    if (s != TG_OK)
        return s;
    int axis = 0;
    if (onnx_attr(c, "axis")) {
        int64_t a;
        if ((s = oa_int(c, "axis", 0, &a)) != TG_OK ||
            (s = onnx_axis(c, a, tg_ndim(x), "axis", &axis)) != TG_OK)
            return s;
    } else { /* no axis: over the input flattened */
        x = tg_reshape(x, 1, (int64_t[]){-1});
        if (!x)
            return tg_last_status();
    }
    tg_tensor *r[3];
    if ((s = tg__unique(x, axis, sorted_attr != 0, r)) != TG_OK)
        return s;
    c->out[0] = tg_index_select(x, axis, r[0]);
    for (int j = 1; j < c->n_out && j < 4; j++)
        c->out[j] = r[j - 1];
    for (int j = 0; j < c->n_out && j < 4; j++)
        if (!c->out[j])
            return tg_last_status();
    return TG_OK;
}
