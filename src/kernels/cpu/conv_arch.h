/* The direct convolution kernels (see conv_arch_api.h), one template
 * instantiated per instruction set like gemm_arch.h: conv_avx512.c,
 * conv_avx2.c and conv_generic.c define VEC_BYTES, CONV_ISA and the tile
 * lists, are compiled for their instruction set and include this file.
 * GCC vector extensions; -ffp-contract=fast fuses the multiply-adds. The
 * accumulators of a tile are a constant-size array the compiler keeps in
 * vector registers, so every loop over them has a constant trip count;
 * conditions on runtime sizes select stores, never accumulators. */
#include "kernels/cpu/conv_arch_api.h"
#include "kernels/cpu/shuffle.h"

#include <string.h>

#ifndef CONV_ISA
#error "define CONV_ISA, VEC_BYTES and the tile lists before including conv_arch.h"
#endif

#define CA_CAT2(a, b) a##b
#define CA_CAT(a, b) CA_CAT2(a, b)
#define CA(x) CA_CAT(CA_CAT(x, _), CONV_ISA)
#define CA_STR2(x) #x
#define CA_STR(x) CA_STR2(x)
#define CA_UNROLL _Pragma("GCC unroll 32")
/* pins a loaded vector to a register: without it GCC folds the load into
 * every multiply-add that uses it (one load per FMA instead of one per
 * tile row), and the tile becomes bound by loads */
#if VEC_BYTES == 64
#define CA_KEEP(v) __asm__("" : "+v"(v))
#elif defined(__x86_64__)
#define CA_KEEP(v) __asm__("" : "+x"(v))
#else
#define CA_KEEP(v) (void)0
#endif

/* interleave masks for the L x L transposes: lo takes the first halves
 * of two vectors alternately, hi the second halves */
#if VEC_BYTES == 64
typedef int32_t CA(mask_f32) __attribute__((vector_size(64)));
typedef int64_t CA(mask_f64) __attribute__((vector_size(64)));
#define LO_f32 {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23}
#define HI_f32 {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31}
#define LO_f64 {0, 8, 1, 9, 2, 10, 3, 11}
#define HI_f64 {4, 12, 5, 13, 6, 14, 7, 15}
#elif VEC_BYTES == 32
typedef int32_t CA(mask_f32) __attribute__((vector_size(32)));
typedef int64_t CA(mask_f64) __attribute__((vector_size(32)));
#define LO_f32 {0, 8, 1, 9, 2, 10, 3, 11}
#define HI_f32 {4, 12, 5, 13, 6, 14, 7, 15}
#define LO_f64 {0, 4, 1, 5}
#define HI_f64 {2, 6, 3, 7}
#else
typedef int32_t CA(mask_f32) __attribute__((vector_size(16)));
typedef int64_t CA(mask_f64) __attribute__((vector_size(16)));
#define LO_f32 {0, 4, 1, 5}
#define HI_f32 {2, 6, 3, 7}
#define LO_f64 {0, 2}
#define HI_f64 {1, 3}
#endif

/* AVX-512: the L x L transposes as in-lane unpacks first and 128-bit
 * block shuffles after (vunpck*, vshuff*), which run on more ports than
 * the general two-source permutes the interleaving rounds compile to */
#if VEC_BYTES == 64
#define SH(a, b, ...) TG_SHUFFLE2(a, b, (M){__VA_ARGS__})
#define CONV_FAST_TRANSPOSE_f32                                                  \
    static inline __attribute__((always_inline)) void CA(transpose_fast_f32)(    \
        CA(v_f32) * r)                                                           \
    {                                                                            \
        typedef CA(mask_f32) M;                                                  \
        CA(v_f32) t[16], u[16], v[16];                                           \
        CA_UNROLL for (int i = 0; i < 8; i++) {                                  \
            t[2 * i] = SH(r[2 * i], r[2 * i + 1], 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, \
                          9, 25, 12, 28, 13, 29);                                \
            t[2 * i + 1] = SH(r[2 * i], r[2 * i + 1], 2, 18, 3, 19, 6, 22, 7, 23, \
                              10, 26, 11, 27, 14, 30, 15, 31);                   \
        }                                                                        \
        CA_UNROLL for (int i = 0; i < 4; i++)                                    \
            CA_UNROLL for (int h = 0; h < 2; h++) {                              \
                u[4 * i + 2 * h] = SH(t[4 * i + h], t[4 * i + 2 + h], 0, 1, 16, 17, 4, \
                                      5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);  \
                u[4 * i + 2 * h + 1] = SH(t[4 * i + h], t[4 * i + 2 + h], 2, 3, 18, \
                                          19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, \
                                          30, 31);                               \
            }                                                                    \
        CA_UNROLL for (int k = 0; k < 12; k++) {                                 \
            if (k % 8 >= 4)                                                      \
                continue;                                                        \
            v[k] = SH(u[k], u[k + 4], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, \
                      25, 26, 27);                                               \
            v[k + 4] = SH(u[k], u[k + 4], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, \
                          23, 28, 29, 30, 31);                                   \
        }                                                                        \
        CA_UNROLL for (int k = 0; k < 8; k++) {                                  \
            r[k] = SH(v[k], v[k + 8], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, \
                      25, 26, 27);                                               \
            r[k + 8] = SH(v[k], v[k + 8], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, \
                          23, 28, 29, 30, 31);                                   \
        }                                                                        \
    }
#define CONV_FAST_TRANSPOSE_f64                                                  \
    static inline __attribute__((always_inline)) void CA(transpose_fast_f64)(    \
        CA(v_f64) * r)                                                           \
    {                                                                            \
        typedef CA(mask_f64) M;                                                  \
        CA(v_f64) t[8], v[8];                                                    \
        CA_UNROLL for (int i = 0; i < 4; i++) {                                  \
            t[2 * i] = SH(r[2 * i], r[2 * i + 1], 0, 8, 2, 10, 4, 12, 6, 14);    \
            t[2 * i + 1] = SH(r[2 * i], r[2 * i + 1], 1, 9, 3, 11, 5, 13, 7, 15); \
        }                                                                        \
        CA_UNROLL for (int k = 0; k < 6; k++) {                                  \
            if (k % 4 >= 2)                                                      \
                continue;                                                        \
            v[k] = SH(t[k], t[k + 2], 0, 1, 4, 5, 8, 9, 12, 13);                 \
            v[k + 2] = SH(t[k], t[k + 2], 2, 3, 6, 7, 10, 11, 14, 15);           \
        }                                                                        \
        CA_UNROLL for (int k = 0; k < 4; k++) {                                  \
            r[k] = SH(v[k], v[k + 4], 0, 1, 4, 5, 8, 9, 12, 13);                 \
            r[k + 4] = SH(v[k], v[k + 4], 2, 3, 6, 7, 10, 11, 14, 15);           \
        }                                                                        \
    }
#define CONV_TRANSPOSE_f32(r) CA(transpose_fast_f32)(r)
#define CONV_TRANSPOSE_f64(r) CA(transpose_fast_f64)(r)
#else
#define CONV_FAST_TRANSPOSE_f32
#define CONV_FAST_TRANSPOSE_f64
#define CONV_TRANSPOSE_f32(r) CA(transpose_f32)(r)
#define CONV_TRANSPOSE_f64(r) CA(transpose_f64)(r)
#endif

#define CONV_COMMON(T, SUF)                                                      \
    typedef T CA(v_##SUF) __attribute__((vector_size(VEC_BYTES)));               \
    typedef T CA(vu_##SUF) __attribute__((vector_size(VEC_BYTES),                \
                                          aligned(sizeof(T)), may_alias));       \
    enum { CA(L_##SUF) = VEC_BYTES / (int)sizeof(T) };                           \
                                                                                 \
    /* r[q][l] = r[l][q] for the L vectors of r: log2(L) rounds of            \
     * interleaving the first half of the rows with the second half */          \
    static inline __attribute__((always_inline)) void CA(transpose_##SUF)(       \
        CA(v_##SUF) * r)                                                         \
    {                                                                            \
        enum { L = CA(L_##SUF) };                                                \
        typedef CA(mask_##SUF) M;                                                \
        CA(v_##SUF) t[L];                                                        \
        CA_UNROLL for (int round = 1; round < L; round *= 2) {                   \
            CA_UNROLL for (int i = 0; i < L / 2; i++) {                          \
                t[2 * i] = TG_SHUFFLE2(r[i], r[i + L / 2], (M)LO_##SUF);   \
                t[2 * i + 1] = TG_SHUFFLE2(r[i], r[i + L / 2], (M)HI_##SUF); \
            }                                                                    \
            CA_UNROLL for (int i = 0; i < L; i++)                                \
                r[i] = t[i];                                                     \
        }                                                                        \
    }                                                                            \
                                                                                 \
    CONV_FAST_TRANSPOSE_##SUF                                                    \
                                                                                 \
    /* relu as the relu op computes it: x where x > 0 or x is NaN, else +0 */   \
    static inline __attribute__((always_inline)) CA(v_##SUF)                     \
        CA(relu_##SUF)(CA(v_##SUF) x)                                            \
    {                                                                            \
        typedef CA(mask_##SUF) M;                                                \
        M keep = (x > (T)0) | (x != x);                                          \
        return (CA(v_##SUF))((M)x & keep);                                       \
    }                                                                            \
                                                                                 \
    static void CA(to_bl_##SUF)(const void *srcv, int64_t img_stride, int64_t n, \
                                int64_t c, int64_t h, int64_t w, void *dstv,     \
                                int64_t pl, int64_t ldw, int64_t r0, int64_t q0) \
    {                                                                            \
        typedef CA(v_##SUF) V;                                                   \
        typedef CA(vu_##SUF) VU;                                                 \
        enum { L = CA(L_##SUF) };                                                \
        const T *src = srcv;                                                     \
        T *dst = dstv;                                                           \
        int64_t hw = h * w;                                                      \
        if (r0 == 0 && q0 == 0 && ldw == w && pl == hw * L) {                    \
            /* the planes back to back on both sides: one run, a partial     \
             * block at its end only */                                         \
            hw *= c;                                                             \
            c = 1;                                                               \
        }                                                                        \
        for (int64_t ch = 0; ch < c; ch++)                                       \
            for (int64_t p0 = 0; p0 < hw; p0 += L) {                             \
                int64_t m = hw - p0 < L ? hw - p0 : L;                           \
                V r[L];                                                          \
                CA_UNROLL for (int l = 0; l < L; l++) {                          \
                    const T *s = src + l * img_stride + ch * hw + p0;            \
                    if (l >= n) {                                                \
                        r[l] = (V){0};                                           \
                    } else if (m == L) {                                         \
                        r[l] = (V) * (const VU *)s;                              \
                    } else {                                                     \
                        r[l] = (V){0};                                           \
                        memcpy(&r[l], s, (size_t)m * sizeof(T));                 \
                    }                                                            \
                }                                                                \
                CONV_TRANSPOSE_##SUF(r);                                          \
                if (r0 == 0 && q0 == 0 && ldw == w) { /* rows back to back */    \
                    T *d = dst + ch * pl + p0 * L;                               \
                    CA_UNROLL for (int q = 0; q < L; q++)                        \
                        if (q < m)                                               \
                            *(VU *)(d + q * L) = r[q];                           \
                    continue;                                                    \
                }                                                                \
                int64_t row = p0 / w, col = p0 % w;                              \
                for (int q = 0; q < m; q++) {                                    \
                    *(VU *)(dst + ch * pl + ((r0 + row) * ldw + q0 + col) * L) = r[q]; \
                    if (++col == w) {                                            \
                        col = 0;                                                 \
                        row++;                                                   \
                    }                                                            \
                }                                                                \
            }                                                                    \
    }                                                                            \
                                                                                 \
    static void CA(from_bl_##SUF)(const void *srcv, int64_t n, int64_t c,        \
                                  int64_t h, int64_t w, void *dstv,              \
                                  int64_t img_stride, bool relu)                 \
    {                                                                            \
        typedef CA(v_##SUF) V;                                                   \
        typedef CA(vu_##SUF) VU;                                                 \
        enum { L = CA(L_##SUF) };                                                \
        const T *src = srcv;                                                     \
        T *dst = dstv;                                                           \
        /* an image's c planes are one run on both sides: a partial block  \
         * at its end only */                                                   \
        const int64_t len = c * h * w;                                           \
        for (int64_t p0 = 0; p0 < len; p0 += L) {                                \
            int64_t m = len - p0 < L ? len - p0 : L;                             \
            V r[L];                                                              \
            const T *s = src + p0 * L;                                           \
            CA_UNROLL for (int q = 0; q < L; q++)                                \
                r[q] = q < m ? (V) * (const VU *)(s + q * L) : (V){0};           \
            CONV_TRANSPOSE_##SUF(r);                                              \
            CA_UNROLL for (int l = 0; l < L; l++) {                              \
                if (l >= n)                                                      \
                    break;                                                       \
                if (relu)                                                        \
                    r[l] = CA(relu_##SUF)(r[l]);                                 \
                T *d = dst + l * img_stride + p0;                                \
                if (m == L)                                                      \
                    *(VU *)d = r[l];                                             \
                else                                                             \
                    memcpy(d, &r[l], (size_t)m * sizeof(T));                     \
            }                                                                    \
        }                                                                        \
    }

/* ---- batch lanes: forward tile OB x XT ------------------------------------ */
#define BL_FWD(T, SUF, OB, XT)                                                   \
    static void CA(blf_##SUF##_##OB##_##XT)(                                     \
        const tg__dconv *d, const void *xv, const void *wv, int64_t opad,        \
        const void *bv, void *yv, int64_t oy, int64_t x0, int64_t jlo,           \
        int64_t jhi)                                                             \
    {                                                                            \
        typedef CA(v_##SUF) V;                                                   \
        typedef CA(vu_##SUF) VU;                                                 \
        enum { L = CA(L_##SUF) };                                                \
        const T *x = xv, *w = wv, *bias = bv;                                    \
        T *y = yv;                                                               \
        const int64_t plane = d->ih * d->iw * L, kw = d->kw, nt = d->ow - x0;    \
        const int64_t rstep = d->dh * d->iw * L;                                 \
        /* the taps' rows that read input rows, not padding: one range */       \
        int64_t ilo = 0, ihi = d->kh;                                            \
        while (ilo < ihi && oy + ilo * d->dh < d->row0)                          \
            ilo++;                                                               \
        while (ihi > ilo && oy + (ihi - 1) * d->dh >= d->row1)                   \
            ihi--;                                                               \
        for (int64_t o0 = 0; o0 < d->cout; o0 += OB) {                           \
            V acc[OB][XT];                                                       \
            CA_UNROLL for (int ob = 0; ob < OB; ob++) {                          \
                T b0 = bias ? bias[o0 + ob] : (T)0;                              \
                CA_UNROLL for (int t = 0; t < XT; t++)                           \
                    acc[ob][t] = (V){0} + b0;                                    \
            }                                                                    \
            for (int64_t c = 0; c < d->cin; c++) {                               \
                const T *rp = x + c * plane + ((oy + ilo * d->dh) * d->iw + x0) * L; \
                const T *wr = w + (c * d->kh + ilo) * kw * opad + o0;            \
                for (int64_t i = ilo; i < ihi; i++, rp += rstep, wr += kw * opad) { \
                    for (int64_t j = jlo; j < jhi; j++) {                        \
                        const T *xj = rp + j * d->dw * L, *wj = wr + j * opad;   \
                        if (XT > OB) { /* see BL_WGT: the smaller side stays */ \
                            V wv[OB];                                            \
                            CA_UNROLL for (int ob = 0; ob < OB; ob++)            \
                                wv[ob] = (V){0} + wj[ob];                        \
                            CA_UNROLL for (int ob = 0; ob < OB; ob++)            \
                                CA_KEEP(wv[ob]);                                 \
                            CA_UNROLL for (int t = 0; t < XT; t++) {             \
                                V xx = *(const VU *)(xj + t * L);                \
                                CA_KEEP(xx);                                     \
                                CA_UNROLL for (int ob = 0; ob < OB; ob++)        \
                                    acc[ob][t] += wv[ob] * xx;                   \
                            }                                                    \
                            continue;                                            \
                        }                                                        \
                        V xx[XT];                                                \
                        CA_UNROLL for (int t = 0; t < XT; t++)                   \
                            xx[t] = *(const VU *)(xj + t * L);                   \
                        CA_UNROLL for (int t = 0; t < XT; t++)                   \
                            CA_KEEP(xx[t]);                                      \
                        CA_UNROLL for (int ob = 0; ob < OB; ob++) {              \
                            T s = wj[ob];                                        \
                            CA_UNROLL for (int t = 0; t < XT; t++)               \
                                acc[ob][t] += s * xx[t];                         \
                        }                                                        \
                    }                                                            \
                }                                                                \
            }                                                                    \
            int64_t nob = d->cout - o0;                                          \
            CA_UNROLL for (int ob = 0; ob < OB; ob++) {                          \
                T *yo = y + ((o0 + ob) * d->oh + oy) * d->ow * L + x0 * L;       \
                CA_UNROLL for (int t = 0; t < XT; t++)                           \
                    if (ob < nob && t < nt)                                      \
                        *(VU *)(yo + t * L) = acc[ob][t];                        \
            }                                                                    \
        }                                                                        \
    }

/* ---- batch lanes: weight-gradient tile OB x TB ------------------------------ */
#define BL_WGT(T, SUF, OB, TB)                                                   \
    static void CA(blw_##SUF##_##OB##_##TB)(                                     \
        const tg__dconv *d, const void *xv, const void *dyv, int64_t o0,         \
        const int64_t *off, void *accv, int64_t acc_ld)                          \
    {                                                                            \
        typedef CA(v_##SUF) V;                                                   \
        typedef CA(vu_##SUF) VU;                                                 \
        enum { L = CA(L_##SUF) };                                                \
        const T *x = xv, *dy = dyv;                                              \
        T *out = accv;                                                           \
        V acc[OB][TB];                                                           \
        CA_UNROLL for (int ob = 0; ob < OB; ob++)                                \
            CA_UNROLL for (int t = 0; t < TB; t++)                               \
                acc[ob][t] = (V){0};                                             \
        const int64_t ostr = d->oh * d->ow * L, ow = d->ow;                      \
        for (int64_t oy = 0; oy < d->oh; oy++) {                                 \
            const T *dr = dy + (o0 * d->oh + oy) * ow * L;                       \
            const T *xr[TB];                                                     \
            CA_UNROLL for (int t = 0; t < TB; t++)                               \
                xr[t] = x + off[t] + oy * d->iw * L;                             \
            for (int64_t ox = 0; ox < ow; ox++) {                                \
                /* the smaller side's vectors stay in registers, the other's  \
                 * stream: OB x TB + min(OB, TB) + 1 registers (6 x 2 and     \
                 * 4 x 3 kept 19 and 17 of AVX2's 16 and spilled sums); each  \
                 * sum still gets one multiply-add per position, in order */  \
                if (OB > TB) {                                                   \
                    V xx[TB];                                                    \
                    CA_UNROLL for (int t = 0; t < TB; t++)                       \
                        xx[t] = *(const VU *)(xr[t] + ox * L);                   \
                    CA_UNROLL for (int t = 0; t < TB; t++)                       \
                        CA_KEEP(xx[t]);                                          \
                    CA_UNROLL for (int ob = 0; ob < OB; ob++) {                  \
                        V dv = *(const VU *)(dr + ob * ostr + ox * L);           \
                        CA_KEEP(dv);                                             \
                        CA_UNROLL for (int t = 0; t < TB; t++)                   \
                            acc[ob][t] += dv * xx[t];                            \
                    }                                                            \
                    continue;                                                    \
                }                                                                \
                V dv[OB];                                                        \
                CA_UNROLL for (int ob = 0; ob < OB; ob++)                        \
                    dv[ob] = *(const VU *)(dr + ob * ostr + ox * L);             \
                CA_UNROLL for (int ob = 0; ob < OB; ob++)                        \
                    CA_KEEP(dv[ob]);                                             \
                CA_UNROLL for (int t = 0; t < TB; t++) {                         \
                    V xx = *(const VU *)(xr[t] + ox * L);                        \
                    CA_KEEP(xx);                                                 \
                    CA_UNROLL for (int ob = 0; ob < OB; ob++)                    \
                        acc[ob][t] += dv[ob] * xx;                               \
                }                                                                \
            }                                                                    \
        }                                                                        \
        CA_UNROLL for (int ob = 0; ob < OB; ob++)                                \
            CA_UNROLL for (int t = 0; t < TB; t++)                               \
                *(VU *)(out + (ob * acc_ld + t) * L) += acc[ob][t];              \
    }

/* ---- plane vectors: forward tile MO x RV ------------------------------------ */
#define PV_FWD(T, SUF, MO, RV)                                                   \
    static void CA(pvf_##SUF##_##MO##_##RV)(                                     \
        const tg__dconv *d, const void *xv, const void *wv, int64_t opad,        \
        const void *bv, void *yv, const int64_t *row, const int64_t *x0,         \
        int64_t o0)                                                              \
    {                                                                            \
        typedef CA(v_##SUF) V;                                                   \
        typedef CA(vu_##SUF) VU;                                                 \
        enum { L = CA(L_##SUF) };                                                \
        const T *x = xv, *w = wv, *bias = bv;                                    \
        T *y = yv;                                                               \
        V acc[MO][RV];                                                           \
        CA_UNROLL for (int o = 0; o < MO; o++) {                                 \
            T b0 = bias ? bias[o0 + o] : (T)0;                                   \
            CA_UNROLL for (int s = 0; s < RV; s++)                               \
                acc[o][s] = (V){0} + b0;                                         \
        }                                                                        \
        const int64_t plane = d->ih * d->iw, kw = d->kw;                         \
        for (int64_t c = 0; c < d->cin; c++)                                     \
            for (int64_t i = 0; i < d->kh; i++) {                                \
                const T *rp[RV];                                                 \
                bool any = false;                                                \
                CA_UNROLL for (int s = 0; s < RV; s++) {                         \
                    int64_t r = row[s] + i * d->dh;                              \
                    any |= r >= d->row0 && r < d->row1;                          \
                    rp[s] = x + c * plane + r * d->iw + x0[s];                   \
                }                                                                \
                if (!any)                                                        \
                    continue;                                                    \
                const T *wr = w + (c * d->kh + i) * kw * opad + o0;              \
                for (int64_t j = 0; j < kw; j++) {                               \
                    const T *wj = wr + j * opad;                                 \
                    int64_t dj = j * d->dw;                                      \
                    V xx[RV];                                                    \
                    CA_UNROLL for (int s = 0; s < RV; s++)                       \
                        xx[s] = *(const VU *)(rp[s] + dj);                       \
                    CA_UNROLL for (int s = 0; s < RV; s++)                       \
                        CA_KEEP(xx[s]);                                          \
                    CA_UNROLL for (int o = 0; o < MO; o++) {                     \
                        T sw = wj[o];                                            \
                        CA_UNROLL for (int s = 0; s < RV; s++)                   \
                            acc[o][s] += sw * xx[s];                             \
                    }                                                            \
                }                                                                \
            }                                                                    \
        /* a row's last vector may spill into the next rows, which later    \
         * stores (this tile's or a later one's) overwrite; past the plane's   \
         * end it is cut */                                                    \
        int64_t nmo = d->cout - o0;                                              \
        CA_UNROLL for (int s = 0; s < RV; s++) {                                 \
            int64_t n = d->ow - x0[s];                                           \
            bool whole = n >= L || (row[s] * d->ow + x0[s] + L <= d->oh * d->ow); \
            CA_UNROLL for (int o = 0; o < MO; o++) {                             \
                if (o >= nmo)                                                    \
                    continue;                                                    \
                T *yo = y + ((o0 + o) * d->oh + row[s]) * d->ow + x0[s];         \
                if (d->relu)                                                     \
                    acc[o][s] = CA(relu_##SUF)(acc[o][s]);                       \
                if (whole)                                                       \
                    *(VU *)yo = acc[o][s];                                       \
                else                                                             \
                    for (int64_t l = 0; l < n; l++)                              \
                        yo[l] = acc[o][s][l];                                    \
            }                                                                    \
        }                                                                        \
    }

/* ---- plane vectors: weight-gradient tile MO x TB ---------------------------- */
#define PV_WGT(T, SUF, MO, TB)                                                   \
    static void CA(pvw_##SUF##_##MO##_##TB)(                                     \
        const tg__dconv *d, const void *xv, const void *dyv, int64_t ldy,        \
        int64_t dy_plane, int64_t o0, const int64_t *off, void *accv,            \
        int64_t acc_ld)                                                          \
    {                                                                            \
        typedef CA(v_##SUF) V;                                                   \
        typedef CA(vu_##SUF) VU;                                                 \
        enum { L = CA(L_##SUF) };                                                \
        const T *x = xv, *dy = dyv;                                              \
        T *out = accv;                                                           \
        V acc[MO][TB];                                                           \
        CA_UNROLL for (int o = 0; o < MO; o++)                                   \
            CA_UNROLL for (int t = 0; t < TB; t++)                               \
                acc[o][t] = (V){0};                                              \
        for (int64_t oy = 0; oy < d->oh; oy++) {                                 \
            const T *dr = dy + o0 * dy_plane + oy * ldy;                         \
            const T *xr[TB];                                                     \
            CA_UNROLL for (int t = 0; t < TB; t++)                               \
                xr[t] = x + off[t] + oy * d->iw;                                 \
            for (int64_t q = 0; q < ldy; q += L) {                               \
                V dv[MO];                                                        \
                CA_UNROLL for (int o = 0; o < MO; o++)                           \
                    dv[o] = *(const VU *)(dr + o * dy_plane + q);                \
                CA_UNROLL for (int o = 0; o < MO; o++)                           \
                    CA_KEEP(dv[o]);                                              \
                CA_UNROLL for (int t = 0; t < TB; t++) {                         \
                    V xx = *(const VU *)(xr[t] + q);                             \
                    CA_KEEP(xx);                                                 \
                    CA_UNROLL for (int o = 0; o < MO; o++)                       \
                        acc[o][t] += dv[o] * xx;                                 \
                }                                                                \
            }                                                                    \
        }                                                                        \
        CA_UNROLL for (int o = 0; o < MO; o++)                                   \
            CA_UNROLL for (int t = 0; t < TB; t++)                               \
                *(VU *)(out + (o * acc_ld + t) * L) += acc[o][t];                \
    }

CONV_COMMON(float, f32)
CONV_COMMON(double, f64)
#include "kernels/cpu/conv_pool_arch.h"

/* the tile lists (CONV_TILES_*: X(a, b) per shape) expanded per dtype */
#define X_BLF_f32(a, b) BL_FWD(float, f32, a, b)
#define X_BLF_f64(a, b) BL_FWD(double, f64, a, b)
#define X_BLW_f32(a, b) BL_WGT(float, f32, a, b)
#define X_BLW_f64(a, b) BL_WGT(double, f64, a, b)
#define X_PVF_f32(a, b) PV_FWD(float, f32, a, b)
#define X_PVF_f64(a, b) PV_FWD(double, f64, a, b)
#define X_PVW_f32(a, b) PV_WGT(float, f32, a, b)
#define X_PVW_f64(a, b) PV_WGT(double, f64, a, b)
CONV_TILES_BLF(X_BLF_f32)
CONV_TILES_BLF(X_BLF_f64)
CONV_TILES_BLW(X_BLW_f32)
CONV_TILES_BLW(X_BLW_f64)
CONV_TILES_PVF(X_PVF_f32)
CONV_TILES_PVF(X_PVF_f64)
CONV_TILES_PVW(X_PVW_f32)
CONV_TILES_PVW(X_PVW_f64)

#define T_SHAPE(a, b) {a, b},
#define T_BLF_f32(a, b) CA(blf_f32_##a##_##b),
#define T_BLF_f64(a, b) CA(blf_f64_##a##_##b),
#define T_BLW_f32(a, b) CA(blw_f32_##a##_##b),
#define T_BLW_f64(a, b) CA(blw_f64_##a##_##b),
#define T_PVF_f32(a, b) CA(pvf_f32_##a##_##b),
#define T_PVF_f64(a, b) CA(pvf_f64_##a##_##b),
#define T_PVW_f32(a, b) CA(pvw_f32_##a##_##b),
#define T_PVW_f64(a, b) CA(pvw_f64_##a##_##b),
#define T_COUNT(a, b) +1

#define CONV_KERN(SUF)                                                           \
    {                                                                            \
        .lanes = CA(L_##SUF),                                                    \
        .n_fwd = 0 CONV_TILES_BLF(T_COUNT), .fwd = {CONV_TILES_BLF(T_SHAPE)},    \
        .bl_fwd = {CONV_TILES_BLF(T_BLF_##SUF)},                                 \
        .n_wgt = 0 CONV_TILES_BLW(T_COUNT), .wgt = {CONV_TILES_BLW(T_SHAPE)},    \
        .bl_wgt = {CONV_TILES_BLW(T_BLW_##SUF)},                                 \
        .n_pvf = 0 CONV_TILES_PVF(T_COUNT), .pvf = {CONV_TILES_PVF(T_SHAPE)},    \
        .pv_fwd = {CONV_TILES_PVF(T_PVF_##SUF)},                                 \
        .n_pvw = 0 CONV_TILES_PVW(T_COUNT), .pvw = {CONV_TILES_PVW(T_SHAPE)},    \
        .pv_wgt = {CONV_TILES_PVW(T_PVW_##SUF)},                                 \
        .to_bl = CA(to_bl_##SUF), .from_bl = CA(from_bl_##SUF),                  \
        .from_bl_pool = CA(from_bl_pool_##SUF),                                  \
    }

const tg__conv_arch CA(tg__conv_arch) = {
    .name = CA_STR(CONV_ISA),
    .k = {CONV_KERN(f32), CONV_KERN(f64)},
};
