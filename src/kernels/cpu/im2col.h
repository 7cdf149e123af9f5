/* im2col / col2im for 2-D convolution (NCHW): the patches of one image
 * laid out as a [C * kh * kw, positions] matrix, so a convolution is a
 * GEMM with the [O, C * kh * kw] weight matrix. Two layouts:
 *  - rows (any stride): positions are the OH * OW outputs;
 *  - wide (stride 1): positions run over the padded input's width Wp,
 *    oy * Wp + ox for ox < Wp, so each patch row is ONE contiguous slice
 *    of the padded image (one memcpy per tap instead of one per output
 *    row). The Wp - OW extra columns per row are junk in im2col and must
 *    be zero in what col2im reads; tg__widen/tg__narrow convert outputs
 *    and output gradients between [rows, OH * OW] and the wide layout. */
#ifndef TG_KERNELS_IM2COL_H
#define TG_KERNELS_IM2COL_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>
#include <stdint.h>


/* ---- rows layout ----------------------------------------------------------
 * col[(ch * kh + i) * kw + j][oy * ow + ox] = x[ch][oy*sh - ph + i*dh]
 * [ox*sw - pw + j*dw], 0 in the padding, for channels 0..c-1 of one
 * contiguous [c, h, w] image; col's rows ld >= oh * ow apart (wider: the
 * patches of several images side by side, conv_wgrad.c) */
void tg__im2col_f32(const float *x, int64_t c, const tg__conv_geom *g,
                    float *col, int64_t ld);
void tg__im2col_f64(const double *x, int64_t c, const tg__conv_geom *g,
                    double *col, int64_t ld);
/* the adjoint: adds each col entry back into x (which the caller zeroes) */
void tg__col2im_f32(const float *col, int64_t c, const tg__conv_geom *g,
                    float *x);
void tg__col2im_f64(const double *col, int64_t c, const tg__conv_geom *g,
                    double *x);

/* ---- wide layout (stride 1) ------------------------------------------------ */
/* whether the wide layout suits g: stride 1 and at most 1.5x the GEMM
 * columns of the rows layout */
bool tg__conv_wide_ok(const tg__conv_geom *g);
/* padded sizes and the wide row length (oh - 1) * wp + ow */
int64_t tg__conv_hp(const tg__conv_geom *g);
int64_t tg__conv_wp(const tg__conv_geom *g);
int64_t tg__conv_wide_len(const tg__conv_geom *g);

#define TG__WIDE_DECL(T, SUF)                                                 \
    /* [c, h, w] into the zero-bordered [c, hp, wp] and back (interior) */    \
    void tg__pad_image_##SUF(const T *x, int64_t c, const tg__conv_geom *g,   \
                             T *xp);                                          \
    void tg__crop_image_##SUF(const T *xp, int64_t c,                         \
                              const tg__conv_geom *g, T *x);                  \
    /* col[(ch,i,j)][t] = xp[ch][i*dh*wp + j*dw + t], t < wide_len */         \
    void tg__im2col_wide_##SUF(const T *xp, int64_t c,                        \
                               const tg__conv_geom *g, T *col);               \
    /* its adjoint: xp[ch][i*dh*wp + j*dw + t] += col[(ch,i,j)][t] */         \
    void tg__col2im_wide_##SUF(const T *col, int64_t c,                       \
                               const tg__conv_geom *g, T *xp);                \
    /* [rows, oh * ow] into [rows, wide_len] with zero extra columns */       \
    void tg__widen_##SUF(const T *y, int64_t rows, const tg__conv_geom *g,    \
                         T *yw);                                              \
    /* [rows, oh * ow] into yt[t][r], the wide positions as rows of stride    \
     * ld >= rows: the extra columns' rows and the lanes past rows zero */    \
    void tg__widen_t_##SUF(const T *y, int64_t rows, const tg__conv_geom *g,  \
                           int64_t ld, T *yt);                                \
    /* back: y[r] = yw[r] without the extra columns, + bias[r] if given */    \
    void tg__narrow_##SUF(const T *yw, int64_t rows, const tg__conv_geom *g,  \
                          const T *bias, T *y);
TG__WIDE_DECL(float, f32)
TG__WIDE_DECL(double, f64)

#endif
