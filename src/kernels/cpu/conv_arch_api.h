/* What each instruction set's build of the direct convolution kernels
 * (conv_arch.h) offers conv_direct.c. Two layouts, stride 1 (any
 * padding and dilation; groups by the caller):
 *
 *  - batch lanes ("bl"): a block of L images side by side, the image
 *    index fastest: [channel][row][column][L]. Every lane is useful for
 *    any channel count, and the tiles read vectors only (no broadcast of
 *    the image): a forward tile is OB output channels x XT positions of a
 *    row, a weight-gradient tile OB output channels x TB taps summed over
 *    positions. The caller transposes NCHW to and from it.
 *  - plane vectors ("pv"): one image in NCHW, lanes along a row: a
 *    forward tile is MO output channels x RV row vectors, a weight-
 *    gradient tile MO output channels x TB taps summed over positions
 *    (lanes summed at the end). For few output channels and wide rows
 *    (LeNet's first layer), without transposes.
 *
 * Pointers are to the dtype's elements ([0] float32, [1] float64). */
#ifndef TG_KERNELS_CONV_ARCH_API_H
#define TG_KERNELS_CONV_ARCH_API_H

#include <stdbool.h>
#include <stdint.h>

/* one plane-to-plane product, as the kernels see it */
typedef struct tg__dconv {
    int64_t cin, cout; /* channels read / written (one group) */
    int64_t ih, iw;    /* the input planes as stored (padding included) */
    int64_t oh, ow;    /* the output planes */
    int64_t kh, kw, dh, dw;
    int64_t row0, row1, col0, col1; /* rows / columns of the stored input
                                       that are not padding (zero) */
    bool relu; /* forward: relu applied to the outputs as they are stored */
} tg__dconv;

/* a tile shape: A x B accumulators */
typedef struct tg__tile {
    int a, b;
} tg__tile;

#define TG__MAX_TILES 8

typedef struct tg__conv_kern {
    int lanes; /* L: elements per vector */
    /* ---- batch lanes ---- */
    /* forward: tiles OB x XT; tile k of bl_fwd computes outputs
     * [0, cout) x row oy x columns [x0, x0 + XT) of one block, OB output
     * channels at a time (one call per row segment: the call's setup once):
     *   y[o][oy][x] = bias[o] + sum_{c,i,j} w[c][i][j][o] x[c][oy + i dh][x + j dw]
     * for the taps j in [jlo, jhi) and input rows in [row0, row1) only
     * (the others read zeros). w is packed [cin][kh][kw][opad] (opad:
     * cout rounded up to OB, zero); bias (opad, or NULL) per channel;
     * only channels < cout and columns < ow are stored. */
    int n_fwd;
    tg__tile fwd[TG__MAX_TILES];
    void (*bl_fwd[TG__MAX_TILES])(const tg__dconv *d, const void *x, const void *w,
                                   int64_t opad, const void *bias, void *y, int64_t oy,
                                   int64_t x0, int64_t jlo, int64_t jhi);
    /* weight gradient: tiles OB x TB; acc[o][t][L] += sum over all output
     * positions of dy[o0 + o][pos] * x[pos + off[t]] (off: element offsets
     * of the taps in x; dy has opad channels, zero past cout) */
    int n_wgt;
    tg__tile wgt[TG__MAX_TILES];
    void (*bl_wgt[TG__MAX_TILES])(const tg__dconv *d, const void *x, const void *dy,
                                   int64_t o0, const int64_t *off, void *acc,
                                   int64_t acc_ld);
    /* ---- plane vectors ---- */
    /* forward: tiles MO x RV; computes outputs [o0, o0 + MO) at the RV row
     * vectors (row[s], x0[s]) of one image (w, bias as for bl_fwd; the
     * input's rows padded to hold L columns past every vector's start) */
    int n_pvf;
    tg__tile pvf[TG__MAX_TILES];
    void (*pv_fwd[TG__MAX_TILES])(const tg__dconv *d, const void *x, const void *w,
                                   int64_t opad, const void *bias, void *y,
                                   const int64_t *row, const int64_t *x0, int64_t o0);
    /* weight gradient: tiles MO x TB; acc[o][t][L] += sum over the row
     * vectors of dy (rows of ldy elements, zero past ow) of
     * dy[o0 + o][oy][x..] * x[oy * iw + x + off[t] ..] */
    int n_pvw;
    tg__tile pvw[TG__MAX_TILES];
    void (*pv_wgt[TG__MAX_TILES])(const tg__dconv *d, const void *x, const void *dy,
                                   int64_t ldy, int64_t dy_plane, int64_t o0,
                                   const int64_t *off, void *acc, int64_t acc_ld);
    /* ---- layout ---- */
    /* block of up to L images (n of them; missing lanes zero) from NCHW
     * planes src + l * img_stride, c planes of h x w each, into
     * dst[c][r][q][L] at rows r0 + r, columns q0 + q, rows of ldw columns
     * and planes of pl elements */
    void (*to_bl)(const void *src, int64_t img_stride, int64_t n, int64_t c,
                  int64_t h, int64_t w, void *dst, int64_t pl, int64_t ldw,
                  int64_t r0, int64_t q0);
    /* the inverse for outputs: src[c][r][q][L] (rows of w columns) into
     * the n images' planes dst + l * img_stride, through relu when asked */
    void (*from_bl)(const void *src, int64_t n, int64_t c, int64_t h, int64_t w,
                    void *dst, int64_t img_stride, bool relu);
    /* the same with relu (when asked) and 2 x 2, stride-2 max pooling:
     * the n images' pooled planes (c of h/2 x w/2) at dst + l * img_stride,
     * the windows' argmax offsets 0..3 (as max_pool2d_compact) at off + l *
     * off_stride; src is overwritten, kb is scratch for c * (h/2) * (w/2)
     * vectors (conv_pool_arch.h) */
    void (*from_bl_pool)(void *src, int64_t n, int64_t c, int64_t h, int64_t w, bool relu,
                         void *kb, void *dst, int64_t img_stride, uint8_t *off,
                         int64_t off_stride);
} tg__conv_kern;

typedef struct tg__conv_arch {
    const char *name;
    tg__conv_kern k[2];
} tg__conv_arch;

extern const tg__conv_arch tg__conv_arch_generic;
#if defined(__x86_64__)
extern const tg__conv_arch tg__conv_arch_avx2, tg__conv_arch_avx512;
#endif

/* the build for the instruction set in use (cpu.h) */
const tg__conv_arch *tg__conv_arch_now(void);

#endif
