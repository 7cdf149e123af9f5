/* im2col / col2im for 2-D convolution (NCHW): the patches of one image
 * laid out as a [C * kh * kw, OH * OW] matrix, so a convolution is a GEMM
 * with the [O, C * kh * kw] weight matrix. */
#ifndef TG_KERNELS_IM2COL_H
#define TG_KERNELS_IM2COL_H

#include <stdint.h>

typedef struct tg__conv_geom {
    int64_t n, c, h, w;  /* input [N, C, H, W] */
    int64_t o, kh, kw;   /* weight [O, C / groups, kh, kw] */
    int64_t oh, ow;      /* output [N, O, OH, OW] */
    int64_t sh, sw, ph, pw, dh, dw, groups;
} tg__conv_geom;

/* col[(ch * kh + i) * kw + j][oy * ow + ox] = x[ch][oy*sh - ph + i*dh]
 * [ox*sw - pw + j*dw], 0 in the padding, for channels 0..c-1 of one
 * contiguous [c, h, w] image */
void tg__im2col_f32(const float *x, int64_t c, const tg__conv_geom *g,
                    float *col);
void tg__im2col_f64(const double *x, int64_t c, const tg__conv_geom *g,
                    double *col);
/* the adjoint: adds each col entry back into x (which the caller zeroes) */
void tg__col2im_f32(const float *col, int64_t c, const tg__conv_geom *g,
                    float *x);
void tg__col2im_f64(const double *col, int64_t c, const tg__conv_geom *g,
                    double *x);

#endif
