/* What the quantization mappings share (ops_quant.c, ops_quant_int.c).
 *
 * ONNX's quantized types and how the importer holds them: UINT8 as uint8,
 * INT8 as int32 with values in [-128, 127] (tensorgraph has no int8;
 * every result is saturated explicitly before it is stored), INT32 as
 * int32. Integer products and sums are computed in float64, exact below
 * 2^53 (8-bit products summed over up to 2^28 terms stay below 2^44). */
#ifndef TG_ONNX_OPS_QUANT_H
#define TG_ONNX_OPS_QUANT_H

#include "onnx/ops.h"

typedef struct qtype {
    int32_t onnx;  /* ONNX_UINT8, ONNX_INT8 or ONNX_INT32 */
    bool declared; /* the model declares it (graph input, initializer) */
    tg_dtype dt;   /* how it is held: uint8, or int32 (INT8, INT32) */
    double lo, hi; /* its range, where results saturate */
} qtype;

/* the quantized type of input i (`what`): the declared one or, for values
 * the model computes, what the holding dtype says (uint8: UINT8, int32:
 * INT8). INT32 only where allow_int32 (DequantizeLinear's x). */
tg_status quant_type(onnx_ictx *c, int i, const char *what, bool allow_int32, qtype *q);
/* the zero point at input i has the type of `of` (named of_what); absent
 * zero points are fine. Sets *zp to the input or NULL. */
tg_status quant_zero_point(onnx_ictx *c, int i, const qtype *of, const char *of_what,
                           tg_tensor **zp);
/* input i is a float32 scale (present) */
tg_tensor *quant_scale(onnx_ictx *c, int i, const char *what);
/* one element, a tensor of rank 0 or 1: per tensor */
bool quant_is_scalar(const tg_tensor *t);
/* a per-tensor parameter (scale, zero point) at input i: TG_ERR_IO unless
 * it has one element */
tg_status quant_require_scalar(onnx_ictx *c, int i, const char *what);
/* x with its zero point (NULL: 0) subtracted, in float64 (exact) */
tg_tensor *quant_centered(tg_tensor *x, tg_tensor *zp);
/* saturate(round_half_to_even(v) + zp) held as q says (zp NULL: 0); NaN
 * becomes 0 */
tg_tensor *quant_saturate(tg_tensor *v, tg_tensor *zp, const qtype *q);
/* reshapes a per-tensor parameter to rank 0 (NULL stays NULL) */
tg_tensor *quant_flat_scalar(tg_tensor *t);

tg_status quant_n_matmul_integer(onnx_ictx *c);
tg_status quant_n_conv_integer(onnx_ictx *c);
tg_status quant_n_qlinear_matmul(onnx_ictx *c);
tg_status quant_n_qlinear_conv(onnx_ictx *c);

#endif
