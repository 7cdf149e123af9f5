/* The channel-lane depthwise kernel (conv_dwc_api.h), built per
 * instruction set inside conv_dw_arch.h's files (its DW(), vector types,
 * partial loads and stores and activations): a block of L channels of one
 * image is transposed into [rows][cols][L] (a vector of channels per
 * position of the zero-padded plane, by transposes in registers),
 * every output position is then a chain of whole-vector multiply-adds
 * (one weight vector per tap, 8 positions of a row at a time), stored as
 * [oh * ow][L] with the bias and activation, and gathered back into the
 * channels' planes. No lane is wasted on small planes (7 x 7 outputs fill
 * 7 of the plane kernel's 16 lanes) and a stride costs nothing (the plane
 * kernel lays out every phase of the input). Each output sums the bias,
 * then the taps in row-major order, as the plane kernel does. */
#ifndef DW_ISA
#error "included by conv_dw_arch.h"
#endif

#include "kernels/cpu/conv_dwc_api.h"
#include "kernels/cpu/shuffle.h"

/* The interleaving shuffles of an L x L transpose: log2(L) rounds, each
 * making rows 2i and 2i + 1 from the low and high halves of rows i and
 * i + L / 2 taken lane by lane (a perfect shuffle), transpose the rows. */
#if VEC_BYTES == 64
static const DW(m_f32) DW(tlo_f32) = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
static const DW(m_f32) DW(thi_f32) = {8, 24, 9, 25, 10, 26, 11, 27,
                                      12, 28, 13, 29, 14, 30, 15, 31};
static const DW(m_f64) DW(tlo_f64) = {0, 8, 1, 9, 2, 10, 3, 11};
static const DW(m_f64) DW(thi_f64) = {4, 12, 5, 13, 6, 14, 7, 15};
#elif VEC_BYTES == 32
static const DW(m_f32) DW(tlo_f32) = {0, 8, 1, 9, 2, 10, 3, 11};
static const DW(m_f32) DW(thi_f32) = {4, 12, 5, 13, 6, 14, 7, 15};
static const DW(m_f64) DW(tlo_f64) = {0, 4, 1, 5};
static const DW(m_f64) DW(thi_f64) = {2, 6, 3, 7};
#else
static const DW(m_f32) DW(tlo_f32) = {0, 4, 1, 5};
static const DW(m_f32) DW(thi_f32) = {2, 6, 3, 7};
static const DW(m_f64) DW(tlo_f64) = {0, 2};
static const DW(m_f64) DW(thi_f64) = {1, 3};
#endif

#define DWC_TRANSPOSE(T, SUF)                                                    \
    static inline __attribute__((always_inline)) void DW(tr_##SUF)(DW(v_##SUF) *r) \
    {                                                                            \
        enum { L = DW(L_##SUF) };                                                \
        DW(v_##SUF) n[L];                                                        \
        _Pragma("GCC unroll 4") for (int w = 1; w < L; w *= 2) {                 \
            _Pragma("GCC unroll 16") for (int i = 0; i < L / 2; i++) {           \
                n[2 * i] = TG_SHUFFLE2(r[i], r[i + L / 2], DW(tlo_##SUF)); \
                n[2 * i + 1] = TG_SHUFFLE2(r[i], r[i + L / 2], DW(thi_##SUF)); \
            }                                                                    \
            _Pragma("GCC unroll 16") for (int i = 0; i < L; i++)                 \
                r[i] = n[i];                                                     \
        }                                                                        \
    }
DWC_TRANSPOSE(float, f32)
DWC_TRANSPOSE(double, f64)

/* output positions along a row per register tile */
#define DWC_NX 8

#define DWC_KERNEL(T, SUF, IT)                                                   \
    /* the block's channels into [rows][cols][L], zeros outside the plane   \
     * and in the lanes from nc: L columns of every channel at a time,      \
     * transposed in registers */                                           \
    static void DW(dwc_in_##SUF)(const tg__dwc_geom *g, const T *x, int64_t nc,  \
                                 T *in)                                          \
    {                                                                            \
        enum { L = DW(L_##SUF) };                                                \
        const DW(v_##SUF) zero = {0};                                            \
        const int64_t hw = g->h * g->w;                                          \
        int64_t left = g->pl < g->cols ? g->pl : g->cols;                        \
        int64_t xin = g->cols - left < g->w ? g->cols - left : g->w;             \
        for (int64_t r = 0; r < g->rows; r++) {                                  \
            T *dst = in + r * g->cols * L;                                       \
            int64_t ir = r - g->pt;                                              \
            if (ir < 0 || ir >= g->h) {                                          \
                for (int64_t q = 0; q < g->cols; q++)                            \
                    *(DW(u_##SUF) *)(dst + q * L) = zero;                        \
                continue;                                                        \
            }                                                                    \
            for (int64_t q = 0; q < left; q++)                                   \
                *(DW(u_##SUF) *)(dst + q * L) = zero;                            \
            const T *src = x + ir * g->w;                                        \
            for (int64_t x0 = 0; x0 < xin; x0 += L) {                            \
                int64_t n = xin - x0 < L ? xin - x0 : L;                         \
                DW(v_##SUF) v[L];                                                \
                _Pragma("GCC unroll 16") for (int c = 0; c < L; c++)             \
                    v[c] = c >= nc ? zero                                        \
                           : n == L ? *(const DW(u_##SUF) *)(src + c * hw + x0)  \
                                    : DW(load_part_##SUF)(src + c * hw + x0, n); \
                DW(tr_##SUF)(v);                                                 \
                _Pragma("GCC unroll 16") for (int q = 0; q < L; q++)             \
                    if (q < n) /* constant indices: v stays in registers */      \
                        *(DW(u_##SUF) *)(dst + (left + x0 + q) * L) = v[q];      \
            }                                                                    \
            for (int64_t q = left + xin; q < g->cols; q++)                       \
                *(DW(u_##SUF) *)(dst + q * L) = zero;                            \
        }                                                                        \
    }                                                                            \
                                                                                 \
    /* NX output positions of row oy from column ox */                          \
    static inline __attribute__((always_inline)) void DW(dwc_tile_##SUF)(        \
        int NX, const tg__dwc_geom *g, const tg__dw_plane *ap, const T *in,      \
        const T *wk, const int64_t *off, int taps, DW(v_##SUF) bias, int64_t oy, \
        int64_t ox, T *out)                                                      \
    {                                                                            \
        const int64_t L = DW(L_##SUF), xs = g->sw * L;                           \
        const T *base = in + (oy * g->sh * g->cols + ox * g->sw) * L;            \
        DW(v_##SUF) acc[DWC_NX];                                                 \
        _Pragma("GCC unroll 8") for (int x = 0; x < DWC_NX; x++)                 \
            acc[x] = bias;                                                       \
        for (int t = 0; t < taps; t++) {                                         \
            const DW(v_##SUF) wv = *(const DW(u_##SUF) *)(wk + t * L);           \
            const T *src = base + off[t];                                        \
            _Pragma("GCC unroll 8") for (int x = 0; x < DWC_NX; x++)             \
                if (x < NX)                                                      \
                    acc[x] += wv * *(const DW(u_##SUF) *)(src + x * xs);         \
        }                                                                        \
        T *dst = out + (oy * g->ow + ox) * L;                                    \
        _Pragma("GCC unroll 8") for (int x = 0; x < DWC_NX; x++)                 \
            if (x < NX)                                                          \
                *(DW(u_##SUF) *)(dst + x * L) = DW(act_##SUF)(ap, acc[x]);       \
    }                                                                            \
                                                                                 \
    static void DW(dwc_rows_##SUF)(const tg__dwc_geom *g, const T *in,          \
                                   const T *wk, const int64_t *off,              \
                                   DW(v_##SUF) bias, T *out)                     \
    {                                                                            \
        const tg__dw_plane ap = {.act = g->act, .lo = g->lo, .hi = g->hi};       \
        const int taps = (int)(g->kh * g->kw);                                   \
        for (int64_t oy = 0; oy < g->oh; oy++) {                                 \
            int64_t ox = 0;                                                      \
            for (; ox + DWC_NX <= g->ow; ox += DWC_NX)                           \
                DW(dwc_tile_##SUF)(DWC_NX, g, &ap, in, wk, off, taps, bias, oy, ox, out); \
            switch (g->ow - ox) { /* the rest of the row in one tile */          \
            case 7: DW(dwc_tile_##SUF)(7, g, &ap, in, wk, off, taps, bias, oy, ox, out); break; \
            case 6: DW(dwc_tile_##SUF)(6, g, &ap, in, wk, off, taps, bias, oy, ox, out); break; \
            case 5: DW(dwc_tile_##SUF)(5, g, &ap, in, wk, off, taps, bias, oy, ox, out); break; \
            case 4: DW(dwc_tile_##SUF)(4, g, &ap, in, wk, off, taps, bias, oy, ox, out); break; \
            case 3: DW(dwc_tile_##SUF)(3, g, &ap, in, wk, off, taps, bias, oy, ox, out); break; \
            case 2: DW(dwc_tile_##SUF)(2, g, &ap, in, wk, off, taps, bias, oy, ox, out); break; \
            case 1: DW(dwc_tile_##SUF)(1, g, &ap, in, wk, off, taps, bias, oy, ox, out); break; \
            default: break;                                                      \
            }                                                                    \
        }                                                                        \
    }                                                                            \
                                                                                 \
    /* [oh * ow][L] back into the nc channels' planes: L positions at a    \
     * time, transposed in registers */                                     \
    static void DW(dwc_out_##SUF)(const tg__dwc_geom *g, const T *out, int64_t nc, \
                                  T *y)                                          \
    {                                                                            \
        enum { L = DW(L_##SUF) };                                                \
        const int64_t ohw = g->oh * g->ow;                                       \
        for (int64_t p = 0; p < ohw; p += L) {                                   \
            int64_t n = ohw - p < L ? ohw - p : L;                               \
            DW(v_##SUF) v[L];                                                    \
            _Pragma("GCC unroll 16") for (int q = 0; q < L; q++)                 \
                v[q] = q < n ? *(const DW(u_##SUF) *)(out + (p + q) * L)         \
                             : (DW(v_##SUF)){0};                                 \
            DW(tr_##SUF)(v);                                                     \
            if (n == L)                                                          \
                _Pragma("GCC unroll 16") for (int c = 0; c < L; c++) {           \
                    if (c < nc)                                                  \
                        *(DW(u_##SUF) *)(y + c * g->ys + p) = v[c];              \
                }                                                                \
            else                                                                 \
                _Pragma("GCC unroll 16") for (int c = 0; c < L; c++) {           \
                    if (c < nc)                                                  \
                        DW(store_part_##SUF)(y + c * g->ys + p, v[c], n);        \
                }                                                                \
        }                                                                        \
    }                                                                            \
                                                                                 \
    static void DW(dwc_from_in_##SUF)(const tg__dwc_geom *g, int64_t nc,         \
                                      const void *wv, const void *bv, void *inv, \
                                      void *outv, void *yv)                      \
    {                                                                            \
        const int64_t L = DW(L_##SUF), taps = g->kh * g->kw;                     \
        const T *w = wv, *b = bv;                                                \
        T wk[TG__DWC_MAX_TAPS * 16] __attribute__((aligned(64)));                 \
        int64_t off[TG__DWC_MAX_TAPS];                                            \
        DW(v_##SUF) bias = {0};                                                  \
        for (int64_t c = 0; c < L; c++) {                                        \
            for (int64_t t = 0; t < taps; t++)                                   \
                wk[t * L + c] = c < nc ? w[c * taps + t] : 0;                    \
            if (b && c < nc)                                                     \
                bias[c] = b[c];                                                  \
        }                                                                        \
        for (int64_t i = 0, t = 0; i < g->kh; i++)                               \
            for (int64_t k = 0; k < g->kw; k++, t++)                             \
                off[t] = (i * g->dh * g->cols + k * g->dw) * L;                  \
        DW(dwc_rows_##SUF)(g, inv, wk, off, bias, outv);                         \
        DW(dwc_out_##SUF)(g, outv, nc, yv);                                      \
    }                                                                            \
                                                                                 \
    static void DW(dwc_block_##SUF)(const tg__dwc_geom *g, const void *xv,       \
                                    int64_t nc, const void *wv, const void *bv,  \
                                    void *inv, void *outv, void *yv)             \
    {                                                                            \
        DW(dwc_in_##SUF)(g, xv, nc, inv);                                        \
        DW(dwc_from_in_##SUF)(g, nc, wv, bv, inv, outv, yv);                     \
    }

DWC_KERNEL(float, f32, int32_t)
DWC_KERNEL(double, f64, int64_t)

/* input positions along a row per pointwise tile: one accumulator (a
 * vector of a block's channels) per position and block, beside the
 * blocks' weight vectors and a broadcast; two blocks at once take one
 * broadcast per two multiply-adds (a tile's loads per multiply-add: 17/16
 * for one block of 16 positions, 16/28 for two of 14 with AVX-512) */
#if VEC_BYTES == 64
#define PWDW_NX1 16
#define PWDW_NX2 14
#else
#define PWDW_NX1 8
#define PWDW_NX2 6
#endif

#define PWDW_CASE(SUF, CB, N)                                                    \
    case N: DW(pwdw_tile_##SUF)(CB, N, p, ap, src, bias, dst); break;
#define PWDW_CASES(SUF, CB)                                                      \
    PWDW_CASE(SUF, CB, 15) PWDW_CASE(SUF, CB, 14) PWDW_CASE(SUF, CB, 13)         \
    PWDW_CASE(SUF, CB, 12) PWDW_CASE(SUF, CB, 11) PWDW_CASE(SUF, CB, 10)         \
    PWDW_CASE(SUF, CB, 9) PWDW_CASE(SUF, CB, 8) PWDW_CASE(SUF, CB, 7)            \
    PWDW_CASE(SUF, CB, 6) PWDW_CASE(SUF, CB, 5) PWDW_CASE(SUF, CB, 4)            \
    PWDW_CASE(SUF, CB, 3) PWDW_CASE(SUF, CB, 2) PWDW_CASE(SUF, CB, 1)

#define PWDW_KERNEL(T, SUF)                                                      \
    /* NX positions from src (an input row's, channel 0): for each of CB     \
     * blocks, the L channels' sums over the k input channels in order,      \
     * + bias, act, into dst[b] ([NX][L]) */                                 \
    static inline __attribute__((always_inline)) void DW(pwdw_tile_##SUF)(       \
        const int CB, const int NX, const tg__pwdw_src *p, const tg__dw_plane *ap, \
        const T *src, const DW(v_##SUF) *bias, T *const *dst)                    \
    {                                                                            \
        enum { L = DW(L_##SUF) };                                                \
        const T *wp = p->wp;                                                     \
        DW(v_##SUF) acc[2][16];                                                  \
        _Pragma("GCC unroll 2") for (int b = 0; b < CB; b++)                     \
            _Pragma("GCC unroll 16") for (int x = 0; x < NX; x++)                \
                acc[b][x] = (DW(v_##SUF)){0};                                    \
        for (int64_t k = 0; k < p->k; k++) {                                     \
            const T *w = wp + k * CB * L, *s = src + k * p->hw;                  \
            const DW(v_##SUF) w0 = *(const DW(v_##SUF) *)w;                      \
            const DW(v_##SUF) w1 = CB > 1 ? *(const DW(v_##SUF) *)(w + L) : w0;  \
            _Pragma("GCC unroll 16") for (int x = 0; x < NX; x++) {              \
                const T v = s[x];                                                \
                acc[0][x] += w0 * v;                                             \
                if (CB > 1)                                                      \
                    acc[1][x] += w1 * v;                                         \
            }                                                                    \
        }                                                                        \
        _Pragma("GCC unroll 2") for (int b = 0; b < CB; b++)                     \
            _Pragma("GCC unroll 16") for (int x = 0; x < NX; x++)                \
                *(DW(v_##SUF) *)(dst[b] + x * L) =                               \
                    DW(act_##SUF)(ap, p->bias ? acc[b][x] + bias[b] : acc[b][x]); \
    }                                                                            \
                                                                                 \
    /* n (< a full tile) positions of CB blocks: one tile of that many */     \
    static __attribute__((noinline)) void DW(pwdw_tail_##SUF)(                   \
        int CB, int64_t n, const tg__pwdw_src *p, const tg__dw_plane *ap,        \
        const T *src, const DW(v_##SUF) *bias, T *const *dst)                    \
    {                                                                            \
        if (CB > 1)                                                              \
            switch (n) {                                                         \
                PWDW_CASES(SUF, 2)                                               \
            default: break;                                                      \
            }                                                                    \
        else                                                                     \
            switch (n) {                                                         \
                PWDW_CASES(SUF, 1)                                               \
            default: break;                                                      \
            }                                                                    \
    }                                                                            \
                                                                                 \
    /* rows [r0, r1) of dwc_in's layout for CB blocks, each position's       \
     * vector from the pointwise layer */                                    \
    static inline __attribute__((always_inline)) void DW(pwdw_rows_##SUF)(       \
        const int CB, const int NX, const tg__dwc_geom *g, const tg__pwdw_src *p, \
        T *const *in)                                                            \
    {                                                                            \
        enum { L = DW(L_##SUF) };                                                \
        const DW(v_##SUF) zero = {0};                                            \
        DW(v_##SUF) bias[2] = {zero, zero};                                      \
        for (int b = 0; p->bias && b < CB; b++)                                  \
            bias[b] = *(const DW(v_##SUF) *)((const T *)p->bias + b * L);        \
        const tg__dw_plane ap = {.act = p->act, .lo = p->lo, .hi = p->hi};       \
        int64_t left = g->pl < g->cols ? g->pl : g->cols;                        \
        int64_t xin = g->cols - left < g->w ? g->cols - left : g->w;             \
        for (int64_t r = 0; r < g->rows; r++) {                                  \
            T *dst[2];                                                           \
            for (int b = 0; b < CB; b++) {                                       \
                dst[b] = in[b] + r * g->cols * L;                                \
                int64_t ir = r - g->pt, zl = ir < 0 || ir >= g->h ? g->cols : left; \
                for (int64_t q = 0; q < zl; q++) /* padding before */            \
                    *(DW(v_##SUF) *)(dst[b] + q * L) = zero;                     \
                for (int64_t q = zl < g->cols ? left + xin : g->cols; q < g->cols; q++) \
                    *(DW(v_##SUF) *)(dst[b] + q * L) = zero; /* and after */     \
                dst[b] += left * L;                                              \
            }                                                                    \
            int64_t ir = r - g->pt;                                              \
            if (ir < 0 || ir >= g->h)                                            \
                continue;                                                        \
            const T *src = (const T *)p->x + ir * g->w;                          \
            int64_t x0 = 0;                                                      \
            for (; x0 + NX <= xin; x0 += NX) {                                   \
                T *at[2] = {dst[0] + x0 * L, CB > 1 ? dst[1] + x0 * L : NULL};   \
                DW(pwdw_tile_##SUF)(CB, NX, p, &ap, src + x0, bias, at);         \
            }                                                                    \
            if (x0 < xin) {                                                      \
                T *at[2] = {dst[0] + x0 * L, CB > 1 ? dst[1] + x0 * L : NULL};   \
                DW(pwdw_tail_##SUF)(CB, xin - x0, p, &ap, src + x0, bias, at);   \
            }                                                                    \
        }                                                                        \
    }                                                                            \
                                                                                 \
    static void DW(pwdw_in_##SUF)(const tg__dwc_geom *g, const tg__pwdw_src *p,  \
                                  void *const *in)                               \
    {                                                                            \
        if (p->blocks > 1)                                                       \
            DW(pwdw_rows_##SUF)(2, PWDW_NX2, g, p, (T *const *)in);              \
        else                                                                     \
            DW(pwdw_rows_##SUF)(1, PWDW_NX1, g, p, (T *const *)in);              \
    }

PWDW_KERNEL(float, f32)
PWDW_KERNEL(double, f64)

const tg__dwc_arch DW(tg__dwc_arch) = {
    .block = {DW(dwc_block_f32), DW(dwc_block_f64)},
    .pw_in = {DW(pwdw_in_f32), DW(pwdw_in_f64)},
    .from_in = {DW(dwc_from_in_f32), DW(dwc_from_in_f64)},
};
