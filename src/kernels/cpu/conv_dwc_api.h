/* What each instruction set's build of the channel-lane depthwise kernel
 * (conv_dwc_arch.h, compiled inside conv_dw_*.c next to the plane kernel
 * whose activations it shares) offers conv_dwc.c. */
#ifndef TG_KERNELS_CONV_DWC_API_H
#define TG_KERNELS_CONV_DWC_API_H

#include "kernels/cpu/conv_dw_api.h"

/* one image's block of up to L channels (L: a vector's elements) over a
 * strip of output rows: the geometry of a plane (input h x w, the strip's
 * oh x ow outputs, strides, dilations, zero padding pt / pl before the
 * plane: pt is less by the strip's first input row, negative past the
 * top) and the rows x cols of the padded plane the strip reads. The block is laid out as [rows][cols][L], a
 * vector of channels per position (zeros in the padding and in the lanes
 * past the block's channels); outputs are computed as [oh * ow][L], then
 * written to the channels' planes. */
/* taps of the filter at most (conv_dw.h's TG__DW_MAX_TAPS) */
#define TG__DWC_MAX_TAPS 64

typedef struct tg__dwc_geom {
    int64_t h, w, pt, pl, oh, ow, sh, sw, dh, dw, kh, kw;
    int64_t rows, cols;
    int64_t ys; /* elements between two channels' output planes in y */
    /* applied as the outputs are computed (conv_dw_api.h's act) */
    int act;
    double lo, hi;
} tg__dwc_geom;

/* the pointwise (1x1) layer whose outputs are the channels of `blocks`
 * (1 or 2) consecutive blocks, for pw_in: x at the image's first input
 * channel, k input channels hw elements apart; the weights packed as
 * [k][blocks * L] (L lanes per block, zeros past the channels) and the
 * bias as [blocks * L] (NULL: none, not even a zero added); act as above */
typedef struct tg__pwdw_src {
    const void *x, *wp, *bias;
    int64_t k, hw;
    int blocks;
    int act;
    double lo, hi;
} tg__pwdw_src;

typedef struct tg__dwc_arch {
    /* y [c][oh][ow] for the nc (1..L) channels from x [c][h][w] (plane
     * strides h * w and ys; x at the plane's row 0, y at the strip's), w [c][kh * kw], bias [c] (NULL: 0);
     * `in` holds rows * cols * L elements, `out` oh * ow * L (64-byte
     * aligned scratch) */
    void (*block[2])(const tg__dwc_geom *g, const void *x, int64_t nc, const void *w,
                     const void *bias, void *in, void *out, void *y);
    /* `in` (one per block) as block lays it out, but each position's vector
     * computed by the pointwise layer p (its sum over the k channels in
     * order from the first, then the bias and act: the built-in GEMM's
     * bits) instead of transposed from x: the layer's output never leaves
     * the cache and is never transposed (conv_pwdw.c) */
    void (*pw_in[2])(const tg__dwc_geom *g, const tg__pwdw_src *p, void *const *in);
    /* block's computation and write-back from an `in` laid out already */
    void (*from_in[2])(const tg__dwc_geom *g, int64_t nc, const void *w, const void *bias,
                       void *in, void *out, void *y);
} tg__dwc_arch;

extern const tg__dwc_arch tg__dwc_arch_generic;
#if defined(__x86_64__)
extern const tg__dwc_arch tg__dwc_arch_avx2, tg__dwc_arch_avx512;
#endif

/* the build for the instruction set in use (cpu.h) */
const tg__dwc_arch *tg__dwc_arch_now(void);

#endif
