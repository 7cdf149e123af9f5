/* The skinny products' dot products (gemm_skinny.c), built per instruction
 * set inside gemm_arch.h (its GA_NAME, VEC_BYTES and -ffp-contract=fast:
 * the multiply-adds fuse where the set has them). Each dot product of a
 * row of op(A) (zero-padded to whole groups of 16) with a row of B sums
 * element p into partial sum p % 16, in order of p, and adds the 16
 * partial sums by a fixed tree, whatever the vector width: the AVX2 and
 * AVX-512 builds (both with FMA) give the same bits. */
#ifndef GA_NAME
#error "included by gemm_arch.h"
#endif

#define GA_SKINNY(T, SUF)                                                      \
    typedef T GA_NAME(sv_##SUF) __attribute__((vector_size(VEC_BYTES)));       \
    typedef T GA_NAME(su_##SUF) __attribute__((vector_size(VEC_BYTES),         \
                                               aligned(sizeof(T))));           \
                                                                               \
    /* out[j] = a . b_j for j < J (J <= 4; row j of B at b + j * ldb) */       \
    static inline __attribute__((always_inline)) void GA_NAME(sk_dots_##SUF)(  \
        int J, const T *a, const T *b, int64_t ldb, int64_t k, T *out)         \
    {                                                                          \
        typedef GA_NAME(sv_##SUF) V;                                           \
        typedef GA_NAME(su_##SUF) VU;                                          \
        enum { L = VEC_BYTES / (int)sizeof(T), NV = 16 / L };                  \
        V acc[4][NV];                                                          \
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)                    \
            _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++)               \
                acc[j][v] = (V){0};                                            \
        int64_t kv = k - k % 16;                                               \
        for (int64_t p = 0; p < kv; p += 16)                                   \
            _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) {             \
                V av = *(const VU *)(a + p + v * L);                           \
                _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)            \
                    if (j < J)                                                 \
                        acc[j][v] += av * *(const VU *)(b + j * ldb + p + v * L); \
            }                                                                  \
        for (int j = 0; j < J; j++) {                                          \
            T s[16];                                                           \
            memcpy(s, acc[j], sizeof s);                                       \
            for (int64_t p = kv; p < k; p++)                                   \
                s[p - kv] += a[p] * b[j * ldb + p];                            \
            for (int w = 8; w >= 1; w /= 2)                                    \
                for (int l = 0; l < w; l++)                                    \
                    s[l] += s[l + w];                                          \
            out[j] = s[0];                                                     \
        }                                                                      \
    }                                                                          \
                                                                               \
    /* out[i * nj + j] = row i of ap (row stride kp) . row j0 + j of B, for   \
     * i < m, j < nj (B's rows of k at b, stride ldb): 4 rows of B at a time, \
     * each group kept in L1 while every row of op(A) takes it */             \
    static void GA_NAME(skinny_##SUF)(int64_t m, const void *apv, int64_t kp,  \
                                      const void *bv, int64_t ldb, int64_t k,  \
                                      int64_t nj, void *outv)                  \
    {                                                                          \
        const T *ap = apv, *b = bv;                                            \
        T *out = outv, o[4];                                                   \
        int64_t j = 0;                                                         \
        for (; j + 4 <= nj; j += 4)                                            \
            for (int64_t i = 0; i < m; i++) {                                  \
                GA_NAME(sk_dots_##SUF)(4, ap + i * kp, b + j * ldb, ldb, k, o); \
                memcpy(out + i * nj + j, o, sizeof o);                         \
            }                                                                  \
        for (; j < nj; j++)                                                    \
            for (int64_t i = 0; i < m; i++)                                    \
                GA_NAME(sk_dots_##SUF)(1, ap + i * kp, b + j * ldb, ldb, k,    \
                                       out + i * nj + j);                      \
    }

GA_SKINNY(float, f32)
GA_SKINNY(double, f64)
