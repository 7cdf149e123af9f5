/* 2 x 2, stride 2 max pooling (LeNet's) a row at a time, in 8-lane
 * vectors (GCC vector extensions, any instruction set): the forward with
 * its argmax indices, and the gradient written window by window (every
 * input element once: no zeroing pass, no scattered adds) when each index
 * lies in its window. Semantics as the general loops of pool.c: ties keep
 * the first element in row-major window order, NaN wins. */
#include "kernels/cpu/pool.h"

#include <string.h>

typedef int64_t l8 __attribute__((vector_size(64)));
/* a where mask, else b (vectors of type V, masks of type M); a macro: a
 * function returning a vector would change ABI with the instruction set */
#define SEL(M, V, mask, a, b) ((V)(((M)(a) & (mask)) | ((M)(b) & ~(mask))))
typedef int64_t l8u __attribute__((vector_size(64), aligned(8), may_alias));

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
        V p = __builtin_shuffle(a0, a1, even), q = __builtin_shuffle(a0, a1, odd); \
        V u = __builtin_shuffle(c0, c1, even), v = __builtin_shuffle(c0, c1, odd); \
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
    void tg__maxpool2x2_row_##SUF(const T *r0, const T *r1, int64_t W, int64_t b0, \
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
    bool tg__maxpool2x2_grad_row_##SUF(const T *dy, const int64_t *idx,         \
                                       int64_t W, int64_t b0, int64_t n, T *d0, \
                                       T *d1)                                   \
    {                                                                           \
        typedef SUF##v8 V;                                                      \
        typedef SUF##m8 M;                                                      \
        const M lo = {0, 8, 1, 9, 2, 10, 3, 11}, hi = lo + 4;                   \
        const l8 lane2 = {0, 2, 4, 6, 8, 10, 12, 14};                           \
        int64_t j = 0;                                                          \
        if (n < 8) /* short rows: zeroing and adding does better */            \
            return false;                                                       \
        for (; j + 8 <= n; j += 8) {                                            \
            l8 off = *(const l8u *)(idx + j) - (b0 + 2 * j) - lane2;            \
            l8 ok = (off == 0) | (off == 1) | (off == W) | (off == W + 1);      \
            for (int l = 0; l < 8; l++)                                         \
                if (!ok[l])                                                     \
                    return false;                                               \
            M o = __builtin_convertvector(off, M);                              \
            V g = *(const SUF##v8u *)(dy + j), z = {0};                         \
            V p = SEL(M, V, o == 0, g, z), q = SEL(M, V, o == 1, g, z);          \
            V u = SEL(M, V, o == (IT)W, g, z);                                   \
            V v = SEL(M, V, o == (IT)(W + 1), g, z);                             \
            *(SUF##v8u *)(d0 + 2 * j) = __builtin_shuffle(p, q, lo);            \
            *(SUF##v8u *)(d0 + 2 * j + 8) = __builtin_shuffle(p, q, hi);        \
            *(SUF##v8u *)(d1 + 2 * j) = __builtin_shuffle(u, v, lo);            \
            *(SUF##v8u *)(d1 + 2 * j + 8) = __builtin_shuffle(u, v, hi);        \
        }                                                                       \
        if (j < n) /* the tail: the last 8 again */                            \
            return tg__maxpool2x2_grad_row_##SUF(dy + n - 8, idx + n - 8, W,    \
                                                 b0 + 2 * (n - 8), 8,           \
                                                 d0 + 2 * (n - 8), d1 + 2 * (n - 8)); \
        return true;                                                            \
    }

POOL2X2(float, f32, int32_t)
POOL2X2(double, f64, int64_t)
