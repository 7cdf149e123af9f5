/* The skinny products' dot products (gemm_skinny.c), built per instruction
 * set inside gemm_arch.h (its GA_NAME, VEC_BYTES and -ffp-contract=fast:
 * the multiply-adds fuse where the set has them). Each dot product of a
 * row of op(A) (zero-padded to whole groups of 16) with a row of B sums
 * element p into partial sum p % 16, in order of p, and adds the 16
 * partial sums by a fixed tree, whatever the vector width: the AVX2 and
 * AVX-512 builds (both with FMA) give the same bits.
 *
 * B is streamed from memory once (a classifier's weights, 2 MB for
 * ResNet-18's 512 -> 1000, are not in L2 when the layer runs, and often
 * not in L3 after the rest of a large model has gone through it): the
 * hardware prefetcher alone keeps too few lines in flight for 4 short
 * streams of k elements, so while the first row of op(A) takes a group of
 * 4 rows of B, the next group's float32 lines at the same offsets are
 * prefetched into L2 (ResNet-18's classifier at batch 1, one thread, B
 * evicted by 64 MB of other reads: 0.26-0.29 -> 0.11-0.17 ms with
 * AVX-512, 0.21-0.24 -> 0.12-0.13 ms with AVX2; B in cache, 0.04 -> 0.03). */
#ifndef GA_NAME
#error "included by gemm_arch.h"
#endif

/* rows of op(A) that take a group of rows of B together: two where the
 * registers hold 2 x 4 rows' partial sums (AVX-512: 8 or 16 of the 32),
 * one below (AVX2's 16 registers would spill). Each dot product is still
 * summed alone, in the same order. */
#if VEC_BYTES >= 64
#define GA_SK_IA 2
#else
#define GA_SK_IA 1
#endif

#define GA_SKINNY(T, SUF)                                                      \
    typedef T GA_NAME(sv_##SUF) __attribute__((vector_size(VEC_BYTES)));       \
    typedef T GA_NAME(su_##SUF) __attribute__((vector_size(VEC_BYTES),         \
                                               aligned(sizeof(T))));           \
    typedef T GA_NAME(s8_##SUF) __attribute__((vector_size(8 * sizeof(T))));   \
    typedef T GA_NAME(s4_##SUF) __attribute__((vector_size(4 * sizeof(T))));   \
    typedef T GA_NAME(s2_##SUF) __attribute__((vector_size(2 * sizeof(T))));   \
                                                                               \
    /* out[i * ldo + j] = a_i . b_j for i < I (I <= GA_SK_IA; row i of op(A) at a + \
     * i * kp), j < J (J <= 4; row j of B at b + j * ldb); pf: 4 rows of B   \
     * (at stride ldb) whose elements [0, k) are prefetched into L2          \
     * alongside, or NULL */                                                   \
    static inline __attribute__((always_inline)) void GA_NAME(sk_dots_##SUF)(  \
        int I, int J, const T *a, int64_t kp, const T *b, int64_t ldb,         \
        int64_t k, T *out, int64_t ldo, const T *pf)                           \
    {                                                                          \
        typedef GA_NAME(sv_##SUF) V;                                           \
        typedef GA_NAME(su_##SUF) VU;                                          \
        enum { L = VEC_BYTES / (int)sizeof(T), NV = 16 / L };                  \
        V acc[GA_SK_IA][4][NV];                                                \
        _Pragma("GCC unroll 2") for (int i = 0; i < GA_SK_IA; i++)             \
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)                \
                _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++)           \
                    acc[i][j][v] = (V){0};                                     \
        int64_t kv = k - k % 16;                                               \
        for (int64_t p = 0; p < kv; p += 16) {                                 \
            /* float32 only, 16 elements a line (bench: for float64's two     \
             * lines the prefetches cost 8-15% with B in L3 and saved 20%     \
             * with B in memory; float64 is rarely a model's) */              \
            if (sizeof(T) == 4 && pf)                                          \
                _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)            \
                    __builtin_prefetch(pf + j * ldb + p, 0, 2);                \
            _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) {             \
                V av[GA_SK_IA];                                                \
                _Pragma("GCC unroll 2") for (int i = 0; i < GA_SK_IA; i++)     \
                    if (i < I)                                                 \
                        av[i] = *(const VU *)(a + i * kp + p + v * L);         \
                _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)            \
                    if (j < J) {                                               \
                        V bv = *(const VU *)(b + j * ldb + p + v * L);         \
                        _Pragma("GCC unroll 2") for (int i = 0; i < GA_SK_IA; i++) \
                            if (i < I)                                         \
                                acc[i][j][v] += av[i] * bv;                    \
                    }                                                          \
            }                                                                  \
        }                                                                      \
        for (int i = 0; i < I; i++)                                            \
            for (int j = 0; j < J; j++) {                                      \
                const T *ai = a + i * kp, *bj = b + j * ldb;                   \
                T s[16];                                                       \
                memcpy(s, acc[i][j], sizeof s);                                \
                for (int64_t p = kv; p < k; p++)                               \
                    s[p - kv] += ai[p] * bj[p];                                \
                /* the tree s[l] += s[l + w], w = 8, 4, 2, 1 (the same adds   \
                 * either way): for float32 in vectors of 8, 4, 2, for float64 \
                 * as scalars (bench: in vectors 8% slower with AVX2) */       \
                if (sizeof(T) == 8) {                                          \
                    for (int w = 8; w >= 1; w /= 2)                            \
                        for (int l = 0; l < w; l++)                            \
                            s[l] += s[l + w];                                  \
                    out[i * ldo + j] = s[0];                                   \
                    continue;                                                  \
                }                                                              \
                GA_NAME(s8_##SUF) h8, u8;                                      \
                GA_NAME(s4_##SUF) h4, u4;                                      \
                GA_NAME(s2_##SUF) h2, u2;                                      \
                memcpy(&h8, s, sizeof h8);                                     \
                memcpy(&u8, s + 8, sizeof u8);                                 \
                h8 += u8;                                                      \
                memcpy(&h4, &h8, sizeof h4);                                   \
                memcpy(&u4, (const T *)&h8 + 4, sizeof u4);                    \
                h4 += u4;                                                      \
                memcpy(&h2, &h4, sizeof h2);                                   \
                memcpy(&u2, (const T *)&h4 + 2, sizeof u2);                    \
                h2 += u2;                                                      \
                out[i * ldo + j] = h2[0] + h2[1];                              \
            }                                                                  \
    }                                                                          \
                                                                               \
    /* out[i * nj + j] = row i of ap (row stride kp) . row j0 + j of B, for   \
     * i < m, j < nj (B's rows of k at b, stride ldb; nb >= nj rows there may \
     * be prefetched): 4 rows of B at a time, each group kept in L1 while     \
     * every row of op(A) takes it (GA_SK_IA rows at a time), the first      \
     * prefetching the next group */                                           \
    static void GA_NAME(skinny_##SUF)(int64_t m, const void *apv, int64_t kp,  \
                                      const void *bv, int64_t ldb, int64_t k,  \
                                      int64_t nj, int64_t nb, void *outv)      \
    {                                                                          \
        const T *ap = apv, *b = bv;                                            \
        T *out = outv;                                                         \
        int64_t j = 0;                                                         \
        for (; j + 4 <= nj; j += 4) {                                          \
            const T *pf = j + 8 <= nb ? b + (j + 4) * ldb : NULL;              \
            int64_t i = 0;                                                     \
            for (; i + GA_SK_IA <= m; i += GA_SK_IA)                           \
                GA_NAME(sk_dots_##SUF)(GA_SK_IA, 4, ap + i * kp, kp,           \
                                       b + j * ldb, ldb, k, out + i * nj + j,  \
                                       nj, i == 0 ? pf : NULL);                \
            for (; i < m; i++)                                                 \
                GA_NAME(sk_dots_##SUF)(1, 4, ap + i * kp, kp, b + j * ldb,     \
                                       ldb, k, out + i * nj + j, nj,           \
                                       i == 0 ? pf : NULL);                    \
        }                                                                      \
        for (; j < nj; j++)                                                    \
            for (int64_t i = 0; i < m; i++)                                    \
                GA_NAME(sk_dots_##SUF)(1, 1, ap + i * kp, kp, b + j * ldb,     \
                                       ldb, k, out + i * nj + j, nj, NULL);    \
    }

GA_SKINNY(float, f32)
GA_SKINNY(double, f64)
#undef GA_SK_IA
