/* The GEMM's macro-kernel with an epilogue (tg__gemm_kern.macro_ep,
 * gemm_arch_api.h), included by gemm_arch.h after GEMM_TEMPLATE, so it is
 * built once per instruction set with the same flags, tile sizes and
 * packed layouts as the plain one. It is for products whose C is small on
 * one side, the pointwise convolution's (conv_pw.c):
 * - the bias, a residual shortcut and the activation are applied to the
 *   tile while it is in registers, before its one store, instead of in a
 *   second pass over C;
 * - a partial tile of rows runs a kernel of that many rows (rounded up to
 *   an even count), not the full MR with zero rows: 16 output channels on
 *   AVX-512 are 14 + 2 rows, not 2 x 14;
 * - a partial tile of columns runs one vector when it fits in one, and
 *   its last vector is stored by a masked store rather than element by
 *   element through a buffer.
 * The sums are the plain macro-kernel's (the same k order, the same
 * multiply-adds); the epilogue's operations are the ops' own. */
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#define GEP_NAME(x) GA_NAME(GA_CAT(ep_, x))
/* row panels a leftover column runs at once: independent accumulators */
#define GEP_PANELS 8
/* a packed B block of at most this many bytes (in L2) is run a row panel
 * of A at a time, along C's rows: each tile row's stores continue the
 * last tile's, instead of the tiles going down the columns, MR rows
 * apart, with every row of the block a write stream of its own (16 -> 96
 * channels at 112 x 112, k = 16: 0.64 -> 0.49 ms on one Zen 4 core);
 * larger blocks keep each B micro-panel in L1 across the row panels */
#ifndef GEP_B_ROWS_OUTER
#define GEP_B_ROWS_OUTER (256 * 1024)
#endif

/* the first n (0 < n < L) elements of a vector: loaded with zeros after
 * them, nothing at or past src + n read (load_part); stored, nothing at or
 * past dst + n written (store_part) */
#if defined(__AVX512F__) && VEC_BYTES == 64
#define GEP_PARTS(T, SUF, IT, PS, MASKT)                                         \
    static inline GA_NAME(v_##SUF) GEP_NAME(load_part_##SUF)(const T *src, int64_t n) \
    {                                                                            \
        return (GA_NAME(v_##SUF))_mm512_maskz_loadu_##PS((MASKT)((1u << n) - 1u), src); \
    }                                                                            \
    static inline void GEP_NAME(store_part_##SUF)(T *dst, GA_NAME(v_##SUF) v, int64_t n) \
    {                                                                            \
        _mm512_mask_storeu_##PS(dst, (MASKT)((1u << n) - 1u), (GEP_M512_##SUF)v);  \
    }
#define GEP_M512_f32 __m512
#define GEP_M512_f64 __m512d
#elif defined(__AVX2__) && VEC_BYTES == 32
#define GEP_PARTS(T, SUF, IT, PS, MASKT)                                         \
    static inline GA_NAME(m_##SUF) GEP_NAME(mask_##SUF)(int64_t n)               \
    {                                                                            \
        GA_NAME(m_##SUF) m;                                                      \
        for (int i = 0; i < GA_NAME(L_##SUF); i++)                               \
            m[i] = i < n ? -1 : 0;                                               \
        return m;                                                                \
    }                                                                            \
    static inline GA_NAME(v_##SUF) GEP_NAME(load_part_##SUF)(const T *src, int64_t n) \
    {                                                                            \
        return (GA_NAME(v_##SUF))_mm256_maskload_##PS(src, (__m256i)GEP_NAME(mask_##SUF)(n)); \
    }                                                                            \
    static inline void GEP_NAME(store_part_##SUF)(T *dst, GA_NAME(v_##SUF) v, int64_t n) \
    {                                                                            \
        _mm256_maskstore_##PS(dst, (__m256i)GEP_NAME(mask_##SUF)(n), (GEP_M256_##SUF)v); \
    }
#define GEP_M256_f32 __m256
#define GEP_M256_f64 __m256d
#else
#define GEP_PARTS(T, SUF, IT, PS, MASKT)                                         \
    static inline GA_NAME(v_##SUF) GEP_NAME(load_part_##SUF)(const T *src, int64_t n) \
    {                                                                            \
        GA_NAME(v_##SUF) v = {0};                                                \
        memcpy(&v, src, (size_t)n * sizeof(T));                                  \
        return v;                                                                \
    }                                                                            \
    static inline void GEP_NAME(store_part_##SUF)(T *dst, GA_NAME(v_##SUF) v, int64_t n) \
    {                                                                            \
        memcpy(dst, &v, (size_t)n * sizeof(T));                                  \
    }
#endif

#define GEP_TEMPLATE(T, SUF, IT, PS, MASKT, MR, NV)                               \
    typedef IT GA_NAME(m_##SUF) __attribute__((vector_size(VEC_BYTES)));         \
    GEP_PARTS(T, SUF, IT, PS, MASKT)                                             \
                                                                                 \
    /* relu as the relu op (NaN passes, the rest not above zero is +0);       \
     * clamp as the clamp op (below lo is lo, above hi is hi, NaN passes);    \
     * hardswish as the hardswish op, v * relu6(v + 3) / 6 in that order     \
     * (relu6 passing NaN, nothing for a multiply-add to fuse) */            \
    static inline __attribute__((always_inline)) GA_NAME(v_##SUF)               \
        GEP_NAME(act_##SUF)(int act, GA_NAME(v_##SUF) v, T lo_s, T hi_s)        \
    {                                                                            \
        typedef GA_NAME(v_##SUF) V;                                              \
        typedef GA_NAME(m_##SUF) M;                                              \
        if (act == 1)                                                            \
            return (V)((M)v & ((v > 0) | (v != v)));                             \
        if (act == 3) {                                                          \
            const V zero = {0}, six = (V){0} + (T)6;                             \
            V t = v + (T)3;                                                      \
            M below = t < zero, above = t > six;                                 \
            t = (V)((M)t & ~below);                                              \
            t = (V)(((M)six & above) | ((M)t & ~above));                         \
            return v * t / (T)6;                                                 \
        }                                                                        \
        if (act != 2)                                                            \
            return v;                                                            \
        const V lo = (V){0} + lo_s, hi = (V){0} + hi_s;                          \
        M below = v < lo, above = v > hi;                                        \
        v = (V)(((M)lo & below) | ((M)v & ~below));                              \
        return (V)(((M)hi & above) | ((M)v & ~above));                           \
    }                                                                            \
                                                                                 \
    /* C's tile (mr <= R rows x NX whole vectors) from R rows of a packed A   \
     * panel and NX vectors of B's rows, ldb apart (NR: a packed B panel;    \
     * B's own row stride: B read in place), stored through the epilogue,   \
     * each step over the whole tile (one test of the activation per tile,  \
     * not per vector); row0, col0: the tile's place in ep's block */        \
    static inline __attribute__((always_inline)) void GEP_NAME(tile_##SUF)(      \
        int64_t kc, const T *restrict a, const T *restrict b, int64_t ldb,      \
        T *restrict c, int64_t ldc, const int R, const int NX, int64_t mr,      \
        bool accumulate, const tg__gemm_ep *ep, int64_t row0, int64_t col0)     \
    {                                                                            \
        typedef GA_NAME(v_##SUF) V;                                              \
        typedef GA_NAME(vu_##SUF) VU;                                            \
        enum { L = GA_NAME(L_##SUF), NR = GA_NAME(NR_##SUF) };                   \
        V acc[MR][NV];                                                           \
        _Pragma("GCC unroll 16") for (int i = 0; i < R; i++)                     \
            _Pragma("GCC unroll 4") for (int v = 0; v < NX; v++)                 \
                acc[i][v] = (V){0};                                              \
        for (int64_t p = 0; p < kc; p++, a += MR, b += ldb) {                    \
            V bv[NV];                                                            \
            _Pragma("GCC unroll 4") for (int v = 0; v < NX; v++)                 \
                bv[v] = (V) * (const VU *)(b + v * L);                           \
            _Pragma("GCC unroll 16") for (int i = 0; i < R; i++)                 \
                _Pragma("GCC unroll 4") for (int v = 0; v < NX; v++)             \
                    acc[i][v] += a[i] * bv[v];                                   \
        }                                                                        \
        if (accumulate)                                                          \
            _Pragma("GCC unroll 16") for (int i = 0; i < R; i++)                 \
                _Pragma("GCC unroll 4") for (int v = 0; v < NX; v++)             \
                    if (i < mr)                                                  \
                        acc[i][v] = (V) * (const VU *)(c + i * ldc + v * L) + acc[i][v]; \
        if (ep && ep->bias) {                                                    \
            const T *bias = (const T *)ep->bias + row0;                          \
            _Pragma("GCC unroll 16") for (int i = 0; i < R; i++)                 \
                _Pragma("GCC unroll 4") for (int v = 0; v < NX; v++)             \
                    if (i < mr)                                                  \
                        acc[i][v] += bias[i];                                    \
        }                                                                        \
        if (ep && ep->res) {                                                     \
            const T *res = (const T *)ep->res + row0 * ep->ldr + col0;           \
            _Pragma("GCC unroll 16") for (int i = 0; i < R; i++)                 \
                _Pragma("GCC unroll 4") for (int v = 0; v < NX; v++)             \
                    if (i < mr)                                                  \
                        acc[i][v] += (V) * (const VU *)(res + i * ep->ldr + v * L); \
        }                                                                        \
        if (ep && ep->act >= 1 && ep->act <= 3) {                                \
            const T lo = (T)ep->lo, hi = (T)ep->hi;                              \
            switch (ep->act) {                                                   \
            case 1: GEP_ACT_ALL(SUF, 1); break;                                  \
            case 2: GEP_ACT_ALL(SUF, 2); break;                                  \
            default: GEP_ACT_ALL(SUF, 3); break;                                 \
            }                                                                    \
        }                                                                        \
        _Pragma("GCC unroll 16") for (int i = 0; i < R; i++)                     \
            _Pragma("GCC unroll 4") for (int v = 0; v < NX; v++)                 \
                if (i < mr)                                                      \
                    *(VU *)(c + i * ldc + v * L) = acc[i][v];                    \
    }                                                                            \
                                                                                 \
    /* the tile kernel for `rows` rows (even counts up to MR) and nx vectors, \
     * B a packed panel (the stride a constant) or read in place (ldb) */      \
    static void GEP_NAME(tile_rows_##SUF)(int64_t kc, const T *a, const T *b, T *c, \
                                          int64_t ldc, int64_t rows, int nx,     \
                                          bool accumulate, const tg__gemm_ep *ep, \
                                          int64_t row0, int64_t col0)             \
    {                                                                            \
        _Static_assert(MR % 2 == 0 && MR <= 16, "row kernels are even, up to 16"); \
        enum { NR = GA_NAME(NR_##SUF) };                                         \
        GEP_ROWS_SWITCH(SUF, MR, NV, NR);                                        \
    }                                                                            \
    static void GEP_NAME(tile_rows_in_place_##SUF)(                              \
        int64_t kc, const T *a, const T *b, int64_t ldb, T *c, int64_t ldc,      \
        int64_t rows, int nx, bool accumulate, const tg__gemm_ep *ep, int64_t row0, \
        int64_t col0)                                                            \
    {                                                                            \
        GEP_ROWS_SWITCH(SUF, MR, NV, ldb);                                       \
    }                                                                            \
                                                                                 \
    /* the epilogue of column j of C's rows row0 + [0, n) (n <= L), whose    \
     * products are the lanes of x: the same operations as the tile's, lane \
     * by lane, so the same bits */                                          \
    static inline void GEP_NAME(col_store_##SUF)(GA_NAME(v_##SUF) x, T *c,       \
                                                 int64_t ldc, int64_t row0,      \
                                                 int64_t n, int64_t j,           \
                                                 bool accumulate,                \
                                                 const tg__gemm_ep *ep)          \
    {                                                                            \
        typedef GA_NAME(v_##SUF) V;                                              \
        V old = {0}, bias = {0}, res = {0};                                      \
        for (int64_t i = 0; i < n; i++) {                                        \
            old[i] = accumulate ? c[(row0 + i) * ldc + j] : 0;                   \
            if (ep && ep->bias)                                                  \
                bias[i] = ((const T *)ep->bias)[row0 + i];                       \
            if (ep && ep->res)                                                   \
                res[i] = ((const T *)ep->res)[(row0 + i) * ep->ldr + j];         \
        }                                                                        \
        if (accumulate)                                                          \
            x = old + x;                                                         \
        if (ep) {                                                                \
            if (ep->bias)                                                        \
                x += bias;                                                       \
            if (ep->res)                                                         \
                x += res;                                                        \
            x = GEP_NAME(act_##SUF)(ep->act, x, (T)ep->lo, (T)ep->hi);           \
        }                                                                        \
        for (int64_t i = 0; i < n; i++)                                          \
            c[(row0 + i) * ldc + j] = x[i];                                      \
    }                                                                            \
                                                                                 \
    /* column j of C for NP row panels from ir (the last one may be partial:  \
     * rows up to mc), vectors along the rows: a column left over after the \
     * whole vectors of columns (7 x 7 planes: 49 = 3 x 16 + 1) costs a      \
     * matrix-vector product, not a vector of mostly unused lanes per row */ \
    static inline __attribute__((always_inline)) void GEP_NAME(col_##SUF)(       \
        int64_t mc, int64_t ir, const int NP, int64_t kc, const T *a,            \
        const T *bcol, int64_t ldb, T *c, int64_t ldc, int64_t j, bool accumulate, \
        const tg__gemm_ep *ep)                                                   \
    {                                                                            \
        typedef GA_NAME(v_##SUF) V;                                              \
        typedef GA_NAME(vu_##SUF) VU;                                            \
        enum { L = GA_NAME(L_##SUF),                                             \
               NVA = (MR + GA_NAME(L_##SUF) - 1) / GA_NAME(L_##SUF),             \
               LAST = MR - (NVA - 1) * GA_NAME(L_##SUF) };                       \
        V acc[GEP_PANELS][NVA];                                                  \
        _Pragma("GCC unroll 8") for (int g = 0; g < NP; g++)                     \
            _Pragma("GCC unroll 4") for (int v = 0; v < NVA; v++)                \
                acc[g][v] = (V){0};                                              \
        for (int64_t p = 0; p < kc; p++) {                                       \
            const T bv = bcol[p * ldb];                                          \
            _Pragma("GCC unroll 8") for (int g = 0; g < NP; g++)                 \
                _Pragma("GCC unroll 4") for (int v = 0; v < NVA; v++) {          \
                    const T *ap = a + (ir + g * MR) * kc + p * MR + v * L;       \
                    V av = v < NVA - 1 || LAST == L ? (V) * (const VU *)ap       \
                                                    : GEP_NAME(load_part_##SUF)(ap, LAST); \
                    acc[g][v] += av * bv;                                        \
                }                                                                \
        }                                                                        \
        _Pragma("GCC unroll 8") for (int g = 0; g < NP; g++)                     \
            _Pragma("GCC unroll 4") for (int v = 0; v < NVA; v++) {              \
                int64_t row0 = ir + g * MR + v * L, lanes = v < NVA - 1 ? L : LAST; \
                if (row0 + lanes > mc)                                           \
                    lanes = mc - row0;                                           \
                if (lanes > 0)                                                   \
                    GEP_NAME(col_store_##SUF)(acc[g][v], c, ldc, row0, lanes, j, \
                                              accumulate, ep);                   \
            }                                                                    \
    }                                                                            \
                                                                                 \
    /* columns [j0, j0 + nt) of C (nt < L), a column at a time; B packed     \
     * (ldb 0) or read in place (ldb its row stride) */                        \
    static void GEP_NAME(cols_##SUF)(int64_t mc, int64_t j0, int64_t nt,         \
                                     int64_t kc, const T *a, const T *b,         \
                                     int64_t ldb, T *c, int64_t ldc,             \
                                     bool accumulate, const tg__gemm_ep *ep)     \
    {                                                                            \
        enum { NR = GA_NAME(NR_##SUF) };                                         \
        int64_t panels = (mc + MR - 1) / MR, stride = ldb ? ldb : NR;            \
        for (int64_t t = 0; t < nt; t++) {                                       \
            int64_t j = j0 + t;                                                  \
            const T *bcol = ldb ? b + j : b + j / NR * NR * kc + j % NR;         \
            for (int64_t q = 0; q < panels; q += GEP_PANELS) {                   \
                int64_t np = panels - q < GEP_PANELS ? panels - q : GEP_PANELS;  \
                switch (np) { /* np independent chains: the FMA's latency */     \
                GEP_COL_CASE(SUF, MR, 1) GEP_COL_CASE(SUF, MR, 2) GEP_COL_CASE(SUF, MR, 3)   \
                GEP_COL_CASE(SUF, MR, 4) GEP_COL_CASE(SUF, MR, 5) GEP_COL_CASE(SUF, MR, 6)   \
                GEP_COL_CASE(SUF, MR, 7) default: GEP_COL_CASE(SUF, MR, 8)               \
                }                                                                \
            }                                                                    \
        }                                                                        \
    }                                                                            \
                                                                                 \
    /* whole vectors of columns by tiles, the columns left over (fewer than  \
     * a vector) one by one with vectors along the rows */                   \
    static void GEP_NAME(macro_##SUF)(int64_t mc, int64_t nc, int64_t kc,        \
                                      const void *pa, const void *pb, void *c,   \
                                      int64_t ldc, bool accumulate,              \
                                      const tg__gemm_ep *ep)                     \
    {                                                                            \
        enum { L = GA_NAME(L_##SUF), NR = GA_NAME(NR_##SUF) };                   \
        const T *a = pa, *b = pb;                                                \
        T *cc = c;                                                               \
        int64_t whole = nc / L * L;                                              \
        if (kc * nc * (int64_t)sizeof(T) <= GEP_B_ROWS_OUTER) {                  \
            for (int64_t ir = 0; ir < mc; ir += MR)                              \
                for (int64_t jr = 0; jr < whole; jr += NR)                       \
                    GEP_NAME(tile_rows_##SUF)(kc, a + ir * kc, b + jr * kc,      \
                                              cc + ir * ldc + jr, ldc,           \
                                              mc - ir < MR ? mc - ir : MR,       \
                                              (int)((whole - jr < NR ? whole - jr : NR) / L), \
                                              accumulate, ep, ir, jr);           \
        } else {                                                                 \
            for (int64_t jr = 0; jr < whole; jr += NR)                           \
                for (int64_t ir = 0; ir < mc; ir += MR)                          \
                    GEP_NAME(tile_rows_##SUF)(kc, a + ir * kc, b + jr * kc,      \
                                              cc + ir * ldc + jr, ldc,           \
                                              mc - ir < MR ? mc - ir : MR,       \
                                              (int)((whole - jr < NR ? whole - jr : NR) / L), \
                                              accumulate, ep, ir, jr);           \
        }                                                                        \
        if (whole < nc)                                                          \
            GEP_NAME(cols_##SUF)(mc, whole, nc - whole, kc, a, b, 0, cc, ldc,    \
                                 accumulate, ep);                                \
    }                                                                            \
                                                                                 \
    /* macro_ep with B (kc x nc) read where it is, row p at b + p * ldb: for  \
     * products whose C has few rows (the pointwise convolution's small      \
     * channel counts), where packing B cost as much as the multiply-adds;   \
     * the tiles in macro_ep's order */                                      \
    static void GEP_NAME(macro_in_place_##SUF)(int64_t mc, int64_t nc, int64_t kc, \
                                               const void *pa, const void *pb,   \
                                               int64_t ldb, void *c, int64_t ldc, \
                                               bool accumulate, const tg__gemm_ep *ep) \
    {                                                                            \
        enum { L = GA_NAME(L_##SUF), NR = GA_NAME(NR_##SUF) };                   \
        const T *a = pa, *b = pb;                                                \
        T *cc = c;                                                               \
        int64_t whole = nc / L * L;                                              \
        bool rows_outer = kc * nc * (int64_t)sizeof(T) <= GEP_B_ROWS_OUTER;      \
        int64_t n_ir = (mc + MR - 1) / MR, n_jr = (whole + NR - 1) / NR;         \
        for (int64_t t = 0; t < n_ir * n_jr; t++) {                              \
            int64_t ir = (rows_outer ? t / n_jr : t % n_ir) * MR;                \
            int64_t jr = (rows_outer ? t % n_jr : t / n_ir) * NR;                \
            GEP_NAME(tile_rows_in_place_##SUF)(                                  \
                kc, a + ir * kc, b + jr, ldb, cc + ir * ldc + jr, ldc,           \
                mc - ir < MR ? mc - ir : MR,                                     \
                (int)((whole - jr < NR ? whole - jr : NR) / L), accumulate, ep, ir, jr); \
        }                                                                        \
        if (whole < nc)                                                          \
            GEP_NAME(cols_##SUF)(mc, whole, nc - whole, kc, a, b, ldb, cc, ldc,  \
                                 accumulate, ep);                                \
    }

#define GEP_COL_CASE(SUF, MR, NP)                                                  \
    case NP:                                                                     \
        GEP_NAME(col_##SUF)(mc, q * MR, NP, kc, a, bcol, stride, c, ldc, j, accumulate, ep); \
        break;

/* the activation (a constant) over the tile's accumulators */
#define GEP_ACT_ALL(SUF, ACT)                                                    \
    _Pragma("GCC unroll 16") for (int i = 0; i < R; i++)                         \
        _Pragma("GCC unroll 4") for (int v = 0; v < NX; v++)                     \
            acc[i][v] = GEP_NAME(act_##SUF)(ACT, acc[i][v], lo, hi)

/* the tile kernel of `rows` rounded up to even (at most MR) and nx vectors,
 * B's rows LDB apart */
#define GEP_ROWS_SWITCH(SUF, MR, NV, LDB)                                        \
    int64_t r = rows >= MR ? MR : (rows + 1) / 2 * 2;                            \
    switch (r * 2 + (nx > 1)) {                                                  \
    GEP_CASE(SUF, MR, NV, 2, LDB) GEP_CASE(SUF, MR, NV, 4, LDB)                  \
    GEP_CASE(SUF, MR, NV, 6, LDB) GEP_CASE(SUF, MR, NV, 8, LDB)                  \
    GEP_CASE(SUF, MR, NV, 10, LDB) GEP_CASE(SUF, MR, NV, 12, LDB)                \
    GEP_CASE(SUF, MR, NV, 14, LDB) GEP_CASE(SUF, MR, NV, 16, LDB)                \
    default: break;                                                              \
    }

/* rows R (when the build's MR has them) by one vector or NV */
#define GEP_CASE(SUF, MR, NV, R, LDB)                                            \
    case (R) * 2:                                                                \
        if ((R) <= (MR))                                                         \
            GEP_NAME(tile_##SUF)(kc, a, b, LDB, c, ldc, (R) <= (MR) ? (R) : (MR), 1, rows, \
                                 accumulate, ep, row0, col0);                    \
        break;                                                                   \
    case (R) * 2 + 1:                                                            \
        if ((R) <= (MR))                                                         \
            GEP_NAME(tile_##SUF)(kc, a, b, LDB, c, ldc, (R) <= (MR) ? (R) : (MR), NV, rows, \
                                 accumulate, ep, row0, col0);                    \
        break;

GEP_TEMPLATE(float, f32, int32_t, ps, __mmask16, MR_F32, NV_F32)
GEP_TEMPLATE(double, f64, int64_t, pd, __mmask8, MR_F64, NV_F64)
