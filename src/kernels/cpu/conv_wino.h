/* 3x3 convolutions at stride 1 by Winograd's minimal filtering F(2x2,
 * 3x3): each 2x2 block of outputs is computed from the 4x4 block of
 * input under it with 16 multiplications per input channel instead of 36,
 * so the product, which is most of a ResNet's time, shrinks 2.25x. Per
 * block of tiles: the input tiles are transformed (B^T d B, additions
 * only), 16 GEMMs multiply them by the transformed weights (G g G^T) over
 * the input channels, and the output transform (A^T m A, additions only)
 * writes the 2x2 outputs with the bias, the residual and relu.
 *
 * Not the direct product's bits: the sums are formed in another order and
 * through the transforms, with errors of the direct product's size
 * (tests/test_conv_wino.c measures both against float64). */
#ifndef TG_KERNELS_CONV_WINO_H
#define TG_KERNELS_CONV_WINO_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>

/* whether the automatic choice sends g's float32 forward product here:
 * groups == 1, a 3x3 kernel at stride 1 and dilation 1, enough input and
 * output channels for the GEMMs, and enough tiles */
bool tg__conv_wino_wanted(tg_dtype dt, const tg__conv_geom *g);

/* benchmarks and tests: false sends every shape elsewhere (true by
 * default; TG_CONV_WINOGRAD=0 in the environment starts it false) */
void tg__conv_wino_set_enabled(bool on);

/* y = relu?(x (*) w + b + res) for float32 and a geometry as
 * tg__conv_wino_wanted takes (without its size rule); b and res may be
 * NULL, res laid out as y. False when it does not run the product: another
 * geometry or dtype, or an input or weight that is not finite or beyond
 * 2^100 in magnitude (the transforms mix neighbouring values: a NaN would
 * reach outputs that do not read it, a huge value could overflow), which
 * the direct paths then take. True with *st TG_OK, or TG_ERR_NOMEM. */
bool tg__conv_wino_forward(tg_dtype dt, const tg__conv_geom *g, const void *x, const void *w,
                           const void *b, const void *res, bool relu, void *y, tg_status *st);

/* the input gradient of g's product (dx [n, c, h, w] from dy [n, o, oh,
 * ow]) as the forward product above of dy with the weights flipped and
 * transposed, when that product is one tg__conv_wino_wanted takes (g: 3x3,
 * stride 1, padding at most 2); false otherwise, as tg__conv_wino_forward */
bool tg__conv_wino_grad_input(tg_dtype dt, const tg__conv_geom *g, const void *dy,
                              const void *w, void *dx, tg_status *st);

#endif
