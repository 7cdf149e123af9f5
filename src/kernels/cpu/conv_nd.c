/* Convolution over any rank (kernels/cpu/conv_nd.h): the dispatch to the
 * 2-D kernels, and the general path, patches (vol2col) and GEMM, for the
 * other ranks. Lower ranks are volumes of depth (and height) 1, so one
 * loop nest serves all. Per image and group, the output
 * depth is cut into blocks whose patch matrix (channels per group x taps
 * x positions of the block) stays under TG__VOL2COL_MAX elements, so the
 * scratch is bounded whatever the volume; each block is one GEMM with the
 * group's [O/groups, C/groups * taps] weight matrix, whose rows of the
 * output (or output gradient) are the block's columns of the [O, OD * OH *
 * OW] image (leading dimension OD * OH * OW, no copies). The GEMM splits
 * large products over the thread pool; the weight gradient sums images
 * and blocks in a fixed order, so results do not depend on threads. */
#include "kernels/cpu/conv_nd.h"

#include "kernels/cpu/conv_dw_api.h"
#include "kernels/cpu/gemm.h"

#include <stdlib.h>
#include <string.h>

typedef tg__conv_nd geom;

/* the shapes every kernel shares */
typedef struct dims {
    int64_t cg, og, taps, rows; /* channels and outputs per group, kernel taps, cg*taps */
    int64_t in_vol, plane, pos; /* D*H*W, OH*OW, OD*OH*OW */
    int64_t nz;                 /* output depth slices per block */
} dims;

static dims dims_of(const geom *g)
{
    dims d;
    d.cg = g->c / g->groups;
    d.og = g->o / g->groups;
    d.taps = g->k[0] * g->k[1] * g->k[2];
    d.rows = d.cg * d.taps;
    d.in_vol = g->in[0] * g->in[1] * g->in[2];
    d.plane = g->out[1] * g->out[2];
    d.pos = g->out[0] * d.plane;
    int64_t per = d.rows * d.plane;
    d.nz = per > 0 ? TG__VOL2COL_MAX / per : g->out[0];
    if (d.nz < 1)
        d.nz = 1;
    if (d.nz > g->out[0])
        d.nz = g->out[0];
    return d;
}

/* the patch matrix of output depth slices [z0, z1) of one image's group
 * (cg channels from x), and its adjoint (adds back into x) */
#define VOL2COL(T, SUF)                                                                   \
    static void vol2col_##SUF(const T *x, const geom *g, const dims *d, int64_t z0,       \
                              int64_t z1, T *col, bool adjoint, T *xa)                    \
    {                                                                                     \
        int64_t D = g->in[0], H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2]; \
        T *c = col;                                                                       \
        for (int64_t ch = 0; ch < d->cg; ch++)                                            \
            for (int64_t a = 0; a < g->k[0]; a++)                                         \
                for (int64_t i = 0; i < g->k[1]; i++)                                     \
                    for (int64_t j = 0; j < g->k[2]; j++)                                 \
                        for (int64_t z = z0; z < z1; z++) {                               \
                            int64_t iz = z * g->s[0] - g->p[0] + a * g->d[0];             \
                            for (int64_t y = 0; y < OH; y++, c += OW) {                   \
                                int64_t iy = y * g->s[1] - g->p[1] + i * g->d[1];         \
                                if (iz < 0 || iz >= D || iy < 0 || iy >= H) {             \
                                    if (!adjoint)                                         \
                                        memset(c, 0, (size_t)OW * sizeof(T));             \
                                    continue;                                             \
                                }                                                         \
                                int64_t off = ch * d->in_vol + (iz * H + iy) * W;         \
                                int64_t ix = j * g->d[2] - g->p[2];                       \
                                for (int64_t xo = 0; xo < OW; xo++, ix += g->s[2]) {      \
                                    bool in = ix >= 0 && ix < W;                          \
                                    if (adjoint) {                                        \
                                        if (in)                                           \
                                            xa[off + ix] += c[xo];                        \
                                    } else {                                              \
                                        c[xo] = in ? x[off + ix] : (T)0;                  \
                                    }                                                     \
                                }                                                         \
                            }                                                             \
                        }                                                                 \
    }

#define CONV_GENERAL(T, SUF, GEMM)                                                              \
    VOL2COL(T, SUF)                                                                       \
    static tg_status forward_##SUF(const geom *g, const T *x, const T *w, const T *b,     \
                                   T *y)                                                  \
    {                                                                                     \
        dims d = dims_of(g);                                                              \
        T *col = malloc((size_t)(d.rows * d.nz * d.plane + 1) * sizeof(T));               \
        if (!col)                                                                         \
            return TG_ERR_NOMEM;                                                          \
        tg_status s = TG_OK;                                                              \
        for (int64_t n = 0; n < g->n && s == TG_OK; n++)                                  \
            for (int64_t gi = 0; gi < g->groups && s == TG_OK; gi++) {                    \
                const T *xg = x + (n * g->c + gi * d.cg) * d.in_vol;                      \
                T *yg = y + (n * g->o + gi * d.og) * d.pos;                               \
                for (int64_t z0 = 0; z0 < g->out[0] && s == TG_OK; z0 += d.nz) {              \
                    int64_t z1 = z0 + d.nz < g->out[0] ? z0 + d.nz : g->out[0];                   \
                    int64_t cols = (z1 - z0) * d.plane;                                   \
                    vol2col_##SUF(xg, g, &d, z0, z1, col, false, NULL);                   \
                    s = GEMM(false, false, d.og, cols, d.rows, 1, w + gi * d.og * d.rows, \
                             d.rows, col, cols, 0, yg + z0 * d.plane, d.pos);             \
                }                                                                         \
            }                                                                             \
        free(col);                                                                        \
        for (int64_t i = 0; b && s == TG_OK && i < g->n * g->o; i++)                      \
            for (int64_t p = 0; p < d.pos; p++)                                           \
                y[i * d.pos + p] += b[i % g->o];                                          \
        return s;                                                                         \
    }                                                                                     \
    static tg_status grad_input_##SUF(const geom *g, const T *dy, const T *w, T *dx)      \
    {                                                                                     \
        dims d = dims_of(g);                                                              \
        memset(dx, 0, (size_t)(g->n * g->c * d.in_vol) * sizeof(T));                     \
        T *col = malloc((size_t)(d.rows * d.nz * d.plane + 1) * sizeof(T));               \
        if (!col)                                                                         \
            return TG_ERR_NOMEM;                                                          \
        tg_status s = TG_OK;                                                              \
        for (int64_t n = 0; n < g->n && s == TG_OK; n++)                                  \
            for (int64_t gi = 0; gi < g->groups && s == TG_OK; gi++) {                    \
                T *dxg = dx + (n * g->c + gi * d.cg) * d.in_vol;                          \
                const T *dyg = dy + (n * g->o + gi * d.og) * d.pos;                       \
                for (int64_t z0 = 0; z0 < g->out[0] && s == TG_OK; z0 += d.nz) {              \
                    int64_t z1 = z0 + d.nz < g->out[0] ? z0 + d.nz : g->out[0];                   \
                    int64_t cols = (z1 - z0) * d.plane;                                   \
                    s = GEMM(true, false, d.rows, cols, d.og, 1, w + gi * d.og * d.rows,  \
                             d.rows, dyg + z0 * d.plane, d.pos, 0, col, cols);            \
                    if (s == TG_OK)                                                       \
                        vol2col_##SUF(NULL, g, &d, z0, z1, col, true, dxg);               \
                }                                                                         \
            }                                                                             \
        free(col);                                                                        \
        return s;                                                                         \
    }                                                                                     \
    static tg_status grad_weight_##SUF(const geom *g, const T *dy, const T *x, T *dw)     \
    {                                                                                     \
        dims d = dims_of(g);                                                              \
        memset(dw, 0, (size_t)(g->o * d.rows) * sizeof(T));                               \
        T *col = malloc((size_t)(d.rows * d.nz * d.plane + 1) * sizeof(T));               \
        if (!col)                                                                         \
            return TG_ERR_NOMEM;                                                          \
        tg_status s = TG_OK;                                                              \
        for (int64_t n = 0; n < g->n && s == TG_OK; n++)                                  \
            for (int64_t gi = 0; gi < g->groups && s == TG_OK; gi++) {                    \
                const T *xg = x + (n * g->c + gi * d.cg) * d.in_vol;                      \
                const T *dyg = dy + (n * g->o + gi * d.og) * d.pos;                       \
                for (int64_t z0 = 0; z0 < g->out[0] && s == TG_OK; z0 += d.nz) {              \
                    int64_t z1 = z0 + d.nz < g->out[0] ? z0 + d.nz : g->out[0];                   \
                    int64_t cols = (z1 - z0) * d.plane;                                   \
                    vol2col_##SUF(xg, g, &d, z0, z1, col, false, NULL);                   \
                    s = GEMM(false, true, d.og, d.rows, cols, 1, dyg + z0 * d.plane,      \
                             d.pos, col, cols, 1, dw + gi * d.og * d.rows, d.rows);       \
                }                                                                         \
            }                                                                             \
        free(col);                                                                        \
        return s;                                                                         \
    }
CONV_GENERAL(float, f32, tg__sgemm)
CONV_GENERAL(double, f64, tg__dgemm)

/* ---- the general path, any rank ------------------------------------------------ */
tg_status tg__conv_general_forward(tg_dtype dt, const geom *g, const void *x, const void *w,
                                   const void *b, void *y)
{
    return dt == TG_FLOAT32 ? forward_f32(g, x, w, b, y) : forward_f64(g, x, w, b, y);
}

tg_status tg__conv_general_grad_input(tg_dtype dt, const geom *g, const void *dy,
                                      const void *w, void *dx)
{
    return dt == TG_FLOAT32 ? grad_input_f32(g, dy, w, dx) : grad_input_f64(g, dy, w, dx);
}

tg_status tg__conv_general_grad_weight(tg_dtype dt, const geom *g, const void *dy,
                                       const void *x, void *dw)
{
    return dt == TG_FLOAT32 ? grad_weight_f32(g, dy, x, dw) : grad_weight_f64(g, dy, x, dw);
}

/* ---- the dispatch: 2-D convolutions to the 2-D kernels --------------------------- */
/* g as the 2-D kernels' geometry, when it is 2-D */
bool tg__conv_nd_as_plane(const geom *g, tg__conv_geom *p)
{
    if (g->nd != 2)
        return false;
    *p = (tg__conv_geom){.n = g->n, .c = g->c, .h = g->in[1], .w = g->in[2], .o = g->o,
                         .kh = g->k[1], .kw = g->k[2], .oh = g->out[1], .ow = g->out[2],
                         .sh = g->s[1], .sw = g->s[2], .ph = g->p[1], .pw = g->p[2],
                         .dh = g->d[1], .dw = g->d[2], .groups = g->groups};
    return true;
}

tg_status tg__conv_forward(tg_dtype dt, const geom *g, const void *x, const void *w,
                           const void *b, const tg__conv_act *act, void *y)
{
    static const tg__conv_act none = {TG_CONV_ACT_NONE, 0, 0};
    tg__conv_geom p;
    if (tg__conv_nd_as_plane(g, &p)) {
        p.w_serial = g->w_serial, p.w_version = g->w_version; /* forward only: w itself */
        return tg__conv2d_forward_act(dt, &p, x, w, b, act ? act : &none, y);
    }
    tg_status s = tg__conv_general_forward(dt, g, x, w, b, y);
    if (s == TG_OK && act && act->kind != TG_CONV_ACT_NONE) /* the activation op's bits */
        tg__dw_arch_now()->row_act[dt == TG_FLOAT64](
            y, g->n * g->o * g->out[0] * g->out[1] * g->out[2], NULL, act->kind, act->lo,
            act->hi);
    return s;
}

tg_status tg__conv_grad_input(tg_dtype dt, const geom *g, const void *dy, const void *w,
                              void *dx)
{
    tg__conv_geom p;
    return tg__conv_nd_as_plane(g, &p) ? tg__conv2d_grad_input(dt, &p, dy, w, dx)
                           : tg__conv_general_grad_input(dt, g, dy, w, dx);
}

tg_status tg__conv_grad_weight(tg_dtype dt, const geom *g, const void *dy, const void *x,
                               void *dw)
{
    tg__conv_geom p;
    return tg__conv_nd_as_plane(g, &p) ? tg__conv2d_grad_weight(dt, &p, dy, x, dw)
                           : tg__conv_general_grad_weight(dt, g, dy, x, dw);
}
