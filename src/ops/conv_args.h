/* The argument checks the 2-D and 3-D convolution ops share (conv.c,
 * conv3d.c), over any rank: the inputs' rank and dtypes, the bias, the
 * channels against the groups, the output gradient's shape, and the
 * attribute list the ops call each other with. Each check fails with the
 * op's name and the shapes involved. */
#ifndef TG_OPS_CONV_ARGS_H
#define TG_OPS_CONV_ARGS_H

#include "ops/op.h"

/* t has ndim dims (layout: "[N, C, H, W]" and the like, for the message) */
tg_status tg__conv_require_rank(const char *op, const tg_tensor *t, int ndim, const char *what,
                                const char *layout);
/* every input floating point; their promoted dtype in *dt */
tg_status tg__conv_float_inputs(const tg_op_ctx *c, tg_dtype *dt);
/* the bias (input 2), when given, is [channels] */
tg_status tg__conv_check_bias(const tg_op_ctx *c, int64_t channels);
/* weight ws's channels per group times the groups are input xs's
 * channels (sx, sw: the shapes as text) */
tg_status tg__conv_check_channels(const char *op, const int64_t *xs, const int64_t *ws,
                                  int64_t groups, const char *sx, const char *sw);
/* the output gradient dy has the convolution's output shape want */
tg_status tg__conv_check_dy(const char *op, const tg_tensor *dy, int ndim, const int64_t *want);
/* runs a convolution op over nd spatial dims with these attributes and,
 * for the gradient ops, the shape attribute (name, nd + 2 dims) they
 * produce */
tg_tensor *tg__conv_call(const tg_op_def *op, int nd, tg_tensor *a, tg_tensor *b,
                         tg_tensor *bias, const int64_t *stride, const int64_t *padding,
                         const int64_t *dilation, int64_t groups, const char *shape_name,
                         const int64_t *shape);

#endif
