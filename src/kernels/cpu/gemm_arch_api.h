/* What each instruction set's build of the GEMM kernels (gemm_arch.h)
 * offers gemm.c, per dtype ([0] float32, [1] float64): the tile and block
 * sizes, packing, and the product of packed blocks. Pointers are to the
 * dtype's elements; packed buffers are 64-byte aligned. */
#ifndef TG_KERNELS_GEMM_ARCH_API_H
#define TG_KERNELS_GEMM_ARCH_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* what macro_ep applies to C's tile while it is in registers, after the
 * product (and, when accumulating, after adding C's old value): + bias
 * (one element per row of C; NULL: none), + res (laid out as C with row
 * stride ldr; NULL: none), then the activation act (0 none, 1 relu,
 * 2 clamp to [lo, hi], 3 hardswish), with the add, relu, clamp and
 * hardswish ops' bits. Pointers are at the block's row 0, column 0. */
typedef struct tg__gemm_ep {
    const void *bias, *res;
    int64_t ldr;
    int act;
    double lo, hi;
} tg__gemm_ep;

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
    /* macro with A not packed and alpha 1: A(i, p) at a[i * lda + p] (ta:
     * a[p * lda + i]); a last panel of fewer than mr rows is packed into
     * tmp (mr x kc elements). ldb 0: b is packed B; else B is not packed
     * either, B(p, j) at b[p * ldb + j], a last panel of fewer than nr
     * columns packed into tmp_b (nr x kc). The same bits as pack_a, pack_b
     * and macro: for products of few column panels (few row panels), where
     * packing A (B) costs more than its reuse saves */
    void (*macro_direct)(int64_t mc, int64_t nc, int64_t kc, bool ta, const void *a,
                         int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
                         double beta, void *tmp, void *tmp_b);
    /* C (mc x nc) = packed A @ packed B (+ C's old value when accumulate),
     * then ep (NULL: nothing more). mc may start anywhere in a packed A
     * block; partial tiles take kernels of fewer rows (down to 2) or one
     * vector of columns, stored by masked stores: for the pointwise
     * convolution's small channel counts and planes (conv_pw.c) */
    void (*macro_ep)(int64_t mc, int64_t nc, int64_t kc, const void *pa, const void *pb,
                     void *c, int64_t ldc, bool accumulate, const tg__gemm_ep *ep);
    /* macro_ep with B not packed: B(p, j) at b[p * ldb + j], any alignment,
     * nothing past B(kc - 1, nc - 1) read. For C of few rows, where packing
     * B costs as much as the product (conv_pw.c) */
    void (*macro_ep_in_place)(int64_t mc, int64_t nc, int64_t kc, const void *pa,
                              const void *b, int64_t ldb, void *c, int64_t ldc,
                              bool accumulate, const tg__gemm_ep *ep);
    /* out[i * nj + j] = the dot product of row i of ap (row stride kp,
     * zero-padded from k to a multiple of 16) with row j of b (k elements,
     * row stride ldb), i < m, j < nj: the skinny products (gemm_skinny.c);
     * the nb >= nj rows of b may be read ahead (prefetched) */
    void (*skinny)(int64_t m, const void *ap, int64_t kp, const void *b, int64_t ldb,
                   int64_t k, int64_t nj, int64_t nb, void *out);
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
