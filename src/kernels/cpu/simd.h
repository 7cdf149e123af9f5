/* What the hand-blocked kernels (gemm.c, conv_gemm.c) need to know about
 * the target's SIMD: the vector width their constant-trip inner loops are
 * sized for, and a multiply-add that is fused where the target has FMA. */
#ifndef TG_KERNELS_SIMD_H
#define TG_KERNELS_SIMD_H

#if defined(__AVX512F__)
#define TG_VEC_BYTES 64
#elif defined(__AVX__)
#define TG_VEC_BYTES 32
#else
#define TG_VEC_BYTES 16
#endif

/* -std=c11 turns off FMA contraction (-ffp-contract=off), so fused
 * multiply-adds are asked for by name (fmaf or fma) where the target has
 * them: TG_MADD(fmaf, acc, x, y) is acc + x * y */
#if defined(__FMA__)
#define TG_MADD(FMA, acc, x, y) FMA(x, y, acc)
#else
#define TG_MADD(FMA, acc, x, y) ((acc) + (x) * (y))
#endif

#endif
