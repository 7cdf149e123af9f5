/* The few-input-channel convolution's strip kernel (see conv_few.h),
 * included by conv_dw_avx512.c and conv_dw_avx2.c after conv_dw_arch.h,
 * whose vector types, activation and input layout it uses: compiled once
 * per instruction set with -ffp-contract=fast (not for the generic
 * level's 16-byte vectors, where im2col and the GEMM are faster).
 *
 * A register tile is FEW_OB output channels x FEW_R output rows x up to
 * two vectors along the row; for each input channel and tap it loads the
 * tile's input vectors once (whole-vector loads from the column phases,
 * whatever the stride) and multiply-adds them with one broadcast weight
 * per output channel: FEW_OB x FEW_R x 2 independent accumulator chains.
 * Every output sums its bias first, then the channels and taps in order;
 * the activation is applied as the tile is stored. */
#ifndef DW_ISA
#error "include conv_dw_arch.h first"
#endif
#include "kernels/cpu/conv_few_api.h"

#define FEW_OB 4

/* every lane s, as a broadcast the tap loop's multiply-adds read as a
 * load: (v){0} + s is 0 + s, not s where s is -0, so GCC computed that sum
 * in a scalar register and broadcast it, two more operations per weight,
 * the broadcast on a port the multiply-adds use (ResNet's 7x7 stem 3-4%
 * slower). The same bits: the sums start at 0 + bias, never -0, so a -0
 * weight's +-0 products add nothing either way */
#if VEC_BYTES == 64
#define FEW_SET1(PS, s) _mm512_set1_##PS(s)
#else
#define FEW_SET1(PS, s) _mm256_set1_##PS(s)
#endif
#define FEW_SPLAT(T, SUF, PS)                                                    \
    static inline __attribute__((always_inline)) DW(v_##SUF) DW(few_splat_##SUF)(T s) \
    {                                                                            \
        return (DW(v_##SUF))FEW_SET1(PS, s);                                     \
    }
FEW_SPLAT(float, f32, ps)
FEW_SPLAT(double, f64, pd)
/* 16 accumulators of 32 registers with AVX-512; 8 of 16 below it */
#define FEW_R (VEC_BYTES >= 64 ? 2 : 1)

#define FEW_STRIP(T, SUF)                                                        \
    /* the tile at output row oy, channels [o0, o0 + nb), nv vectors from    \
     * column x0 (nb <= FEW_OB, nr <= FEW_R rows, nv <= 2) */                \
    static inline __attribute__((always_inline)) void DW(few_tile_##SUF)(        \
        const tg__few_strip *s, const T *ph, const T *w, const T *b, int64_t oy, \
        int64_t o0, int nb, int nr, int64_t x0, int nv, T *y)                    \
    {                                                                            \
        const tg__dw_plane *p = s->p;                                            \
        const int64_t L = DW(L_##SUF), rs = p->sh * p->ld, taps = p->taps;       \
        const int64_t ct = s->c * taps;                                          \
        DW(v_##SUF) acc[FEW_OB][FEW_R][2];                                       \
        DW_UNROLL for (int k = 0; k < FEW_OB; k++) {                             \
            const T bias = b && k < nb ? b[o0 + k] : (T)0;                       \
            DW_UNROLL for (int r = 0; r < FEW_R; r++)                            \
                DW_UNROLL for (int u = 0; u < 2; u++)                            \
                    acc[k][r][u] = (DW(v_##SUF)){0} + bias;                      \
        }                                                                        \
        for (int64_t c = 0; c < s->c; c++) {                                     \
            const T *base = ph + c * s->cs + oy * rs + x0;                       \
            const T *wc = w + o0 * ct + c * taps;                                \
            for (int64_t t = 0; t < taps; t++) {                                 \
                const T *src = base + p->off[t];                                 \
                DW(v_##SUF) in[FEW_R][2];                                        \
                DW_UNROLL for (int r = 0; r < FEW_R; r++)                        \
                    DW_UNROLL for (int u = 0; u < 2; u++)                        \
                        if (r < nr && u < nv)                                    \
                            in[r][u] = *(const DW(u_##SUF) *)(src + r * rs + u * L); \
                DW_UNROLL for (int k = 0; k < FEW_OB; k++) {                     \
                    if (k >= nb)                                                 \
                        continue;                                                \
                    const DW(v_##SUF) wv = DW(few_splat_##SUF)(wc[k * ct + t]);  \
                    DW_UNROLL for (int r = 0; r < FEW_R; r++)                    \
                        DW_UNROLL for (int u = 0; u < 2; u++)                    \
                            if (r < nr && u < nv)                                \
                                acc[k][r][u] += wv * in[r][u];                   \
                }                                                                \
            }                                                                    \
        }                                                                        \
        DW_UNROLL for (int k = 0; k < FEW_OB; k++)                               \
            DW_UNROLL for (int r = 0; r < FEW_R; r++)                            \
                DW_UNROLL for (int u = 0; u < 2; u++) {                          \
                    if (k >= nb || r >= nr || u >= nv)                           \
                        continue;                                                \
                    DW(v_##SUF) v = DW(act_##SUF)(p, acc[k][r][u]);              \
                    int64_t x = x0 + u * L;                                      \
                    T *dst = y + (o0 + k) * s->ys + (oy + r) * p->ow + x;        \
                    if (x + L <= p->ow)                                          \
                        *(DW(u_##SUF) *)dst = v;                                 \
                    else                                                         \
                        DW(store_part_##SUF)(dst, v, p->ow - x);                 \
                }                                                                \
    }                                                                            \
                                                                                 \
    /* rows [oy, oy + nr) of every output channel: the input rows stay in L1  \
     * while the channel blocks go by */                                     \
    static inline __attribute__((always_inline)) void DW(few_rows_##SUF)(        \
        const tg__few_strip *s, const T *ph, const T *w, const T *b, int64_t oy, \
        int nr, T *y)                                                            \
    {                                                                            \
        const int64_t L = DW(L_##SUF), nvec = (s->p->ow + L - 1) / L;            \
        int64_t o0 = 0;                                                          \
        for (; o0 + FEW_OB <= s->o; o0 += FEW_OB) {                              \
            int64_t v = 0;                                                       \
            for (; v + 2 <= nvec; v += 2)                                        \
                DW(few_tile_##SUF)(s, ph, w, b, oy, o0, FEW_OB, nr, v * L, 2, y); \
            if (v < nvec)                                                        \
                DW(few_tile_##SUF)(s, ph, w, b, oy, o0, FEW_OB, nr, v * L, 1, y); \
        }                                                                        \
        if (o0 < s->o)                                                           \
            for (int64_t v = 0; v < nvec; v++)                                   \
                DW(few_tile_##SUF)(s, ph, w, b, oy, o0, (int)(s->o - o0), nr,    \
                                   v * L, 1, y);                                 \
    }                                                                            \
                                                                                 \
    static void DW(few_strip_##SUF)(const tg__few_strip *s, const void *phases,  \
                                    const void *w, const void *b, void *y)       \
    {                                                                            \
        int64_t oy = 0;                                                          \
        for (; oy + FEW_R <= s->p->oh; oy += FEW_R)                              \
            DW(few_rows_##SUF)(s, phases, w, b, oy, FEW_R, y);                   \
        if (oy < s->p->oh) /* FEW_R is at most 2: one row left */               \
            DW(few_rows_##SUF)(s, phases, w, b, oy, 1, y);                       \
    }

FEW_STRIP(float, f32)
FEW_STRIP(double, f64)

const tg__few_arch DW(tg__few_arch) = {
    .strip = {DW(few_strip_f32), DW(few_strip_f64)},
};
