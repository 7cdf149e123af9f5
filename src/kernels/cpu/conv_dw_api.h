/* What each instruction set's build of the depthwise plane kernel
 * (conv_dw_arch.h) offers conv_dw.c, and the bias + activation pass over
 * rows that conv_pw.c and conv.c use. */
#ifndef TG_KERNELS_CONV_DW_API_H
#define TG_KERNELS_CONV_DW_API_H

#include <stdbool.h>
#include <stdint.h>

/* one plane's geometry, as the kernels see it: the input plane (h x w,
 * pt / pl rows / columns of zero padding before it) is laid out as sw
 * column phases of `rows` rows of `ld` elements, phase q holding the
 * padded plane's columns q, q + sw, ...; tap t (row-major over kh x kw)
 * of output (oy, ox) reads phases[oy * sh * ld + off[t] + ox] */
typedef struct tg__dw_plane {
    int64_t h, w, pt, pl;
    int64_t oh, ow, sh, sw, rows, ld;
    int taps;
    const int64_t *off;
    /* applied to the outputs as they are stored: 0 none, 1 relu, 2 clamp
     * to [lo, hi], 3 hardswish (tg__conv_act_kind) */
    int act;
    double lo, hi;
} tg__dw_plane;

/* what the layout may write past its end: under a vector */
#define TG__DW_SLACK 64

typedef struct tg__dw_arch {
    const char *name;
    int lanes[2]; /* elements per vector: [0] float32, [1] float64 */
    /* the input plane src into that layout (zeros outside the plane);
     * writes up to TG__DW_SLACK bytes past the layout's end */
    void (*layout[2])(const tg__dw_plane *p, const void *src, void *phases);
    /* y [oh][ow] = bias (NULL: 0) + sum over the taps of w[t] times the
     * input; the kernel reads up to a vector past ow in each phase row */
    void (*plane[2])(const tg__dw_plane *p, const void *phases, const void *w,
                     const void *bias, void *y);
    /* r [n] + bias (NULL: none), then the activation act (0 none, 1 relu,
     * 2 clamp to [lo, hi], 3 hardswish), in place: the pointwise path's epilogue
     * where its units take OpenBLAS (the built-in GEMM applies it in its store),
     * and the other paths' clamp pass (conv_pw.c, conv.c) */
    void (*row_act[2])(void *r, int64_t n, const void *bias, int act, double lo,
                       double hi);
    /* r [n] = (r + bias (NULL: none)) + res [n], then relu when relu is
     * set, in place: the add op's bits after the product's, ResNet-style
     * shortcuts on the pointwise path's OpenBLAS units (conv_pw.c) */
    void (*row_res[2])(void *r, int64_t n, const void *bias, const void *res, int relu);
} tg__dw_arch;

extern const tg__dw_arch tg__dw_arch_generic;
#if defined(__x86_64__)
extern const tg__dw_arch tg__dw_arch_avx2, tg__dw_arch_avx512;
#endif

/* the build for the instruction set in use (cpu.h) */
const tg__dw_arch *tg__dw_arch_now(void);

#endif
