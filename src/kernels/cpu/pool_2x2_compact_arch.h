/* 2 x 2, stride 2 max pooling with one-byte argmax offsets (the window's
 * element 0..3, row-major: what max_pool2d_compact stores, ops/
 * pool_compact.c) and its gradient, in vectors of a cache line (16 floats
 * or 8 doubles; 8 floats for rows under 12; GCC vector extensions, any
 * instruction set), rows run on
 * across planes. The same choices as pool_2x2.c (NaN wins, ties keep the
 * first element in window order), so offsets and values match
 * max_pool2d's. Rows shorter than a vector take a vector each: rows whose
 * reads stay in the buffers read past their end, and what they write past
 * it (the next rows' outputs or input gradients) the next rows overwrite;
 * the last rows go scalar.
 * Included once per instruction set (pool_2x2_compact_avx512.c, ...,
 * compiled with its flags: CMakeLists.txt), which define TG_ARCH; the entry
 * points get its name as suffix and pool_2x2_compact.c picks one at run
 * time. */
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/pool.h"
#include "kernels/cpu/shuffle.h"

#include <string.h>

/* a where mask, else b (vectors of type V, masks of type M) */
#define SEL(M, V, mask, a, b) ((V)(((M)(a) & (mask)) | ((M)(b) & ~(mask))))

/* any offset of the first n of LN bytes at off above 3 (LN 2, 4, 8 or a
 * multiple of 8; only those LN bytes are read): the bytes in words, their
 * top six bits */
static inline bool any_above3(const uint8_t *off, int64_t n, int LN)
{
    uint64_t bad = 0;
    int word = LN < 8 ? LN : 8;
    for (int i = 0; i < LN / word; i++) {
        uint64_t w = 0;
        memcpy(&w, off + word * i, (size_t)word); /* little-endian: byte j at bits 8j */
        int64_t valid = n - word * i;
        uint64_t keep = valid >= 8 ? ~(uint64_t)0 : valid <= 0 ? 0 : ((uint64_t)1 << (8 * valid)) - 1;
        bad |= w & keep & 0xfcfcfcfcfcfcfcfcull;
    }
    return bad != 0;
}

/* any of the n offsets at off above 3 (a row's, checked once for all its
 * groups): 8 bytes at a time, the last word overlapping the one before */
static inline bool row_above3(const uint8_t *off, int64_t n)
{
    uint64_t bad = 0, w;
    uint32_t h;
    if (n >= 8) {
        for (int64_t i = 0; i + 8 <= n; i += 8) {
            memcpy(&w, off + i, 8);
            bad |= w;
        }
        memcpy(&w, off + n - 8, 8);
        bad |= w;
    } else if (n >= 4) {
        memcpy(&h, off, 4);
        bad |= h;
        memcpy(&h, off + n - 4, 4);
        bad |= h;
    } else {
        for (int64_t i = 0; i < n; i++)
            bad |= off[i];
    }
    return (bad & 0xfcfcfcfcfcfcfcfcull) != 0;
}

/* vectors of LN lanes (a cache line: 16 floats or 8 doubles); EVEN / ODD pick
 * a row's window columns out of two vectors, LO / HI interleave two
 * vectors' halves back */
#define POOL2X2C_VEC(T, SUF, IT, LN, EVEN, LO)                                \
    typedef T SUF##v __attribute__((vector_size(LN * sizeof(T))));              \
    typedef T SUF##vu __attribute__((vector_size(LN * sizeof(T)), aligned(sizeof(T)), \
                                     may_alias));                               \
    typedef IT SUF##m __attribute__((vector_size(LN * sizeof(T))));             \
    typedef uint8_t SUF##b __attribute__((vector_size(LN)));                    \
    typedef uint8_t SUF##bu __attribute__((vector_size(LN), aligned(1), may_alias)); \
                                                                                \
    /* the maxima of LN windows from rows r0, r1 and their offsets 0..3 */    \
    static inline void SUF##win(const T *r0, const T *r1, T *y, uint8_t *off)  \
    {                                                                           \
        typedef SUF##v V;                                                       \
        typedef SUF##m M;                                                       \
        const M even = EVEN, odd = even + 1;                                    \
        V a0 = *(const SUF##vu *)r0, a1 = *(const SUF##vu *)(r0 + LN);          \
        V c0 = *(const SUF##vu *)r1, c1 = *(const SUF##vu *)(r1 + LN);          \
        V p = TG_SHUFFLE2(a0, a1, even), q = TG_SHUFFLE2(a0, a1, odd); \
        V u = TG_SHUFFLE2(c0, c1, even), v = TG_SHUFFLE2(c0, c1, odd); \
        M t = (q > p) | (q != q);                                               \
        V m = SEL(M, V, t, q, p);                                               \
        M k = t & 1;                                                            \
        t = (u > m) | (u != u);                                                 \
        m = SEL(M, V, t, u, m);                                                 \
        k = (t & 2) | (~t & k);                                                 \
        t = (v > m) | (v != v);                                                 \
        m = SEL(M, V, t, v, m);                                                 \
        k = (t & 3) | (~t & k);                                                 \
        *(SUF##vu *)y = m;                                                      \
        *(SUF##bu *)off = __builtin_convertvector(k, SUF##b);                   \
    }                                                                           \
                                                                                \
    /* the gradient of LN windows into d0, d1 (2 LN elements each); false    \
     * when an offset of the first n lanes is above 3 */                      \
    static inline bool SUF##grad(const T *dy, const uint8_t *off, int64_t n,    \
                                 T *d0, T *d1)                                  \
    {                                                                           \
        typedef SUF##v V;                                                       \
        typedef SUF##m M;                                                       \
        const M lo = LO, hi = lo + LN / 2;                                      \
        if (any_above3(off, n, LN))                                             \
            return false;                                                       \
        M o = __builtin_convertvector(*(const SUF##bu *)off, M);                \
        V g = *(const SUF##vu *)dy, z = {0};                                    \
        V p = SEL(M, V, o == 0, g, z), q = SEL(M, V, o == 1, g, z);              \
        V u = SEL(M, V, o == 2, g, z), v = SEL(M, V, o == 3, g, z);              \
        *(SUF##vu *)d0 = TG_SHUFFLE2(p, q, lo);                           \
        *(SUF##vu *)(d0 + LN) = TG_SHUFFLE2(p, q, hi);                    \
        *(SUF##vu *)d1 = TG_SHUFFLE2(u, v, lo);                           \
        *(SUF##vu *)(d1 + LN) = TG_SHUFFLE2(u, v, hi);                    \
        return true;                                                            \
    }

/* the row and plane loops over groups of LN windows: SUF##win (maxima and
 * offsets of LN windows) and SUF##grad (their gradient) come first */
#define POOL2X2C_DRIVERS(T, SUF, LN)                                             \
    static inline void SUF##win1(const T *r0, const T *r1, T *y, uint8_t *off) \
    {                                                                           \
        T m = r0[0];                                                            \
        uint8_t k = 0;                                                          \
        const T c[3] = {r0[1], r1[0], r1[1]};                                   \
        for (int i = 0; i < 3; i++)                                             \
            if (c[i] > m || c[i] != c[i]) {                                     \
                m = c[i];                                                       \
                k = (uint8_t)(i + 1);                                           \
            }                                                                   \
        *y = m;                                                                 \
        *off = k;                                                               \
    }                                                                           \
                                                                                \
    /* rows [0, rows) of outputs, row k from the input rows at x + 2 k W     \
     * (x_n elements readable from x) */                                       \
    static void SUF##rows(const T *x, int64_t x_n, int64_t W, int64_t OW,        \
                          int64_t rows, T *y, uint8_t *off)                     \
    {                                                                           \
        int64_t k = 0;                                                          \
        if (OW < LN) { /* the rows that fit, a group each, in a tight loop */    \
            const int64_t fit = tg__pool2x2_rows_fit(x_n, W, OW, rows, LN);           \
            const T *r0 = x;                                                    \
            for (; k < fit; k++, r0 += 2 * W)                                   \
                SUF##win(r0, r0 + W, y + k * OW, off + k * OW);                 \
        }                                                                       \
        for (; k < rows; k++) {                                                 \
            const T *r0 = x + 2 * k * W, *r1 = r0 + W;                          \
            T *yk = y + k * OW;                                                 \
            uint8_t *ok = off + k * OW;                                         \
            if (OW >= LN) { /* groups, the last one again where it overlaps */  \
                for (int64_t j = 0; j + LN < OW; j += LN)                       \
                    SUF##win(r0 + 2 * j, r1 + 2 * j, yk + j, ok + j);           \
                SUF##win(r0 + 2 * (OW - LN), r1 + 2 * (OW - LN), yk + OW - LN,  \
                         ok + OW - LN);                                         \
            } else if ((2 * k + 1) * W + 2 * LN <= x_n && k * OW + LN <= rows * OW) { \
                SUF##win(r0, r1, yk, ok);                                       \
            } else {                                                            \
                for (int64_t j = 0; j < OW; j++)                                \
                    SUF##win1(r0 + 2 * j, r1 + 2 * j, yk + j, ok + j);          \
            }                                                                   \
        }                                                                       \
    }                                                                           \
                                                                                \
    static void SUF##planes(const T *x, int64_t planes, int64_t H, int64_t W,    \
                            int64_t OH, int64_t OW, T *y, uint8_t *off)         \
    {                                                                           \
        if (H == 2 * OH) { /* the planes are one run of row pairs */           \
            SUF##rows(x, planes * H * W, W, OW, planes * OH, y, off);            \
            return;                                                             \
        }                                                                       \
        for (int64_t p = 0; p < planes; p++)                                    \
            SUF##rows(x + p * H * W, H * W, W, OW, OH, y + p * OH * OW,          \
                      off + p * OH * OW);                                       \
    }                                                                           \
                                                                                \
    /* rows of LN outputs or more: groups, the last one again where it      \
     * overlaps, each row's offsets checked once (SUF##grad's n 0: none) */  \
    static bool SUF##grad_long(const T *dy, const uint8_t *off, int64_t rows,   \
                               int64_t OW, T *dx)                               \
    {                                                                           \
        const int64_t W = 2 * OW;                                               \
        for (int64_t k = 0; k < rows; k++) {                                    \
            T *d0 = dx + 2 * k * W;                                             \
            int64_t o = k * OW;                                                 \
            if (row_above3(off + o, OW))                                        \
                return false;                                                   \
            for (int64_t j = 0; j + LN < OW; j += LN)                           \
                SUF##grad(dy + o + j, off + o + j, 0, d0 + 2 * j, d0 + W + 2 * j); \
            int64_t at = OW - LN;                                               \
            SUF##grad(dy + o + at, off + o + at, 0, d0 + 2 * at, d0 + W + 2 * at); \
        }                                                                       \
        return true;                                                            \
    }                                                                           \
                                                                                \
    static bool SUF##grad_planes(const T *dy, const uint8_t *off, int64_t planes, \
                                 int64_t OH, int64_t OW, T *dx)                 \
    {                                                                           \
        const int64_t W = 2 * OW, rows = planes * OH;                           \
        if (OW >= LN)                                                           \
            return SUF##grad_long(dy, off, rows, OW, dx);                       \
        /* shorter rows: those that fit a group each in a tight loop */         \
        const int64_t fit = tg__pool2x2_rows_fit(2 * rows * W, W, OW, rows, LN); \
        int64_t k = 0;                                                          \
        for (T *d0 = dx; k < fit; k++, d0 += 2 * W)                             \
            if (!SUF##grad(dy + k * OW, off + k * OW, OW, d0, d0 + W))          \
                return false;                                                   \
        for (; k < rows; k++) { /* the rest window by window */                 \
            T *d0 = dx + 2 * k * W;                                             \
            int64_t o = k * OW;                                                 \
            for (int64_t j = 0; j < OW; j++) {                                  \
                int k4 = off[o + j];                                            \
                if (k4 > 3)                                                     \
                    return false;                                               \
                T g = dy[o + j];                                                \
                d0[2 * j] = k4 == 0 ? g : (T)0;                                 \
                d0[2 * j + 1] = k4 == 1 ? g : (T)0;                             \
                d0[W + 2 * j] = k4 == 2 ? g : (T)0;                             \
                d0[W + 2 * j + 1] = k4 == 3 ? g : (T)0;                         \
            }                                                                   \
        }                                                                       \
        return true;                                                            \
    }

#define EVEN16 {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}
#define LO16 {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23}
#define EVEN8 {0, 2, 4, 6, 8, 10, 12, 14}
#define LO8 {0, 8, 1, 9, 2, 10, 3, 11}
#define EVEN4 {0, 2, 4, 6}
#define LO4 {0, 4, 1, 5}
#define EVEN2 {0, 2}
#define LO2 {0, 2}

#if defined(__x86_64__) && defined(__SSE4_1__)
/* x86: float32 groups in intrinsics (pool_2x2_x86.h): 16 windows with
 * AVX-512 for rows of 12 outputs or more, else the register's width (8
 * with AVX2, 4 without); float64 groups of a register in vector extensions
 * (8 doubles with AVX-512, 4 with AVX2, 2 without) */
#include "kernels/cpu/pool_2x2_x86.h"

static inline void f32xwin(const float *r0, const float *r1, float *y, uint8_t *off)
{
    x86_store_bytes(x86_max_f32(r0, r1, y), off);
}

/* false when an offset of the first n lanes is above 3 */
static inline bool f32xgrad(const float *dy, const uint8_t *off, int64_t n, float *d0, float *d1)
{
    if (any_above3(off, n, X86_LN))
        return false;
    x86_scatter_f32(dy, x86_load_bytes(off), d0, d1);
    return true;
}
POOL2X2C_DRIVERS(float, f32x, X86_LN)
#if X86_LN == 8 && !defined(__AVX512F__)
/* AVX2, rows of 4 to 7 outputs (LeNet's 5) as one run of windows: each
 * group of 8 takes the next 8 outputs whatever rows they lie in, so every
 * lane is used (a group per row used 5 of 8). A half group (4 windows: 8
 * floats of each input row) crosses a row boundary at most once: its
 * vectors are two loads, one per row, blended. The groups' layout repeats
 * with the column of their first window (the phase), computed once per
 * call. Rows of pairs 2 W apart (one plane, or planes of exactly 2 OH
 * rows); the last outputs window by window. The same comparisons per
 * window as the row code (x86_max_vf), so the same values and offsets */
typedef struct flat_phase {
    int64_t at[2][2];  /* per half group, its loads' offsets from the group's first row */
    __m256 second[2];  /* per half group, the lanes taken from its second load */
    int64_t reach;     /* floats read from the group's first row, at most */
    int64_t rows;      /* rows from this group's first row to the next group's */
    int next;          /* the next group's phase */
} flat_phase;

static void flat_phases(int64_t W, int64_t OW, flat_phase *ph)
{
    for (int p = 0; p < OW; p++) {
        ph[p].reach = 0;
        for (int h = 0; h < 2; h++) {
            int w0 = 4 * h, s = 0;
            int64_t r0 = (p + w0) / OW, j0 = (p + w0) % OW;
            for (int w = w0 + 1; w < w0 + 4 && !s; w++)
                s = (p + w) % OW == 0 ? w : 0;
            ph[p].at[h][0] = 2 * r0 * W + 2 * j0;
            ph[p].at[h][1] = s ? 2 * ((p + s) / OW) * W - 2 * (s - w0) : ph[p].at[h][0];
            float lanes[8];
            for (int i = 0; i < 8; i++)
                lanes[i] = s && i >= 2 * (s - w0) ? -1.0f : 0.0f; /* the sign bit selects */
            ph[p].second[h] = _mm256_loadu_ps(lanes);
            for (int i = 0; i < 2; i++)
                if (ph[p].at[h][i] + W + 8 > ph[p].reach)
                    ph[p].reach = ph[p].at[h][i] + W + 8;
        }
        ph[p].rows = (p + 8) / OW;
        ph[p].next = (int)((p + 8) % OW);
    }
}

static void f32xflat_rows(const float *x, int64_t x_n, int64_t W, int64_t OW, int64_t rows,
                          float *y, uint8_t *off)
{
    flat_phase ph[8];
    flat_phases(W, OW, ph);
    const int64_t n = rows * OW;
    int64_t o = 0, row = 0;
    int p = 0;
    for (; o + 8 <= n && 2 * row * W + ph[p].reach <= x_n; o += 8) {
        const flat_phase *f = &ph[p];
        const float *r = x + 2 * row * W;
        __m256 a0 = _mm256_blendv_ps(_mm256_loadu_ps(r + f->at[0][0]),
                                     _mm256_loadu_ps(r + f->at[0][1]), f->second[0]);
        __m256 a1 = _mm256_blendv_ps(_mm256_loadu_ps(r + f->at[1][0]),
                                     _mm256_loadu_ps(r + f->at[1][1]), f->second[1]);
        __m256 c0 = _mm256_blendv_ps(_mm256_loadu_ps(r + W + f->at[0][0]),
                                     _mm256_loadu_ps(r + W + f->at[0][1]), f->second[0]);
        __m256 c1 = _mm256_blendv_ps(_mm256_loadu_ps(r + W + f->at[1][0]),
                                     _mm256_loadu_ps(r + W + f->at[1][1]), f->second[1]);
        x86_store_bytes(x86_max_vf(a0, a1, c0, c1, y + o), off + o);
        row += f->rows;
        p = f->next;
    }
    for (; o < n; o++) {
        const float *r0 = x + 2 * (o / OW) * W + 2 * (o % OW);
        f32xwin1(r0, r0 + W, y + o, off + o);
    }
}

static void f32flat_planes(const float *x, int64_t planes, int64_t H, int64_t W, int64_t OH,
                           int64_t OW, float *y, uint8_t *off)
{
    if (H == 2 * OH) { /* the planes are one run of row pairs */
        f32xflat_rows(x, planes * H * W, W, OW, planes * OH, y, off);
        return;
    }
    for (int64_t p = 0; p < planes; p++)
        f32xflat_rows(x + p * H * W, H * W, W, OW, OH, y + p * OH * OW, off + p * OH * OW);
}
#define FLAT_ROWS(OW) ((OW) >= 4 && (OW) < 8)
#else
#define f32flat_planes f32xplanes
#define FLAT_ROWS(OW) false
#endif
#if defined(__AVX512F__)
static inline void f32zwin(const float *r0, const float *r1, float *y, uint8_t *off)
{
    x512_win_f32(r0, r1, y, off);
}

static inline bool f32zgrad(const float *dy, const uint8_t *off, int64_t n, float *d0, float *d1)
{
    if (any_above3(off, n, 16))
        return false;
    x512_scatter_f32(dy, off, d0, d1);
    return true;
}
POOL2X2C_DRIVERS(float, f32z, 16)
#define WIDE_ROWS 12 /* outputs per row from which 16 windows a group pay */
#define PAIR_ROWS 8  /* outputs per row up to which two rows share a register */

/* rows of PAIR_ROWS outputs or fewer two at a time in one register
 * (x512_win2_f32, x512_scatter2_f32); an odd row left, and rows where 16
 * values would be read or written past the planes given, take f32x's
 * rows */
static void f32pair_rows(const float *x, int64_t x_n, int64_t W, int64_t OW, int64_t rows,
                         float *y, uint8_t *off)
{
    const __m512i pack = x512_pack2(OW);
    int64_t k = 0;
    for (; k + 2 <= rows && (2 * k + 3) * W + 16 <= x_n && k * OW + 16 <= rows * OW; k += 2)
        x512_win2_f32(x + 2 * k * W, W, pack, y + k * OW, off + k * OW);
    f32xrows(x + 2 * k * W, x_n - 2 * k * W, W, OW, rows - k, y + k * OW, off + k * OW);
}

static void f32pair_planes(const float *x, int64_t planes, int64_t H, int64_t W, int64_t OH,
                           int64_t OW, float *y, uint8_t *off)
{
    if (H == 2 * OH) { /* the planes are one run of row pairs */
        f32pair_rows(x, planes * H * W, W, OW, planes * OH, y, off);
        return;
    }
    for (int64_t p = 0; p < planes; p++)
        f32pair_rows(x + p * H * W, H * W, W, OW, OH, y + p * OH * OW, off + p * OH * OW);
}

static bool f32pair_grad_planes(const float *dy, const uint8_t *off, int64_t planes, int64_t OH,
                                int64_t OW, float *dx)
{
    const int64_t W = 2 * OW, rows = planes * OH;
    const __m512i spread = x512_spread2(OW);
    int64_t k = 0;
    for (; k + 2 <= rows && k * OW + 16 <= rows * OW && (2 * k + 3) * W + 16 <= 2 * rows * W;
         k += 2) {
        if (any_above3(off + k * OW, 2 * OW, 16))
            return false;
        x512_scatter2_f32(dy + k * OW, off + k * OW, spread, W, dx + 2 * k * W);
    }
    /* the rest as one plane of rows - k rows (only rows count here) */
    return f32xgrad_planes(dy + k * OW, off + k * OW, 1, rows - k, OW, dx + 2 * k * W);
}
POOL2X2C_VEC(double, f64, int64_t, 8, EVEN8, LO8)
POOL2X2C_DRIVERS(double, f64, 8)
#else
#define f32zplanes f32xplanes
#define f32zgrad_planes f32xgrad_planes
#define f32pair_planes f32xplanes
#define f32pair_grad_planes f32xgrad_planes
#define WIDE_ROWS 0
#define PAIR_ROWS 0
#if defined(__AVX__)
POOL2X2C_VEC(double, f64, int64_t, 4, EVEN4, LO4)
POOL2X2C_DRIVERS(double, f64, 4)
#else
POOL2X2C_VEC(double, f64, int64_t, 2, EVEN2, LO2)
POOL2X2C_DRIVERS(double, f64, 2)
#endif
#endif

void TG_ARCH_FN(tg__maxpool2x2c_planes_f32)(const float *x, int64_t planes, int64_t H, int64_t W,
                                int64_t OH, int64_t OW, float *y, uint8_t *off)
{
    if (FLAT_ROWS(OW))
        f32flat_planes(x, planes, H, W, OH, OW, y, off);
    else if (OW >= WIDE_ROWS)
        f32zplanes(x, planes, H, W, OH, OW, y, off);
    else if (OW <= PAIR_ROWS)
        f32pair_planes(x, planes, H, W, OH, OW, y, off);
    else
        f32xplanes(x, planes, H, W, OH, OW, y, off);
}

bool TG_ARCH_FN(tg__maxpool2x2c_grad_planes_f32)(const float *dy, const uint8_t *off, int64_t planes,
                                     int64_t OH, int64_t OW, float *dx)
{
    return OW >= WIDE_ROWS   ? f32zgrad_planes(dy, off, planes, OH, OW, dx)
           : OW <= PAIR_ROWS ? f32pair_grad_planes(dy, off, planes, OH, OW, dx)
                             : f32xgrad_planes(dy, off, planes, OH, OW, dx);
}
#else
/* targets without the x86 code: a cache line per vector */
POOL2X2C_VEC(float, f32w, int32_t, 16, EVEN16, LO16)
POOL2X2C_DRIVERS(float, f32w, 16)
POOL2X2C_VEC(float, f32n, int32_t, 8, EVEN8, LO8)
POOL2X2C_DRIVERS(float, f32n, 8)
POOL2X2C_VEC(double, f64, int64_t, 8, EVEN8, LO8)
POOL2X2C_DRIVERS(double, f64, 8)

/* floats: a cache line of 16 for rows of 12 outputs or more, half of one
 * for shorter rows (a row per vector: 16 lanes would mostly be waste) */
void TG_ARCH_FN(tg__maxpool2x2c_planes_f32)(const float *x, int64_t planes, int64_t H, int64_t W,
                                int64_t OH, int64_t OW, float *y, uint8_t *off)
{
    if (OW >= 12)
        f32wplanes(x, planes, H, W, OH, OW, y, off);
    else
        f32nplanes(x, planes, H, W, OH, OW, y, off);
}

bool TG_ARCH_FN(tg__maxpool2x2c_grad_planes_f32)(const float *dy, const uint8_t *off, int64_t planes,
                                     int64_t OH, int64_t OW, float *dx)
{
    return OW >= 12 ? f32wgrad_planes(dy, off, planes, OH, OW, dx)
                    : f32ngrad_planes(dy, off, planes, OH, OW, dx);
}
#endif

void TG_ARCH_FN(tg__maxpool2x2c_planes_f64)(const double *x, int64_t planes, int64_t H, int64_t W,
                                int64_t OH, int64_t OW, double *y, uint8_t *off)
{
    f64planes(x, planes, H, W, OH, OW, y, off);
}

bool TG_ARCH_FN(tg__maxpool2x2c_grad_planes_f64)(const double *dy, const uint8_t *off, int64_t planes,
                                     int64_t OH, int64_t OW, double *dx)
{
    return f64grad_planes(dy, off, planes, OH, OW, dx);
}
