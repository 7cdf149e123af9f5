/* Reference 2-D convolution loops in float64 for the kernel tests
 * (test_conv_dense, test_conv_wino, test_conv_wgrad): the forward product
 * with bias, a residual and relu, and both gradients, over any stride,
 * padding and dilation, one group, NCHW. */
#ifndef TG_TEST_CONV_REFERENCE_H
#define TG_TEST_CONV_REFERENCE_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef struct conv_shape {
    int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw;
} conv_shape;

static inline tg__conv_geom conv_geom_of(const conv_shape *s)
{
    tg__conv_geom g = {.n = s->n, .c = s->c, .h = s->h, .w = s->w, .o = s->o,
                       .kh = s->kh, .kw = s->kw, .sh = s->sh, .sw = s->sw, .ph = s->ph,
                       .pw = s->pw, .dh = s->dh, .dw = s->dw, .groups = 1};
    g.oh = (s->h + 2 * s->ph - s->dh * (s->kh - 1) - 1) / s->sh + 1;
    g.ow = (s->w + 2 * s->pw - s->dw * (s->kw - 1) - 1) / s->sw + 1;
    return g;
}

/* where output (oy, ox) of g meets tap (i, j): the input position, or -1
 * in the padding */
static inline int64_t conv_tap_at(const tg__conv_geom *g, int64_t oy, int64_t ox, int64_t i,
                                  int64_t j)
{
    int64_t r = oy * g->sh - g->ph + i * g->dh, q = ox * g->sw - g->pw + j * g->dw;
    return r >= 0 && r < g->h && q >= 0 && q < g->w ? r * g->w + q : -1;
}

/* y = relu?(x (*) w + b + res); b, res may be NULL */
static inline void conv_reference(const tg__conv_geom *g, const double *x, const double *w,
                                  const double *b, const double *res, bool relu, double *y)
{
    const int64_t plane = g->h * g->w, taps = g->kh * g->kw;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t o = 0; o < g->o; o++)
            for (int64_t oy = 0; oy < g->oh; oy++)
                for (int64_t ox = 0; ox < g->ow; ox++) {
                    double s = b ? b[o] : 0;
                    for (int64_t c = 0; c < g->c; c++)
                        for (int64_t t = 0; t < taps; t++) {
                            int64_t at = conv_tap_at(g, oy, ox, t / g->kw, t % g->kw);
                            if (at >= 0)
                                s += w[(o * g->c + c) * taps + t] * x[(n * g->c + c) * plane + at];
                        }
                    int64_t k = ((n * g->o + o) * g->oh + oy) * g->ow + ox;
                    s += res ? res[k] : 0;
                    y[k] = relu && s <= 0 ? 0 : s;
                }
}

/* the gradients of g's product from dy: dx (needs w) and dw (needs x),
 * either may be NULL */
static inline void conv_reference_grads(const tg__conv_geom *g, const double *x,
                                        const double *w, const double *dy, double *dx,
                                        double *dw)
{
    const int64_t plane = g->h * g->w, taps = g->kh * g->kw;
    if (dx)
        memset(dx, 0, sizeof(double) * (size_t)(g->n * g->c * plane));
    if (dw)
        memset(dw, 0, sizeof(double) * (size_t)(g->o * g->c * taps));
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t o = 0; o < g->o; o++)
            for (int64_t oy = 0; oy < g->oh; oy++)
                for (int64_t ox = 0; ox < g->ow; ox++) {
                    double d = dy[((n * g->o + o) * g->oh + oy) * g->ow + ox];
                    for (int64_t c = 0; c < g->c; c++)
                        for (int64_t t = 0; t < taps; t++) {
                            int64_t at = conv_tap_at(g, oy, ox, t / g->kw, t % g->kw);
                            if (at < 0)
                                continue;
                            if (dx)
                                dx[(n * g->c + c) * plane + at] += d * w[(o * g->c + c) * taps + t];
                            if (dw)
                                dw[(o * g->c + c) * taps + t] += d * x[(n * g->c + c) * plane + at];
                        }
                }
}

#endif
