/* Convolution over 1 to 3 spatial dims on contiguous [N, C, spatial...]
 * buffers of float32 or float64 (one dtype for every operand): the
 * geometry every rank shares, and the kernels the op family
 * (ops/conv.c) calls. 2-D convolutions go to the 2-D kernels
 * (kernels/cpu/conv.h: direct, pointwise, depthwise, dense and im2col
 * paths); the others to the general path here, patches and the library's
 * GEMM, written once for every rank. */
#ifndef TG_KERNELS_CONV_ND_H
#define TG_KERNELS_CONV_ND_H

#include "kernels/cpu/conv.h"

#include <stdint.h>

/* The geometry: per spatial dim, right-aligned in arrays of 3 (depth,
 * height, width), the leading 3 - nd dims of size, kernel, output,
 * stride and dilation 1 and of padding 0, so that one loop nest serves
 * every rank */
typedef struct tg__conv_nd {
    int nd;                  /* spatial dims, 1 to 3 */
    int64_t n, c, o, groups; /* images, input and output channels, groups */
    int64_t in[3], k[3], out[3]; /* input, kernel and output sizes */
    int64_t s[3], p[3], d[3];    /* stride, padding (both sides), dilation */
    uint64_t w_serial, w_version; /* as in tg__conv_geom */
} tg__conv_nd;

/* the most patch-matrix elements one block of the general path holds
 * (the output depth slices per block are chosen to stay below it, at
 * least one) */
#define TG__VOL2COL_MAX ((int64_t)1 << 21)

/* g as the 2-D kernels' geometry (kernels/cpu/conv.h) when it has 2
 * spatial dims; false otherwise */
bool tg__conv_nd_as_plane(const tg__conv_nd *g, tg__conv_geom *p);

/* y [n, o, out...] = x [n, c, in...] (*) w [o, c / groups, k...] (+ b [o]
 * when b is not NULL), through act (NULL: none) as the activation op
 * would give it */
tg_status tg__conv_forward(tg_dtype dt, const tg__conv_nd *g, const void *x, const void *w,
                           const void *b, const tg__conv_act *act, void *y);
/* dx [n, c, in...] from dy [n, o, out...] and w (dx is overwritten) */
tg_status tg__conv_grad_input(tg_dtype dt, const tg__conv_nd *g, const void *dy,
                              const void *w, void *dx);
/* dw [o, c / groups, k...] from dy and x (dw is overwritten) */
tg_status tg__conv_grad_weight(tg_dtype dt, const tg__conv_nd *g, const void *dy,
                               const void *x, void *dw);

/* the general path alone, whatever the rank (what the dispatch above
 * takes for every rank but 2; tests compare it with the 2-D kernels) */
tg_status tg__conv_general_forward(tg_dtype dt, const tg__conv_nd *g, const void *x,
                                   const void *w, const void *b, void *y);
tg_status tg__conv_general_grad_input(tg_dtype dt, const tg__conv_nd *g, const void *dy,
                                      const void *w, void *dx);
tg_status tg__conv_general_grad_weight(tg_dtype dt, const tg__conv_nd *g, const void *dy,
                                       const void *x, void *dw);

#endif
