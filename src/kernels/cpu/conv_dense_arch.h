/* The dense implicit-GEMM convolution kernels (conv_dense_api.h), one
 * template instantiated per instruction set: conv_dense_avx512.c,
 * conv_dense_avx2.c and conv_dense_generic.c define the vector width and
 * the tile, are compiled for their instruction set (CMakeLists.txt, with
 * -ffp-contract=fast so that the multiply-adds fuse), include this file
 * and so define tg__dense_arch_<ISA> (a file may include it more than once,
 * with another DENSE_ISA name and vector width each time; DENSE_NARROWER
 * names the table of the narrower tiles, see conv_dense_api.h).
 * DENSE_TILES(X) lists the tile shapes as X(MR, NV); DENSE_TAILS(X) the
 * same heights with fewer vectors, which conv_dense.c runs on the last
 * positions of an image when they fill fewer vectors than a tile (ResNet's
 * 7x7 planes: 55 wide positions, 64 in 16-wide tiles, 56 with an 8-wide
 * tail).
 *
 * A tile of MR output channels x NV vectors of wide positions stays in
 * registers over all k taps: per tap, NV vectors are loaded (unaligned)
 * from the tap's run of the image and MR weights, one from each of MR
 * rows of the weight matrix, are broadcast against them. No patch matrix
 * is built, and k is not blocked: the MR weight rows and the image stream
 * from L2, which at these loads per multiply-add keeps the FMA units
 * busy. The weights are read as they are (packing them on each call, a
 * pass over all of them, made ResNet-18's convolutions ~10% slower at
 * batch 1), except frozen ones (an ONNX model's initializers), which
 * conv_dense.c packs once and keeps for the tables built with
 * DENSE_PACKED: tap p's MR weights side by side, one stream and one
 * register for them (AVX-512's zmm tiles: 0-4% faster per layer; the ymm
 * and AVX2 tiles gained nothing, and layer 4's 7x7 planes lost up to 10%
 * in some runs, so they read the rows).
 * The tap loop is a function of its own (taps_*, tapsp_*) that writes the
 * tile's sums to a buffer; the store (store_*) another: with both in one
 * function, changes to the store moved the loop's register allocation and
 * ResNet's layers by 10-15% either way. */
#include "kernels/cpu/conv_dense_api.h"

#include <string.h>

#ifndef DENSE_ISA
#error "define DENSE_ISA, VEC_BYTES and the tiles before including conv_dense_arch.h"
#endif

#define DA_CAT2(a, b) a##b
#define DA_CAT(a, b) DA_CAT2(a, b)
#define DA_NAME(x) DA_CAT(DA_CAT(x, _), DENSE_ISA)
#define DA_STR2(x) #x
#define DA_STR(x) DA_STR2(x)

#define DENSE_TYPES(T, I, SUF)                                                   \
    typedef T DA_NAME(v_##SUF) __attribute__((vector_size(VEC_BYTES)));         \
    typedef T DA_NAME(vu_##SUF) __attribute__((vector_size(VEC_BYTES),          \
                                               aligned(sizeof(T)), may_alias));  \
    typedef I DA_NAME(m_##SUF) __attribute__((vector_size(VEC_BYTES)));         \
    enum { DA_NAME(L_##SUF) = VEC_BYTES / (int)sizeof(T) };                     \
                                                                                \
    /* y[e] = relu?((src[e] + b) (+ r[e])) for e < n, as the add and relu ops   \
     * give it (NaN passes relu, -0 becomes +0): whole vectors, the last one    \
     * ending at n (overlapping the one before: y aliases neither src nor r),  \
     * or element by element when n is below a vector */                       \
    /* put_row below a vector, element by element, out of line: inlined     \
     * under n < L, GCC 12 at -O3 made code that wrote 8 of 12 columns      \
     * (no error found in the C; the shapes of tests/test_conv_dense.c have \
     * runs of many lengths), and                                           \
     * code inlined here costs the tiles' loop registers (ResNet's 14x14     \
     * layers ran 14% slower with these loops inlined) */                    \
    static __attribute__((noinline)) void DA_NAME(put_short_##SUF)(            \
        T *y, const T *src, const T *r, T b, bool relu, int64_t n)             \
    {                                                                           \
        for (int64_t e = 0; e < n; e++) {                                       \
            T v = src[e] + b;                                                   \
            v = r ? v + r[e] : v;                                               \
            y[e] = !relu || v > 0 || v != v ? v : (T)0;                         \
        }                                                                       \
    }                                                                           \
                                                                                \
    static inline void DA_NAME(put_row_##SUF)(T *y, const T *src, const T *r, T b,  \
                                              bool relu, int64_t n)            \
    {                                                                           \
        typedef DA_NAME(v_##SUF) V;                                             \
        typedef DA_NAME(vu_##SUF) VU;                                           \
        typedef DA_NAME(m_##SUF) M;                                             \
        enum { L = DA_NAME(L_##SUF) };                                          \
        if (n < L) {                                                            \
            DA_NAME(put_short_##SUF)(y, src, r, b, relu, n);                    \
            return;                                                             \
        }                                                                       \
        const V bv = (V){0} + b, zero = {0};                                    \
        for (int64_t e = 0;; e += L) {                                          \
            e = e > n - L ? n - L : e;                                          \
            V v = *(const VU *)(src + e) + bv;                                  \
            if (r)                                                              \
                v = v + *(const VU *)(r + e);                                   \
            if (relu) {                                                         \
                M keep = (v > zero) | (v != v);                                 \
                v = (V)((M)v & keep);                                           \
            }                                                                   \
            *(VU *)(y + e) = v;                                                 \
            if (e == n - L)                                                     \
                break;                                                          \
        }                                                                       \
    }

/* the kernels of one tile shape: MR output channels x NV vectors (the
 * functions are named after SUF, MR and NV) */
#define DENSE_TEMPLATE(T, SUF, MR, NV)                                           \
    DENSE_TEMPLATE_(T, SUF, MR, NV, SUF##_##MR##x##NV)
#define DENSE_TEMPLATE_(T, SUF, MR, NV, TN)                                      \
    enum { DA_NAME(NR_##TN) = NV * (VEC_BYTES / (int)sizeof(T)) };              \
    /* a tile buffer's row: NR columns and a vector of slack (compact_run    \
     * reads and writes whole vectors) */                                     \
    enum { DA_NAME(TS_##TN) = DA_NAME(NR_##TN) + VEC_BYTES / (int)sizeof(T) };  \
                                                                                \
    /* columns [j, j + n) of the tile's rows into output row oy, column ox */   \
    static void DA_NAME(put_##TN)(const T (*tile)[DA_NAME(TS_##TN)],          \
                                   int64_t j, int64_t n, int64_t o0,            \
                                   int64_t rows, int64_t at,                    \
                                   const tg__dense_store *st)                   \
    {                                                                           \
        const T *bias = st->bias;                                               \
        const T *res = st->res;                                                 \
        for (int64_t i = 0; i < rows; i++) {                                    \
            int64_t at_i = (o0 + i) * st->ohw + at;                             \
            DA_NAME(put_row_##SUF)((T *)st->y + at_i, tile[i] + j,              \
                                   res ? res + at_i : NULL,                     \
                                   bias ? bias[o0 + i] : (T)0, st->relu, n);    \
        }                                                                       \
    }                                                                           \
                                                                                \
    /* the tile's sums (tile[i][c]: output channel o0 + i, wide position    \
     * t + c), biased and activated, into the output. The wide columns kept \
     * (not past ow, the wide rows' overhang, nor past p) are runs along     \
     * output rows, consecutive in the output, and in the tile too when the \
     * wide rows have no overhang (the strided 1x1 projections: one run).   \
     * One run is stored as it is; several are first moved together a      \
     * vector at a time, so that each row is stored in whole vectors, not   \
     * a short run at a time element by element (7x7 planes: runs of 7) */  \
    static __attribute__((noinline)) void DA_NAME(store_##TN)(               \
        const T (*tile)[DA_NAME(TS_##TN)], int64_t t, int64_t o0,            \
        int64_t rows, const tg__dense_store *st)                             \
    {                                                                        \
        typedef DA_NAME(vu_##SUF) VU;                                        \
        enum { NR = DA_NAME(NR_##TN), L = DA_NAME(L_##SUF) };                \
        int64_t end = t + NR < st->p ? t + NR : st->p;                       \
        int64_t oy = t / st->wq, ox = t - oy * st->wq;                       \
        int64_t rj[NR + 1], rn[NR + 1], runs = 0, at0 = 0, total = 0;        \
        for (int64_t tt = t; tt < end; oy++, ox = 0) {                       \
            int64_t run = end - tt < st->wq - ox ? end - tt : st->wq - ox;   \
            int64_t keep = ox >= st->ow ? 0 : run < st->ow - ox ? run : st->ow - ox; \
            if (keep > 0 && runs && rj[runs - 1] + rn[runs - 1] == tt - t)  \
                rn[runs - 1] += keep; /* no overhang between: one run */     \
            else if (keep > 0) {                                             \
                at0 = runs ? at0 : oy * st->ow + ox;                         \
                rj[runs] = tt - t;                                           \
                rn[runs++] = keep;                                           \
            }                                                                \
            total += keep > 0 ? keep : 0;                                    \
            tt += run;                                                       \
        }                                                                    \
        if (runs == 1)                                                       \
            DA_NAME(put_##TN)(tile, rj[0], total, o0, rows, at0, st);        \
        if (runs <= 1)                                                       \
            return;                                                          \
        /* a vector past a run's end is overwritten by the next run's */    \
        T c[MR][DA_NAME(TS_##TN)] __attribute__((aligned(64)));             \
        for (int64_t i = 0; i < rows; i++)                                   \
            for (int64_t r = 0, at = 0; r < runs; at += rn[r++])             \
                for (int64_t e = 0; e < rn[r]; e += L)                       \
                    *(VU *)&c[i][at + e] = *(const VU *)&tile[i][rj[r] + e]; \
        DA_NAME(put_##TN)((const T(*)[DA_NAME(TS_##TN)])c, 0, total, o0, rows, at0, st); \
    }                                                                        \
                                                                             \
    /* the tap loop alone, its sums into out (a function of its own, so     \
     * that its registers do not move with the store's code: with the two   \
     * in one function, changes to the store moved ResNet's layers by       \
     * 10-15% either way); row i's weights at ar[i] */                       \
    static __attribute__((noinline)) void DA_NAME(taps_##TN)(                \
        int64_t k, const T *const *ar, const T *restrict img,                \
        const int64_t *restrict off, T (*restrict out)[DA_NAME(TS_##TN)])    \
    {                                                                        \
        typedef DA_NAME(v_##SUF) V;                                          \
        typedef DA_NAME(vu_##SUF) VU;                                        \
        enum { L = DA_NAME(L_##SUF) };                                       \
        const T *a[MR];                                                      \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                \
            a[i] = ar[i];                                                    \
        V acc[MR][NV];                                                       \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)             \
                acc[i][v] = (V){0};                                          \
        for (int64_t p = 0; p < k; p++) {                                    \
            const T *b = img + off[p];                                       \
            V bv[NV];                                                        \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)             \
                bv[v] = *(const VU *)(b + v * L);                            \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)            \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)         \
                    acc[i][v] += a[i][p] * bv[v];                            \
        }                                                                    \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)             \
                *(V *)&out[i][v * L] = acc[i][v];                            \
    }                                                                        \
                                                                             \
    /* the same over packed weights: tap p's MR weights at a + p MR (one    \
     * stream instead of MR rows, and one register for them) */              \
    static __attribute__((noinline)) void DA_NAME(tapsp_##TN)(               \
        int64_t k, const T *restrict a, const T *restrict img,               \
        const int64_t *restrict off, T (*restrict out)[DA_NAME(TS_##TN)])    \
    {                                                                        \
        typedef DA_NAME(v_##SUF) V;                                          \
        typedef DA_NAME(vu_##SUF) VU;                                        \
        enum { L = DA_NAME(L_##SUF) };                                       \
        V acc[MR][NV];                                                       \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)             \
                acc[i][v] = (V){0};                                          \
        for (int64_t p = 0; p < k; p++, a += MR) {                           \
            const T *b = img + off[p];                                       \
            V bv[NV];                                                        \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)             \
                bv[v] = *(const VU *)(b + v * L);                            \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)            \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)         \
                    acc[i][v] += a[i] * bv[v];                               \
        }                                                                    \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)             \
                *(V *)&out[i][v * L] = acc[i][v];                            \
    }                                                                        \
                                                                             \
    /* the tile over packed weights (the panel's, at av; lda unused) */      \
    static __attribute__((unused)) void DA_NAME(tilep_##TN)(                  \
        int64_t k, const void *av, int64_t lda,                               \
        const void *imgv, const int64_t *off, int64_t t, int64_t o0,          \
        int64_t rows, const tg__dense_store *st)                              \
    {                                                                        \
        (void)lda;                                                           \
        T tile[MR][DA_NAME(TS_##TN)] __attribute__((aligned(64)));           \
        DA_NAME(tapsp_##TN)(k, (const T *)av, (const T *)imgv + t, off, tile); \
        DA_NAME(store_##TN)((const T(*)[DA_NAME(TS_##TN)])tile, t, o0, rows, st); \
    }                                                                        \
                                                                             \
    /* row i of the tile's weights at a + i lda (rows past `rows` read row   \\
     * 0, their sums dropped) */                                               \
    static void DA_NAME(tile_##TN)(int64_t k, const void *av, int64_t lda, \
                                         const void *imgv, const int64_t *off, \
                                         int64_t t, int64_t o0, int64_t rows,  \
                                         const tg__dense_store *st)            \
    {                                                                           \
        const T *ar[MR];                                                        \
        for (int i = 0; i < MR; i++)                                            \
            ar[i] = (const T *)av + (i < rows ? i : 0) * lda;                   \
        T tile[MR][DA_NAME(TS_##TN)] __attribute__((aligned(64)));              \
        DA_NAME(taps_##TN)(k, ar, (const T *)imgv + t, off, tile);              \
        DA_NAME(store_##TN)((const T(*)[DA_NAME(TS_##TN)])tile, t, o0, rows, st); \
    }

/* the kernels of one tile shape whose vectors run over output channels:
 * CV vectors of output channels (MR = CV lanes) x NP positions along one
 * output row (conv_dense_api.h, over_out), over packed weights only. Per
 * tap, CV vectors of weights are loaded and NP image values broadcast
 * against them; the tile's positions are the row's own, so a 7-wide
 * plane computes 7 positions a row, not the wide tiles' 8 or 16 */
#define DENSE_OUT_TEMPLATE(T, SUF, CV, NP) DENSE_OUT_TEMPLATE_(T, SUF, CV, NP, SUF##_o##CV##x##NP)
#define DENSE_OUT_TEMPLATE_(T, SUF, CV, NP, TN)                                  \
    enum { DA_NAME(MR_##TN) = CV * (VEC_BYTES / (int)sizeof(T)) };              \
                                                                                \
    /* the tap loop alone (a function of its own, as taps_* above): out[j]  \
     * holds position j's sums for the MR output channels, the taps' added \
     * to out's own unless `first` (then to zero); with `ahead`, each tap's \
     * weights that many bytes further on are asked into L2 */              \
    static __attribute__((noinline, unused)) void DA_NAME(tapso_##TN)(       \
        int64_t k, const T *restrict a, const T *restrict img,               \
        const int64_t *restrict off, T (*restrict out)[DA_NAME(MR_##TN)],    \
        bool first, int64_t ahead)                                           \
    {                                                                        \
        typedef DA_NAME(v_##SUF) V;                                          \
        typedef DA_NAME(vu_##SUF) VU;                                        \
        enum { L = DA_NAME(L_##SUF) };                                       \
        V acc[NP][CV];                                                       \
        _Pragma("GCC unroll 16") for (int j = 0; j < NP; j++)                \
            _Pragma("GCC unroll 8") for (int v = 0; v < CV; v++)             \
                acc[j][v] = first ? (V){0} : (V)(*(const VU *)&out[j][v * L]); \
        for (int64_t p = 0; p < k; p++, a += CV * L) {                       \
            const T *b = img + off[p];                                       \
            V wv[CV];                                                        \
            if (ahead)                                                       \
                for (int v = 0; v < CV * L * (int)sizeof(T); v += 64)        \
                    __builtin_prefetch((const char *)a + ahead + v, 0, 2);   \
            _Pragma("GCC unroll 8") for (int v = 0; v < CV; v++)             \
                wv[v] = *(const VU *)(a + v * L);                            \
            _Pragma("GCC unroll 16") for (int j = 0; j < NP; j++)            \
                _Pragma("GCC unroll 8") for (int v = 0; v < CV; v++)         \
                    acc[j][v] += b[j] * wv[v];                               \
        }                                                                    \
        _Pragma("GCC unroll 16") for (int j = 0; j < NP; j++)                \
            _Pragma("GCC unroll 8") for (int v = 0; v < CV; v++)             \
                *(VU *)&out[j][v * L] = acc[j][v];                           \
    }                                                                        \
                                                                             \
    /* output channels o0 .. o0 + rows at the positions of output row      \
     * t / wq from column t % wq on (at most NP, not past ow): the sums of  \
     * taps [0, k) into sums (conv_dense_api.h, tile_part), then with st   \
     * biased, shortcut added and activated as put_row does, each output   \
     * channel's run of positions in its own row of the output */          \
    static void DA_NAME(tileo_part_##TN)(int64_t k, const void *av, const void *imgv, \
                                         const int64_t *off, int64_t t, int64_t o0, \
                                         int64_t rows, void *sums, bool first,      \
                                         int64_t ahead, const tg__dense_store *st)  \
    {                                                                        \
        enum { MR = DA_NAME(MR_##TN) };                                      \
        T(*tile)[MR] = sums;                                                 \
        DENSE_OUT_TAPS_##SUF(TN)(k, (const T *)av, (const T *)imgv + t, off, tile, first, \
                                 ahead);                                     \
        if (!st)                                                             \
            return;                                                          \
        int64_t oy = t / st->wq, ox = t - oy * st->wq;                       \
        int64_t n = st->ow - ox < NP ? st->ow - ox : NP;                     \
        bool spare = t < st->last_start && ox + NP < st->ow;                 \
        DENSE_OUT_STORE_##SUF(&tile[0][0], NP, MR, n, rows, o0,              \
                              oy * st->ow + ox, spare, st);                  \
    }                                                                        \
                                                                             \
    /* the same over all the taps at once */                                \
    static void DA_NAME(tileo_##TN)(int64_t k, const void *av, int64_t lda,  \
                                    const void *imgv, const int64_t *off,     \
                                    int64_t t, int64_t o0, int64_t rows,      \
                                    const tg__dense_store *st)               \
    {                                                                        \
        (void)lda;                                                           \
        T tile[NP][DA_NAME(MR_##TN)] __attribute__((aligned(64)));           \
        DA_NAME(tileo_part_##TN)(k, av, imgv, off, t, o0, rows, tile, true, 0, st); \
    }

/* the tiles over output channels' store, element by element: tile[j * mr
 * + i] (position j < n, output channel o0 + i, i < rows) biased, the
 * shortcut added and relu applied as put_row does, into the output at
 * (o0 + i) * ohw + at + j. `spare`: position n of each channel's run may
 * be written too, with any value (tileo: a later tile stores it). An
 * instruction set may give a vector form for
 * float32 (DENSE_OUT_STORE_f32, defined before including this file: the
 * element-by-element store took a third of ResNet's 56x56 layers' time) */
#define DENSE_OUT_STORE_SCALAR(T, SUF)                                          \
    static __attribute__((unused)) void DA_NAME(out_store_##SUF)(               \
        const T *tile, int np, int mr, int64_t n, int64_t rows, int64_t o0,     \
        int64_t at0, bool spare, const tg__dense_store *st)                     \
    {                                                                           \
        (void)np, (void)spare;                                                  \
        const T *bias = st->bias, *res = st->res;                               \
        for (int64_t i = 0; i < rows; i++) {                                    \
            int64_t at = (o0 + i) * st->ohw + at0;                              \
            T b = bias ? bias[o0 + i] : (T)0, *y = (T *)st->y + at;             \
            for (int64_t j = 0; j < n; j++) {                                   \
                T v = tile[j * mr + i] + b;                                     \
                v = res ? v + res[at + j] : v;                                  \
                y[j] = !st->relu || v > 0 || v != v ? v : (T)0;                 \
            }                                                                   \
        }                                                                       \
    }
/* the tap loop of the tiles over output channels: the template's, unless
 * an instruction set gives its own for float32 (DENSE_OUT_TAPS_f32(TN),
 * defined before including this file, naming a function with tapso's
 * arguments for each shape DENSE_OUTS lists) */
#ifndef DENSE_OUT_TAPS_f32
#define DENSE_OUT_TAPS_f32(TN) DA_NAME(tapso_##TN)
#endif
#define DENSE_OUT_TAPS_f64(TN) DA_NAME(tapso_##TN)

DENSE_OUT_STORE_SCALAR(float, f32)
DENSE_OUT_STORE_SCALAR(double, f64)
#ifndef DENSE_OUT_STORE_f32
#define DENSE_OUT_STORE_f32 DA_NAME(out_store_f32)
#endif
#define DENSE_OUT_STORE_f64 DA_NAME(out_store_f64)

DENSE_TYPES(float, int32_t, f32)
DENSE_TYPES(double, int64_t, f64)
/* DENSE_TILES(X) lists the shapes as X(MR, NV) */
#define DA_F32(MR, NV) DENSE_TEMPLATE(float, f32, MR, NV)
#define DA_F64(MR, NV) DENSE_TEMPLATE(double, f64, MR, NV)
DENSE_TILES(DA_F32)
DENSE_TILES(DA_F64)
DENSE_TAILS(DA_F32)
DENSE_TAILS(DA_F64)
/* DENSE_OUTS(X) lists the shapes over output channels as X(CV, NP) (the
 * float64 tiles have as many vectors, of half as many channels) */
#ifndef DENSE_OUTS
#define DENSE_OUTS(X)
#endif
#define DO_F32(CV, NP) DENSE_OUT_TEMPLATE(float, f32, CV, NP)
#define DO_F64(CV, NP) DENSE_OUT_TEMPLATE(double, f64, CV, NP)
DENSE_OUTS(DO_F32)
DENSE_OUTS(DO_F64)

#define DA_KERN(SUF, MR, NV)                                                     \
    {.mr = MR, .nr = DA_NAME(NR_##SUF##_##MR##x##NV), .nv = NV,                 \
     .tile = DA_NAME(tile_##SUF##_##MR##x##NV),                                  \
     .tile_packed = DENSE_PACKED_TILE(DA_NAME(tilep_##SUF##_##MR##x##NV))},
#define DA_K32(MR, NV) DA_KERN(f32, MR, NV)
#define DA_K64(MR, NV) DA_KERN(f64, MR, NV)
#define DA_COUNT(MR, NV) +1
#define DO_KERN(SUF, CV, NP)                                                     \
    {.mr = DA_NAME(MR_##SUF##_o##CV##x##NP), .nr = NP, .nv = CV, .over_out = true, \
     .tile = NULL, .tile_packed = DA_NAME(tileo_##SUF##_o##CV##x##NP),           \
     .tile_part = DA_NAME(tileo_part_##SUF##_o##CV##x##NP)},
#define DO_K32(CV, NP) DO_KERN(f32, CV, NP)
#define DO_K64(CV, NP) DO_KERN(f64, CV, NP)

#ifndef DENSE_NARROWER
#define DENSE_NARROWER NULL
#endif
#ifdef DENSE_PACKED
#define DENSE_PACKED_TILE(f) f
#else
#define DENSE_PACKED_TILE(f) NULL
#endif
const tg__dense_arch DA_NAME(tg__dense_arch) = {
    .name = DA_STR(DENSE_ISA),
    .n_kinds = 0 DENSE_TILES(DA_COUNT) DENSE_OUTS(DA_COUNT),
    .n_tails = 0 DENSE_TAILS(DA_COUNT),
    .k = {{DENSE_TILES(DA_K32) DENSE_OUTS(DO_K32)}, {DENSE_TILES(DA_K64) DENSE_OUTS(DO_K64)}},
    .tails = {{DENSE_TAILS(DA_K32)}, {DENSE_TAILS(DA_K64)}},
    .narrower = DENSE_NARROWER,
};
#undef DENSE_NARROWER
#undef DENSE_PACKED
#undef DENSE_PACKED_TILE
#undef DENSE_OUTS
#undef DENSE_OUT_STORE_f32
#undef DENSE_OUT_STORE_f64
#undef DENSE_OUT_TAPS_f32
#undef DENSE_OUT_TAPS_f64
