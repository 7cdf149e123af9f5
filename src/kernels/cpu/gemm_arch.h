/* The blocked GEMM, one template instantiated per instruction set: each
 * of gemm_avx512.c, gemm_avx2.c and gemm_generic.c defines the vector
 * width and tile sizes, is compiled for its instruction set (see
 * CMakeLists.txt), includes this file and so defines its
 * tg__gemm_arch_<ISA>. gemm.c picks one at run time (cpu.h).
 *
 * Goto's scheme: B is packed in KC x NR column panels, A in MC x KC
 * blocks of MR-row panels (alpha folded in), and an MR x NR micro-kernel
 * keeps a tile of C in MR x NV vector registers while it runs over KC,
 * broadcasting one packed A element per row against NV vectors of the
 * packed B row. The code is GCC vector extensions: the file's flags decide
 * the instructions, and -ffp-contract=fast fuses the multiply-adds. */
#include "kernels/cpu/gemm_arch_api.h"
#include "kernels/cpu/shuffle.h"

#include <string.h>

#ifndef GEMM_ISA
#error "define GEMM_ISA, VEC_BYTES and the tile sizes before including gemm_arch.h"
#endif

#define GA_CAT2(a, b) a##b
#define GA_CAT(a, b) GA_CAT2(a, b)
#define GA_NAME(x) GA_CAT(GA_CAT(x, _), GEMM_ISA)
#define GA_STR2(x) #x
#define GA_STR(x) GA_STR2(x)

/* the first W elements of each of tmp's 8 rows to dst's rows (ldd apart) */
#define GA_ROWS_COPY(T, dst, ldd, tmp, W)                                      \
    _Pragma("GCC unroll 8") for (int q = 0; q < 8; q++)                        \
        memcpy((dst) + q * (ldd), (tmp)[q], (W) * sizeof(T))

/* dst[q * ldd + r] = alpha * src[r * lds + q] for r < width (8 at most),
 * q < 8: an 8 x 8 block transposed in vector registers (three rounds of
 * two-input shuffles), with rows r >= rows read as zero */
#define GA_TRANSPOSE8(T, SUF)                                                  \
    typedef T GA_NAME(v8_##SUF) __attribute__((vector_size(8 * sizeof(T))));   \
    typedef T GA_NAME(v8u_##SUF) __attribute__((vector_size(8 * sizeof(T)),    \
                                                aligned(sizeof(T)), may_alias)); \
    static inline __attribute__((always_inline)) void GA_NAME(tr8_##SUF)(     \
        const T *src, int64_t lds, int rows, int width, T alpha, T *dst,       \
        int64_t ldd)                                                           \
    {                                                                          \
        typedef GA_NAME(v8_##SUF) V8;                                          \
        typedef GA_NAME(v8u_##SUF) V8U;                                        \
        typedef GA_CAT(GA_IDX_, SUF) I8;                                       \
        V8 r[8], t[8], u[8];                                                   \
        _Pragma("GCC unroll 8") for (int i = 0; i < 8; i++)                    \
            r[i] = i < rows ? alpha * (V8)*(const V8U *)(src + i * lds)        \
                            : (V8){0};                                         \
        _Pragma("GCC unroll 4") for (int i = 0; i < 8; i += 2) {               \
            t[i] = TG_SHUFFLE2(r[i], r[i + 1], (I8){0, 8, 1, 9, 4, 12, 5, 13}); \
            t[i + 1] = TG_SHUFFLE2(r[i], r[i + 1],                       \
                                         (I8){2, 10, 3, 11, 6, 14, 7, 15});    \
        }                                                                      \
        _Pragma("GCC unroll 2") for (int i = 0; i < 8; i += 4)                 \
            _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {              \
                u[i + h] = TG_SHUFFLE2(t[i + h], t[i + 2 + h],           \
                                             (I8){0, 1, 8, 9, 4, 5, 12, 13});  \
                u[i + 2 + h] = TG_SHUFFLE2(t[i + h], t[i + 2 + h],       \
                                                 (I8){2, 3, 10, 11, 6, 7, 14, 15}); \
            }                                                                  \
        /* u0 u2 u1 u3 of each half hold columns (0 4) (1 5) (2 6) (3 7) */    \
        V8 o[8];                                                               \
        _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++) {                  \
            int x = q == 1 ? 2 : q == 2 ? 1 : q;                               \
            o[q] = TG_SHUFFLE2(u[x], u[4 + x], (I8){0, 1, 2, 3, 8, 9, 10, 11}); \
            o[q + 4] = TG_SHUFFLE2(u[x], u[4 + x],                       \
                                         (I8){4, 5, 6, 7, 12, 13, 14, 15});    \
        }                                                                      \
        if (width == 8) {                                                      \
            _Pragma("GCC unroll 8") for (int q = 0; q < 8; q++)                \
                *(V8U *)(dst + q * ldd) = o[q];                                \
            return;                                                            \
        }                                                                      \
        /* a narrower block (the last rows of a panel whose MR is not a    \
         * multiple of 8): each row's first width elements in one copy of  \
         * constant size, which compiles to a few vector stores instead of  \
         * one extract and store per element */                           \
        T tmp[8][8] __attribute__((aligned(64)));                              \
        _Pragma("GCC unroll 8") for (int q = 0; q < 8; q++)                    \
            *(V8 *)tmp[q] = o[q];                                              \
        switch (width) {                                                       \
        case 7: GA_ROWS_COPY(T, dst, ldd, tmp, 7); break;                      \
        case 6: GA_ROWS_COPY(T, dst, ldd, tmp, 6); break;                      \
        case 5: GA_ROWS_COPY(T, dst, ldd, tmp, 5); break;                      \
        case 4: GA_ROWS_COPY(T, dst, ldd, tmp, 4); break;                      \
        case 3: GA_ROWS_COPY(T, dst, ldd, tmp, 3); break;                      \
        case 2: GA_ROWS_COPY(T, dst, ldd, tmp, 2); break;                      \
        case 1: GA_ROWS_COPY(T, dst, ldd, tmp, 1); break;                      \
        default: break;                                                        \
        }                                                                      \
    }

typedef int32_t GA_IDX_f32 __attribute__((vector_size(32)));
typedef int64_t GA_IDX_f64 __attribute__((vector_size(64)));

#define GEMM_TEMPLATE(T, SUF, MR, NV)                                           \
    typedef T GA_NAME(v_##SUF) __attribute__((vector_size(VEC_BYTES)));        \
    typedef T GA_NAME(vu_##SUF) __attribute__((vector_size(VEC_BYTES),         \
                                               aligned(sizeof(T)), may_alias)); \
    enum { GA_NAME(L_##SUF) = VEC_BYTES / (int)sizeof(T),                      \
           GA_NAME(NR_##SUF) = NV * (VEC_BYTES / (int)sizeof(T)) };            \
                                                                               \
    /* d[i] = alpha * s[i] for i < MR: restrict and the constant count let    \
     * the compiler use vectors (it wrote one scalar multiply and store per   \
     * element when d and s might overlap) */                                 \
    static inline void GA_NAME(scale_row_##SUF)(T *restrict d, const T *restrict s, \
                                                T alpha)                       \
    {                                                                          \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                  \
            d[i] = alpha * s[i];                                               \
    }                                                                          \
                                                                               \
    /* A(i, p) for i < mc, p < kc (a at A(0, 0)) into MR-row panels, each      \
     * [kc][MR], times alpha; rows past mc are zero */                         \
    static void GA_NAME(pack_a_##SUF)(bool ta, const T *a, int64_t lda,        \
                                      int64_t mc, int64_t kc, T alpha, T *dst) \
    {                                                                          \
        for (int64_t ip = 0; ip < mc; ip += MR, dst += MR * kc) {              \
            int64_t mr = mc - ip < MR ? mc - ip : MR;                          \
            if (ta) {                                                          \
                for (int64_t p = 0; p < kc; p++) {                             \
                    const T *s = a + p * lda + ip;                             \
                    T *d = dst + p * MR;                                       \
                    if (mr == MR) {                                            \
                        GA_NAME(scale_row_##SUF)(d, s, alpha);                 \
                    } else {                                                   \
                        for (int i = 0; i < MR; i++)                           \
                            d[i] = i < mr ? alpha * s[i] : 0;                  \
                    }                                                          \
                }                                                              \
                continue;                                                      \
            }                                                                  \
            /* the panel's rows in groups of 8, transposed 8 columns at a     \
             * time, the last columns one by one */                            \
            int64_t p8 = kc / 8 * 8;                                           \
            for (int i0 = 0; i0 < MR; i0 += 8) {                               \
                int width = MR - i0 < 8 ? MR - i0 : 8;                         \
                int rows = mr - i0 < 0 ? 0 : mr - i0 < width ? (int)(mr - i0) : width; \
                const T *s = a + (ip + i0) * lda;                              \
                for (int64_t p = 0; p < p8; p += 8)                            \
                    GA_NAME(tr8_##SUF)(s + p, lda, rows, width, alpha,         \
                                       dst + p * MR + i0, MR);                 \
                for (int64_t p = p8; p < kc; p++)                              \
                    for (int i = 0; i < width; i++)                            \
                        dst[p * MR + i0 + i] = i < rows ? alpha * s[i * lda + p] : 0; \
            }                                                                  \
        }                                                                      \
    }                                                                          \
                                                                               \
    /* B(p, j) for p < kc, j < nc (b at B(0, 0)) into NR-column panels, each   \
     * [kc][NR]; columns past nc are zero */                                   \
    static void GA_NAME(pack_b_##SUF)(bool tb, const T *b, int64_t ldb,        \
                                      int64_t kc, int64_t nc, T *dst)          \
    {                                                                          \
        enum { NR = GA_NAME(NR_##SUF) };                                       \
        for (int64_t jp = 0; jp < nc; jp += NR, dst += NR * kc) {              \
            int64_t nr = nc - jp < NR ? nc - jp : NR;                          \
            if (!tb && nr == NR) {                                             \
                for (int64_t p = 0; p < kc; p++)                               \
                    memcpy(dst + p * NR, b + p * ldb + jp, NR * sizeof(T));    \
            } else if (!tb) {                                                  \
                for (int64_t p = 0; p < kc; p++)                               \
                    for (int64_t j = 0; j < NR; j++)                           \
                        dst[p * NR + j] = j < nr ? b[p * ldb + jp + j] : 0;    \
            } else { /* transposed: groups of 8 columns as in pack_a */        \
                int64_t p8 = kc / 8 * 8;                                       \
                for (int j0 = 0; j0 < NR; j0 += 8) {                           \
                    int width = NR - j0 < 8 ? NR - j0 : 8;                     \
                    int rows = nr - j0 < 0 ? 0 : nr - j0 < width ? (int)(nr - j0) : width; \
                    const T *s = b + (jp + j0) * ldb;                          \
                    for (int64_t p = 0; p < p8; p += 8)                        \
                        GA_NAME(tr8_##SUF)(s + p, ldb, rows, width, 1,         \
                                           dst + p * NR + j0, NR);             \
                    for (int64_t p = p8; p < kc; p++)                          \
                        for (int j = 0; j < width; j++)                        \
                            dst[p * NR + j0 + j] = j < rows ? s[j * ldb + p] : 0; \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }                                                                          \
                                                                               \
    /* C tile (mr x nr of MR x NR) = beta * C + acc (beta 0: C is          \
     * overwritten, NaNs in it do not propagate) */                          \
    static inline __attribute__((always_inline)) void GA_NAME(store_##SUF)(   \
        GA_NAME(v_##SUF) acc[MR][NV], T *restrict c, int64_t ldc, int64_t mr, \
        int64_t nr, T beta)                                                    \
    {                                                                          \
        typedef GA_NAME(v_##SUF) V;                                            \
        typedef GA_NAME(vu_##SUF) VU;                                          \
        enum { L = GA_NAME(L_##SUF), NR = GA_NAME(NR_##SUF) };                 \
        if (mr == MR && nr == NR) {                                            \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)              \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {         \
                    VU *cp = (VU *)(c + i * ldc + v * L);                      \
                    if (beta == 0)                                             \
                        *cp = acc[i][v];                                       \
                    else if (beta == 1)                                        \
                        *cp += acc[i][v];                                      \
                    else                                                       \
                        *cp = beta * *cp + acc[i][v];                          \
                }                                                              \
            return;                                                            \
        }                                                                      \
        T tile[MR][NR] __attribute__((aligned(64)));                          \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                  \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)               \
                *(V *)&tile[i][v * L] = acc[i][v];                             \
        for (int64_t i = 0; i < mr; i++)                                       \
            for (int64_t j = 0; j < nr; j++) {                                 \
                T *cp = c + i * ldc + j;                                       \
                *cp = beta == 0 ? tile[i][j] : beta * *cp + tile[i][j];        \
            }                                                                  \
    }                                                                          \
                                                                               \
    /* C tile (mr x nr of MR x NR) = beta * C + A panel @ B panel, A(i, p)    \
     * at a[i * rs + p * ks]: packed (rs 1, ks MR) or, for a whole panel of   \
     * MR rows, read in place (A stored transposed: rs 1, ks lda; else rs    \
     * lda, ks 1); B's row p at b + p * bs (packed: bs NR; a whole panel of   \
     * NR columns in place: ldb). Inlined with constant strides where they   \
     * are constant; the same multiply-adds in the same order either way,    \
     * so the same bits */                                                    \
    static inline __attribute__((always_inline)) void GA_NAME(tile_##SUF)(    \
        int64_t kc, const T *restrict a, int64_t rs, int64_t ks,               \
        const T *restrict b, int64_t bs, T *restrict c, int64_t ldc,           \
        int64_t mr, int64_t nr, T beta)                                        \
    {                                                                          \
        typedef GA_NAME(v_##SUF) V;                                            \
        enum { L = GA_NAME(L_##SUF), NR = GA_NAME(NR_##SUF) };                 \
        V acc[MR][NV];                                                         \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                  \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)               \
                acc[i][v] = (V){0};                                            \
        for (int64_t p = 0; p < kc; p++, a += ks, b += bs) {                   \
            V bv[NV];                                                          \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)               \
                bv[v] = *(const GA_NAME(vu_##SUF) *)(b + v * L);               \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)              \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)           \
                    acc[i][v] += a[i * rs] * bv[v];                            \
        }                                                                      \
        GA_NAME(store_##SUF)(acc, c, ldc, mr, nr, beta);                       \
    }                                                                          \
                                                                               \
    static void GA_NAME(micro_##SUF)(int64_t kc, const T *restrict a,          \
                                     const T *restrict b, T *restrict c,       \
                                     int64_t ldc, int64_t mr, int64_t nr,      \
                                     T beta)                                   \
    {                                                                          \
        GA_NAME(tile_##SUF)(kc, a, 1, MR, b, GA_NAME(NR_##SUF), c, ldc, mr, nr, beta); \
    }                                                                          \
    /* micro with B's rows bs apart (packed: NR; in place: ldb) */           \
    static void GA_NAME(micro_b_##SUF)(int64_t kc, const T *restrict a,        \
                                       const T *restrict b, int64_t bs,        \
                                       T *restrict c, int64_t ldc, int64_t mr, \
                                       int64_t nr, T beta)                     \
    {                                                                          \
        GA_NAME(tile_##SUF)(kc, a, 1, MR, b, bs, c, ldc, mr, nr, beta);        \
    }                                                                          \
    static void GA_NAME(micro_rows_##SUF)(int64_t kc, const T *restrict a,     \
                                          int64_t lda, const T *restrict b,    \
                                          int64_t bs, T *restrict c,           \
                                          int64_t ldc, int64_t nr, T beta)     \
    {                                                                          \
        GA_NAME(tile_##SUF)(kc, a, lda, 1, b, bs, c, ldc, MR, nr, beta);       \
    }                                                                          \
    static void GA_NAME(micro_cols_##SUF)(int64_t kc, const T *restrict a,     \
                                          int64_t lda, const T *restrict b,    \
                                          int64_t bs, T *restrict c,           \
                                          int64_t ldc, int64_t nr, T beta)     \
    {                                                                          \
        GA_NAME(tile_##SUF)(kc, a, 1, lda, b, bs, c, ldc, MR, nr, beta);       \
    }                                                                          \
                                                                               \
    /* C block (mc x nc) = beta * C + packed A block @ packed B block: the  \
     * micro-kernel over B's column panels (each kept in L1 while the A       \
     * panels stream past it from L2) */                                     \
    static void GA_NAME(macro_##SUF)(int64_t mc, int64_t nc, int64_t kc,       \
                                     const void *pa, const void *pb, void *c,  \
                                     int64_t ldc, double beta)                 \
    {                                                                          \
        enum { NR = GA_NAME(NR_##SUF) };                                       \
        const T *a = pa, *b = pb;                                              \
        T *cc = c;                                                             \
        for (int64_t jr = 0; jr < nc; jr += NR) {                              \
            int64_t nr = nc - jr < NR ? nc - jr : NR;                          \
            for (int64_t ir = 0; ir < mc; ir += MR)                            \
                GA_NAME(micro_##SUF)(kc, a + ir * kc, b + jr * kc,             \
                                     cc + ir * ldc + jr, ldc,                  \
                                     mc - ir < MR ? mc - ir : MR, nr, (T)beta); \
        }                                                                      \
    }                                                                          \
                                                                               \
    /* macro with A read in place (alpha 1): A(i, p) at a[i * lda + p] (ta: \
     * a[p * lda + i]); a last panel of fewer than MR rows is packed into    \
     * tmp (MR x kc elements), since a whole tile would read past A. ldb 0:  \
     * b is packed B; else B(p, j) at b[p * ldb + j], a last panel of fewer  \
     * than NR columns packed into tmp_b (NR x kc) */                        \
    static void GA_NAME(macro_direct_##SUF)(int64_t mc, int64_t nc, int64_t kc, \
                                            bool ta, const void *pa,           \
                                            int64_t lda, const void *pb,       \
                                            int64_t ldb, void *c, int64_t ldc, \
                                            double beta, void *tmp, void *tmp_b) \
    {                                                                          \
        enum { NR = GA_NAME(NR_##SUF) };                                       \
        const T *a = pa, *b = pb;                                              \
        T *cc = c, *part = tmp;                                                \
        int64_t whole = mc / MR * MR;                                          \
        if (whole < mc)                                                        \
            GA_NAME(pack_a_##SUF)(ta, ta ? a + whole : a + whole * lda, lda,   \
                                  mc - whole, kc, 1, part);                    \
        for (int64_t jr = 0; jr < nc; jr += NR) {                              \
            int64_t nr = nc - jr < NR ? nc - jr : NR;                          \
            const T *bp = b + jr * kc;                                         \
            int64_t bs = NR;                                                   \
            if (ldb && nr == NR) {                                             \
                bp = b + jr, bs = ldb;                                         \
            } else if (ldb) {                                                  \
                GA_NAME(pack_b_##SUF)(false, b + jr, ldb, kc, nr, tmp_b);      \
                bp = tmp_b;                                                    \
            }                                                                  \
            for (int64_t ir = 0; ir < whole; ir += MR) {                       \
                T *ct = cc + ir * ldc + jr;                                    \
                if (ta)                                                        \
                    GA_NAME(micro_cols_##SUF)(kc, a + ir, lda, bp, bs, ct, ldc, \
                                              nr, (T)beta);                    \
                else                                                           \
                    GA_NAME(micro_rows_##SUF)(kc, a + ir * lda, lda, bp, bs, ct, \
                                              ldc, nr, (T)beta);               \
            }                                                                  \
            if (whole < mc)                                                    \
                GA_NAME(micro_b_##SUF)(kc, part, bp, bs, cc + whole * ldc + jr, \
                                       ldc, mc - whole, nr, (T)beta);          \
        }                                                                      \
    }                                                                          \
                                                                               \
    static void GA_NAME(pack_a_any_##SUF)(bool ta, const void *a, int64_t lda, \
                                          int64_t mc, int64_t kc, double alpha, \
                                          void *dst)                           \
    {                                                                          \
        GA_NAME(pack_a_##SUF)(ta, a, lda, mc, kc, (T)alpha, dst);              \
    }                                                                          \
                                                                               \
    static void GA_NAME(pack_b_any_##SUF)(bool tb, const void *b, int64_t ldb, \
                                          int64_t kc, int64_t nc, void *dst)   \
    {                                                                          \
        GA_NAME(pack_b_##SUF)(tb, b, ldb, kc, nc, dst);                        \
    }

GA_TRANSPOSE8(float, f32)
GA_TRANSPOSE8(double, f64)
GEMM_TEMPLATE(float, f32, MR_F32, NV_F32)
GEMM_TEMPLATE(double, f64, MR_F64, NV_F64)

#include "kernels/cpu/gemm_ep_arch.h"
#include "kernels/cpu/gemm_skinny_arch.h"

#define GA_KERN(SUF, MR)                                                        \
    {.mr = MR, .nr = GA_NAME(NR_##SUF), .kc = KC, .mc = MC(MR), .nc = NC,       \
     .pack_a = GA_NAME(pack_a_any_##SUF), .pack_b = GA_NAME(pack_b_any_##SUF),  \
     .macro = GA_NAME(macro_##SUF), .macro_direct = GA_NAME(macro_direct_##SUF),  \
     .macro_ep = GA_NAME(ep_macro_##SUF),                                        \
     .macro_ep_in_place = GA_NAME(ep_macro_in_place_##SUF),                      \
     .skinny = GA_NAME(skinny_##SUF)}

const tg__gemm_arch GA_NAME(tg__gemm_arch) = {
    .name = GA_STR(GEMM_ISA),
    .k = {GA_KERN(f32, MR_F32), GA_KERN(f64, MR_F64)},
};
