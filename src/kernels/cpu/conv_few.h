/* Convolution with few input channels and a stride (a network's first
 * layer on RGB images: MobileNet's 3x3 stride-2 stem, 3 -> 16 or 32
 * channels) forward, direct: each strip of output rows of an image has
 * its input rows laid out per channel as column phases (conv_dw_api.h),
 * then the kernel of conv_few_arch.h computes every output channel of
 * the strip, vectors along the output rows, with the bias and the
 * activation applied as it stores. Stride 1 stays on conv_direct.c and
 * layers with many taps on conv_dense.c; the gradients take the general
 * paths of conv.c. */
#ifndef TG_KERNELS_CONV_FEW_H
#define TG_KERNELS_CONV_FEW_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>

/* at most this many input channels */
#define TG__FEW_MAX_C 4

/* false, doing nothing, when g is not such a convolution (one group, at
 * most TG__FEW_MAX_C input channels, a stride above 1, at most
 * TG__DW_MAX_TAPS taps, not one conv_dense.c takes) or a path is forced
 * (TG_CONV other than auto), or the CPU is below AVX2; else true with
 * *status TG_OK or TG_ERR_NOMEM. act as in tg__conv2d_forward_act. */
bool tg__conv_few_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                          const void *w, const void *b, const tg__conv_act *act, void *y,
                          tg_status *status);

#endif
