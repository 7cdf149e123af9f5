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

/* the oy whose input row oy * sh - ph + i * dh lies in [0, h): [*lo, *hi) */
static void valid_rows(const tg__conv_geom *g, int64_t i, int64_t *lo, int64_t *hi)
{
    valid_range(i * g->dh - g->ph, g->sh, g->h, g->oh, lo, hi);
}

#define CHUNK 8 /* measured best of 4/8/16 on the LeNet shapes */
/* d += s over n elements; restrict and a fixed-length inner loop let
 * gcc vectorize it at -O2 */
#define ADD_ROW(T, SUF)                                                       \
    static void add_row_##SUF(T *restrict d, const T *restrict s, int64_t n)  \
    {                                                                         \
        int64_t q = 0;                                                        \
        for (; q + CHUNK <= n; q += CHUNK)                                    \
            for (int k = 0; k < CHUNK; k++)                                   \
                d[q + k] += s[q + k];                                         \
        for (; q < n; q++)                                                    \
            d[q] += s[q];                                                     \
    }

/* stride 1 with ow == w ("same" convolutions): a tap's rows are one
 * contiguous span of the input, shifted by x0; it is copied at once and
 * the clipped columns zeroed after */
#define IM2COL_SAME(T)                                                        \
    if (g->sh == 1 && g->sw == 1 && g->ow == g->w) {                          \
        int64_t y0, y1;                                                       \
        valid_rows(g, i, &y0, &y1);                                           \
        memset(row, 0, (size_t)(y0 * g->ow) * sizeof(T));                     \
        memset(row + y1 * g->ow, 0, (size_t)((g->oh - y1) * g->ow) * sizeof(T)); \
        if (y0 < y1 && lo < hi) {                                             \
            const T *s = x + (ch * g->h + y0 - g->ph + i * g->dh) * g->w +    \
                         x0 + lo;                                             \
            memcpy(row + y0 * g->ow + lo, s,                                  \
                   (size_t)((y1 - 1 - y0) * g->ow + hi - lo) * sizeof(T));    \
            for (int64_t oy = y0; oy < y1; oy++) {                            \
                T *d = row + oy * g->ow;                                      \
                for (int64_t ox = 0; ox < lo; ox++)                           \
                    d[ox] = 0;                                                \
                for (int64_t ox = hi; ox < g->ow; ox++)                       \
                    d[ox] = 0;                                                \
            }                                                                 \
        } else {                                                              \
            memset(row + y0 * g->ow, 0, (size_t)((y1 - y0) * g->ow) * sizeof(T)); \
        }                                                                     \
        continue;                                                             \
    }

#define IM2COL(T, SUF)                                                        \
    ADD_ROW(T, SUF)                                                           \
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
                    IM2COL_SAME(T)                                            \
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
                            add_row_##SUF(d, s + lo, hi - lo);                \
                        else                                                  \
                            for (int64_t ox = lo; ox < hi; ox++)              \
                                d[(ox - lo) * g->sw] += s[ox];                \
                    }                                                         \
                }                                                             \
    }

IM2COL(float, f32)
IM2COL(double, f64)
