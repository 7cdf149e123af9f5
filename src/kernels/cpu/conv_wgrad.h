/* The weight gradient of convolutions with many channels (ResNet's and
 * VGG's layers) as one GEMM per chunk of images: the chunk's patches side
 * by side, cols [c kh kw][images x positions], and its output gradient's
 * rows likewise, dyc [o][images x positions], then dw += dyc cols^T on the
 * library's GEMM, whose inner dimension is then the chunk's positions
 * (hundreds to thousands) rather than one image's. The direct kernels
 * (conv_direct.c) keep the few-channel layers (LeNet's) they are tuned
 * for; the general path's per-image products had an inner dimension of
 * one image's positions (49 at 7 x 7) and its implicit kernel is built
 * for the baseline's vectors only. */
#ifndef TG_KERNELS_CONV_WGRAD_H
#define TG_KERNELS_CONV_WGRAD_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>

/* whether tg__conv2d_grad_weight sends g here: one group, at least 2^16
 * weights (o c kh kw), the automatic mode */
bool tg__conv_wgrad_gemm_wanted(const tg__conv_geom *g);

/* tests: the memory a chunk's patches and output gradient may take (8 MB
 * by default; at least one image is taken at a time) */
void tg__conv_wgrad_set_chunk_bytes(int64_t bytes);

/* dw [o, c, kh, kw] = the weight gradient of g's product from x [n, c, h,
 * w] and dy [n, o, oh, ow], float32 or float64, groups == 1, any stride,
 * padding and dilation; TG_OK, TG_ERR_ARG (groups) or TG_ERR_NOMEM */
tg_status tg__conv_wgrad_gemm(tg_dtype dt, const tg__conv_geom *g, const void *dy,
                              const void *x, void *dw);

#endif
