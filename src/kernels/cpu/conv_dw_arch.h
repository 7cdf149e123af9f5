/* The depthwise convolution's plane kernel (see conv_dw.h), one template
 * instantiated per instruction set like conv_arch.h: conv_dw_avx512.c,
 * conv_dw_avx2.c and conv_dw_generic.c define VEC_BYTES and DW_ISA, are
 * compiled for their instruction set (-ffp-contract=fast: the multiply-
 * adds fuse) and include this file. GCC vector extensions.
 *
 * One output plane from its input plane laid out by conv_dw.c as column
 * phases: phase q holds columns q, q + sw, q + 2 sw, ... of the padded
 * plane, so that tap (i, j) of output row oy is the contiguous run of
 * phase j % sw, row oy * sh + i, from column j / sw: every load is a whole
 * vector, whatever the stride. Four vectors of outputs at a time (their
 * accumulators are independent chains), taps in the same order for every
 * output, bias first: with an activation the kernel stores the
 * activation of the same value. */
#include "kernels/cpu/conv_dw_api.h"
#include "kernels/cpu/shuffle.h"

#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#ifndef DW_ISA
#error "define DW_ISA and VEC_BYTES before including conv_dw_arch.h"
#endif

#define DW_CAT2(a, b) a##b
#define DW_CAT(a, b) DW_CAT2(a, b)
#define DW(x) DW_CAT(DW_CAT(x, _), DW_ISA)
#define DW_UNROLL _Pragma("GCC unroll 4")
#define DW_STR2(x) #x
#define DW_STR(x) DW_STR2(x)

#define DW_TYPES(T, SUF, IT)                                                     \
    typedef T DW(v_##SUF) __attribute__((vector_size(VEC_BYTES)));               \
    typedef T DW(u_##SUF) __attribute__((vector_size(VEC_BYTES), aligned(sizeof(T)))); \
    typedef IT DW(m_##SUF) __attribute__((vector_size(VEC_BYTES)));              \
    enum { DW(L_##SUF) = VEC_BYTES / (int)sizeof(T) };

DW_TYPES(float, f32, int32_t)
DW_TYPES(double, f64, int64_t)

/* lane indices, and the even elements of two vectors for TG_SHUFFLE2 */
#if VEC_BYTES == 64
static const DW(m_f32) DW(iota_f32) = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const DW(m_f32) DW(even_f32) = {0, 2, 4, 6, 8, 10, 12, 14,
                                       16, 18, 20, 22, 24, 26, 28, 30};
static const DW(m_f64) DW(iota_f64) = {0, 1, 2, 3, 4, 5, 6, 7};
static const DW(m_f64) DW(even_f64) = {0, 2, 4, 6, 8, 10, 12, 14};
#elif VEC_BYTES == 32
static const DW(m_f32) DW(iota_f32) = {0, 1, 2, 3, 4, 5, 6, 7};
static const DW(m_f32) DW(even_f32) = {0, 2, 4, 6, 8, 10, 12, 14};
static const DW(m_f64) DW(iota_f64) = {0, 1, 2, 3};
static const DW(m_f64) DW(even_f64) = {0, 2, 4, 6};
#else
static const DW(m_f32) DW(iota_f32) = {0, 1, 2, 3};
static const DW(m_f32) DW(even_f32) = {0, 2, 4, 6};
static const DW(m_f64) DW(iota_f64) = {0, 1};
static const DW(m_f64) DW(even_f64) = {0, 2};
#endif

/* the first n (0 < n < L) elements of a vector: loaded from src with zeros
 * after them, nothing at or past src + n read (load_part); stored at dst,
 * nothing at or past dst + n written (store_part). Masked loads and stores
 * on x86, a copy through memory elsewhere. */
#if defined(__AVX512F__) && VEC_BYTES == 64
#define DW_MASK_f32(n) ((__mmask16)((1u << (n)) - 1u))
#define DW_MASK_f64(n) ((__mmask8)((1u << (n)) - 1u))
#define DW_PARTS(T, SUF, IT, PS)                                                 \
    static inline DW(v_##SUF) DW(load_part_##SUF)(const T *src, int64_t n)       \
    {                                                                            \
        return (DW(v_##SUF))_mm512_maskz_loadu_##PS(DW_MASK_##SUF((int)n), src); \
    }                                                                            \
    static inline void DW(store_part_##SUF)(T *dst, DW(v_##SUF) v, int64_t n)    \
    {                                                                            \
        _mm512_mask_storeu_##PS(dst, DW_MASK_##SUF((int)n), (DW_M512_##SUF)v);  \
    }
#define DW_M512_f32 __m512
#define DW_M512_f64 __m512d
#elif defined(__AVX2__) && VEC_BYTES == 32
#define DW_PARTS(T, SUF, IT, PS)                                                 \
    static inline DW(v_##SUF) DW(load_part_##SUF)(const T *src, int64_t n)       \
    {                                                                            \
        DW(m_##SUF) m = DW(iota_##SUF) < (DW(m_##SUF)){0} + (IT)n;                   \
        return (DW(v_##SUF))_mm256_maskload_##PS(src, (__m256i)m);               \
    }                                                                            \
    static inline void DW(store_part_##SUF)(T *dst, DW(v_##SUF) v, int64_t n)    \
    {                                                                            \
        DW(m_##SUF) m = DW(iota_##SUF) < (DW(m_##SUF)){0} + (IT)n;                   \
        _mm256_maskstore_##PS(dst, (__m256i)m, (DW_M256_##SUF)v);                \
    }
#define DW_M256_f32 __m256
#define DW_M256_f64 __m256d
#else
#define DW_PARTS(T, SUF, IT, PS)                                                 \
    static inline DW(v_##SUF) DW(load_part_##SUF)(const T *src, int64_t n)       \
    {                                                                            \
        DW(v_##SUF) v = {0};                                                     \
        memcpy(&v, src, (size_t)n * sizeof(T));                                  \
        return v;                                                                \
    }                                                                            \
    static inline void DW(store_part_##SUF)(T *dst, DW(v_##SUF) v, int64_t n)    \
    {                                                                            \
        memcpy(dst, &v, (size_t)n * sizeof(T));                                  \
    }
#endif
DW_PARTS(float, f32, int32_t, ps)
DW_PARTS(double, f64, int64_t, pd)

#define DW_PLANE(T, SUF, IT)                                                     \
    /* relu as the relu op: NaN passes, the rest not above zero is +0; clamp  \
     * as the clamp op: below lo is lo, above hi is hi, NaN passes;         \
     * hardswish as the hardswish op: v * relu6(v + 3) / 6, in that order   \
     * (no multiply-add to fuse), relu6 passing NaN */                      \
    static inline DW(v_##SUF) DW(act_##SUF)(const tg__dw_plane *p, DW(v_##SUF) v) \
    {                                                                            \
        if (p->act == 1) {                                                       \
            DW(m_##SUF) keep = (v > 0) | (v != v);                               \
            return (DW(v_##SUF))((DW(m_##SUF))v & keep);                         \
        }                                                                        \
        if (p->act == 3) {                                                       \
            const DW(v_##SUF) zero = {0}, six = (DW(v_##SUF)){0} + (T)6;         \
            DW(v_##SUF) t = v + (T)3;                                            \
            DW(m_##SUF) below = t < zero, above = t > six;                       \
            t = (DW(v_##SUF))((DW(m_##SUF))t & ~below);                          \
            t = (DW(v_##SUF))(((DW(m_##SUF))six & above) | ((DW(m_##SUF))t & ~above)); \
            return v * t / (T)6;                                                 \
        }                                                                        \
        if (p->act != 2)                                                         \
            return v;                                                            \
        const DW(v_##SUF) lo = (DW(v_##SUF)){0} + (T)p->lo;                      \
        const DW(v_##SUF) hi = (DW(v_##SUF)){0} + (T)p->hi;                      \
        DW(m_##SUF) below = v < lo, above = v > hi;                              \
        DW(m_##SUF) bits = ((DW(m_##SUF))lo & below) | ((DW(m_##SUF))v & ~below); \
        v = (DW(v_##SUF))bits;                                                   \
        bits = ((DW(m_##SUF))hi & above) | ((DW(m_##SUF))v & ~above);           \
        return (DW(v_##SUF))bits;                                                \
    }                                                                            \
                                                                                 \
    /* a tile of nr (1 to 4) output rows from oy by nv (2 or 1) vectors from \
     * column x0: up to 8 independent accumulator chains, one broadcast of   \
     * each tap's weight */                                                  \
    static inline __attribute__((always_inline)) void DW(tile_##SUF)(            \
        const tg__dw_plane *p, const T *ph, const T *w, T bias, int64_t oy,       \
        int64_t x0, int nr, int nv, T *y)                                        \
    {                                                                            \
        const int64_t L = DW(L_##SUF), rs = p->sh * p->ld;                       \
        const T *base = ph + oy * rs + x0;                                       \
        DW(v_##SUF) acc[4][2];                                                   \
        DW_UNROLL for (int r = 0; r < 4; r++)                                    \
            DW_UNROLL for (int u = 0; u < 2; u++)                                \
                acc[r][u] = (DW(v_##SUF)){0} + bias;                             \
        for (int t = 0; t < p->taps; t++) {                                      \
            const T *src = base + p->off[t];                                     \
            const DW(v_##SUF) wv = (DW(v_##SUF)){0} + w[t];                      \
            DW_UNROLL for (int r = 0; r < 4; r++)                                \
                DW_UNROLL for (int u = 0; u < 2; u++)                            \
                    if (r < nr && u < nv)                                        \
                        acc[r][u] += wv * *(const DW(u_##SUF) *)(src + r * rs + u * L); \
        }                                                                        \
        DW_UNROLL for (int r = 0; r < 4; r++)                                    \
            DW_UNROLL for (int u = 0; u < 2; u++) {                              \
                if (r >= nr || u >= nv)                                          \
                    continue;                                                    \
                DW(v_##SUF) v = DW(act_##SUF)(p, acc[r][u]);                     \
                int64_t x = x0 + u * L;                                          \
                T *dst = y + (oy + r) * p->ow + x;                               \
                if (x + L <= p->ow)                                              \
                    *(DW(u_##SUF) *)dst = v;                                     \
                else                                                             \
                    DW(store_part_##SUF)(dst, v, p->ow - x);                     \
            }                                                                    \
    }                                                                            \
                                                                                 \
    /* the output vectors of rows [oy, oy + nr), two at a time */                \
    static inline __attribute__((always_inline)) void DW(rows_##SUF)(            \
        const tg__dw_plane *p, const T *ph, const T *w, T bias, int64_t oy,       \
        int nr, T *y)                                                            \
    {                                                                            \
        const int64_t L = DW(L_##SUF), nvec = (p->ow + L - 1) / L;               \
        int64_t v = 0;                                                           \
        for (; v + 2 <= nvec; v += 2)                                            \
            DW(tile_##SUF)(p, ph, w, bias, oy, v * L, nr, 2, y);                 \
        if (v < nvec)                                                            \
            DW(tile_##SUF)(p, ph, w, bias, oy, v * L, nr, 1, y);                 \
    }                                                                            \
                                                                                 \
    /* r[0..n) + bias, then the activation act (lo, hi: clamp's bounds), a    \
     * vector at a time: the scalar expressions' bits */                      \
    static void DW(row_act_##SUF)(void *rv, int64_t n, const void *bv, int act,  \
                                  double lo, double hi)                          \
    {                                                                            \
        T *r = rv;                                                               \
        const T bias = bv ? *(const T *)bv : (T)0;                               \
        const tg__dw_plane p = {.act = act, .lo = lo, .hi = hi};                 \
        const int64_t L = DW(L_##SUF);                                           \
        int64_t i = 0;                                                           \
        for (; i + L <= n; i += L) {                                             \
            DW(v_##SUF) v = *(DW(u_##SUF) *)(r + i);                             \
            if (bv)                                                              \
                v += bias;                                                       \
            *(DW(u_##SUF) *)(r + i) = DW(act_##SUF)(&p, v);                      \
        }                                                                        \
        if (i < n) { /* the tail through a vector of its own */                 \
            DW(v_##SUF) v = DW(load_part_##SUF)(r + i, n - i);                   \
            if (bv)                                                              \
                v += bias;                                                       \
            DW(store_part_##SUF)(r + i, DW(act_##SUF)(&p, v), n - i);            \
        }                                                                        \
    }                                                                            \
                                                                                 \
    static void DW(row_res_##SUF)(void *rv, int64_t n, const void *bv,          \
                                  const void *sv, int relu)                      \
    {                                                                            \
        T *r = rv;                                                               \
        const T *res = sv;                                                       \
        const T bias = bv ? *(const T *)bv : (T)0;                               \
        const tg__dw_plane p = {.act = relu ? 1 : 0};                            \
        const int64_t L = DW(L_##SUF);                                           \
        int64_t i = 0;                                                           \
        for (; i + L <= n; i += L) {                                             \
            DW(v_##SUF) v = *(DW(u_##SUF) *)(r + i);                             \
            if (bv)                                                              \
                v += bias;                                                       \
            v += *(const DW(u_##SUF) *)(res + i);                                \
            *(DW(u_##SUF) *)(r + i) = DW(act_##SUF)(&p, v);                      \
        }                                                                        \
        if (i < n) {                                                             \
            DW(v_##SUF) v = DW(load_part_##SUF)(r + i, n - i);                   \
            if (bv)                                                              \
                v += bias;                                                       \
            v += DW(load_part_##SUF)(res + i, n - i);                            \
            DW(store_part_##SUF)(r + i, DW(act_##SUF)(&p, v), n - i);            \
        }                                                                        \
    }                                                                            \
                                                                                 \
    static void DW(plane_##SUF)(const tg__dw_plane *p, const void *phases,       \
                                const void *wv, const void *bv, void *yv)        \
    {                                                                            \
        const T *ph = phases, *w = wv;                                           \
        const T bias = bv ? *(const T *)bv : (T)0;                               \
        int64_t oy = 0;                                                          \
        for (; oy + 4 <= p->oh; oy += 4)                                         \
            DW(rows_##SUF)(p, ph, w, bias, oy, 4, yv);                           \
        /* the last rows in one tile: chains enough for small planes */          \
        if (p->oh - oy == 3)                                                     \
            DW(rows_##SUF)(p, ph, w, bias, oy, 3, yv);                           \
        else if (p->oh - oy == 2)                                                \
            DW(rows_##SUF)(p, ph, w, bias, oy, 2, yv);                           \
        else if (p->oh - oy == 1)                                                \
            DW(rows_##SUF)(p, ph, w, bias, oy, 1, yv);                           \
    }

/* the columns [*lo, *hi) of phase q that fall inside the input plane
 * (input column x * sw + q - pl) */
static void DW(inside)(const tg__dw_plane *p, int64_t q, int64_t *lo, int64_t *hi)
{
    int64_t a = p->pl - q, b = p->w + p->pl - q; /* x * sw in [a, b) */
    *lo = a <= 0 ? 0 : (a + p->sw - 1) / p->sw;
    *hi = b <= 0 ? 0 : (b + p->sw - 1) / p->sw;
    *hi = *hi > p->ld ? p->ld : *hi;
    *lo = *lo > *hi ? *hi : *lo;
}

/* phase q, row r: input row r - pt, columns q - pl, q - pl + sw, ...; every
 * store is a whole vector (the layout writes up to a vector past its end,
 * TG__DW_SLACK), row by row in order, so that a store spilling past a
 * row's ld is overwritten by the rows after it. Stride 1 copies rows,
 * stride 2 takes the even elements of two loads, others go one element at
 * a time. */
#define DW_LAYOUT(T, SUF)                                                        \
    /* the first n elements of src (at most a vector), zeros after them */      \
    static inline DW(v_##SUF) DW(part_##SUF)(const T *src, int64_t n)            \
    {                                                                            \
        if (n >= DW(L_##SUF))                                                    \
            return *(const DW(u_##SUF) *)src;                                    \
        return n <= 0 ? (DW(v_##SUF)){0} : DW(load_part_##SUF)(src, n);         \
    }                                                                            \
                                                                                 \
    /* dst [lo, hi) = row [sw * x] for x in [lo, hi), zeros in [0, lo) and    \
     * [hi, ld): vector stores, not calls to memset for a vector or two */   \
    static inline __attribute__((optimize("no-tree-loop-distribute-patterns"))) \
    void DW(layout_row_##SUF)(const tg__dw_plane *p, const T *row, int64_t lo,   \
                              int64_t hi, T *dst)                                \
    {                                                                            \
        const int64_t L = DW(L_##SUF);                                           \
        const DW(v_##SUF) zero = {0};                                            \
        for (int64_t x = 0; x < lo; x += L)                                      \
            *(DW(u_##SUF) *)(dst + x) = zero;                                    \
        if (p->sw == 1) {                                                        \
            for (int64_t x = lo; x < hi; x += L)                                 \
                *(DW(u_##SUF) *)(dst + x) = DW(part_##SUF)(row + x, hi - x);     \
        } else if (p->sw == 2) {                                                 \
            for (int64_t x = lo; x < hi; x += L) {                               \
                int64_t n = 2 * (hi - x) - 1; /* elements of row the chunk reads */ \
                DW(v_##SUF) a = DW(part_##SUF)(row + 2 * x, n);                  \
                DW(v_##SUF) b = DW(part_##SUF)(row + 2 * x + L, n - L);          \
                *(DW(u_##SUF) *)(dst + x) = TG_SHUFFLE2(a, b, DW(even_##SUF)); \
            }                                                                    \
        } else {                                                                 \
            for (int64_t x = lo; x < hi; x++)                                    \
                dst[x] = row[x * p->sw];                                         \
        }                                                                        \
        for (int64_t x = hi; x < p->ld; x += L)                                  \
            *(DW(u_##SUF) *)(dst + x) = zero;                                    \
    }                                                                            \
                                                                                 \
    static __attribute__((optimize("no-tree-loop-distribute-patterns"))) void    \
    DW(layout_##SUF)(const tg__dw_plane *p, const void *sv, void *pv)            \
    {                                                                            \
        const T *src = sv;                                                       \
        T *ph = pv;                                                              \
        for (int64_t q = 0; q < p->sw; q++) {                                    \
            int64_t lo, hi;                                                      \
            DW(inside)(p, q, &lo, &hi);                                          \
            for (int64_t r = 0; r < p->rows; r++) {                              \
                T *dst = ph + (q * p->rows + r) * p->ld;                         \
                int64_t ir = r - p->pt;                                          \
                if (ir < 0 || ir >= p->h) /* all zeros */                        \
                    DW(layout_row_##SUF)(p, NULL, p->ld, p->ld, dst);            \
                else /* row[x] is input column x * sw + q - pl */                \
                    DW(layout_row_##SUF)(p, src + ir * p->w + q - p->pl, lo, hi, dst); \
            }                                                                    \
        }                                                                        \
    }

DW_PLANE(float, f32, int32_t)
DW_PLANE(double, f64, int64_t)
DW_LAYOUT(float, f32)
DW_LAYOUT(double, f64)

const tg__dw_arch DW(tg__dw_arch) = {
    .name = DW_STR(DW_ISA),
    .lanes = {VEC_BYTES / 4, VEC_BYTES / 8},
    .layout = {DW(layout_f32), DW(layout_f64)},
    .plane = {DW(plane_f32), DW(plane_f64)},
    .row_act = {DW(row_act_f32), DW(row_act_f64)},
    .row_res = {DW(row_res_f32), DW(row_res_f64)},
};
#include "kernels/cpu/conv_dwc_arch.h"
