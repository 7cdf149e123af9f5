/* 2 x 2, stride 2 max pooling of float32 in x86 registers: groups of
 * X86_LN windows (8 with AVX2, also in the AVX-512 build, for short rows;
 * 4 with SSE4.1) and, with AVX-512, of 16 (x512_*), for the per-ISA builds
 * of pool_2x2_compact_arch.h. GCC vector extensions (the portable code
 * there) compile the general shuffles and the conversion of offsets to
 * bytes lane by lane on targets narrower than their vectors (on AVX2, 20x
 * slower than here). Here the shuffles stay inside 128-bit lanes (or are
 * one two-source permute) and offsets are packed, with the same choices:
 * NaN wins, ties keep the first element in window order, offsets 0..3
 * row-major in the window. Included only where __SSE4_1__ is defined. */
#ifndef TG_KERNELS_POOL_2X2_X86_H
#define TG_KERNELS_POOL_2X2_X86_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#if defined(__AVX2__)
#define X86_LN 8
typedef __m256 x86_vf;  /* X86_LN floats */
typedef __m256i x86_vi; /* X86_LN int32 */
#define X86_LOADF _mm256_loadu_ps
#define X86_STOREF _mm256_storeu_ps
#define X86_AND _mm256_and_ps
#define X86_OR _mm256_or_ps
#define X86_BLEND _mm256_blendv_ps
#define X86_SET1I _mm256_set1_epi32
#define X86_CASTF _mm256_castsi256_ps
#define X86_CASTI _mm256_castps_si256
#define X86_EQI _mm256_cmpeq_epi32
#define X86_GT(a, b) _mm256_cmp_ps(a, b, _CMP_GT_OQ)
#define X86_NAN(a) _mm256_cmp_ps(a, a, _CMP_UNORD_Q)
#else
#define X86_LN 4
typedef __m128 x86_vf;
typedef __m128i x86_vi;
#define X86_LOADF _mm_loadu_ps
#define X86_STOREF _mm_storeu_ps
#define X86_AND _mm_and_ps
#define X86_OR _mm_or_ps
#define X86_BLEND _mm_blendv_ps
#define X86_SET1I _mm_set1_epi32
#define X86_CASTF _mm_castsi128_ps
#define X86_CASTI _mm_castps_si128
#define X86_EQI _mm_cmpeq_epi32
#define X86_GT(a, b) _mm_cmpgt_ps(a, b)
#define X86_NAN(a) _mm_cmpunord_ps(a, a)
#endif

/* the maxima of X86_LN windows whose rows start at r0 and r1 (2 X86_LN
 * floats read from each), stored at y; returns the argmax offsets 0..3 as
 * int32 lanes in window order */
static inline x86_vi x86_max_vf(x86_vf a0, x86_vf a1, x86_vf c0, x86_vf c1, float *y);
static inline x86_vi x86_max_f32(const float *r0, const float *r1, float *y)
{
    return x86_max_vf(X86_LOADF(r0), X86_LOADF(r0 + X86_LN), X86_LOADF(r1),
                      X86_LOADF(r1 + X86_LN), y);
}

/* the same from the windows' elements loaded: a0, a1 the top rows' 2
 * X86_LN floats of windows 0 .. X86_LN / 2 - 1 and the rest, c0, c1 the
 * bottom rows' */
static inline x86_vi x86_max_vf(x86_vf a0, x86_vf a1, x86_vf c0, x86_vf c1, float *y)
{
#if defined(__AVX2__)
    /* even and odd columns within 128-bit lanes: windows 0 1 4 5 2 3 6 7 */
    x86_vf p = _mm256_shuffle_ps(a0, a1, 0x88), q = _mm256_shuffle_ps(a0, a1, 0xdd);
    x86_vf u = _mm256_shuffle_ps(c0, c1, 0x88), v = _mm256_shuffle_ps(c0, c1, 0xdd);
#else
    x86_vf p = _mm_shuffle_ps(a0, a1, 0x88), q = _mm_shuffle_ps(a0, a1, 0xdd);
    x86_vf u = _mm_shuffle_ps(c0, c1, 0x88), v = _mm_shuffle_ps(c0, c1, 0xdd);
#endif
    x86_vf t = X86_OR(X86_GT(q, p), X86_NAN(q));
    x86_vf m = X86_BLEND(p, q, t);
    x86_vf k = X86_AND(t, X86_CASTF(X86_SET1I(1)));
    t = X86_OR(X86_GT(u, m), X86_NAN(u));
    m = X86_BLEND(m, u, t);
    k = X86_BLEND(k, X86_CASTF(X86_SET1I(2)), t);
    t = X86_OR(X86_GT(v, m), X86_NAN(v));
    m = X86_BLEND(m, v, t);
    k = X86_BLEND(k, X86_CASTF(X86_SET1I(3)), t);
#if defined(__AVX2__)
    /* back to window order: 64-bit pairs 0 2 1 3 */
    X86_STOREF(y, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xd8)));
    return _mm256_permute4x64_epi64(X86_CASTI(k), 0xd8);
#else
    X86_STOREF(y, m);
    return X86_CASTI(k);
#endif
}

/* int32 lanes 0..3 to X86_LN bytes at off */
static inline void x86_store_bytes(x86_vi k, uint8_t *off)
{
#if defined(__AVX2__)
    __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(k), _mm256_extracti128_si256(k, 1));
    _mm_storel_epi64((__m128i *)off, _mm_packus_epi16(w, w));
#else
    __m128i w = _mm_packs_epi32(k, k);
    int32_t b = _mm_cvtsi128_si32(_mm_packus_epi16(w, w));
    memcpy(off, &b, 4);
#endif
}

/* X86_LN bytes at off (each 0..3) as int32 lanes */
static inline x86_vi x86_load_bytes(const uint8_t *off)
{
#if defined(__AVX2__)
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)off));
#else
    int32_t b;
    memcpy(&b, off, 4);
    return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(b));
#endif
}

/* the gradient of X86_LN windows: dy[i] to the element at offset k[i] of
 * window i, zeros to the others, into the rows d0, d1 (2 X86_LN floats
 * each) */
static inline void x86_scatter_f32(const float *dy, x86_vi k, float *d0, float *d1)
{
    x86_vf g = X86_LOADF(dy);
    x86_vf p = X86_AND(g, X86_CASTF(X86_EQI(k, X86_SET1I(0))));
    x86_vf q = X86_AND(g, X86_CASTF(X86_EQI(k, X86_SET1I(1))));
    x86_vf u = X86_AND(g, X86_CASTF(X86_EQI(k, X86_SET1I(2))));
    x86_vf v = X86_AND(g, X86_CASTF(X86_EQI(k, X86_SET1I(3))));
#if defined(__AVX2__)
    /* unpack within 128-bit lanes, then put the halves in order */
    __m256 lo = _mm256_unpacklo_ps(p, q), hi = _mm256_unpackhi_ps(p, q);
    _mm256_storeu_ps(d0, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(d0 + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
    lo = _mm256_unpacklo_ps(u, v);
    hi = _mm256_unpackhi_ps(u, v);
    _mm256_storeu_ps(d1, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(d1 + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
#else
    _mm_storeu_ps(d0, _mm_unpacklo_ps(p, q));
    _mm_storeu_ps(d0 + 4, _mm_unpackhi_ps(p, q));
    _mm_storeu_ps(d1, _mm_unpacklo_ps(u, v));
    _mm_storeu_ps(d1 + 4, _mm_unpackhi_ps(u, v));
#endif
}

/* ---- int64 plane positions (max_pool2d): the window offsets in int32
 * lanes as the positions' differences from the window's top-left element,
 * 0, 1, W or W + 1, so that a group's indices are one widening and one add
 * (W < 2^31 - 1: the callers check) */

/* the maxima of X86_LN windows whose rows start at r0 and r1 (as
 * x86_max_f32: the same comparisons in the same order) stored at y, and
 * their positions b + 2 i + {0, 1, W, W + 1} stored at idx as int64 */
static inline void x86_max_idx_f32(const float *r0, const float *r1, int64_t b, int32_t W,
                                   float *y, int64_t *idx)
{
    x86_vf a0 = X86_LOADF(r0), a1 = X86_LOADF(r0 + X86_LN);
    x86_vf c0 = X86_LOADF(r1), c1 = X86_LOADF(r1 + X86_LN);
#if defined(__AVX2__)
    /* even and odd columns within 128-bit lanes: windows 0 1 4 5 2 3 6 7 */
    x86_vf p = _mm256_shuffle_ps(a0, a1, 0x88), q = _mm256_shuffle_ps(a0, a1, 0xdd);
    x86_vf u = _mm256_shuffle_ps(c0, c1, 0x88), v = _mm256_shuffle_ps(c0, c1, 0xdd);
#else
    x86_vf p = _mm_shuffle_ps(a0, a1, 0x88), q = _mm_shuffle_ps(a0, a1, 0xdd);
    x86_vf u = _mm_shuffle_ps(c0, c1, 0x88), v = _mm_shuffle_ps(c0, c1, 0xdd);
#endif
    x86_vf t = X86_OR(X86_GT(q, p), X86_NAN(q));
    x86_vf m = X86_BLEND(p, q, t);
    x86_vf k = X86_AND(t, X86_CASTF(X86_SET1I(1)));
    t = X86_OR(X86_GT(u, m), X86_NAN(u));
    m = X86_BLEND(m, u, t);
    k = X86_BLEND(k, X86_CASTF(X86_SET1I(W)), t);
    t = X86_OR(X86_GT(v, m), X86_NAN(v));
    m = X86_BLEND(m, v, t);
    k = X86_BLEND(k, X86_CASTF(X86_SET1I(W + 1)), t);
#if defined(__AVX2__)
    X86_STOREF(y, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xd8)));
    /* offsets >= 0: zero-extended by interleaving with zeros, which within
     * 128-bit lanes also puts windows 0 1 | 2 3 and 4 5 | 6 7 in order */
    __m256i ki = X86_CASTI(k), zero = _mm256_setzero_si256();
    __m256i lo = _mm256_unpacklo_epi32(ki, zero), hi = _mm256_unpackhi_epi32(ki, zero);
    __m256i bb = _mm256_set1_epi64x(b);
    _mm256_storeu_si256((__m256i *)idx,
                        _mm256_add_epi64(lo, _mm256_add_epi64(bb, _mm256_setr_epi64x(0, 2, 4, 6))));
    _mm256_storeu_si256((__m256i *)(idx + 4),
                        _mm256_add_epi64(hi, _mm256_add_epi64(bb, _mm256_setr_epi64x(8, 10, 12, 14))));
#else
    X86_STOREF(y, m);
    __m128i ki = X86_CASTI(k), zero = _mm_setzero_si128(), bb = _mm_set1_epi64x(b);
    _mm_storeu_si128((__m128i *)idx, _mm_add_epi64(_mm_unpacklo_epi32(ki, zero),
                                                   _mm_add_epi64(bb, _mm_set_epi64x(2, 0))));
    _mm_storeu_si128((__m128i *)(idx + 2), _mm_add_epi64(_mm_unpackhi_epi32(ki, zero),
                                                         _mm_add_epi64(bb, _mm_set_epi64x(6, 4))));
#endif
}

/* the bits of _mm*_movemask_ps that windows 0 .. n - 1 set in
 * x86_grad_idx_f32's lane order (AVX2: windows 0 1 4 5 | 2 3 6 7) */
static inline int x86_window_bits(int64_t n)
{
    int bits = 0;
    for (int w = 0; w < X86_LN && w < n; w++)
#if defined(__AVX2__)
        bits |= 1 << ((w & 1) | (w & 4) >> 1 | (w & 2) << 1);
#else
        bits |= 1 << w;
#endif
    return bits;
}

/* the gradient of X86_LN windows from their int64 positions at idx
 * (window i's elements are b + 2 i + {0, 1, W, W + 1}): dy[i] to the
 * element of window i at idx[i], zeros to the others, into the rows d0,
 * d1 (2 X86_LN floats each); false (nothing written) when a position of
 * one of the windows whose bits (x86_window_bits) are in `need` lies
 * outside its window (the other windows' elements get zeros or dy: a
 * short row's group running into the next row, which overwrites them) */
static inline bool x86_grad_idx_f32(const float *dy, const int64_t *idx, int64_t b, int32_t W,
                                    int need, float *d0, float *d1)
{
#if defined(__AVX2__)
    __m256i bb = _mm256_set1_epi64x(b);
    __m256i o0 = _mm256_sub_epi64(_mm256_loadu_si256((const __m256i *)idx),
                                  _mm256_add_epi64(bb, _mm256_setr_epi64x(0, 2, 4, 6)));
    __m256i o1 = _mm256_sub_epi64(_mm256_loadu_si256((const __m256i *)(idx + 4)),
                                  _mm256_add_epi64(bb, _mm256_setr_epi64x(8, 10, 12, 14)));
    /* the differences' low and high halves, windows 0 1 4 5 | 2 3 6 7 (the
     * order the unpacks below write back in place) */
    __m256i lo = X86_CASTI(_mm256_shuffle_ps(X86_CASTF(o0), X86_CASTF(o1), 0x88));
    __m256i hi = X86_CASTI(_mm256_shuffle_ps(X86_CASTF(o0), X86_CASTF(o1), 0xdd));
    __m256 g = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_loadu_ps(dy)), 0xd8));
    __m256i zero = _mm256_setzero_si256();
#else
    __m128i bb = _mm_set1_epi64x(b);
    __m128i o0 = _mm_sub_epi64(_mm_loadu_si128((const __m128i *)idx),
                               _mm_add_epi64(bb, _mm_set_epi64x(2, 0)));
    __m128i o1 = _mm_sub_epi64(_mm_loadu_si128((const __m128i *)(idx + 2)),
                               _mm_add_epi64(bb, _mm_set_epi64x(6, 4)));
    __m128i lo = X86_CASTI(_mm_shuffle_ps(X86_CASTF(o0), X86_CASTF(o1), 0x88));
    __m128i hi = X86_CASTI(_mm_shuffle_ps(X86_CASTF(o0), X86_CASTF(o1), 0xdd));
    __m128 g = _mm_loadu_ps(dy);
    __m128i zero = _mm_setzero_si128();
#endif
    x86_vi e0 = X86_EQI(lo, zero), e1 = X86_EQI(lo, X86_SET1I(1));
    x86_vi e2 = X86_EQI(lo, X86_SET1I(W)), e3 = X86_EQI(lo, X86_SET1I(W + 1));
    x86_vf in = X86_AND(X86_OR(X86_OR(X86_CASTF(e0), X86_CASTF(e1)),
                               X86_OR(X86_CASTF(e2), X86_CASTF(e3))),
                        X86_CASTF(X86_EQI(hi, zero)));
    x86_vf p = X86_AND(g, X86_CASTF(e0)), q = X86_AND(g, X86_CASTF(e1));
    x86_vf u = X86_AND(g, X86_CASTF(e2)), v = X86_AND(g, X86_CASTF(e3));
#if defined(__AVX2__)
    int hit = _mm256_movemask_ps(in);
    if (need == 0xff ? hit != 0xff : (hit & need) != need) /* whole groups: one compare */
        return false;
    _mm256_storeu_ps(d0, _mm256_unpacklo_ps(p, q));
    _mm256_storeu_ps(d0 + 8, _mm256_unpackhi_ps(p, q));
    _mm256_storeu_ps(d1, _mm256_unpacklo_ps(u, v));
    _mm256_storeu_ps(d1 + 8, _mm256_unpackhi_ps(u, v));
#else
    int hit = _mm_movemask_ps(in);
    if (need == 0xf ? hit != 0xf : (hit & need) != need) /* whole groups: one compare */
        return false;
    _mm_storeu_ps(d0, _mm_unpacklo_ps(p, q));
    _mm_storeu_ps(d0 + 4, _mm_unpackhi_ps(p, q));
    _mm_storeu_ps(d1, _mm_unpacklo_ps(u, v));
    _mm_storeu_ps(d1 + 4, _mm_unpackhi_ps(u, v));
#endif
    return true;
}

/* ---- 2 x 2 average pooling (pool.c's avg_2x2 / avg_grad_2x2, the same
 * float operations in the same order, so the same bits) */

/* the averages of X86_LN windows whose rows start at r0 and r1 (2 X86_LN
 * floats read from each): ((a + b) + c + d) * 0.25, at y */
static inline void x86_avg_f32(const float *r0, const float *r1, float *y)
{
    x86_vf a0 = X86_LOADF(r0), a1 = X86_LOADF(r0 + X86_LN);
    x86_vf c0 = X86_LOADF(r1), c1 = X86_LOADF(r1 + X86_LN);
#if defined(__AVX2__)
    /* windows 0 1 4 5 | 2 3 6 7, put back in order by one permute */
    __m256 s = _mm256_add_ps(_mm256_shuffle_ps(a0, a1, 0x88), _mm256_shuffle_ps(a0, a1, 0xdd));
    s = _mm256_add_ps(s, _mm256_shuffle_ps(c0, c1, 0x88));
    s = _mm256_add_ps(s, _mm256_shuffle_ps(c0, c1, 0xdd));
    s = _mm256_mul_ps(s, _mm256_set1_ps(0.25f));
    _mm256_storeu_ps(y, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xd8)));
#else
    __m128 s = _mm_add_ps(_mm_shuffle_ps(a0, a1, 0x88), _mm_shuffle_ps(a0, a1, 0xdd));
    s = _mm_add_ps(s, _mm_shuffle_ps(c0, c1, 0x88));
    s = _mm_add_ps(s, _mm_shuffle_ps(c0, c1, 0xdd));
    _mm_storeu_ps(y, _mm_mul_ps(s, _mm_set1_ps(0.25f)));
#endif
}

/* the gradient of X86_LN windows: 0 + dy / 4 (dy / 4 is dy * 0.25 exactly;
 * the add makes -0 +0, as pool.c's) to each of a window's four elements,
 * in the rows d0, d1 (2 X86_LN floats each) */
static inline void x86_avg_grad_f32(const float *dy, float *d0, float *d1)
{
#if defined(__AVX2__)
    /* dy as windows 0 1 4 5 | 2 3 6 7: the unpacks then write in order */
    __m256 g = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_loadu_ps(dy)), 0xd8));
    __m256 v = _mm256_add_ps(_mm256_setzero_ps(), _mm256_mul_ps(g, _mm256_set1_ps(0.25f)));
    __m256 lo = _mm256_unpacklo_ps(v, v), hi = _mm256_unpackhi_ps(v, v);
    _mm256_storeu_ps(d0, lo);
    _mm256_storeu_ps(d0 + 8, hi);
    _mm256_storeu_ps(d1, lo);
    _mm256_storeu_ps(d1 + 8, hi);
#else
    __m128 v = _mm_add_ps(_mm_setzero_ps(), _mm_mul_ps(_mm_loadu_ps(dy), _mm_set1_ps(0.25f)));
    __m128 lo = _mm_unpacklo_ps(v, v), hi = _mm_unpackhi_ps(v, v);
    _mm_storeu_ps(d0, lo);
    _mm_storeu_ps(d0 + 4, hi);
    _mm_storeu_ps(d1, lo);
    _mm_storeu_ps(d1 + 4, hi);
#endif
}

#if defined(__AVX512F__)
/* the maxima *m of 16 windows: lanes 0-7 from the even and odd elements of
 * a0 (top row) and c0 (bottom row), lanes 8-15 from a1 and c1 (a0, a1 the
 * top row's 32 floats and c0, c1 the bottom's for 16 windows of one row;
 * or the first 16 floats of the rows of two row pairs for 8 windows of
 * each); *k the taken element's k1, k2 or k3 (the first: 0). The
 * comparisons of x86_max_f32 */
static inline void x512_max16(__m512 a0, __m512 a1, __m512 c0, __m512 c1, int32_t k1,
                              int32_t k2, int32_t k3, __m512 *m_out, __m512i *k_out)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                           28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    __m512 p = _mm512_permutex2var_ps(a0, even, a1), q = _mm512_permutex2var_ps(a0, odd, a1);
    __m512 u = _mm512_permutex2var_ps(c0, even, c1), v = _mm512_permutex2var_ps(c0, odd, c1);
    __mmask16 t = _mm512_cmp_ps_mask(q, p, _CMP_GT_OQ) | _mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q);
    __m512 m = _mm512_mask_mov_ps(p, t, q);
    __m512i k = _mm512_maskz_mov_epi32(t, _mm512_set1_epi32(k1));
    t = _mm512_cmp_ps_mask(u, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(u, u, _CMP_UNORD_Q);
    m = _mm512_mask_mov_ps(m, t, u);
    k = _mm512_mask_mov_epi32(k, t, _mm512_set1_epi32(k2));
    t = _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    *m_out = _mm512_mask_mov_ps(m, t, v);
    *k_out = _mm512_mask_mov_epi32(k, t, _mm512_set1_epi32(k3));
}

/* the maxima of 16 windows (32 floats of r0 and of r1) at y, their
 * offsets 0..3 as 16 bytes at off */
static inline void x512_win_f32(const float *r0, const float *r1, float *y, uint8_t *off)
{
    __m512 m;
    __m512i k;
    x512_max16(_mm512_loadu_ps(r0), _mm512_loadu_ps(r0 + 16), _mm512_loadu_ps(r1),
               _mm512_loadu_ps(r1 + 16), 1, 2, 3, &m, &k);
    _mm512_storeu_ps(y, m);
    _mm_storeu_si128((__m128i *)off, _mm512_cvtepi32_epi8(k));
}

/* the same with int64 plane positions b + 2 i + {0, 1, W, W + 1} at idx */
static inline void x512_max_idx_f32(const float *r0, const float *r1, int64_t b, int32_t W,
                                    float *y, int64_t *idx)
{
    __m512 m;
    __m512i k;
    x512_max16(_mm512_loadu_ps(r0), _mm512_loadu_ps(r0 + 16), _mm512_loadu_ps(r1),
               _mm512_loadu_ps(r1 + 16), 1, W, W + 1, &m, &k);
    _mm512_storeu_ps(y, m);
    __m512i bb = _mm512_set1_epi64(b);
    __m512i lo = _mm512_add_epi64(bb, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14));
    __m512i hi = _mm512_add_epi64(bb, _mm512_setr_epi64(16, 18, 20, 22, 24, 26, 28, 30));
    _mm512_storeu_si512(idx, _mm512_add_epi64(lo, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(k))));
    _mm512_storeu_si512(idx + 8,
                        _mm512_add_epi64(hi, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(k, 1))));
}

/* ---- two short rows (n <= 8 windows each) in one register: lanes 0-7 the
 * row pair at r0 (its bottom row r0 + W), lanes 8-15 the next one, 2 W
 * further; outputs of the two rows back to back (2 n, then what the next
 * rows overwrite) */

/* lanes 0 .. n-1 and 8 .. 8+n-1 to 0 .. 2n-1 (pack) and back (spread) */
static inline __m512i x512_pack2(int64_t n)
{
    int32_t ix[16];
    for (int i = 0; i < 16; i++)
        ix[i] = i < n ? i : i < 2 * n ? 8 + (i - (int)n) : 15;
    return _mm512_loadu_si512(ix);
}
static inline __m512i x512_spread2(int64_t n)
{
    int32_t ix[16];
    for (int i = 0; i < 16; i++)
        ix[i] = i < 8 ? i : (int)n + (i - 8);
    return _mm512_loadu_si512(ix);
}

/* the maxima of two rows' n windows at y, offsets 0..3 as bytes at off
 * (16 of each written); pack: x512_pack2(n) */
static inline void x512_win2_f32(const float *r0, int64_t W, __m512i pack, float *y, uint8_t *off)
{
    __m512 m;
    __m512i k;
    x512_max16(_mm512_loadu_ps(r0), _mm512_loadu_ps(r0 + 2 * W), _mm512_loadu_ps(r0 + W),
               _mm512_loadu_ps(r0 + 3 * W), 1, 2, 3, &m, &k);
    _mm512_storeu_ps(y, _mm512_permutexvar_ps(pack, m));
    _mm_storeu_si128((__m128i *)off, _mm512_cvtepi32_epi8(_mm512_permutexvar_epi32(pack, k)));
}

/* the same with int64 positions: b0 and b1 the two rows' first windows'
 * top-left elements; step_lo, step_hi the packed outputs' 2 i within their
 * row and second their lanes of the second row (x512_steps2) */
static inline void x512_max2_idx_f32(const float *r0, int64_t W, __m512i pack, int64_t b0,
                                     int64_t b1, __m512i step_lo, __m512i step_hi,
                                     __mmask8 second_lo, __mmask8 second_hi, float *y,
                                     int64_t *idx)
{
    __m512 m;
    __m512i k;
    x512_max16(_mm512_loadu_ps(r0), _mm512_loadu_ps(r0 + 2 * W), _mm512_loadu_ps(r0 + W),
               _mm512_loadu_ps(r0 + 3 * W), 1, (int32_t)W, (int32_t)W + 1, &m, &k);
    _mm512_storeu_ps(y, _mm512_permutexvar_ps(pack, m));
    k = _mm512_permutexvar_epi32(pack, k);
    __m512i B0 = _mm512_set1_epi64(b0), B1 = _mm512_set1_epi64(b1);
    __m512i lo = _mm512_add_epi64(_mm512_mask_blend_epi64(second_lo, B0, B1), step_lo);
    __m512i hi = _mm512_add_epi64(_mm512_mask_blend_epi64(second_hi, B0, B1), step_hi);
    _mm512_storeu_si512(idx, _mm512_add_epi64(lo, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(k))));
    _mm512_storeu_si512(idx + 8,
                        _mm512_add_epi64(hi, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(k, 1))));
}

/* x512_max2_idx_f32's steps and masks for rows of n <= 8 windows: packed
 * output i is window i of the first row (i < n) or i - n of the second */
static inline void x512_steps2(int64_t n, __m512i *step_lo, __m512i *step_hi,
                               __mmask8 *second_lo, __mmask8 *second_hi)
{
    int64_t st[16];
    unsigned sec = 0;
    for (int i = 0; i < 16; i++) {
        st[i] = 2 * (i < n ? i : i - n);
        sec |= (unsigned)(i >= n) << i;
    }
    *step_lo = _mm512_loadu_si512(st);
    *step_hi = _mm512_loadu_si512(st + 8);
    *second_lo = (__mmask8)(sec & 0xff);
    *second_hi = (__mmask8)(sec >> 8);
}

/* the gradient of two rows' n windows (dy, offsets 0..3 at off: 2 n each,
 * 16 read) into the rows of the two row pairs at d (2 W apart; 16 floats
 * written from each row's start, the later stores overwriting what the
 * earlier wrote past their row); spread: x512_spread2(n) */
static inline void x512_scatter2_f32(const float *dy, const uint8_t *off, __m512i spread,
                                     int64_t W, float *d)
{
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    __m512i k = _mm512_permutexvar_epi32(
        spread, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)off)));
    __m512 g = _mm512_permutexvar_ps(spread, _mm512_loadu_ps(dy));
    __m512 p = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(0)), g);
    __m512 q = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(1)), g);
    __m512 u = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(2)), g);
    __m512 v = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(3)), g);
    _mm512_storeu_ps(d, _mm512_permutex2var_ps(p, lo, q));
    _mm512_storeu_ps(d + W, _mm512_permutex2var_ps(u, lo, v));
    _mm512_storeu_ps(d + 2 * W, _mm512_permutex2var_ps(p, hi, q));
    _mm512_storeu_ps(d + 3 * W, _mm512_permutex2var_ps(u, hi, v));
}

/* the gradient of 16 windows with offsets 0..3 at off into the rows d0,
 * d1 (32 floats each) */
static inline void x512_scatter_f32(const float *dy, const uint8_t *off, float *d0, float *d1)
{
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    __m512i k = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)off));
    __m512 g = _mm512_loadu_ps(dy);
    __m512 p = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(0)), g);
    __m512 q = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(1)), g);
    __m512 u = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(2)), g);
    __m512 v = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(3)), g);
    _mm512_storeu_ps(d0, _mm512_permutex2var_ps(p, lo, q));
    _mm512_storeu_ps(d0 + 16, _mm512_permutex2var_ps(p, hi, q));
    _mm512_storeu_ps(d1, _mm512_permutex2var_ps(u, lo, v));
    _mm512_storeu_ps(d1 + 16, _mm512_permutex2var_ps(u, hi, v));
}
#endif

#endif
