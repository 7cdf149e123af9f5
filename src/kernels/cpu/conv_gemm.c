/* Implicit-GEMM convolution kernels (see conv_gemm.h), one template for
 * float32 and float64. Like the built-in GEMM (gemm.c) they are plain C
 * whose inner loops have constant trip counts, so that the compiler keeps
 * a tile of accumulators in vector registers. */
#include "kernels/cpu/conv_gemm.h"
#include "kernels/cpu/simd.h"

#include <math.h>
#include <string.h>

/* ---- the forward product ---------------------------------------------------
 * An MR x NR tile of y accumulates over the k taps: per tap, MR packed
 * weights are broadcast against NR consecutive positions of the tap's run.
 * MR is 4 or 6, whichever pads m less (LeNet: 6 output channels, then 16);
 * NR is two vectors, and one for a row's last columns, so that a short
 * row (LeNet's conv2: 136 positions) wastes little of its last tile. */
static int panel_rows(int64_t m)
{
    int64_t waste6 = (m + 5) / 6 * 6 - m, waste4 = (m + 3) / 4 * 4 - m;
    return waste6 <= waste4 ? 6 : 4;
}

int64_t tg__conv_pack_len(int64_t m, int64_t k)
{
    int mr = panel_rows(m);
    return (m + mr - 1) / mr * mr * k;
}

int64_t tg__conv_lanes(int64_t elem_size) { return TG_VEC_BYTES / elem_size; }

/* a tile of MR rows x NV vectors; mr x nr of it are stored */
#define FWD_TILE(T, SUF, FMA, MR, NV)                                          \
    static void fwd_tile_##SUF##_##MR##_##NV(                                  \
        int64_t k, const T *restrict ap, const T *restrict img,                \
        const int64_t *restrict off, T *restrict y, int64_t ldy, int64_t mr,   \
        int64_t nr)                                                            \
    {                                                                          \
        enum { NR = NV * TG_VEC_BYTES / (int)sizeof(T) };                      \
        T acc[MR][NR];                                                         \
        memset(acc, 0, sizeof acc);                                            \
        for (int64_t p = 0; p < k; p++) {                                      \
            const T *bv = img + off[p];                                        \
            _Pragma("GCC unroll 8")                                            \
            for (int i = 0; i < MR; i++) {                                     \
                const T av = ap[p * MR + i];                                   \
                for (int j = 0; j < NR; j++)                                   \
                    acc[i][j] = TG_MADD(FMA, acc[i][j], av, bv[j]);            \
            }                                                                  \
        }                                                                      \
        for (int64_t i = 0; i < mr; i++)                                       \
            for (int64_t j = 0; j < nr; j++)                                   \
                y[i * ldy + j] = acc[i][j];                                    \
    }

/* rows i0.. (one panel of MR) of the forward product, all columns */
#define FWD_PANEL(T, SUF, MR)                                                  \
    static void fwd_panel_##SUF##_##MR(int64_t mr, int64_t n, int64_t k,       \
                                       const T *ap, const T *img,              \
                                       const int64_t *off, T *y, int64_t ldy)  \
    {                                                                          \
        const int64_t v = TG_VEC_BYTES / (int64_t)sizeof(T);                   \
        int64_t t = 0;                                                         \
        for (; t + 2 * v <= n; t += 2 * v)                                     \
            fwd_tile_##SUF##_##MR##_2(k, ap, img + t, off, y + t, ldy, mr,     \
                                      2 * v);                                  \
        for (; t < n; t += v)                                                  \
            fwd_tile_##SUF##_##MR##_1(k, ap, img + t, off, y + t, ldy, mr,     \
                                      n - t < v ? n - t : v);                  \
    }

#define FWD(T, SUF, FMA)                                                       \
    FWD_TILE(T, SUF, FMA, 4, 1)                                                \
    FWD_TILE(T, SUF, FMA, 4, 2)                                                \
    FWD_TILE(T, SUF, FMA, 6, 1)                                                \
    FWD_TILE(T, SUF, FMA, 6, 2)                                                \
    FWD_PANEL(T, SUF, 4)                                                       \
    FWD_PANEL(T, SUF, 6)                                                       \
                                                                               \
    /* panels of MR rows, each [k][MR] (tap-major), zero rows past m */        \
    void tg__conv_pack_##SUF(const T *a, int64_t m, int64_t k, T *dst)         \
    {                                                                          \
        const int mr = panel_rows(m);                                          \
        for (int64_t i0 = 0; i0 < m; i0 += mr, dst += mr * k)                  \
            for (int64_t p = 0; p < k; p++)                                    \
                for (int i = 0; i < mr; i++)                                   \
                    dst[p * mr + i] = i0 + i < m ? a[(i0 + i) * k + p] : 0;    \
    }                                                                          \
                                                                               \
    void tg__conv_fwd_##SUF(int64_t m, int64_t n, int64_t k, const T *ap,      \
                            const T *img, const int64_t *off, T *y,            \
                            int64_t ldy)                                       \
    {                                                                          \
        const int mr = panel_rows(m);                                          \
        for (int64_t i0 = 0; i0 < m; i0 += mr) {                               \
            int64_t rows = m - i0 < mr ? m - i0 : mr;                          \
            const T *a = ap + i0 * k;                                          \
            if (mr == 6)                                                       \
                fwd_panel_##SUF##_6(rows, n, k, a, img, off, y + i0 * ldy, ldy); \
            else                                                               \
                fwd_panel_##SUF##_4(rows, n, k, a, img, off, y + i0 * ldy, ldy); \
        }                                                                      \
    }

FWD(float, f32, fmaf)
FWD(double, f64, fma)

/* ---- the weight gradient ---------------------------------------------------
 * Transposed, dW^T[p][o] = sum_t img[off[p] + t] * dy^T[t][o]: a tile of
 * MR taps x one vector of output channels accumulates over the positions,
 * broadcasting one image value per tap against a row of dy^T. Every load
 * but the broadcasts is aligned, which is what makes this shape fast: a
 * dot-product form over positions (both operands as vectors) spent its
 * time on unaligned loads of the image runs. */
#define WG_MR 6

#define WGRAD(T, SUF, FMA)                                                     \
    static void wgrad_tile_##SUF(int64_t n, const T *restrict img,             \
                                 const int64_t *restrict off,                  \
                                 const T *restrict dyt, int64_t ldt,           \
                                 T *restrict dwt, int64_t ldw, int64_t mr,     \
                                 int64_t nr)                                   \
    {                                                                          \
        enum { NR = TG_VEC_BYTES / (int)sizeof(T) };                           \
        T acc[WG_MR][NR];                                                      \
        const T *a[WG_MR];                                                     \
        memset(acc, 0, sizeof acc);                                            \
        for (int i = 0; i < WG_MR; i++) /* taps past the edge: valid reads */  \
            a[i] = img + off[i < mr ? i : 0];                                  \
        for (int64_t t = 0; t < n; t++) {                                      \
            const T *bv = dyt + t * ldt;                                       \
            _Pragma("GCC unroll 8")                                            \
            for (int i = 0; i < WG_MR; i++) {                                  \
                const T av = a[i][t];                                          \
                for (int j = 0; j < NR; j++)                                   \
                    acc[i][j] = TG_MADD(FMA, acc[i][j], av, bv[j]);            \
            }                                                                  \
        }                                                                      \
        for (int64_t i = 0; i < mr; i++)                                       \
            for (int64_t j = 0; j < nr; j++)                                   \
                dwt[i * ldw + j] += acc[i][j];                                 \
    }                                                                          \
                                                                               \
    void tg__conv_wgrad_##SUF(int64_t m, int64_t n, int64_t k, const T *img,   \
                              const int64_t *off, const T *dyt, int64_t ldt,   \
                              T *dwt, int64_t ldw)                             \
    {                                                                          \
        const int64_t v = TG_VEC_BYTES / (int64_t)sizeof(T);                   \
        for (int64_t o = 0; o < m; o += v)                                     \
            for (int64_t p = 0; p < k; p += WG_MR)                             \
                wgrad_tile_##SUF(n, img, off + p, dyt + o, ldt,                \
                                 dwt + p * ldw + o, ldw,                       \
                                 k - p < WG_MR ? k - p : WG_MR,                \
                                 m - o < v ? m - o : v);                       \
    }

WGRAD(float, f32, fmaf)
WGRAD(double, f64, fma)
