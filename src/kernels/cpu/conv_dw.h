/* Depthwise convolution (groups == input channels == output channels:
 * one kh x kw filter per channel, MobileNet's 3x3 and 5x5 layers) forward,
 * plane by plane over the thread pool, with the per-ISA plane kernel of
 * conv_dw_arch.h: any stride, padding and dilation. The gradients stay on
 * the general paths of conv.c. */
#ifndef TG_KERNELS_CONV_DW_H
#define TG_KERNELS_CONV_DW_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>

/* false, doing nothing, when g is not depthwise, its filter has more than
 * TG__DW_MAX_TAPS taps or the path is forced (TG_CONV other than auto);
 * else true with *status TG_OK or TG_ERR_NOMEM. act as in
 * tg__conv2d_forward_act. */
#define TG__DW_MAX_TAPS 64
bool tg__conv_dw_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                         const void *w, const void *b, const tg__conv_act *act, void *y,
                         tg_status *status);

#endif
