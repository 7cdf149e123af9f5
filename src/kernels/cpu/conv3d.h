/* 3-D convolution kernels on contiguous NCDHW buffers of float32 or
 * float64 (one dtype for every operand): vol2col (the patches of a block
 * of output depth slices as a [C/groups * kd * kh * kw, positions]
 * matrix) and the library's GEMM, for the forward product and both
 * gradients. The op definitions are in ops/conv3d.c. */
#ifndef TG_KERNELS_CONV3D_H
#define TG_KERNELS_CONV3D_H

#include "tg/core.h"

#include <stdint.h>

typedef struct tg__conv3_geom {
    int64_t n, c, d, h, w;     /* input [N, C, D, H, W] */
    int64_t o, kd, kh, kw;     /* weight [O, C / groups, kd, kh, kw] */
    int64_t od, oh, ow;        /* output [N, O, OD, OH, OW] */
    int64_t s[3], p[3], dl[3]; /* stride, padding, dilation (d, h, w) */
    int64_t groups;
} tg__conv3_geom;

/* the most patch-matrix elements one block holds (the output depth
 * slices per block are chosen to stay below it, at least one) */
#define TG__VOL2COL_MAX ((int64_t)1 << 21)

/* y = x (*) w (+ b [o] when b is not NULL) */
tg_status tg__conv3d_forward(tg_dtype dt, const tg__conv3_geom *g, const void *x,
                             const void *w, const void *b, void *y);
/* dx [n, c, d, h, w] from dy [n, o, od, oh, ow] and w (dx is overwritten) */
tg_status tg__conv3d_grad_input(tg_dtype dt, const tg__conv3_geom *g, const void *dy,
                                const void *w, void *dx);
/* dw [o, c / groups, kd, kh, kw] from dy and x (dw is overwritten) */
tg_status tg__conv3d_grad_weight(tg_dtype dt, const tg__conv3_geom *g, const void *dy,
                                 const void *x, void *dw);

#endif
