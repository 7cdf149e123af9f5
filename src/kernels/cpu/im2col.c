/* im2col and col2im in the rows layout (any stride: each output row of a
 * tap is the contiguous range of ox inside the input, copied, with zeros
 * either side) and the wide layout (stride 1: each tap is one slice of the
 * padded image), one template for float32 and float64. */
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

/* ---- wide geometry ---------------------------------------------------------- */
int64_t tg__conv_hp(const tg__conv_geom *g) { return g->h + 2 * g->ph; }
int64_t tg__conv_wp(const tg__conv_geom *g) { return g->w + 2 * g->pw; }
int64_t tg__conv_wide_len(const tg__conv_geom *g)
{
    return (g->oh - 1) * tg__conv_wp(g) + g->ow;
}

bool tg__conv_wide_ok(const tg__conv_geom *g)
{
    return g->sh == 1 && g->sw == 1 && 2 * tg__conv_wide_len(g) <= 3 * g->oh * g->ow;
}

/* d += s over n elements (restrict: no overlap, so it vectorizes) */
#define ADD_ROW(T, SUF)                                                       \
    static void add_row_##SUF(T *restrict d, const T *restrict s, int64_t n)  \
    {                                                                         \
        for (int64_t q = 0; q < n; q++)                                       \
            d[q] += s[q];                                                     \
    }

#define IM2COL(T, SUF)                                                        \
    ADD_ROW(T, SUF)                                                           \
                                                                              \
    void tg__im2col_##SUF(const T *x, int64_t c, const tg__conv_geom *g,      \
                          T *col, int64_t ld)                                 \
    {                                                                         \
        for (int64_t ch = 0; ch < c; ch++)                                    \
            for (int64_t i = 0; i < g->kh; i++)                               \
                for (int64_t j = 0; j < g->kw; j++) {                         \
                    T *row = col + ((ch * g->kh + i) * g->kw + j) * ld;       \
                    int64_t x0 = j * g->dw - g->pw, lo, hi;                   \
                    valid_range(x0, g->sw, g->w, g->ow, &lo, &hi);            \
                    for (int64_t oy = 0; oy < g->oh; oy++) {                  \
                        T *d = row + oy * g->ow;                              \
                        int64_t iy = oy * g->sh - g->ph + i * g->dh;          \
                        if (iy < 0 || iy >= g->h || lo >= hi) {               \
                            memset(d, 0, (size_t)g->ow * sizeof(T));          \
                            continue;                                         \
                        }                                                     \
                        /* input column of ox = lo, never before x */        \
                        const T *s = x + (ch * g->h + iy) * g->w + x0 +       \
                                     lo * g->sw;                              \
                        for (int64_t ox = 0; ox < lo; ox++)                   \
                            d[ox] = 0;                                        \
                        if (g->sw == 1)                                       \
                            memcpy(d + lo, s, (size_t)(hi - lo) * sizeof(T)); \
                        else                                                  \
                            for (int64_t ox = lo; ox < hi; ox++)              \
                                d[ox] = s[(ox - lo) * g->sw];                 \
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
                        if (iy < 0 || iy >= g->h || lo >= hi)                 \
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
    }                                                                         \
                                                                              \
    void tg__pad_image_##SUF(const T *x, int64_t c, const tg__conv_geom *g,   \
                             T *xp)                                           \
    {                                                                         \
        const int64_t hp = tg__conv_hp(g), wp = tg__conv_wp(g);               \
        memset(xp, 0, (size_t)(c * hp * wp) * sizeof(T));                     \
        for (int64_t ch = 0; ch < c; ch++)                                    \
            for (int64_t y = 0; y < g->h; y++)                                \
                memcpy(xp + (ch * hp + y + g->ph) * wp + g->pw,               \
                       x + (ch * g->h + y) * g->w, (size_t)g->w * sizeof(T)); \
    }                                                                         \
                                                                              \
    void tg__crop_image_##SUF(const T *xp, int64_t c,                         \
                              const tg__conv_geom *g, T *x)                   \
    {                                                                         \
        const int64_t hp = tg__conv_hp(g), wp = tg__conv_wp(g);               \
        for (int64_t ch = 0; ch < c; ch++)                                    \
            for (int64_t y = 0; y < g->h; y++)                                \
                memcpy(x + (ch * g->h + y) * g->w,                            \
                       xp + (ch * hp + y + g->ph) * wp + g->pw,               \
                       (size_t)g->w * sizeof(T));                             \
    }                                                                         \
                                                                              \
    void tg__im2col_wide_##SUF(const T *xp, int64_t c,                        \
                               const tg__conv_geom *g, T *col)                \
    {                                                                         \
        const int64_t hp = tg__conv_hp(g), wp = tg__conv_wp(g);               \
        const int64_t len = tg__conv_wide_len(g);                             \
        for (int64_t ch = 0; ch < c; ch++)                                    \
            for (int64_t i = 0; i < g->kh; i++)                               \
                for (int64_t j = 0; j < g->kw; j++)                           \
                    memcpy(col + ((ch * g->kh + i) * g->kw + j) * len,        \
                           xp + ch * hp * wp + i * g->dh * wp + j * g->dw,    \
                           (size_t)len * sizeof(T));                          \
    }                                                                         \
                                                                              \
    void tg__col2im_wide_##SUF(const T *col, int64_t c,                       \
                               const tg__conv_geom *g, T *xp)                 \
    {                                                                         \
        const int64_t hp = tg__conv_hp(g), wp = tg__conv_wp(g);               \
        const int64_t len = tg__conv_wide_len(g);                             \
        for (int64_t ch = 0; ch < c; ch++)                                    \
            for (int64_t i = 0; i < g->kh; i++)                               \
                for (int64_t j = 0; j < g->kw; j++)                           \
                    add_row_##SUF(xp + ch * hp * wp + i * g->dh * wp + j * g->dw, \
                                  col + ((ch * g->kh + i) * g->kw + j) * len, \
                                  len);                                       \
    }                                                                         \
                                                                              \
    void tg__widen_##SUF(const T *y, int64_t rows, const tg__conv_geom *g,    \
                         T *yw)                                               \
    {                                                                         \
        const int64_t wp = tg__conv_wp(g), len = tg__conv_wide_len(g);        \
        for (int64_t r = 0; r < rows; r++)                                    \
            for (int64_t oy = 0; oy < g->oh; oy++) {                          \
                T *d = yw + r * len + oy * wp;                                \
                memcpy(d, y + (r * g->oh + oy) * g->ow,                       \
                       (size_t)g->ow * sizeof(T));                            \
                if (oy + 1 < g->oh)                                           \
                    memset(d + g->ow, 0, (size_t)(wp - g->ow) * sizeof(T));   \
            }                                                                 \
    }                                                                         \
                                                                              \
    void tg__widen_t_##SUF(const T *y, int64_t rows, const tg__conv_geom *g,  \
                           int64_t ld, T *yt)                                 \
    {                                                                         \
        const int64_t wp = tg__conv_wp(g), len = tg__conv_wide_len(g);        \
        memset(yt, 0, (size_t)(len * ld) * sizeof(T));                        \
        for (int64_t r = 0; r < rows; r++)                                    \
            for (int64_t oy = 0; oy < g->oh; oy++)                            \
                for (int64_t ox = 0; ox < g->ow; ox++)                        \
                    yt[(oy * wp + ox) * ld + r] = y[(r * g->oh + oy) * g->ow + ox]; \
    }                                                                         \
                                                                              \
    void tg__narrow_##SUF(const T *yw, int64_t rows, const tg__conv_geom *g,  \
                          const T *bias, T *y)                                \
    {                                                                         \
        const int64_t wp = tg__conv_wp(g), len = tg__conv_wide_len(g);        \
        for (int64_t r = 0; r < rows; r++) {                                  \
            const T b = bias ? bias[r] : 0;                                   \
            for (int64_t oy = 0; oy < g->oh; oy++) {                          \
                const T *s = yw + r * len + oy * wp;                          \
                T *d = y + (r * g->oh + oy) * g->ow;                          \
                for (int64_t ox = 0; ox < g->ow; ox++)                        \
                    d[ox] = s[ox] + b;                                        \
            }                                                                 \
        }                                                                     \
    }

IM2COL(float, f32)
IM2COL(double, f64)
