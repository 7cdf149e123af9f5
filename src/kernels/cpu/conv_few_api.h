/* What each instruction set's build of the few-input-channel kernel
 * (conv_few_arch.h, compiled inside conv_dw_*.c next to the depthwise
 * kernel whose layout and activations it shares) offers conv_few.c. */
#ifndef TG_KERNELS_CONV_FEW_API_H
#define TG_KERNELS_CONV_FEW_API_H

#include "kernels/cpu/conv_dw_api.h"

/* a strip of output rows of one image: every input channel's rows laid
 * out as p describes (conv_dw_api.h: column phases, p->oh the strip's
 * output rows), channel c's layout at phases + c * cs */
typedef struct tg__few_strip {
    const tg__dw_plane *p;
    int64_t c, cs; /* input channels, elements between their layouts */
    int64_t o;     /* output channels */
    int64_t ys;    /* elements between two output channels' planes in y */
} tg__few_strip;

typedef struct tg__few_arch {
    /* y [o][p->oh rows][ow] (channel stride ys) = bias (NULL: 0) + sum over
     * the channels and taps of w [o][c][taps] times the input, then the
     * activation p->act; reads up to a vector past ow in each phase row */
    void (*strip[2])(const tg__few_strip *s, const void *phases, const void *w,
                     const void *bias, void *y);
} tg__few_arch;

#if defined(__x86_64__)
extern const tg__few_arch tg__few_arch_avx2, tg__few_arch_avx512;
#endif

/* the build for the instruction set in use (cpu.h), NULL below AVX2:
 * with 16-byte vectors the kernel lost to im2col and the GEMM (1.75 ms
 * against 0.94 for MobileNetV2's stem, bench/conv_mobile.c) */
const tg__few_arch *tg__few_arch_now(void);

#endif
