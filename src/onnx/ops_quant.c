/* ONNX ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and
 * the table of the quantization family (MatMulInteger, ConvInteger,
 * QLinearMatMul and QLinearConv are in ops_quant_int.c). All are composed
 * of tensorgraph ops (division, round half to even, clamp, cast); how the
 * 8-bit types are held is in ops_quant.h. Gradients are what the ops
 * compose to: DequantizeLinear's reach x_scale (and no further: x is
 * integer), QuantizeLinear's rounding has none. */
#include "onnx/ops_quant.h"

#include <string.h>

/* ---- types ---------------------------------------------------------------------------- */
static bool set_qtype(int32_t onnx, qtype *q)
{
    switch (onnx) {
    case ONNX_UINT8: *q = (qtype){ONNX_UINT8, q->declared, TG_UINT8, 0, 255}; return true;
    case ONNX_INT8: *q = (qtype){ONNX_INT8, q->declared, TG_INT32, -128, 127}; return true;
    case ONNX_INT32:
        *q = (qtype){ONNX_INT32, q->declared, TG_INT32, -2147483648.0, 2147483647.0};
        return true;
    default: return false;
    }
}

tg_status quant_type(onnx_ictx *c, int i, const char *what, bool allow_int32, qtype *q)
{
    tg_tensor *t = oi_req(c, i, what);
    if (!t)
        return tg_last_status();
    const char *allowed = allow_int32 ? "INT8, UINT8 or INT32" : "INT8 or UINT8";
    int32_t declared = c->in_type[i];
    *q = (qtype){.declared = declared != 0};
    if (declared) {
        if ((declared == ONNX_INT32 && !allow_int32) || !set_qtype(declared, q))
            return onnx_err(c, TG_ERR_IO, "input %d (%s) is %s, expected %s", i, what,
                            onnx_data_type_name(declared), allowed);
        return TG_OK;
    }
    tg_dtype dt = tg_dtype_of(t);
    if ((dt == TG_UINT8 || dt == TG_INT32) &&
        set_qtype(dt == TG_UINT8 ? ONNX_UINT8 : ONNX_INT8, q))
        return TG_OK;
    return onnx_err(c, TG_ERR_IO, "input %d (%s) is %s, expected %s (INT8 is held as int32)",
                    i, what, tg_dtype_name(dt), allowed);
}

tg_status quant_zero_point(onnx_ictx *c, int i, const qtype *of, const char *of_what,
                           tg_tensor **zp)
{
    *zp = i < c->n_in ? c->in[i] : NULL;
    if (!*zp)
        return TG_OK;
    qtype z = {0};
    tg_status s = quant_type(c, i, "zero point", of->onnx == ONNX_INT32, &z);
    if (s != TG_OK)
        return s;
    if (z.dt != of->dt || (z.declared && of->declared && z.onnx != of->onnx))
        return onnx_err(c, TG_ERR_IO, "input %d (the zero point of %s) is %s, expected %s "
                        "like %s", i, of_what, onnx_data_type_name(z.onnx),
                        onnx_data_type_name(of->onnx), of_what);
    return TG_OK;
}

tg_tensor *quant_scale(onnx_ictx *c, int i, const char *what)
{
    tg_tensor *t = oi_req(c, i, what);
    if (t && tg_dtype_of(t) != TG_FLOAT32) {
        onnx_err(c, TG_ERR_IO, "input %d (%s) is %s, expected float32", i, what,
                 tg_dtype_name(tg_dtype_of(t)));
        return NULL;
    }
    return t;
}

bool quant_is_scalar(const tg_tensor *t)
{
    return tg_numel(t) == 1 && tg_ndim(t) <= 1;
}

tg_status quant_require_scalar(onnx_ictx *c, int i, const char *what)
{
    tg_tensor *t = i < c->n_in ? c->in[i] : NULL;
    char s1[160];
    if (!t || quant_is_scalar(t))
        return TG_OK;
    return onnx_err(c, TG_ERR_SHAPE, "input %d (%s) has shape %s, expected a scalar (one "
                    "element)", i, what, tg_shape_str(tg_ndim(t), tg_shape(t), s1, sizeof s1));
}

tg_tensor *quant_flat_scalar(tg_tensor *t)
{
    return t && tg_ndim(t) ? tg_reshape(t, 0, NULL) : t;
}

tg_tensor *quant_centered(tg_tensor *x, tg_tensor *zp)
{
    tg_tensor *xf = onnx_as(x, TG_FLOAT64);
    if (!xf || !zp)
        return xf;
    tg_tensor *zf = onnx_as(zp, TG_FLOAT64);
    return zf ? tg_sub(xf, zf) : NULL;
}

tg_tensor *quant_saturate(tg_tensor *v, tg_tensor *zp, const qtype *q)
{
    tg_tensor *r = v ? tg_round(v) : NULL;
    if (r && zp) {
        tg_tensor *zf = onnx_as(zp, tg_dtype_of(r));
        r = zf ? tg_add(r, zf) : NULL;
    }
    r = r ? tg_clamp(r, q->lo, q->hi) : NULL;
    tg_tensor *nan = r ? tg_isnan(r) : NULL;
    tg_tensor *zero = nan ? tg_scalar(tg_dtype_of(r), 0) : NULL;
    r = zero ? tg_where(nan, zero, r) : NULL;
    return onnx_as(r, q->dt);
}

/* ---- QuantizeLinear, DequantizeLinear: per tensor or (13) per axis ------------------- */
/* the scale at input i and the zero point at input i + 1 (NULL when
 * absent) of x, as tensors that broadcast against x: rank 0 for one
 * element, or (version 13) [1, .., n, .., 1] for a 1-D tensor of x's
 * length n along `axis` */
static tg_status axis_params(onnx_ictx *c, tg_tensor *x, int i, tg_tensor **scale,
                             tg_tensor **zp)
{
    char s1[160], s2[160];
    tg_tensor *s = *scale, *z = *zp;
    if (z && (tg_ndim(z) != tg_ndim(s) || memcmp(tg_shape(z), tg_shape(s),
                                                 (size_t)tg_ndim(s) * 8)) &&
        !(quant_is_scalar(s) && quant_is_scalar(z)))
        return onnx_err(c, TG_ERR_SHAPE, "the zero point has shape %s, the scale %s: they "
                        "must match", tg_shape_str(tg_ndim(z), tg_shape(z), s1, sizeof s1),
                        tg_shape_str(tg_ndim(s), tg_shape(s), s2, sizeof s2));
    if (quant_is_scalar(s)) {
        *scale = quant_flat_scalar(s);
        *zp = quant_flat_scalar(z);
        return *scale && (!z || *zp) ? TG_OK : tg_last_status();
    }
    if (c->version < 13 || tg_ndim(s) != 1)
        return onnx_err(c, TG_ERR_SHAPE, "input %d (the scale) has shape %s, expected a "
                        "scalar%s", i, tg_shape_str(tg_ndim(s), tg_shape(s), s1, sizeof s1),
                        c->version < 13 ? " (per-axis scales are version 13's)"
                                        : " or a 1-D tensor along `axis`");
    int64_t axis_attr;
    int axis;
    tg_status st = oa_int(c, "axis", 1, &axis_attr);
    if (st == TG_OK)
        st = onnx_axis(c, axis_attr, tg_ndim(x), "axis", &axis);
    if (st != TG_OK)
        return st;
    if (tg_shape(s)[0] != tg_shape(x)[axis])
        return onnx_err(c, TG_ERR_SHAPE, "the scale has %lld elements, the input's axis %d "
                        "has length %lld", (long long)tg_shape(s)[0], axis,
                        (long long)tg_shape(x)[axis]);
    int64_t shape[TG_MAX_DIMS];
    for (int d = 0; d < tg_ndim(x); d++)
        shape[d] = d == axis ? tg_shape(s)[0] : 1;
    *scale = tg_reshape(s, tg_ndim(x), shape);
    *zp = z ? tg_reshape(z, tg_ndim(x), shape) : NULL;
    return *scale && (!z || *zp) ? TG_OK : tg_last_status();
}

static tg_status n_quantize(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "x"), *scale = x ? quant_scale(c, 1, "y_scale") : NULL;
    if (!scale)
        return tg_last_status();
    qtype q = {ONNX_UINT8, false, TG_UINT8, 0, 255}; /* y_zero_point absent: uint8 */
    tg_tensor *zp = NULL;
    tg_status s = TG_OK;
    if (c->n_in > 2 && c->in[2]) {
        if ((s = quant_type(c, 2, "y_zero_point", false, &q)) != TG_OK)
            return s;
        zp = c->in[2];
    }
    tg_dtype xdt = tg_dtype_of(x);
    if (xdt != TG_FLOAT32 && xdt != TG_INT32)
        return onnx_err(c, TG_ERR_IO, "input 0 (x) is %s, expected float32 or int32",
                        tg_dtype_name(xdt));
    if ((s = axis_params(c, x, 1, &scale, &zp)) != TG_OK)
        return s;
    /* float32 x is divided in float32, as ONNX's reference; int32 x in
     * float64, where its values are exact */
    tg_dtype dt = xdt == TG_INT32 ? TG_FLOAT64 : TG_FLOAT32;
    tg_tensor *xf = onnx_as(x, dt), *sf = onnx_as(scale, dt);
    tg_tensor *y = xf && sf ? tg_div(xf, sf) : NULL;
    c->out[0] = quant_saturate(y, zp, &q);
    return c->out[0] ? TG_OK : tg_last_status();
}

static tg_status n_dequantize(onnx_ictx *c)
{
    qtype xq = {0};
    tg_tensor *zp, *scale;
    tg_status s = quant_type(c, 0, "x", true, &xq);
    if (s != TG_OK || (s = quant_zero_point(c, 2, &xq, "x", &zp)) != TG_OK)
        return s;
    if (!(scale = quant_scale(c, 1, "x_scale")))
        return tg_last_status();
    if (xq.onnx == ONNX_INT32 && zp && c->val[2]) { /* the spec: 0 for int32 */
        double z = 1;
        if (tg_numel(c->val[2]) == 1 && tg_copy_to(c->val[2], TG_FLOAT64, &z) == TG_OK && z)
            return onnx_err(c, TG_ERR_IO, "x is INT32: its zero point must be 0, is %g", z);
    }
    tg_tensor *x = c->in[0];
    if ((s = axis_params(c, x, 1, &scale, &zp)) != TG_OK)
        return s;
    /* in float32, as ONNX's reference: (x - x_zero_point) * x_scale */
    tg_tensor *xf = onnx_as(x, TG_FLOAT32), *zf = zp ? onnx_as(zp, TG_FLOAT32) : NULL;
    tg_tensor *d = xf && zf ? tg_sub(xf, zf) : xf;
    c->out[0] = d && (!zp || zf) ? tg_mul(d, scale) : NULL;
    return c->out[0] ? TG_OK : tg_last_status();
}

/* y_scale = (max(0, max x) - min(0, min x)) / 255, y_zero_point =
 * saturate(round(-min / y_scale)), y = saturate(round(x / y_scale) +
 * y_zero_point), all uint8 and in float32 as ONNX's reference. An
 * all-zero x (scale 0) gives y and the zero point 0. */
static tg_status n_dynamic_quantize(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "x");
    if (!x)
        return tg_last_status();
    if (tg_dtype_of(x) != TG_FLOAT32)
        return onnx_err(c, TG_ERR_IO, "input 0 (x) is %s, expected float32",
                        tg_dtype_name(tg_dtype_of(x)));
    if (tg_numel(x) == 0)
        return onnx_err(c, TG_ERR_SHAPE, "input 0 (x) is empty: it has no range to quantize");
    const qtype q = {ONNX_UINT8, false, TG_UINT8, 0, 255};
    tg_tensor *zero = tg_scalar(TG_FLOAT32, 0), *hi = tg_max(x, 0, NULL, false);
    tg_tensor *lo = tg_min(x, 0, NULL, false);
    if (!zero || !hi || !lo)
        return tg_last_status();
    hi = tg_maximum(hi, zero);
    lo = tg_minimum(lo, zero);
    tg_tensor *range = hi && lo ? tg_sub(hi, lo) : NULL;
    tg_tensor *scale = range ? tg_div(range, tg_scalar(TG_FLOAT32, 255)) : NULL;
    tg_tensor *zp = scale ? quant_saturate(tg_div(tg_neg(lo), scale), NULL, &q) : NULL;
    tg_tensor *y = zp ? quant_saturate(tg_div(x, scale), zp, &q) : NULL;
    if (!y)
        return tg_last_status();
    c->out[0] = y;
    if (c->n_out > 1)
        c->out[1] = scale;
    if (c->n_out > 2)
        c->out[2] = zp;
    return TG_OK;
}

const onnx_op_entry onnx_ops_quant[] = {
    {"QuantizeLinear", {10, 13}, 2, 3, 1, 1, n_quantize, 0},
    {"DequantizeLinear", {10, 13}, 2, 3, 1, 1, n_dequantize, 0},
    {"DynamicQuantizeLinear", {11}, 1, 1, 3, 3, n_dynamic_quantize, 0},
    {"MatMulInteger", {10}, 2, 4, 1, 1, quant_n_matmul_integer, 0},
    {"ConvInteger", {10}, 2, 4, 1, 1, quant_n_conv_integer, 0},
    {"QLinearMatMul", {10}, 8, 8, 1, 1, quant_n_qlinear_matmul, 0},
    {"QLinearConv", {10}, 8, 9, 1, 1, quant_n_qlinear_conv, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
