/* 2 x 2, stride 2 max pooling (LeNet's) a row at a time, in groups of
 * windows: the forward with its argmax indices, and the gradient written
 * window by window (every input element once: no zeroing pass, no
 * scattered adds) when each index lies in its window. Semantics as the
 * general loops of pool.c: ties keep the first element in row-major window
 * order, NaN wins. Vectors of 8 in GCC vector extensions (any instruction
 * set; what AVX-512 runs, and float64 everywhere) or, for float32 on AVX2
 * and the x86 baseline, groups of the register's width in intrinsics
 * (pool_2x2_x86.h: 8 or 4; the 64-byte vectors of the portable code
 * compile lane by lane there).
 * Included once per instruction set (pool_2x2_avx512.c, pool_2x2_avx2.c,
 * pool_2x2_generic.c, each compiled with its flags: CMakeLists.txt), which
 * define TG_ARCH; the entry points get its name as suffix and pool_2x2.c
 * picks one at run time. */
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/pool.h"
#include "kernels/cpu/shuffle.h"

#include <string.h>

typedef int64_t l8 __attribute__((vector_size(64)));
/* a where mask, else b (vectors of type V, masks of type M); a macro: a
 * function returning a vector would change ABI with the instruction set */
#define SEL(M, V, mask, a, b) ((V)(((M)(a) & (mask)) | ((M)(b) & ~(mask))))
typedef int64_t l8u __attribute__((vector_size(64), aligned(8), may_alias));
typedef uint64_t u8 __attribute__((vector_size(64)));

/* the lanes of an l8 or-ed into lane 0, in halves: one test for any lane
 * (not a branch per lane) */
static const l8 HALF4 = {4, 5, 6, 7, 0, 1, 2, 3}, HALF2 = {2, 3, 0, 1, 2, 3, 0, 1},
                HALF1 = {1, 0, 1, 0, 1, 0, 1, 0};

#define POOL2X2(T, SUF, IT)                                                     \
    typedef T SUF##v8 __attribute__((vector_size(8 * sizeof(T))));              \
    typedef T SUF##v8u __attribute__((vector_size(8 * sizeof(T)),               \
                                      aligned(sizeof(T)), may_alias));          \
    typedef IT SUF##m8 __attribute__((vector_size(8 * sizeof(T))));             \
                                                                                \
    /* 8 outputs at row offset j of input rows r0, r1 */                       \
    static inline void SUF##max8(const T *r0, const T *r1, int64_t W, int64_t b, \
                                 SUF##v8 *y, l8 *idx)                           \
    {                                                                           \
        typedef SUF##v8 V;                                                      \
        typedef SUF##m8 M;                                                      \
        const M even = {0, 2, 4, 6, 8, 10, 12, 14}, odd = even + 1;            \
        const l8 lane2 = {0, 2, 4, 6, 8, 10, 12, 14};                           \
        V a0 = *(const SUF##v8u *)r0, a1 = *(const SUF##v8u *)(r0 + 8);         \
        V c0 = *(const SUF##v8u *)r1, c1 = *(const SUF##v8u *)(r1 + 8);         \
        V p = TG_SHUFFLE2(a0, a1, even), q = TG_SHUFFLE2(a0, a1, odd); \
        V u = TG_SHUFFLE2(c0, c1, even), v = TG_SHUFFLE2(c0, c1, odd); \
        V m = p;                                                                \
        M off = {0}, t;                                                         \
        t = (q > m) | (q != q);                                                 \
        m = SEL(SUF##m8, SUF##v8, t, q, m);                                     \
        off = (t & 1) | (~t & off);                                             \
        t = (u > m) | (u != u);                                                 \
        m = SEL(SUF##m8, SUF##v8, t, u, m);                                     \
        off = (t & (IT)W) | (~t & off);                                         \
        t = (v > m) | (v != v);                                                 \
        m = SEL(SUF##m8, SUF##v8, t, v, m);                                     \
        off = (t & (IT)(W + 1)) | (~t & off);                                   \
        *y = m;                                                                 \
        *idx = b + lane2 + __builtin_convertvector(off, l8);                    \
    }                                                                           \
                                                                                \
    void TG_ARCH_FN(tg__maxpool2x2_row_##SUF)(const T *r0, const T *r1, int64_t W, int64_t b0, \
                                  int64_t n, T *y, int64_t *idx)                \
    {                                                                           \
        int64_t j = 0;                                                          \
        for (; j + 8 <= n; j += 8) {                                            \
            SUF##v8 m;                                                          \
            l8 ix;                                                              \
            SUF##max8(r0 + 2 * j, r1 + 2 * j, W, b0 + 2 * j, &m, &ix);          \
            *(SUF##v8u *)(y + j) = m;                                           \
            *(l8u *)(idx + j) = ix;                                             \
        }                                                                       \
        if (j == n)                                                             \
            return;                                                             \
        if (n >= 8) { /* the tail: the last 8, again where they overlap */     \
            j = n - 8;                                                          \
            SUF##v8 m;                                                          \
            l8 ix;                                                              \
            SUF##max8(r0 + 2 * j, r1 + 2 * j, W, b0 + 2 * j, &m, &ix);          \
            *(SUF##v8u *)(y + j) = m;                                           \
            *(l8u *)(idx + j) = ix;                                             \
            return;                                                             \
        }                                                                       \
        for (; j < n; j++) { /* short rows: selects, as pool.c's TAKE */        \
            int64_t b = b0 + 2 * j;                                             \
            T p = r0[2 * j], q = r0[2 * j + 1], u = r1[2 * j], v = r1[2 * j + 1]; \
            T m = p;                                                            \
            int64_t mi = b;                                                     \
            bool t = q > m || q != q;                                           \
            m = t ? q : m;                                                      \
            mi = t ? b + 1 : mi;                                                \
            t = u > m || u != u;                                                \
            m = t ? u : m;                                                      \
            mi = t ? b + W : mi;                                                \
            t = v > m || v != v;                                                \
            m = t ? v : m;                                                      \
            mi = t ? b + W + 1 : mi;                                            \
            y[j] = m;                                                           \
            idx[j] = mi;                                                        \
        }                                                                       \
    }                                                                           \
                                                                                \
    /* the gradient of 8 outputs of a row into their windows at d0, d1      \
     * (16 elements each); false when an index is not in its window */      \
    static inline bool SUF##grad8(const T *dy, const int64_t *idx, int64_t W,  \
                                  int64_t b, T *d0, T *d1)                   \
    {                                                                           \
        typedef SUF##v8 V;                                                      \
        typedef SUF##m8 M;                                                      \
        const M lo = {0, 8, 1, 9, 2, 10, 3, 11}, hi = lo + 4;                   \
        const l8 lane2 = {0, 2, 4, 6, 8, 10, 12, 14};                           \
        /* in unsigned lanes: an index far outside (INT64_MIN) must not    \
         * overflow; the difference is then simply not 0, 1, W or W + 1 */  \
        l8 off = (l8)((u8)*(const l8u *)idx - (u8)(b + lane2));                 \
        l8 bad = ~((off == 0) | (off == 1) | (off == W) | (off == W + 1));      \
        bad |= TG_SHUFFLE1(bad, HALF4);                                   \
        bad |= TG_SHUFFLE1(bad, HALF2);                                   \
        bad |= TG_SHUFFLE1(bad, HALF1);                                   \
        if (bad[0])                                                             \
            return false;                                                       \
        M o = __builtin_convertvector(off, M);                                  \
        V g = *(const SUF##v8u *)dy, z = {0};                                   \
        V p = SEL(M, V, o == 0, g, z), q = SEL(M, V, o == 1, g, z);              \
        V u = SEL(M, V, o == (IT)W, g, z);                                       \
        V v = SEL(M, V, o == (IT)(W + 1), g, z);                                 \
        *(SUF##v8u *)d0 = TG_SHUFFLE2(p, q, lo);                          \
        *(SUF##v8u *)(d0 + 8) = TG_SHUFFLE2(p, q, hi);                    \
        *(SUF##v8u *)d1 = TG_SHUFFLE2(u, v, lo);                          \
        *(SUF##v8u *)(d1 + 8) = TG_SHUFFLE2(u, v, hi);                    \
        return true;                                                            \
    }                                                                           \
                                                                                \
    bool TG_ARCH_FN(tg__maxpool2x2_grad_row_##SUF)(const T *dy, const int64_t *idx,         \
                                       int64_t W, int64_t b0, int64_t n, T *d0, \
                                       T *d1)                                   \
    {                                                                           \
        int64_t j = 0;                                                          \
        if (n < 8) /* short rows: zeroing and adding does better */            \
            return false;                                                       \
        for (; j + 8 <= n; j += 8)                                              \
            if (!SUF##grad8(dy + j, idx + j, W, b0 + 2 * j, d0 + 2 * j, d1 + 2 * j)) \
                return false;                                                   \
        if (j < n) /* the tail: the last 8 again */                            \
            return SUF##grad8(dy + n - 8, idx + n - 8, W, b0 + 2 * (n - 8),     \
                              d0 + 2 * (n - 8), d1 + 2 * (n - 8));              \
        return true;                                                            \
    }                                                                           \
                                                                                \
    /* rows [0, rows) of outputs at y, row k from the input rows at        \
     * x + 2 k W (one plane, or planes of exactly 2 OH rows back to back),  \
     * b0 of row k the plane position 2 (k mod OH) W. Rows shorter than a  \
     * vector take a vector each: rows whose reads stay in x read past     \
     * their end, and what they write past it (the next row's outputs) the  \
     * next row overwrites; the last rows go scalar */                      \
    static void SUF##rows(const T *x, int64_t x_n, int64_t W, int64_t OH,        \
                          int64_t OW, int64_t rows, T *y, int64_t *idx)        \
    {                                                                           \
        for (int64_t k = 0, oh = 0; k < rows; k++, oh = oh + 1 == OH ? 0 : oh + 1) { \
            const T *r0 = x + 2 * k * W;                                        \
            int64_t b0 = 2 * oh * W;                                            \
            if (OW < 8 && (2 * k + 1) * W + 16 <= x_n && k * OW + 8 <= rows * OW) { \
                SUF##v8 m;                                                      \
                l8 ix;                                                          \
                SUF##max8(r0, r0 + W, W, b0, &m, &ix);                          \
                *(SUF##v8u *)(y + k * OW) = m;                                  \
                *(l8u *)(idx + k * OW) = ix;                                    \
                continue;                                                       \
            }                                                                   \
            TG_ARCH_FN(tg__maxpool2x2_row_##SUF)(r0, r0 + W, W, b0, OW, y + k * OW, idx + k * OW); \
        }                                                                       \
    }                                                                           \
                                                                                \
    void TG_ARCH_FN(tg__maxpool2x2_planes_##SUF)(const T *x, int64_t planes, int64_t H,       \
                                     int64_t W, int64_t OH, int64_t OW, T *y,   \
                                     int64_t *idx)                              \
    {                                                                           \
        if (H == 2 * OH) { /* the planes are one run of row pairs */           \
            SUF##rows(x, planes * H * W, W, OH, OW, planes * OH, y, idx);        \
            return;                                                             \
        }                                                                       \
        for (int64_t p = 0; p < planes; p++)                                    \
            SUF##rows(x + p * H * W, H * W, W, OH, OW, OH, y + p * OH * OW,      \
                      idx + p * OH * OW);                                       \
    }                                                                           \
                                                                                \
    /* rows shorter than a vector: false (zeroing and scattering the int64 \
     * indices does better there) */                                          \
    bool TG_ARCH_FN(tg__maxpool2x2_grad_planes_##SUF)(const T *dy, const int64_t *idx,      \
                                          int64_t planes, int64_t OH, int64_t OW, \
                                          T *dx)                                \
    {                                                                           \
        const int64_t W = 2 * OW, rows = planes * OH;                           \
        if (OW < 8)                                                             \
            return false;                                                       \
        for (int64_t k = 0, oh = 0; k < rows; k++, oh = oh + 1 == OH ? 0 : oh + 1) \
            if (!TG_ARCH_FN(tg__maxpool2x2_grad_row_##SUF)(dy + k * OW, idx + k * OW, W,    \
                                               2 * oh * W, OW, dx + 2 * k * W,  \
                                               dx + (2 * k + 1) * W))           \
                return false;                                                   \
        return true;                                                            \
    }

/* the row entry points of the vector-extension code, for its own use */
#define POOL2X2_ROW_PROTOS(T, SUF)                                              \
    void TG_ARCH_FN(tg__maxpool2x2_row_##SUF)(const T *r0, const T *r1, int64_t W, int64_t b0, \
                                              int64_t n, T *y, int64_t *idx);   \
    bool TG_ARCH_FN(tg__maxpool2x2_grad_row_##SUF)(const T *dy, const int64_t *idx, int64_t W, \
                                                   int64_t b0, int64_t n, T *d0, T *d1);
POOL2X2_ROW_PROTOS(double, f64)
POOL2X2_ROW_PROTOS(float, f32)

/* rows and planes over groups of LN windows (SUF##group, SUF##grad_group) */
#define POOL2X2_DRIVERS(T, SUF, LN)                                             \
    /* n < LN outputs of a row from input rows r0, r1 (b0: r0[0]'s plane    \
     * position), one window at a time (selects, as pool.c's TAKE); out of \
     * line: inlined, its vectorized copies bloated the row loop around it */ \
    static __attribute__((noinline)) void SUF##row_short(const T *r0, const T *r1, int64_t W, \
                                                         int64_t b0, int64_t n, T *y, \
                                                         int64_t *idx)          \
    {                                                                           \
        for (int64_t j = 0; j < n; j++) {                                       \
            int64_t b = b0 + 2 * j;                                             \
            T p = r0[2 * j], q = r0[2 * j + 1], u = r1[2 * j], v = r1[2 * j + 1]; \
            T m = p;                                                            \
            int64_t mi = b;                                                     \
            bool t = q > m || q != q;                                           \
            m = t ? q : m;                                                      \
            mi = t ? b + 1 : mi;                                                \
            t = u > m || u != u;                                                \
            m = t ? u : m;                                                      \
            mi = t ? b + W : mi;                                                \
            t = v > m || v != v;                                                \
            m = t ? v : m;                                                      \
            mi = t ? b + W + 1 : mi;                                            \
            y[j] = m;                                                           \
            idx[j] = mi;                                                        \
        }                                                                       \
    }                                                                           \
                                                                                \
    /* rows [0, rows) of outputs at y, row k from the input rows at        \
     * x + 2 k W (one plane, or planes of exactly 2 OH rows back to back),  \
     * b0 of row k the plane position 2 ((oh0 + k) mod OH) W. Rows of LN or  \
     * more take groups, the last one again where it overlaps; shorter rows \
     * take a group each where their reads stay in x (what they write past \
     * their end, the next row's outputs, the next row overwrites); the     \
     * last rows go scalar */                                                \
    static void SUF##rows(const T *x, int64_t x_n, int64_t W, int64_t OH,        \
                          int64_t OW, int64_t rows, int64_t oh0, T *y, int64_t *idx) \
    {                                                                           \
        int64_t k = 0, oh = oh0;                                                \
        if (OW < LN) { /* the rows that fit, a group each, in a tight loop */    \
            const int64_t fit = tg__pool2x2_rows_fit(x_n, W, OW, rows, LN);     \
            const T *r0 = x;                                                    \
            for (; k < fit; k++, r0 += 2 * W, oh = oh + 1 == OH ? 0 : oh + 1)   \
                SUF##group(r0, r0 + W, W, 2 * oh * W, y + k * OW, idx + k * OW); \
        }                                                                       \
        for (; k < rows; k++, oh = oh + 1 == OH ? 0 : oh + 1) {                 \
            const T *r0 = x + 2 * k * W, *r1 = r0 + W;                          \
            int64_t b0 = 2 * oh * W;                                            \
            T *yk = y + k * OW;                                                 \
            int64_t *ik = idx + k * OW;                                         \
            if (OW >= LN) {                                                     \
                for (int64_t j = 0; j + LN < OW; j += LN)                       \
                    SUF##group(r0 + 2 * j, r1 + 2 * j, W, b0 + 2 * j, yk + j, ik + j); \
                int64_t j = OW - LN;                                            \
                SUF##group(r0 + 2 * j, r1 + 2 * j, W, b0 + 2 * j, yk + j, ik + j); \
            } else if ((2 * k + 1) * W + 2 * LN <= x_n && k * OW + LN <= rows * OW) { \
                SUF##group(r0, r1, W, b0, yk, ik);                              \
            } else {                                                            \
                SUF##row_short(r0, r1, W, b0, OW, yk, ik);                      \
            }                                                                   \
        }                                                                       \
    }                                                                           \
                                                                                \
    static void SUF##planes(const T *x, int64_t planes, int64_t H, int64_t W,    \
                            int64_t OH, int64_t OW, T *y, int64_t *idx)         \
    {                                                                           \
        if (H == 2 * OH) { /* the planes are one run of row pairs */           \
            SUF##rows(x, planes * H * W, W, OH, OW, planes * OH, 0, y, idx);     \
            return;                                                             \
        }                                                                       \
        for (int64_t p = 0; p < planes; p++)                                    \
            SUF##rows(x + p * H * W, H * W, W, OH, OW, OH, 0, y + p * OH * OW,   \
                      idx + p * OH * OW);                                       \
    }                                                                           \
                                                                                \
    /* rows shorter than 8 (whatever LN): false (zeroing and scattering the \
     * int64 indices does better there, measured at LeNet's 5 x 5 outputs); \
     * rows of LN or more in groups, the last one again where it overlaps */ \
    static bool SUF##grad_planes(const T *dy, const int64_t *idx, int64_t planes, \
                                 int64_t OH, int64_t OW, T *dx)                 \
    {                                                                           \
        const int64_t W = 2 * OW, rows = planes * OH;                           \
        if (OW < 8 || OW < LN)                                                  \
            return false;                                                       \
        for (int64_t k = 0, oh = 0; k < rows; k++, oh = oh + 1 == OH ? 0 : oh + 1) { \
            const T *dk = dy + k * OW;                                          \
            const int64_t *ik = idx + k * OW, b0 = 2 * oh * W;                  \
            T *d0 = dx + 2 * k * W, *d1 = d0 + W;                               \
            for (int64_t j = 0; j + LN < OW; j += LN)                           \
                if (!SUF##grad_group(dk + j, ik + j, W, b0 + 2 * j, d0 + 2 * j, d1 + 2 * j)) \
                    return false;                                               \
            int64_t j = OW - LN;                                                \
            if (!SUF##grad_group(dk + j, ik + j, W, b0 + 2 * j, d0 + 2 * j, d1 + 2 * j)) \
                return false;                                                   \
        }                                                                       \
        return true;                                                            \
    }

/* the entry points of pool.h for type T, run by the SUF functions */
#define POOL2X2_ENTRIES(T, NAME, SUF)                                           \
    void TG_ARCH_FN(tg__maxpool2x2_planes_##NAME)(const T *x, int64_t planes, int64_t H, \
                                                  int64_t W, int64_t OH, int64_t OW, T *y, \
                                                  int64_t *idx)                 \
    {                                                                           \
        SUF##planes(x, planes, H, W, OH, OW, y, idx);                           \
    }                                                                           \
    bool TG_ARCH_FN(tg__maxpool2x2_grad_planes_##NAME)(const T *dy, const int64_t *idx, \
                                                       int64_t planes, int64_t OH, \
                                                       int64_t OW, T *dx)       \
    {                                                                           \
        return SUF##grad_planes(dy, idx, planes, OH, OW, dx);                   \
    }

#if defined(__x86_64__) && defined(__SSE4_1__)
/* float32 on x86, AVX-512 included (groups of 8 in ymm registers there:
 * measured faster than the vector-extension code's 8 lanes, which convert
 * offsets to int64 lane by lane): pool_2x2_x86.h's int64 group kernels
 * (W < 2^30: pool.c hands wider planes to the general loops) */
#include "kernels/cpu/pool_2x2_x86.h"

POOL2X2(double, f64, int64_t)

static inline void f32xgroup(const float *r0, const float *r1, int64_t W, int64_t b, float *y,
                             int64_t *idx)
{
    x86_max_idx_f32(r0, r1, b, (int32_t)W, y, idx);
}

static inline bool f32xgrad_group(const float *dy, const int64_t *idx, int64_t W, int64_t b,
                                  float *d0, float *d1)
{
    return x86_grad_idx_f32(dy, idx, b, (int32_t)W, (1 << X86_LN) - 1, d0, d1);
}
POOL2X2_DRIVERS(float, f32x, X86_LN)

#if X86_LN == 8
/* the gradient of rows shorter than a group (OW < 8: LeNet's 5), a group
 * each in a tight loop where its reads and writes stay inside the planes
 * given (what it writes past its row, the next rows overwrite), the rows
 * left window by window; false when an index is outside its window. At
 * the baseline (groups of 4) zeroing and scattering is faster. Out of line:
 * inlined, it changed the code of the entry's long rows (1% more
 * instructions at 14 outputs) */
static __attribute__((noinline)) bool f32xgrad_short(const float *dy, const int64_t *idx,
                                                     int64_t planes, int64_t OH, int64_t OW,
                                                     float *dx)
{
    const int64_t W = 2 * OW, rows = planes * OH;
    const int need = x86_window_bits(OW);
    const int64_t fit = tg__pool2x2_rows_fit(2 * rows * W, W, OW, rows, X86_LN);
    int64_t k = 0, oh = 0;
    float *d0 = dx;
    for (; k < fit; k++, d0 += 2 * W, oh = oh + 1 == OH ? 0 : oh + 1)
        if (!x86_grad_idx_f32(dy + k * OW, idx + k * OW, 2 * oh * W, (int32_t)W, need, d0,
                              d0 + W))
            return false;
    for (; k < rows; k++, d0 += 2 * W, oh = oh + 1 == OH ? 0 : oh + 1)
        for (int64_t j = 0; j < OW; j++) {
            /* wrapping, not overflowing, for indices far outside */
            int64_t o = (int64_t)((uint64_t)idx[k * OW + j] - (uint64_t)(2 * oh * W + 2 * j));
            if (o != 0 && o != 1 && o != W && o != W + 1)
                return false;
            float g = dy[k * OW + j];
            d0[2 * j] = o == 0 ? g : 0.0f;
            d0[2 * j + 1] = o == 1 ? g : 0.0f;
            d0[W + 2 * j] = o == W ? g : 0.0f;
            d0[W + 2 * j + 1] = o == W + 1 ? g : 0.0f;
        }
    return true;
}
#endif
#if defined(__AVX512F__)
/* AVX-512: rows of 12 outputs or more in groups of 16 windows (a group
 * each for rows under 16, where it fits), rows of 8 or fewer two at a
 * time in one register (x512_max2_idx_f32), rows between and those left
 * over by f32x's groups of 8 */
static void f32zrows(const float *x, int64_t x_n, int64_t W, int64_t OH, int64_t OW, int64_t rows,
                     float *y, int64_t *idx)
{
    for (int64_t k = 0, oh = 0; k < rows; k++, oh = oh + 1 == OH ? 0 : oh + 1) {
        const float *r0 = x + 2 * k * W, *r1 = r0 + W;
        int64_t b0 = 2 * oh * W, *ik = idx + k * OW;
        float *yk = y + k * OW;
        if (OW >= 16) {
            for (int64_t j = 0; j + 16 < OW; j += 16)
                x512_max_idx_f32(r0 + 2 * j, r1 + 2 * j, b0 + 2 * j, (int32_t)W, yk + j, ik + j);
            int64_t j = OW - 16;
            x512_max_idx_f32(r0 + 2 * j, r1 + 2 * j, b0 + 2 * j, (int32_t)W, yk + j, ik + j);
        } else if ((2 * k + 1) * W + 32 <= x_n && k * OW + 16 <= rows * OW) {
            x512_max_idx_f32(r0, r1, b0, (int32_t)W, yk, ik);
        } else {
            f32xrows(r0, x_n - 2 * k * W, W, OH, OW, 1, oh, yk, ik);
        }
    }
}

static void f32pair_rows(const float *x, int64_t x_n, int64_t W, int64_t OH, int64_t OW,
                         int64_t rows, float *y, int64_t *idx)
{
    const __m512i pack = x512_pack2(OW);
    __m512i step_lo, step_hi;
    __mmask8 second_lo, second_hi;
    x512_steps2(OW, &step_lo, &step_hi, &second_lo, &second_hi);
    int64_t k = 0, oh = 0;
    for (; k + 2 <= rows && (2 * k + 3) * W + 16 <= x_n && k * OW + 16 <= rows * OW; k += 2) {
        int64_t oh1 = oh + 1 == OH ? 0 : oh + 1;
        x512_max2_idx_f32(x + 2 * k * W, W, pack, 2 * oh * W, 2 * oh1 * W, step_lo, step_hi,
                          second_lo, second_hi, y + k * OW, idx + k * OW);
        oh = oh1 + 1 == OH ? 0 : oh1 + 1;
    }
    f32xrows(x + 2 * k * W, x_n - 2 * k * W, W, OH, OW, rows - k, oh, y + k * OW, idx + k * OW);
}

static void f32zplanes(const float *x, int64_t planes, int64_t H, int64_t W, int64_t OH,
                       int64_t OW, float *y, int64_t *idx)
{
    void (*rows)(const float *, int64_t, int64_t, int64_t, int64_t, int64_t, float *, int64_t *) =
        OW >= 12 ? f32zrows : f32pair_rows;
    if (H == 2 * OH) { /* the planes are one run of row pairs */
        rows(x, planes * H * W, W, OH, OW, planes * OH, y, idx);
        return;
    }
    for (int64_t p = 0; p < planes; p++)
        rows(x + p * H * W, H * W, W, OH, OW, OH, y + p * OH * OW, idx + p * OH * OW);
}

void TG_ARCH_FN(tg__maxpool2x2_planes_f32)(const float *x, int64_t planes, int64_t H, int64_t W,
                                           int64_t OH, int64_t OW, float *y, int64_t *idx)
{
    if (OW >= 12 || OW <= 8)
        f32zplanes(x, planes, H, W, OH, OW, y, idx);
    else
        f32xplanes(x, planes, H, W, OH, OW, y, idx);
}

bool TG_ARCH_FN(tg__maxpool2x2_grad_planes_f32)(const float *dy, const int64_t *idx,
                                                int64_t planes, int64_t OH, int64_t OW, float *dx)
{
    return OW < 8 ? f32xgrad_short(dy, idx, planes, OH, OW, dx)
                  : f32xgrad_planes(dy, idx, planes, OH, OW, dx);
}
#elif X86_LN == 8
void TG_ARCH_FN(tg__maxpool2x2_planes_f32)(const float *x, int64_t planes, int64_t H, int64_t W,
                                           int64_t OH, int64_t OW, float *y, int64_t *idx)
{
    f32xplanes(x, planes, H, W, OH, OW, y, idx);
}

bool TG_ARCH_FN(tg__maxpool2x2_grad_planes_f32)(const float *dy, const int64_t *idx,
                                                int64_t planes, int64_t OH, int64_t OW, float *dx)
{
    return OW < 8 ? f32xgrad_short(dy, idx, planes, OH, OW, dx)
                  : f32xgrad_planes(dy, idx, planes, OH, OW, dx);
}
#else
POOL2X2_ENTRIES(float, f32, f32x)
#endif

/* 2 x 2 average pooling of float32 and its gradient over planes in groups
 * of X86_LN windows (x86_avg_f32, x86_avg_grad_f32), rows run on across
 * planes tiled by their windows; rows shorter than a group take a group
 * each where the reads and writes stay inside the planes given (what a row
 * writes past its end, the next rows overwrite), the last ones scalar */
static __attribute__((noinline)) void avg_row_short(const float *r0, const float *r1, int64_t n,
                                                    float *y)
{
    for (int64_t j = 0; j < n; j++)
        y[j] = (r0[2 * j] + r0[2 * j + 1] + r1[2 * j] + r1[2 * j + 1]) * 0.25f;
}

static void avg_rows(const float *x, int64_t x_n, int64_t W, int64_t OW, int64_t rows, float *y)
{
    for (int64_t k = 0; k < rows; k++) {
        const float *r0 = x + 2 * k * W, *r1 = r0 + W;
        float *yk = y + k * OW;
        if (OW >= X86_LN) {
            for (int64_t j = 0; j + X86_LN < OW; j += X86_LN)
                x86_avg_f32(r0 + 2 * j, r1 + 2 * j, yk + j);
            x86_avg_f32(r0 + 2 * (OW - X86_LN), r1 + 2 * (OW - X86_LN), yk + OW - X86_LN);
        } else if ((2 * k + 1) * W + 2 * X86_LN <= x_n && k * OW + X86_LN <= rows * OW) {
            x86_avg_f32(r0, r1, yk);
        } else {
            avg_row_short(r0, r1, OW, yk);
        }
    }
}

void TG_ARCH_FN(tg__avgpool2x2_planes_f32)(const float *x, int64_t planes, int64_t H, int64_t W,
                                           int64_t OH, int64_t OW, float *y)
{
    if (H == 2 * OH) { /* the planes are one run of row pairs */
        avg_rows(x, planes * H * W, W, OW, planes * OH, y);
        return;
    }
    for (int64_t p = 0; p < planes; p++)
        avg_rows(x + p * H * W, H * W, W, OW, OH, y + p * OH * OW);
}

static __attribute__((noinline)) void avg_grad_row_short(const float *dy, int64_t n, float *d0,
                                                         float *d1)
{
    for (int64_t j = 0; j < n; j++) {
        float v = 0.0f + dy[j] / 4.0f;
        d0[2 * j] = d0[2 * j + 1] = d1[2 * j] = d1[2 * j + 1] = v;
    }
}

void TG_ARCH_FN(tg__avgpool2x2_grad_planes_f32)(const float *dy, int64_t planes, int64_t OH,
                                                int64_t OW, float *dx)
{
    const int64_t W = 2 * OW, rows = planes * OH;
    for (int64_t k = 0; k < rows; k++) {
        const float *dk = dy + k * OW;
        float *d0 = dx + 2 * k * W, *d1 = d0 + W;
        if (OW >= X86_LN) {
            for (int64_t j = 0; j + X86_LN < OW; j += X86_LN)
                x86_avg_grad_f32(dk + j, d0 + 2 * j, d1 + 2 * j);
            int64_t j = OW - X86_LN;
            x86_avg_grad_f32(dk + j, d0 + 2 * j, d1 + 2 * j);
        } else if (k * OW + X86_LN <= rows * OW && (2 * k + 1) * W + 2 * X86_LN <= 2 * rows * W) {
            x86_avg_grad_f32(dk, d0, d1); /* d0's overflow into d1, d1's into the next row */
        } else {
            avg_grad_row_short(dk, OW, d0, d1);
        }
    }
}
#else
POOL2X2(float, f32, int32_t)
POOL2X2(double, f64, int64_t)

/* targets without the x86 groups: the plain loops of pool.c */
void TG_ARCH_FN(tg__avgpool2x2_planes_f32)(const float *x, int64_t planes, int64_t H, int64_t W,
                                           int64_t OH, int64_t OW, float *y)
{
    for (int64_t p = 0; p < planes; p++)
        for (int64_t oh = 0; oh < OH; oh++) {
            const float *r0 = x + p * H * W + 2 * oh * W, *r1 = r0 + W;
            float *yr = y + (p * OH + oh) * OW;
            for (int64_t ow = 0; ow < OW; ow++)
                yr[ow] = (r0[2 * ow] + r0[2 * ow + 1] + r1[2 * ow] + r1[2 * ow + 1]) * 0.25f;
        }
}

void TG_ARCH_FN(tg__avgpool2x2_grad_planes_f32)(const float *dy, int64_t planes, int64_t OH,
                                                int64_t OW, float *dx)
{
    const int64_t W = 2 * OW;
    for (int64_t k = 0; k < planes * OH; k++)
        for (int64_t ow = 0; ow < OW; ow++) {
            float v = 0.0f + dy[k * OW + ow] / 4.0f;
            float *d0 = dx + 2 * k * W + 2 * ow;
            d0[0] = d0[1] = d0[W] = d0[W + 1] = v;
        }
}
#endif
