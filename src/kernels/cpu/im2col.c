/* im2col and col2im, one template for float32 and float64. Each output
 * row (a kernel tap of one channel) is filled row of output by row: the
 * taps that fall inside the input form one contiguous range of ox, copied
 * (memcpy at stride 1), with zeros on either side. */
#include "kernels/cpu/im2col.h"

#include <string.h>

/* the ox whose input column ox * s + x0 lies in [0, w): [*lo, *hi) */
static void valid_range(int64_t x0, int64_t s, int64_t w, int64_t ow,
                        int64_t *lo, int64_t *hi)
{
    int64_t a = x0 >= 0 ? 0 : (-x0 + s - 1) / s;
    int64_t b = w - x0 > 0 ? (w - x0 + s - 1) / s : 0;
    *lo = a < ow ? a : ow;
    *hi = b < ow ? b : ow;
    if (*hi < *lo)
        *hi = *lo;
}

#define IM2COL(T, SUF)                                                        \
    void tg__im2col_##SUF(const T *x, int64_t c, const tg__conv_geom *g,      \
                          T *col)                                             \
    {                                                                         \
        const int64_t ohw = g->oh * g->ow;                                    \
        for (int64_t ch = 0; ch < c; ch++)                                    \
            for (int64_t i = 0; i < g->kh; i++)                               \
                for (int64_t j = 0; j < g->kw; j++) {                         \
                    T *row = col + ((ch * g->kh + i) * g->kw + j) * ohw;      \
                    int64_t x0 = j * g->dw - g->pw, lo, hi;                   \
                    valid_range(x0, g->sw, g->w, g->ow, &lo, &hi);            \
                    for (int64_t oy = 0; oy < g->oh; oy++) {                  \
                        T *d = row + oy * g->ow;                              \
                        int64_t iy = oy * g->sh - g->ph + i * g->dh;          \
                        if (iy < 0 || iy >= g->h) {                           \
                            memset(d, 0, (size_t)g->ow * sizeof(T));          \
                            continue;                                         \
                        }                                                     \
                        for (int64_t ox = 0; ox < lo; ox++)                   \
                            d[ox] = 0;                                        \
                        if (lo < hi) {                                        \
                            /* input column of ox = lo, never before x */    \
                            const T *s = x + (ch * g->h + iy) * g->w + x0 +   \
                                         lo * g->sw;                          \
                            if (g->sw == 1)                                   \
                                memcpy(d + lo, s, (size_t)(hi - lo) * sizeof(T)); \
                            else                                              \
                                for (int64_t ox = lo; ox < hi; ox++)          \
                                    d[ox] = s[(ox - lo) * g->sw];             \
                        }                                                     \
                        for (int64_t ox = hi; ox < g->ow; ox++)               \
                            d[ox] = 0;                                        \
                    }                                                         \
                }                                                             \
    }                                                                         \
                                                                              \
    void tg__col2im_##SUF(const T *col, int64_t c, const tg__conv_geom *g,    \
                          T *x)                                               \
    {                                                                         \
        const int64_t ohw = g->oh * g->ow;                                    \
        for (int64_t ch = 0; ch < c; ch++)                                    \
            for (int64_t i = 0; i < g->kh; i++)                               \
                for (int64_t j = 0; j < g->kw; j++) {                         \
                    const T *row = col + ((ch * g->kh + i) * g->kw + j) * ohw; \
                    int64_t x0 = j * g->dw - g->pw, lo, hi;                   \
                    valid_range(x0, g->sw, g->w, g->ow, &lo, &hi);            \
                    for (int64_t oy = 0; oy < g->oh; oy++) {                  \
                        int64_t iy = oy * g->sh - g->ph + i * g->dh;          \
                        if (iy < 0 || iy >= g->h)                             \
                            continue;                                         \
                        if (lo >= hi)                                         \
                            continue;                                         \
                        const T *s = row + oy * g->ow;                        \
                        T *d = x + (ch * g->h + iy) * g->w + x0 + lo * g->sw; \
                        if (g->sw == 1)                                       \
                            for (int64_t ox = lo; ox < hi; ox++)              \
                                d[ox - lo] += s[ox];                          \
                        else                                                  \
                            for (int64_t ox = lo; ox < hi; ox++)              \
                                d[(ox - lo) * g->sw] += s[ox];                \
                    }                                                         \
                }                                                             \
    }

IM2COL(float, f32)
IM2COL(double, f64)
