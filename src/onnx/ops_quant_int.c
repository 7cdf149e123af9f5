/* ONNX ops: MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv.
 * The operands less their zero points are multiplied in float64, where
 * every sum of 8-bit products is exact (ops_quant.h); the *Integer ops
 * give those sums as int32, the QLinear ops requantize them:
 * saturate(round_half_to_even(sum * (a_scale * b_scale / y_scale)) +
 * y_zero_point), the multiplier formed in float32 and applied in float64,
 * as ONNX's reference. Convolutions go through the Conv mapping (ops_nn.c),
 * which reads the same attributes (pads, strides, dilations, group,
 * auto_pad, kernel_shape); zero padding of the centred input is padding
 * with the zero point, as ONNX specifies. None of these is differentiable:
 * their inputs are integers. */
#include "onnx/ops_quant.h"

#include <string.h>

static tg_status shape_error(onnx_ictx *c, int i, const char *what, const tg_tensor *p,
                             const char *expected)
{
    char s1[160];
    return onnx_err(c, TG_ERR_SHAPE, "input %d (%s) has shape %s, expected %s", i, what,
                    tg_shape_str(tg_ndim(p), tg_shape(p), s1, sizeof s1), expected);
}

/* parameter input i absent (*p and *out NULL) or of one element (*out
 * that element at rank 0, NULL when that failed): true; else false with
 * *p the input, for the caller's per-row or per-channel forms */
static bool per_tensor(onnx_ictx *c, int i, tg_tensor **p, tg_tensor **out)
{
    *p = i < c->n_in ? c->in[i] : NULL;
    *out = NULL;
    if (*p && !quant_is_scalar(*p))
        return false;
    *out = quant_flat_scalar(*p);
    return true;
}

/* a scale or zero point of matmul operand m at input i (NULL when
 * absent), as a tensor that broadcasts against m: one element (per
 * tensor), or per row of A (`rows`: [M] of a 2-D A, or A's shape with
 * the last dim 1) or per column of B ([N] of a 2-D B, or B's shape with
 * the second-to-last dim 1) */
static tg_status matmul_param(onnx_ictx *c, int i, const char *what, const tg_tensor *m,
                              bool rows, tg_tensor **out)
{
    tg_tensor *p;
    if (per_tensor(c, i, &p, out))
        return *out || !p ? TG_OK : tg_last_status();
    int r = tg_ndim(m), summed = rows ? r - 1 : r - 2; /* K's dim */
    const char *expected = rows ? "a scalar or one value per row of A"
                                : "a scalar or one value per column of B";
    if (r < 2)
        return shape_error(c, i, what, p, "a scalar (the operand is 1-D)");
    if (tg_ndim(p) == 1 && tg_shape(p)[0] == tg_shape(m)[rows ? r - 2 : r - 1]) {
        int64_t col[2] = {tg_shape(p)[0], 1};
        *out = rows ? tg_reshape(p, 2, col) : p;
        return *out ? TG_OK : tg_last_status();
    }
    if (tg_ndim(p) != r)
        return shape_error(c, i, what, p, expected);
    for (int d = 0; d < r; d++)
        if (tg_shape(p)[d] != (d == summed ? 1 : tg_shape(m)[d]))
            return shape_error(c, i, what, p, expected);
    *out = p;
    return TG_OK;
}

/* a per-tensor or per-output-channel parameter at input i (NULL when
 * absent), shaped to broadcast along dim `chan` of a rank-`rank` tensor:
 * one element, or a 1-D tensor of the M output channels */
static tg_status channel_param(onnx_ictx *c, int i, const char *what, int64_t m, int rank,
                               int chan, tg_tensor **out)
{
    tg_tensor *p;
    if (per_tensor(c, i, &p, out))
        return *out || !p ? TG_OK : tg_last_status();
    if (tg_ndim(p) != 1 || tg_shape(p)[0] != m) {
        char want[96];
        snprintf(want, sizeof want, "a scalar or a 1-D tensor of the %lld output channels",
                 (long long)m);
        return shape_error(c, i, what, p, want);
    }
    int64_t shape[TG_MAX_DIMS];
    for (int d = 0; d < rank; d++)
        shape[d] = d == chan ? m : 1;
    *out = tg_reshape(p, rank, shape);
    return *out ? TG_OK : tg_last_status();
}

/* the operand at input i and its zero point at input zi, checked: types
 * (both INT8 or both UINT8) */
static tg_status operand(onnx_ictx *c, int i, const char *what, int zi, qtype *q,
                         tg_tensor **zp)
{
    tg_status s = quant_type(c, i, what, false, q);
    return s == TG_OK ? quant_zero_point(c, zi, q, what, zp) : s;
}

/* the product of float32 scales s1 * s2 / s3 (s3 a scalar) in float32,
 * as float64 */
static tg_tensor *multiplier(tg_tensor *s1, tg_tensor *s2, tg_tensor *s3)
{
    tg_tensor *p = s1 && s2 ? tg_mul(s1, s2) : NULL;
    p = p && s3 ? tg_div(p, s3) : NULL;
    return onnx_as(p, TG_FLOAT64);
}

static tg_status finish(onnx_ictx *c, tg_tensor *y)
{
    c->out[0] = y;
    return y ? TG_OK : tg_last_status();
}

/* ---- MatMulInteger, QLinearMatMul ------------------------------------------------------ */
tg_status quant_n_matmul_integer(onnx_ictx *c)
{
    qtype aq = {0}, bq = {0};
    tg_tensor *azp, *bzp;
    tg_status s = operand(c, 0, "A", 2, &aq, &azp);
    if (s != TG_OK || (s = operand(c, 1, "B", 3, &bq, &bzp)) != TG_OK ||
        (s = matmul_param(c, 2, "a_zero_point", c->in[0], true, &azp)) != TG_OK ||
        (s = matmul_param(c, 3, "b_zero_point", c->in[1], false, &bzp)) != TG_OK)
        return s;
    tg_tensor *a = quant_centered(c->in[0], azp), *b = a ? quant_centered(c->in[1], bzp) : NULL;
    return finish(c, onnx_as(b ? tg_matmul(a, b) : NULL, TG_INT32));
}

/* inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
 * y_zero_point */
tg_status quant_n_qlinear_matmul(onnx_ictx *c)
{
    qtype aq = {0}, bq = {0}, yq = {0};
    tg_tensor *azp, *bzp, *as, *bs, *ys, *yzp;
    tg_status s = operand(c, 0, "a", 2, &aq, &azp);
    if (s != TG_OK || (s = operand(c, 3, "b", 5, &bq, &bzp)) != TG_OK ||
        (s = quant_type(c, 7, "y_zero_point", false, &yq)) != TG_OK)
        return s;
    if (!(as = quant_scale(c, 1, "a_scale")) || !(bs = quant_scale(c, 4, "b_scale")) ||
        !(ys = quant_scale(c, 6, "y_scale")))
        return tg_last_status();
    tg_tensor *a = c->in[0], *b = c->in[3];
    if ((s = matmul_param(c, 1, "a_scale", a, true, &as)) != TG_OK ||
        (s = matmul_param(c, 2, "a_zero_point", a, true, &azp)) != TG_OK ||
        (s = matmul_param(c, 4, "b_scale", b, false, &bs)) != TG_OK ||
        (s = matmul_param(c, 5, "b_zero_point", b, false, &bzp)) != TG_OK ||
        (s = quant_require_scalar(c, 6, "y_scale")) != TG_OK ||
        (s = quant_require_scalar(c, 7, "y_zero_point")) != TG_OK)
        return s;
    tg_tensor *ac = quant_centered(a, azp), *bc = ac ? quant_centered(b, bzp) : NULL;
    tg_tensor *sum = bc ? tg_matmul(ac, bc) : NULL;
    tg_tensor *m = sum ? multiplier(as, bs, quant_flat_scalar(ys)) : NULL;
    yzp = m ? quant_flat_scalar(c->in[7]) : NULL;
    return finish(c, yzp ? quant_saturate(tg_mul(sum, m), yzp, &yq) : NULL);
}

/* ---- ConvInteger, QLinearConv --------------------------------------------------------- */
/* the Conv mapping (ops_nn.c) of this node's attributes on float x and w */
static tg_tensor *conv_of(onnx_ictx *c, tg_tensor *x, tg_tensor *w)
{
    const onnx_op_entry *conv = onnx_op_lookup("Conv");
    if (!conv) {
        onnx_err(c, TG_ERR_INTERNAL, "the Conv mapping is missing");
        return NULL;
    }
    onnx_ictx sub = *c;
    sub.n_in = 2;
    sub.in[0] = x;
    sub.in[1] = w;
    for (int i = 0; i < 2; i++) {
        sub.known[i] = false;
        sub.val[i] = NULL;
        sub.in_type[i] = 0;
    }
    sub.n_out = 1;
    memset(sub.out, 0, sizeof sub.out);
    tg_status s = conv->import(&sub);
    /* temporaries the Conv mapping made are this node's to free */
    c->n_tmp = sub.n_tmp;
    memcpy(c->tmp, sub.tmp, sizeof c->tmp);
    return s == TG_OK ? sub.out[0] : NULL;
}

/* x (input xi) and w (input wi) have ranks a convolution takes */
static tg_status conv_ranks(onnx_ictx *c, int xi, int wi)
{
    int rx = tg_ndim(c->in[xi]), rw = tg_ndim(c->in[wi]);
    if (rw < 3 || rw > 5 || rx != rw)
        return onnx_err(c, TG_ERR_SHAPE, "x has rank %d and w rank %d: they should be equal, "
                        "3 to 5 ([N, C, spatial...] and [M, C/group, kernel...])", rx, rw);
    return TG_OK;
}

/* x and w less their zero points (x's per tensor, w's per tensor or per
 * output channel) convolved: the exact integer sums, float64 */
static tg_tensor *centred_conv(onnx_ictx *c, int xi, int xzi, int wi, int wzi)
{
    tg_tensor *x = c->in[xi], *w = c->in[wi], *wzp;
    int rank = tg_ndim(w);
    if (quant_require_scalar(c, xzi, "x_zero_point") != TG_OK ||
        channel_param(c, wzi, "w_zero_point", tg_shape(w)[0], rank, 0, &wzp) != TG_OK)
        return NULL;
    tg_tensor *xzp = quant_flat_scalar(xzi < c->n_in ? c->in[xzi] : NULL);
    tg_tensor *xc = quant_centered(x, xzp), *wc = xc ? quant_centered(w, wzp) : NULL;
    return wc ? conv_of(c, xc, wc) : NULL;
}

tg_status quant_n_conv_integer(onnx_ictx *c)
{
    qtype xq = {0}, wq = {0};
    tg_tensor *xzp, *wzp;
    tg_status s = operand(c, 0, "x", 2, &xq, &xzp);
    if (s != TG_OK || (s = operand(c, 1, "w", 3, &wq, &wzp)) != TG_OK ||
        (s = conv_ranks(c, 0, 1)) != TG_OK)
        return s;
    tg_tensor *sum = centred_conv(c, 0, 2, 1, 3);
    return finish(c, sum ? onnx_as(sum, TG_INT32) : NULL);
}

/* the int32 bias B (input 8) of M channels as [1, M, 1, ...] float64 */
static tg_status conv_bias(onnx_ictx *c, int64_t m, int rank, tg_tensor **out)
{
    tg_tensor *b = c->n_in > 8 ? c->in[8] : NULL;
    *out = NULL;
    if (!b)
        return TG_OK;
    if ((c->in_type[8] && c->in_type[8] != ONNX_INT32) || tg_dtype_of(b) != TG_INT32)
        return onnx_err(c, TG_ERR_IO, "input 8 (B) is %s, expected INT32",
                        c->in_type[8] ? onnx_data_type_name(c->in_type[8])
                                      : tg_dtype_name(tg_dtype_of(b)));
    if (tg_ndim(b) != 1 || tg_shape(b)[0] != m) {
        char want[80];
        snprintf(want, sizeof want, "a 1-D tensor of the %lld output channels", (long long)m);
        return shape_error(c, 8, "B", b, want);
    }
    tg_status s = channel_param(c, 8, "B", m, rank, 1, out);
    if (s == TG_OK && !(*out = onnx_as(*out, TG_FLOAT64)))
        s = tg_last_status();
    return s;
}

/* inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
 * y_zero_point, B */
tg_status quant_n_qlinear_conv(onnx_ictx *c)
{
    qtype xq = {0}, wq = {0}, yq = {0};
    tg_tensor *xzp, *wzp, *xs, *ws, *ys, *bias;
    tg_status s = operand(c, 0, "x", 2, &xq, &xzp);
    if (s != TG_OK || (s = operand(c, 3, "w", 5, &wq, &wzp)) != TG_OK ||
        (s = quant_type(c, 7, "y_zero_point", false, &yq)) != TG_OK ||
        (s = conv_ranks(c, 0, 3)) != TG_OK)
        return s;
    if (!(xs = quant_scale(c, 1, "x_scale")) || !(ws = quant_scale(c, 4, "w_scale")) ||
        !(ys = quant_scale(c, 6, "y_scale")))
        return tg_last_status();
    tg_tensor *w = c->in[3];
    int rank = tg_ndim(w);
    int64_t m = tg_shape(w)[0];
    if ((s = quant_require_scalar(c, 1, "x_scale")) != TG_OK ||
        (s = quant_require_scalar(c, 6, "y_scale")) != TG_OK ||
        (s = quant_require_scalar(c, 7, "y_zero_point")) != TG_OK ||
        (s = channel_param(c, 4, "w_scale", m, rank, 1, &ws)) != TG_OK ||
        (s = conv_bias(c, m, rank, &bias)) != TG_OK)
        return s;
    tg_tensor *sum = centred_conv(c, 0, 2, 3, 5);
    if (sum && bias)
        sum = tg_add(sum, bias);
    tg_tensor *mult = sum ? multiplier(quant_flat_scalar(xs), ws, quant_flat_scalar(ys)) : NULL;
    tg_tensor *yzp = mult ? quant_flat_scalar(c->in[7]) : NULL;
    return finish(c, yzp ? quant_saturate(tg_mul(sum, mult), yzp, &yq) : NULL);
}
