/* layer_norm_grad's own reverse and forward rules (norm_ln_grad.c), which
 * its definition in norm.c names with its attributes */
#ifndef TG_OPS_NORM_LN_GRAD_H
#define TG_OPS_NORM_LN_GRAD_H

#include "ops/op.h"

tg_status tg__ln_grad_vjp(tg_grad_ctx *g, int n_axes, double eps);
tg_status tg__ln_grad_jvp(tg_jvp_ctx *c, int n_axes, double eps);

#endif
