/* Direct convolution for stride 1 (any padding, dilation and groups):
 * the kernels of conv_arch.h for the CPU's instruction set, in the layout
 * and tile shape that the estimated cost favours (conv_direct.c). The
 * input gradient is the forward product of the padded output gradient
 * with the flipped weights. Each function returns false, doing nothing,
 * when it does not handle the geometry (the caller then takes the GEMM
 * path); else true with *status TG_OK or TG_ERR_NOMEM. */
#ifndef TG_KERNELS_CONV_DIRECT_H
#define TG_KERNELS_CONV_DIRECT_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>
#include <stdint.h>

bool tg__conv_direct_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                             const void *w, const void *b, bool relu, void *y,
                             tg_status *status);
/* the same with 2 x 2, stride-2 max pooling after the (relu'd) outputs:
 * y [n, o, oh/2, ow/2] and the windows' argmax offsets 0..3 (uint8, as
 * max_pool2d_compact), the bits of the three ops; false, doing nothing,
 * unless the batch-lane layout is chosen for g */
bool tg__conv_direct_forward_pool(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                  const void *w, const void *b, bool relu, void *y,
                                  uint8_t *off, tg_status *status);
bool tg__conv_direct_grad_input(tg_dtype dt, const tg__conv_geom *g, const void *dy,
                                const void *w, void *dx, tg_status *status);
bool tg__conv_direct_grad_weight(tg_dtype dt, const tg__conv_geom *g, const void *dy,
                                 const void *x, void *dw, tg_status *status);

/* which path convolutions take: chosen per call by cost (AUTO), or
 * forced (tests, benchmarks; TG_CONV=gemm|lanes|planes read once): GEMM
 * always works, the direct layouts only where they apply */
typedef enum tg__conv_mode {
    TG_CONV_AUTO,
    TG_CONV_GEMM,
    TG_CONV_LANES, /* batch lanes */
    TG_CONV_PLANES /* plane vectors */
} tg__conv_mode;
void tg__conv_set_mode(tg__conv_mode mode);
tg__conv_mode tg__conv_get_mode(void);

#endif
