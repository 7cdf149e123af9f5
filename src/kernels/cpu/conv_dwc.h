/* Depthwise convolution forward over channel lanes: for planes small
 * enough that a block of a vector's worth of channels, transposed so that
 * each position holds a vector of channels, stays in L2 (conv_dwc.c,
 * conv_dwc_arch.h). conv_dw.c decides when it is taken. */
#ifndef TG_KERNELS_CONV_DWC_H
#define TG_KERNELS_CONV_DWC_H

#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_dwc_api.h"

#include <stdbool.h>

/* whether a depthwise g (conv_dw.c checked that it is one) fits: a strip
 * of one output row within the path's scratch bound (4 MB) */
bool tg__conv_dwc_fits(tg_dtype dt, const tg__conv_geom *g);
/* how the channel-lane path cuts a depthwise g: blocks of `lanes`
 * channels, strips of output rows whose layout and outputs take at most
 * a budget of bytes (the last strip may be shorter), and the scratch a
 * strip needs (64-byte aligned parts) */
typedef struct tg__dwc_plan {
    tg__dwc_geom geom; /* a full strip's; tg__dwc_strip gives strip s's */
    int64_t lanes, blocks, strip, strips;
    size_t in_bytes, out_bytes;
} tg__dwc_plan;
void tg__dwc_plan_strips(tg_dtype dt, const tg__conv_geom *g, const tg__conv_act *act,
                         int64_t budget, tg__dwc_plan *p);
/* the geometry of strip s (of p, planned for g), its first output row in *oy0 */
tg__dwc_geom tg__dwc_strip(const tg__dwc_plan *p, const tg__conv_geom *g, int64_t s,
                           int64_t *oy0);

/* y = the depthwise convolution of x with w (+ b), then act; TG_OK or
 * TG_ERR_NOMEM */
tg_status tg__conv_dwc_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                               const void *w, const void *b, const tg__conv_act *act,
                               void *y);

#endif
