/* Depthwise convolution forward over channel lanes: for planes small
 * enough that a block of a vector's worth of channels, transposed so that
 * each position holds a vector of channels, stays in L2 (conv_dwc.c,
 * conv_dwc_arch.h). conv_dw.c decides when it is taken. */
#ifndef TG_KERNELS_CONV_DWC_H
#define TG_KERNELS_CONV_DWC_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>

/* whether a depthwise g (conv_dw.c checked that it is one) fits: a strip
 * of one output row within the path's scratch bound (4 MB) */
bool tg__conv_dwc_fits(tg_dtype dt, const tg__conv_geom *g);
/* y = the depthwise convolution of x with w (+ b), then act; TG_OK or
 * TG_ERR_NOMEM */
tg_status tg__conv_dwc_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                               const void *w, const void *b, const tg__conv_act *act,
                               void *y);

#endif
