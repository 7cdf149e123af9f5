/* Max pooling of 2-D planes without the argmax (TG_POOL_MAX_VALUES, pool.h):
 * for inference, where nothing reads the indices (the level-2 pass
 * passes/pool_values.c). max_plane in pool.c follows each window element
 * by element to know where its maximum is; without that, each input row's
 * window maxima are taken tap by tap over all the row's outputs (the
 * stride a constant for 1 and 2: vectorized), then the rows of each
 * output's window are merged in order (ResNet's 3 x 3 stride-2 pooling
 * after the stem was 1.1 ms at batch 1, onnxruntime's 0.09 ms). Row by
 * row, then row after row, is max_plane's row-major window order, and the
 * rule is its TAKE's (larger, or NaN), so the bits are max_plane's: of
 * equal maxima (-0 and +0) the first in window order, of NaNs the last.
 * Float32 windows of 1 to 4 columns at column stride 1 or 2 on x86 with
 * AVX2 or AVX-512 (tg__maxpool_values_lanes) run the vector kernels of
 * pool_max_values_arch.h instead: the same order and rule, a group of 16
 * or 8 outputs at a time with no scratch (ResNet's pooling 0.35-0.45 ->
 * 0.15 ms, docs/BENCHMARKS.md). */
#include "kernels/cpu/pool.h"
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/scratch.h"

#include <math.h>
#include <string.h>

/* m, or v when the pooling rule takes it (pool.h) */
#define PICK(m, v) (TG__POOL_TAKES(m, v) ? (v) : (m))

#define MAX_VALUES(SFX, T)                                                       \
    /* z[i] = max over j < KW of in[i + j] in tap order, i < nz: one pass,   \
     * the taps in registers (KW a constant for 2 and 3) */                   \
    static inline __attribute__((always_inline)) void span_##SFX(                \
        const T *in, T *restrict z, int64_t nz, const int64_t KW)                \
    {                                                                            \
        for (int64_t i = 0; i < nz; i++) {                                       \
            T m = in[i];                                                         \
            for (int64_t j = 1; j < KW; j++)                                     \
                m = PICK(m, in[i + j]);                                          \
            z[i] = m;                                                            \
        }                                                                        \
    }                                                                            \
                                                                                 \
    /* y[o] = max over j < kw of in[o * sw + j], o < n, in tap order: the     \
     * maxima at every column first (contiguous: vectorized), then every      \
     * sw-th of them (strided vector loads vectorize badly) */                \
    static inline __attribute__((always_inline)) void taps_##SFX(                \
        const T *in, T *restrict y, T *restrict z, int64_t n, int64_t kw,        \
        int64_t sw)                                                              \
    {                                                                            \
        int64_t nz = n > 0 ? (n - 1) * sw + 1 : 0;                               \
        T *d = sw == 1 ? y : z;                                                  \
        if (kw == 3)                                                             \
            span_##SFX(in, d, nz, 3);                                            \
        else if (kw == 2)                                                        \
            span_##SFX(in, d, nz, 2);                                            \
        else                                                                     \
            span_##SFX(in, d, nz, kw);                                           \
        if (sw == 2)                                                             \
            for (int64_t o = 0; o < n; o++)                                      \
                y[o] = z[2 * o];                                                 \
        else if (sw != 1)                                                        \
            for (int64_t o = 0; o < n; o++)                                      \
                y[o] = z[o * sw];                                                \
    }                                                                            \
                                                                                 \
    /* hr[ox] = the maximum of input row r over output ox's window columns; \
     * [c0, c1): the outputs whose windows lie inside the row */              \
    static inline __attribute__((always_inline)) void row_##SFX(                 \
        const tg__pool_geom *g, const T *r, T *restrict hr, T *restrict z,       \
        int64_t c0, int64_t c1)                                                  \
    {                                                                            \
        for (int64_t ox = 0; ox < g->OW; ox++) {                                 \
            if (ox == c0)                                                        \
                ox = c1;                                                         \
            if (ox >= g->OW)                                                     \
                break;                                                           \
            int64_t xa, xe;                                                      \
            tg__pool_window(g, 2, ox, &xa, &xe);                                 \
            T m = -INFINITY;                                                     \
            for (int64_t i = xa; i < xe; i++)                                    \
                m = PICK(m, r[i]);                                               \
            hr[ox] = m;                                                          \
        }                                                                        \
        taps_##SFX(r + c0 * g->sw - g->pw, hr + c0, z, c1 - c0, g->kw, g->sw);   \
    }                                                                            \
                                                                                 \
    /* AVX-512, AVX2 and baseline copies, chosen at run time (isa_clone.h) */ \
    TG_ISA_DISPATCH(static, bool, values_##SFX,                                  \
                    (const tg__pool_geom *g, const T *x, T *y, int64_t planes,   \
                     int64_t a_n, int64_t b_n),                                  \
                    (g, x, y, planes, a_n, b_n))                                 \
    {                                                                            \
        const int64_t W = g->W, OW = g->OW, kh = g->kh;                          \
        /* ring: the window maxima of the last kh input rows (row h in slot     \
         * h % kh, each row computed once); z: a row's maxima at every column */ \
        T *ring = tg__scratch(TG_SCRATCH_KERNEL0, (size_t)(kh * OW + W + 1) * sizeof(T)); \
        if (!ring)                                                               \
            return false;                                                        \
        T *z = ring + kh * OW;                                                   \
        /* [c0, c1): windows inside a row (ox * sw - pw >= 0, + kw <= W) */     \
        int64_t c1 = W - g->kw + g->pw >= 0 ? (W - g->kw + g->pw) / g->sw + 1 : 0; \
        c1 = c1 < OW ? c1 : OW;                                                  \
        int64_t c0 = (g->pw + g->sw - 1) / g->sw;                                \
        c0 = c0 < c1 ? c0 : c1;                                                  \
        for (int64_t p = 0; p < planes; p++) {                                   \
            int64_t next = 0; /* the first row not in the ring */                \
            for (int64_t oy = 0; oy < g->OH; oy++) {                             \
                T *yr = y + p * b_n + oy * OW;                                   \
                int64_t ya, ye;                                                  \
                tg__pool_window(g, 1, oy, &ya, &ye);                             \
                for (int64_t ox = 0; ya >= ye && ox < OW; ox++)                  \
                    yr[ox] = -INFINITY; /* no input row in the window */         \
                if (ya >= ye)                                                    \
                    continue;                                                    \
                for (int64_t h = ya > next ? ya : next; h < ye; h++)             \
                    row_##SFX(g, x + p * a_n + h * W, ring + h % kh * OW, z, c0, c1); \
                next = ye > next ? ye : next;                                    \
                memcpy(yr, ring + ya % kh * OW, (size_t)OW * sizeof(T));         \
                for (int64_t h = ya + 1; h < ye; h++) {                          \
                    const T *hr = ring + h % kh * OW;                            \
                    for (int64_t ox = 0; ox < OW; ox++)                          \
                        yr[ox] = PICK(yr[ox], hr[ox]);                           \
                }                                                                \
            }                                                                    \
        }                                                                        \
        return true;                                                             \
    }

MAX_VALUES(f32, float)
MAX_VALUES(f64, double)

/* the vector kernels of pool_max_values_arch.h (float32, x86-64) */
void tg__maxpool_values_vec_f32_avx512(const tg__pool_geom *g, const float *x, float *y,
                                       int64_t planes, int64_t a_n, int64_t b_n);
void tg__maxpool_values_vec_f32_avx2(const tg__pool_geom *g, const float *x, float *y,
                                     int64_t planes, int64_t a_n, int64_t b_n);

int tg__maxpool_values_lanes(const tg__pool_geom *g, tg_dtype dt)
{
#if defined(__x86_64__)
    tg__isa isa = tg__cpu_isa();
    if (dt != TG_FLOAT32 || g->nd != 2 || (g->sw != 1 && g->sw != 2) || g->kw < 1 ||
        g->kw > 4 || g->W >= ((int64_t)1 << 30) || isa < TG_ISA_AVX2)
        return 0;
    if (isa >= TG_ISA_AVX512 && g->OW >= 16)
        return 16;
    return g->OW >= 8 ? 8 : 0;
#else
    (void)g;
    (void)dt;
    return 0;
#endif
}

/* AVX-512 machines run the AVX2 copy of the general loops: the AVX-512
 * one, with its mask compares and 16-lane loops over rows of a few dozen
 * to hundreds of elements, took 1.25-1.6x its time on every plane
 * measured (56 x 56 to 448 x 448, 3 x 3 stride-2 windows, one thread;
 * 112 x 112: 0.56 against 0.35 ms for 64 planes). Float32 windows of 1
 * to 4 columns at stride 1 or 2 take the vector kernels instead. */
#if TG_ISA_CLONES
#define WIDTH_CHOICE(SFX, T)                                                     \
    static bool general_##SFX(const tg__pool_geom *g, const T *x, T *y,          \
                              int64_t planes, int64_t a_n, int64_t b_n)          \
    {                                                                            \
        if (tg__cpu_isa() == TG_ISA_AVX512)                                      \
            return values_##SFX##_isa_avx2(g, x, y, planes, a_n, b_n);           \
        return values_##SFX(g, x, y, planes, a_n, b_n);                          \
    }
#else /* a native build: one copy, the build machine's */
#define WIDTH_CHOICE(SFX, T)                                                     \
    static bool general_##SFX(const tg__pool_geom *g, const T *x, T *y,          \
                              int64_t planes, int64_t a_n, int64_t b_n)          \
    {                                                                            \
        return values_##SFX(g, x, y, planes, a_n, b_n);                          \
    }
#endif
WIDTH_CHOICE(f32, float)
WIDTH_CHOICE(f64, double)

bool tg__maxpool_values_f32(const tg__pool_geom *g, const float *x, float *y, int64_t planes,
                            int64_t a_n, int64_t b_n)
{
#if defined(__x86_64__)
    switch (tg__maxpool_values_lanes(g, TG_FLOAT32)) {
    case 16:
        tg__maxpool_values_vec_f32_avx512(g, x, y, planes, a_n, b_n);
        return true;
    case 8:
        tg__maxpool_values_vec_f32_avx2(g, x, y, planes, a_n, b_n);
        return true;
    default:
        break;
    }
#endif
    return general_f32(g, x, y, planes, a_n, b_n);
}

bool tg__maxpool_values_f64(const tg__pool_geom *g, const double *x, double *y,
                            int64_t planes, int64_t a_n, int64_t b_n)
{
    return general_f64(g, x, y, planes, a_n, b_n);
}
