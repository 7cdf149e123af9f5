/* Pointwise convolution (1x1 kernel, stride 1, no padding, one group:
 * MobileNet's expansion and projection layers) forward as GEMMs straight
 * over the NCHW layout: each image's [C, H * W] is already the patch
 * matrix, so y[n] = W [O, C] @ x[n] [C, H * W], cut into column panels
 * that stay in cache (and, when there are few of them, blocks of output
 * channels) run over the pool's threads. The weights are packed once per
 * call, by all threads together, for every unit; each unit packs its
 * input panel and runs the GEMM's macro-kernel with an epilogue
 * (gemm_ep_arch.h), which adds the bias (and the shortcut) and applies the
 * activation to each tile while it is in registers, before its one store. */
#ifndef TG_KERNELS_CONV_PW_H
#define TG_KERNELS_CONV_PW_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>

/* false, doing nothing, when g is not such a convolution or a path is
 * forced (TG_CONV other than auto); else true with *status TG_OK or
 * TG_ERR_NOMEM. act as in tg__conv2d_forward_act. */
bool tg__conv_pw_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                         const void *w, const void *b, const tg__conv_act *act, void *y,
                         tg_status *status);
/* the same with res (laid out as y, not aliasing it; NULL: none) added
 * after the bias, then relu when act is relu: the bits of
 * act(add(conv2d(x, w, b), res)), a residual connection, applied to each
 * panel while it is in cache. False, doing nothing, also when res is given
 * with an activation other than none or relu. */
/* whether tg__conv_pw_forward(_res) takes g (with act none or relu) */
bool tg__conv_pw_wanted(const tg__conv_geom *g);
bool tg__conv_pw_forward_res(tg_dtype dt, const tg__conv_geom *g, const void *x,
                             const void *w, const void *b, const void *res,
                             const tg__conv_act *act, void *y, tg_status *status);

#endif
