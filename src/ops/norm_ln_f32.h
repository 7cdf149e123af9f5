/* layer_norm's and layer_norm_grad's kernels for float32 inputs
 * (norm_ln_f32.c): statistics in float vector lanes, per-ISA row kernels
 * (kernels/cpu/layer_norm_arch.h); norm.c's op kernels call them and keep
 * their float64 path. */
#ifndef TG_OPS_NORM_LN_F32_H
#define TG_OPS_NORM_LN_F32_H

#include "ops/op.h"

/* layer_norm(x, w, b) -> y, mean, var and layer_norm_grad(x, dy, mean,
 * var, w, dmean, dvar) -> dx, dw, db with x viewed as [R, K]; the outputs
 * contiguous float32 */
tg_status tg__ln32_kernel(tg_op_ctx *c, int64_t R, int64_t K, double eps);
tg_status tg__ln32_grad_kernel(tg_op_ctx *c, int64_t R, int64_t K, double eps);

#endif
