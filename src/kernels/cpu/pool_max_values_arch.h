/* Max pooling values (TG_POOL_MAX_VALUES) of float32 planes whose window
 * columns a vector register can gather with a fixed pattern: column stride
 * 1 or 2, 1 to 4 columns (tg__maxpool_values_lanes, pool_max_values.c,
 * says when; ResNet's 3 x 3 stride-2 pooling after the stem, 2 x 2
 * stride 2, 3 x 3 stride 1). For each output row and each group of LN
 * outputs (16 with AVX-512, 8 with AVX2; the row's last group moved back
 * to end at the row's end, its first outputs computed twice), every input
 * row of the window is reduced across its taps in registers: with stride
 * 2, tap j of the group is the even (j even) or odd lanes of the 2 LN
 * elements from column 2 ox0 - pw + (j & ~1), a two-source permute (on
 * AVX2 an in-lane shuffle whose lane order a single permute puts right at
 * the store); with stride 1 it is the LN elements from ox0 - pw + j. Then
 * the rows are merged in order. Columns outside the row (padding, ceil
 * mode) read as -inf through masked loads, which no window's maximum
 * differs by (a -inf first is replaced by anything but -inf, last it
 * replaces nothing), so that the edges take the same code.
 * The order is max_plane's (pool.c): taps left to right, then rows top
 * to bottom, each step TG__POOL_TAKES's rule (v replaces m when larger or
 * NaN): the first of equal maxima (-0, +0), the last NaN; a step is
 * max(v, m), which is v > m ? v : m, unless v is NaN. Each output is
 * computed from its own window, so the bits do not depend on the group
 * or the thread split.
 * Included by pool_max_values_avx512.c and pool_max_values_avx2.c, each
 * compiled with its instruction set (CMakeLists.txt), which define
 * TG_ARCH; the entry point gets its name as suffix. */
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/pool.h"

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#ifdef __AVX512F__
#define LN 16
typedef __m512 vec;
typedef __mmask16 lmask;
/* the lanes of a group starting at column i of a W-column row that lie in
 * the row */
static inline lmask in_row(int64_t i, int64_t W)
{
    int64_t lo = i < 0 ? -i : 0, hi = W - i < LN ? W - i : LN;
    if (hi <= lo)
        return 0;
    return (lmask)((((uint32_t)1 << hi) - 1) & ~(((uint32_t)1 << lo) - 1));
}
/* LN elements of row r from column i, where mask k (in_row) says, -inf
 * elsewhere; the address formed as an integer (i may be negative); only
 * lanes inside are read */
static inline vec load_edge(const float *r, int64_t i, lmask k)
{
    const float *p = (const float *)((uintptr_t)r + (uintptr_t)(i * (int64_t)sizeof(float)));
    return _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, p);
}
#define LOAD(p) _mm512_loadu_ps(p)
/* the even and odd lanes of a:b within 128-bit lanes (a0 a2 b0 b2 | a4 a6
 * b4 b6 | ...: outputs in pairs 0 4 1 5 2 6 3 7), one-cycle in-lane
 * shuffles; ORDER puts the pairs in place once at the store (a
 * two-source permute per tap took longer) */
#define EVEN(a, b) _mm512_shuffle_ps(a, b, 0x88)
#define ODD(a, b) _mm512_shuffle_ps(a, b, 0xdd)
#define ORDER(v)                                                                         \
    _mm512_castpd_ps(_mm512_permutexvar_pd(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7),    \
                                           _mm512_castps_pd(v)))
/* m, or v where the rule takes it: max(v, m) where v is a number */
#define TAKE(m, v) _mm512_mask_max_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v, m)
#define STORE(p, v) _mm512_storeu_ps(p, v)
#else /* AVX2 */
#define LN 8
typedef __m256 vec;
typedef __m256i lmask;
static inline lmask in_row(int64_t i, int64_t W)
{
    __m256i col = _mm256_add_epi32(_mm256_set1_epi32((int)i), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    /* 0 <= col < W, as col > -1 and W > col */
    return _mm256_and_si256(_mm256_cmpgt_epi32(col, _mm256_set1_epi32(-1)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32((int)W), col));
}
static inline vec load_edge(const float *r, int64_t i, lmask k)
{
    const float *p = (const float *)((uintptr_t)r + (uintptr_t)(i * (int64_t)sizeof(float)));
    return _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), _mm256_maskload_ps(p, k),
                            _mm256_castsi256_ps(k));
}
#define LOAD(p) _mm256_loadu_ps(p)
/* the even and odd lanes of a:b within 128-bit halves: a0 a2 b0 b2 a4 a6
 * b4 b6 (outputs 0 1 4 5 2 3 6 7); ORDER swaps the middle 64-bit lanes */
#define EVEN(a, b) _mm256_shuffle_ps(a, b, 0x88)
#define ODD(a, b) _mm256_shuffle_ps(a, b, 0xdd)
#define ORDER(v) _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xd8))
#define TAKE(m, v) _mm256_blendv_ps(_mm256_max_ps(v, m), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q))
#define STORE(p, v) _mm256_storeu_ps(p, v)
#endif

/* load n of a group (the n-th in taps' order) from column i + at(n): with
 * stride 1 the taps' starts, with stride 2 the pairs of vectors from each
 * even tap */
static inline int64_t at(int n, const int SW)
{
    return SW == 1 ? n : (n & ~1) + (n & 1) * LN;
}

/* a group's load n from column i of row r: a plain load inside the row,
 * else masked by k[n] (in_row, the same for every row of the group) */
static inline __attribute__((always_inline)) vec ld(const float *r, int64_t i, int n,
                                                    const lmask *k, const int SW)
{
    return k ? load_edge(r, i + at(n, SW), k[n]) : LOAD(r + i + at(n, SW));
}

/* the maxima over KW taps of row r for the group whose first window starts
 * at column i (stride SW), in ORDER's lane order for stride 2; k: the
 * loads' masks at the edges, else NULL */
static inline __attribute__((always_inline)) vec taps(const float *r, int64_t i,
                                                      const lmask *k, const int KW,
                                                      const int SW)
{
    if (SW == 1) {
        vec m = ld(r, i, 0, k, SW);
        for (int j = 1; j < KW; j++)
            m = TAKE(m, ld(r, i, j, k, SW));
        return m;
    }
    vec a = ld(r, i, 0, k, SW), b = ld(r, i, 1, k, SW);
    vec m = EVEN(a, b);
    if (KW > 1)
        m = TAKE(m, ODD(a, b));
    for (int j = 2; j < KW; j += 2) {
        a = ld(r, i, j, k, SW);
        b = ld(r, i, j + 1, k, SW);
        m = TAKE(m, EVEN(a, b));
        if (j + 1 < KW)
            m = TAKE(m, ODD(a, b));
    }
    return m;
}

/* the columns a group's loads read from its first window's start: [i, i +
 * span) */
static inline int64_t group_span(const int KW, const int SW)
{
    return SW == 1 ? KW - 1 + LN : ((KW - 1) & ~1) + 2 * LN;
}

/* the window maxima of a group: its taps in rows [ya, ye) of plane xp,
 * merged in row order. (Walking a column of groups down the plane instead,
 * with the taps of the input row two windows share kept in a register,
 * took 10-15% longer than the row order on this machine.) */
static inline __attribute__((always_inline)) vec group(const float *xp, int64_t W, int64_t ya,
                                                       int64_t ye, int64_t i, const lmask *k,
                                                       const int KW, const int SW)
{
    vec m = taps(xp + ya * W, i, k, KW, SW);
    for (int64_t h = ya + 1; h < ye; h++)
        m = TAKE(m, taps(xp + h * W, i, k, KW, SW));
    return SW == 2 ? ORDER(m) : m;
}

/* planes of max pooling values with KW columns at stride SW (constants) */
static inline __attribute__((always_inline)) void planes_kw(const tg__pool_geom *g,
                                                            const float *x, float *y,
                                                            int64_t planes, int64_t a_n,
                                                            int64_t b_n, const int KW,
                                                            const int SW)
{
    const int64_t W = g->W, OW = g->OW, span = group_span(KW, SW);
    for (int64_t p = 0; p < planes; p++) {
        const float *xp = x + p * a_n;
        for (int64_t oy = 0; oy < g->OH; oy++) {
            float *yr = y + p * b_n + oy * OW;
            int64_t ya, ye;
            tg__pool_window(g, 1, oy, &ya, &ye);
            if (ya >= ye) { /* no input row in the window */
                for (int64_t ox = 0; ox < OW; ox++)
                    yr[ox] = -INFINITY;
                continue;
            }
            for (int64_t ox = 0; ox < OW; ox += LN) {
                if (ox + LN > OW) /* the last group, moved back (OW >= LN) */
                    ox = OW - LN;
                int64_t i = ox * SW - g->pw;
                if (i >= 0 && i + span <= W) {
                    STORE(yr + ox, group(xp, W, ya, ye, i, NULL, KW, SW));
                } else { /* the masks once for the group's rows */
                    lmask k[4];
                    for (int n = 0; n < 4; n++)
                        k[n] = in_row(i + at(n, SW), W);
                    STORE(yr + ox, group(xp, W, ya, ye, i, k, KW, SW));
                }
            }
        }
    }
}

/* the entry point: g 2-D, g->sw 1 or 2, 1 <= g->kw <= 4, g->OW >= LN
 * (tg__maxpool_values_lanes) */
void TG_ARCH_FN(tg__maxpool_values_vec_f32)(const tg__pool_geom *g, const float *x, float *y,
                                            int64_t planes, int64_t a_n, int64_t b_n)
{
#define KW_CASE(K, S)                                                                    \
    if (g->kw == (K) && g->sw == (S)) {                                                  \
        planes_kw(g, x, y, planes, a_n, b_n, K, S);                                      \
        return;                                                                          \
    }
    KW_CASE(3, 2)
    KW_CASE(2, 2)
    KW_CASE(3, 1)
    KW_CASE(2, 1)
    KW_CASE(1, 2)
    KW_CASE(4, 2)
    KW_CASE(1, 1)
    KW_CASE(4, 1)
#undef KW_CASE
}
