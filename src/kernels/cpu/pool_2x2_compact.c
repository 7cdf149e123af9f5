/* 2 x 2, stride 2 max pooling with one-byte argmax offsets (the window's
 * element 0..3, row-major: what max_pool2d_compact stores, ops/
 * pool_compact.c) and its gradient, in 8-lane vectors (GCC vector
 * extensions, any instruction set), rows run on across planes. The same
 * choices as pool_2x2.c (NaN wins, ties keep the first element in window
 * order), so offsets and values match max_pool2d's. Rows shorter than a
 * vector take a vector each: rows whose reads stay in the buffers read
 * past their end, and what they write past it (the next row's outputs or
 * input gradients) the next row overwrites; the last rows go scalar. */
#include "kernels/cpu/pool.h"

typedef uint8_t u8x8 __attribute__((vector_size(8)));
typedef uint8_t u8x8u __attribute__((vector_size(8), aligned(1), may_alias));
/* a where mask, else b (vectors of type V, masks of type M) */
#define SEL(M, V, mask, a, b) ((V)(((M)(a) & (mask)) | ((M)(b) & ~(mask))))

#define POOL2X2C(T, SUF, IT)                                                    \
    typedef T SUF##v8 __attribute__((vector_size(8 * sizeof(T))));              \
    typedef T SUF##v8u __attribute__((vector_size(8 * sizeof(T)),               \
                                      aligned(sizeof(T)), may_alias));          \
    typedef IT SUF##m8 __attribute__((vector_size(8 * sizeof(T))));             \
                                                                                \
    /* the maxima of 8 windows from rows r0, r1 and their offsets 0..3 */     \
    static inline void SUF##win8(const T *r0, const T *r1, T *y, uint8_t *off) \
    {                                                                           \
        typedef SUF##v8 V;                                                      \
        typedef SUF##m8 M;                                                      \
        const M even = {0, 2, 4, 6, 8, 10, 12, 14}, odd = even + 1;            \
        V a0 = *(const SUF##v8u *)r0, a1 = *(const SUF##v8u *)(r0 + 8);         \
        V c0 = *(const SUF##v8u *)r1, c1 = *(const SUF##v8u *)(r1 + 8);         \
        V p = __builtin_shuffle(a0, a1, even), q = __builtin_shuffle(a0, a1, odd); \
        V u = __builtin_shuffle(c0, c1, even), v = __builtin_shuffle(c0, c1, odd); \
        M t = (q > p) | (q != q);                                               \
        V m = SEL(M, V, t, q, p);                                               \
        M k = t & 1;                                                            \
        t = (u > m) | (u != u);                                                 \
        m = SEL(M, V, t, u, m);                                                 \
        k = (t & 2) | (~t & k);                                                 \
        t = (v > m) | (v != v);                                                 \
        m = SEL(M, V, t, v, m);                                                 \
        k = (t & 3) | (~t & k);                                                 \
        *(SUF##v8u *)y = m;                                                     \
        *(u8x8u *)off = __builtin_convertvector(k, u8x8);                       \
    }                                                                           \
                                                                                \
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
        for (int64_t k = 0; k < rows; k++) {                                    \
            const T *r0 = x + 2 * k * W, *r1 = r0 + W;                          \
            T *yk = y + k * OW;                                                 \
            uint8_t *ok = off + k * OW;                                         \
            if (OW >= 8) {                                                      \
                for (int64_t j = 0; j < OW; j += 8) {                           \
                    int64_t at = j + 8 <= OW ? j : OW - 8; /* tail: overlap */  \
                    SUF##win8(r0 + 2 * at, r1 + 2 * at, yk + at, ok + at);      \
                }                                                               \
            } else if ((2 * k + 1) * W + 16 <= x_n && k * OW + 8 <= rows * OW) { \
                SUF##win8(r0, r1, yk, ok);                                      \
            } else {                                                            \
                for (int64_t j = 0; j < OW; j++)                                \
                    SUF##win1(r0 + 2 * j, r1 + 2 * j, yk + j, ok + j);          \
            }                                                                   \
        }                                                                       \
    }                                                                           \
                                                                                \
    void tg__maxpool2x2c_planes_##SUF(const T *x, int64_t planes, int64_t H,      \
                                      int64_t W, int64_t OH, int64_t OW, T *y,  \
                                      uint8_t *off)                             \
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
    /* the gradient of 8 windows into d0, d1 (16 elements each); false when   \
     * an offset of the first n lanes is above 3 */                           \
    static inline bool SUF##grad8(const T *dy, const uint8_t *off, int64_t n,   \
                                  T *d0, T *d1)                                 \
    {                                                                           \
        typedef SUF##v8 V;                                                      \
        typedef SUF##m8 M;                                                      \
        const M lo = {0, 8, 1, 9, 2, 10, 3, 11}, hi = lo + 4;                   \
        const M lane = {0, 1, 2, 3, 4, 5, 6, 7};                                \
        M o = __builtin_convertvector(*(const u8x8u *)off, M);                  \
        M bad = (o > 3) & (lane < (IT)n);                                       \
        IT any = 0;                                                             \
        for (int l = 0; l < 8; l++)                                             \
            any |= bad[l];                                                      \
        if (any)                                                                \
            return false;                                                       \
        V g = *(const SUF##v8u *)dy, z = {0};                                   \
        V p = SEL(M, V, o == 0, g, z), q = SEL(M, V, o == 1, g, z);              \
        V u = SEL(M, V, o == 2, g, z), v = SEL(M, V, o == 3, g, z);              \
        *(SUF##v8u *)d0 = __builtin_shuffle(p, q, lo);                          \
        *(SUF##v8u *)(d0 + 8) = __builtin_shuffle(p, q, hi);                    \
        *(SUF##v8u *)d1 = __builtin_shuffle(u, v, lo);                          \
        *(SUF##v8u *)(d1 + 8) = __builtin_shuffle(u, v, hi);                    \
        return true;                                                            \
    }                                                                           \
                                                                                \
    bool tg__maxpool2x2c_grad_planes_##SUF(const T *dy, const uint8_t *off,     \
                                           int64_t planes, int64_t OH,          \
                                           int64_t OW, T *dx)                   \
    {                                                                           \
        const int64_t W = 2 * OW, rows = planes * OH;                           \
        for (int64_t k = 0; k < rows; k++) {                                    \
            T *d0 = dx + 2 * k * W;                                             \
            int64_t o = k * OW;                                                 \
            if (OW >= 8) {                                                      \
                for (int64_t j = 0; j < OW; j += 8) {                           \
                    int64_t at = j + 8 <= OW ? j : OW - 8; /* tail: overlap */  \
                    if (!SUF##grad8(dy + o + at, off + o + at, 8, d0 + 2 * at,  \
                                    d0 + W + 2 * at))                           \
                        return false;                                           \
                }                                                               \
            } else if (o + 8 <= rows * OW && (2 * k + 1) * W + 16 <= 2 * rows * W) { \
                if (!SUF##grad8(dy + o, off + o, OW, d0, d0 + W))               \
                    return false;                                               \
            } else {                                                            \
                for (int64_t j = 0; j < OW; j++) { /* scalar */                 \
                    int k4 = off[o + j];                                        \
                    if (k4 > 3)                                                 \
                        return false;                                           \
                    T g = dy[o + j];                                            \
                    d0[2 * j] = k4 == 0 ? g : (T)0;                             \
                    d0[2 * j + 1] = k4 == 1 ? g : (T)0;                         \
                    d0[W + 2 * j] = k4 == 2 ? g : (T)0;                         \
                    d0[W + 2 * j + 1] = k4 == 3 ? g : (T)0;                     \
                }                                                               \
            }                                                                   \
        }                                                                       \
        return true;                                                            \
    }

POOL2X2C(float, f32, int32_t)
POOL2X2C(double, f64, int64_t)
