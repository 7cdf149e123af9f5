/* What each instruction set's build of the GEMM kernels (gemm_arch.h)
 * offers gemm.c, per dtype ([0] float32, [1] float64): the tile and block
 * sizes, packing, and the product of packed blocks. Pointers are to the
 * dtype's elements; packed buffers are 64-byte aligned. */
#ifndef TG_KERNELS_GEMM_ARCH_API_H
#define TG_KERNELS_GEMM_ARCH_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tg__gemm_kern {
    int mr, nr;     /* micro-tile */
    int kc, mc, nc; /* cache blocks: mc a multiple of mr */
    /* A(i, p), i < mc, p < kc (a at A(0, 0); ta: A stored transposed)
     * times alpha into ceil(mc / mr) panels of [kc][mr], zero-padded */
    void (*pack_a)(bool ta, const void *a, int64_t lda, int64_t mc, int64_t kc,
                   double alpha, void *dst);
    /* B(p, j), p < kc, j < nc into ceil(nc / nr) panels of [kc][nr] */
    void (*pack_b)(bool tb, const void *b, int64_t ldb, int64_t kc, int64_t nc,
                   void *dst);
    /* C (mc x nc, row stride ldc) = beta C + packed A @ packed B (beta 0
     * overwrites: NaNs in C do not propagate) */
    void (*macro)(int64_t mc, int64_t nc, int64_t kc, const void *pa,
                  const void *pb, void *c, int64_t ldc, double beta);
} tg__gemm_kern;

typedef struct tg__gemm_arch {
    const char *name;
    tg__gemm_kern k[2];
} tg__gemm_arch;

extern const tg__gemm_arch tg__gemm_arch_generic;
#if defined(__x86_64__)
#define TG_HAVE_X86_KERNELS 1
extern const tg__gemm_arch tg__gemm_arch_avx2, tg__gemm_arch_avx512;
#endif

/* the build for the instruction set in use (cpu.h) */
const tg__gemm_arch *tg__gemm_arch_now(void);

#endif
