/* A pointwise convolution followed by a depthwise one, each with its bias
 * and activation (a MobileNet block's expansion and depthwise layers), in
 * one pass whose intermediate activation stays in cache in the depthwise
 * kernel's channel-lane layout (conv_pwdw.c): for inference graphs, where
 * nothing else reads that activation (passes/fuse_pw_dw.c). */
#ifndef TG_KERNELS_CONV_PWDW_H
#define TG_KERNELS_CONV_PWDW_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>

/* whether pw (1x1, stride 1, no padding, one group, at most 256 input
 * channels) and dw (depthwise, its input pw's output) can be taken
 * together: float32 or float64, and a depthwise geometry the
 * channel-lane path takes */
bool tg__conv_pwdw_fits(tg_dtype dt, const tg__conv_geom *pw, const tg__conv_geom *dw);
/* whether taking them together is faster at the instruction set in use
 * on planes of `plane` (h * w) positions (AVX-512 above 8x8, AVX2 above
 * 20x20; conv_pwdw.c says what was measured) */
bool tg__conv_pwdw_pays(int64_t plane);
/* y = act2(dw(act1(pw(x, w1) + b1), w2) + b2) (b1, b2 NULL: none), at
 * any instruction set level: at AVX2 and AVX-512 the bits of the two
 * convolutions one after the other on the built-in paths
 * (the pointwise sum over the input channels in order from the first, as
 * the built-in GEMM takes it); TG_OK or TG_ERR_NOMEM */
tg_status tg__conv_pwdw_forward(tg_dtype dt, const tg__conv_geom *pw, const tg__conv_geom *dw,
                                const void *x, const void *w1, const void *b1,
                                const tg__conv_act *act1, const void *w2, const void *b2,
                                const tg__conv_act *act2, void *y);

#endif
