/* 2-D pooling kernels (see pool.h): plane kernels expanded for float and
 * double, run over the N*C planes. */
#include "kernels/cpu/pool.h"
#include "core/threadpool.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

typedef tg__pool_geom geom;

/* the window of output (oh, ow) clipped to the input, and PyTorch's
 * average divisor (the window clipped to the padded input, or to the
 * input without count_include_pad) */
static inline int64_t window(const geom *g, int64_t oh, int64_t ow, int64_t *hs,
                             int64_t *he, int64_t *ws, int64_t *we)
{
    int64_t h0 = oh * g->sh - g->ph, w0 = ow * g->sw - g->pw;
    int64_t h1 = h0 + g->kh, w1 = w0 + g->kw;
    if (h1 > g->H + g->ph) h1 = g->H + g->ph;
    if (w1 > g->W + g->pw) w1 = g->W + g->pw;
    int64_t padded = (h1 - h0) * (w1 - w0);
    *hs = h0 < 0 ? 0 : h0;
    *ws = w0 < 0 ? 0 : w0;
    *he = h1 > g->H ? g->H : h1;
    *we = w1 > g->W ? g->W : w1;
    return g->include_pad ? padded : (*he - *hs) * (*we - *ws);
}

/* LeNet's 2x2 stride 2 pooling with every window inside the input */
static inline bool is_2x2(const geom *g)
{
    return g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && g->ph == 0 &&
           g->pw == 0 && 2 * g->OH <= g->H && 2 * g->OW <= g->W;
}

/* ---- plane kernels, expanded for float and double ----------------------------
 * Max: NaN wins (as in PyTorch); ties keep the first element in row-major
 * window order. The index is the position within the H x W plane. */
#define TAKE(T, v, at)                              \
    {                                               \
        T v_ = (v);                                 \
        bool t_ = (v_ > m) | (v_ != v_); /* or NaN */ \
        m = t_ ? v_ : m; /* selects, not branches */ \
        mi = t_ ? (at) : mi;                        \
    }

#define PLANES(SFX, T)                                                           \
    static void max_plane_##SFX(const geom *g, const T *x, T *y, int64_t *idx)  \
    {                                                                            \
        const int64_t W = g->W, OW = g->OW;                                      \
        if (is_2x2(g)) {                                                         \
            tg__maxpool2x2_planes_##SFX(x, 1, g->H, W, g->OH, OW, y, idx);       \
            return;                                                              \
        }                                                                        \
        for (int64_t oh = 0; oh < g->OH; oh++)                                   \
            for (int64_t ow = 0; ow < OW; ow++) {                                \
                int64_t hs, he, ws, we;                                          \
                window(g, oh, ow, &hs, &he, &ws, &we);                           \
                T m = -INFINITY;                                                 \
                int64_t mi = hs * W + ws;                                        \
                for (int64_t h = hs; h < he; h++)                                \
                    for (int64_t w = ws; w < we; w++)                            \
                        TAKE(T, x[h * W + w], h * W + w)                            \
                y[oh * OW + ow] = m;                                             \
                idx[oh * OW + ow] = mi;                                          \
            }                                                                    \
    }                                                                            \
    static void avg_plane_##SFX(const geom *g, const T *x, T *y)                 \
    {                                                                            \
        const int64_t W = g->W, OW = g->OW;                                      \
        if (is_2x2(g)) {                                                         \
            for (int64_t oh = 0; oh < g->OH; oh++) {                             \
                const T *r0 = x + 2 * oh * W, *r1 = r0 + W;                      \
                for (int64_t ow = 0; ow < OW; ow++)                              \
                    y[oh * OW + ow] = (r0[2 * ow] + r0[2 * ow + 1] + r1[2 * ow] + \
                                       r1[2 * ow + 1]) * (T)0.25;                \
            }                                                                    \
            return;                                                              \
        }                                                                        \
        for (int64_t oh = 0; oh < g->OH; oh++)                                   \
            for (int64_t ow = 0; ow < OW; ow++) {                                \
                int64_t hs, he, ws, we;                                          \
                int64_t div = window(g, oh, ow, &hs, &he, &ws, &we);             \
                double acc = 0;                                                  \
                for (int64_t h = hs; h < he; h++)                                \
                    for (int64_t w = ws; w < we; w++)                            \
                        acc += x[h * W + w];                                     \
                y[oh * OW + ow] = (T)(acc / (double)div);                        \
            }                                                                    \
    }                                                                            \
    /* dx (zeroed) gets each dy spread evenly over its window; 2 x 2 windows \
     * (disjoint) are written whole, 0 + dy / 4 as the adds give (+0 for -0) */ \
    static void avg_grad_plane_##SFX(const geom *g, const T *dy, T *dx)          \
    {                                                                            \
        const int64_t W = g->W, OW = g->OW;                                      \
        if (is_2x2(g)) {                                                         \
            if (g->H != 2 * g->OH || W != 2 * OW) /* a row or column in none */ \
                memset(dx, 0, (size_t)(g->H * W) * sizeof(T));                   \
            for (int64_t oh = 0; oh < g->OH; oh++) {                             \
                T *r0 = dx + 2 * oh * W, *r1 = r0 + W;                           \
                const T *d = dy + oh * OW;                                       \
                for (int64_t ow = 0; ow < OW; ow++) {                            \
                    T v = (T)0 + d[ow] / (T)4;                                   \
                    r0[2 * ow] = r0[2 * ow + 1] = r1[2 * ow] = r1[2 * ow + 1] = v; \
                }                                                                \
            }                                                                    \
            return;                                                              \
        }                                                                        \
        memset(dx, 0, (size_t)(g->H * W) * sizeof(T));                           \
        for (int64_t oh = 0; oh < g->OH; oh++)                                   \
            for (int64_t ow = 0; ow < OW; ow++) {                                \
                int64_t hs, he, ws, we;                                          \
                int64_t div = window(g, oh, ow, &hs, &he, &ws, &we);             \
                T d = dy[oh * OW + ow] / (T)div;                                 \
                for (int64_t h = hs; h < he; h++)                                \
                    for (int64_t w = ws; w < we; w++)                            \
                        dx[h * W + w] += d;                                      \
            }                                                                    \
    }                                                                            \
    /* dx (zeroed) gets each dy added at its argmax; indices are checked as  \
     * they are used (true: one was outside the plane). When every index is   \
     * in its 2 x 2 window (g: the planes' sizes), windows are written whole. */ \
    static bool max_grad_plane_##SFX(const geom *g, int64_t in_n, int64_t out_n, \
                                     const T *dy, const int64_t *idx, T *dx)     \
    {                                                                            \
        bool bad = false, done = g && g->H == 2 * g->OH && g->W == 2 * g->OW &&  \
                                 tg__maxpool2x2_grad_planes_##SFX(dy, idx, 1,    \
                                                                  g->OH, g->OW, dx); \
        if (done)                                                                \
            return false;                                                        \
        memset(dx, 0, (size_t)in_n * sizeof(T));                                 \
        for (int64_t o = 0; o < out_n; o++) {                                    \
            if ((uint64_t)idx[o] < (uint64_t)in_n)                               \
                dx[idx[o]] += dy[o];                                             \
            else                                                                 \
                bad = true;                                                      \
        }                                                                        \
        return bad;                                                              \
    }                                                                            \
    /* the adjoint of max_grad: each output picks its argmax element (in_n:    \
     * the plane size of src; true when an index was outside it) */             \
    static bool select_plane_##SFX(int64_t in_n, int64_t out_n, const T *src,    \
                                   const int64_t *idx, T *out)                   \
    {                                                                            \
        bool bad = false;                                                        \
        for (int64_t o = 0; o < out_n; o++) {                                    \
            bool ok = (uint64_t)idx[o] < (uint64_t)in_n;                         \
            out[o] = ok ? src[idx[o]] : 0;                                       \
            bad |= !ok;                                                          \
        }                                                                        \
        return bad;                                                              \
    }

PLANES(f32, float)
PLANES(f64, double)

/* ---- running the plane kernels over N*C planes ---------------------------------
 * Pooling streams memory, a few elements per ns: below POOL_PAR_MIN
 * elements touched a split over the pool loses to the ~1-2 us a
 * parallel_for costs. */
#define POOL_PAR_MIN ((int64_t)1 << 16)
/* elements touched per chunk of a split */
#define PAR_GRAIN 16384

typedef struct task {
    tg__pool_kind k;
    const geom *g;
    bool f64;
    const char *a;      /* the input plane array (x, dy or src) */
    char *b;            /* the output plane array */
    int64_t *idx;       /* argmax indices (max, max_grad, select) */
    int64_t a_n, b_n;   /* elements per plane of a and b */
    atomic_bool bad_index; /* max_grad, select: an index was outside its plane */
} task;

#define PLANE_PTRS(T) \
    const T *a = (const T *)t->a + p * t->a_n; T *b = (T *)t->b + p * t->b_n

/* 2 x 2 max pooling and its gradient over the planes [begin, end) at
 * once (rows run on across planes); false when not that case, or when an
 * index is outside its window (the planes are then done one by one) */
static bool run_2x2(const task *t, int64_t begin, int64_t end)
{
    const geom *g = t->g;
    int64_t n = end - begin;
    if (t->k == TG_POOL_MAX && is_2x2(g)) {
        if (t->f64)
            tg__maxpool2x2_planes_f64((const double *)t->a + begin * t->a_n, n, g->H, g->W,
                                      g->OH, g->OW, (double *)t->b + begin * t->b_n,
                                      t->idx + begin * t->b_n);
        else
            tg__maxpool2x2_planes_f32((const float *)t->a + begin * t->a_n, n, g->H, g->W,
                                      g->OH, g->OW, (float *)t->b + begin * t->b_n,
                                      t->idx + begin * t->b_n);
        return true;
    }
    /* the gradient of rows shorter than a vector: zeroing and scattering
     * the int64 indices does better (measured at LeNet's 5 x 5 outputs) */
    if (t->k != TG_POOL_MAX_GRAD || !g || g->H != 2 * g->OH || g->W != 2 * g->OW ||
        g->OW < 8)
        return false;
    if (t->f64)
        return tg__maxpool2x2_grad_planes_f64((const double *)t->a + begin * t->a_n,
                                              t->idx + begin * t->a_n, n, g->OH, g->OW,
                                              (double *)t->b + begin * t->b_n);
    return tg__maxpool2x2_grad_planes_f32((const float *)t->a + begin * t->a_n,
                                          t->idx + begin * t->a_n, n, g->OH, g->OW,
                                          (float *)t->b + begin * t->b_n);
}

static void run_planes(void *ctx, int64_t begin, int64_t end)
{
    task *t = ctx;
    bool bad = false;
    if (run_2x2(t, begin, end))
        return;
    /* the indices have the shape of the pooled side: b, except for max_grad */
    int64_t idx_n = t->k == TG_POOL_MAX_GRAD ? t->a_n : t->b_n;
    for (int64_t p = begin; p < end; p++) {
        int64_t *idx = t->idx ? t->idx + p * idx_n : NULL;
        if (t->f64) {
            PLANE_PTRS(double);
            switch (t->k) {
            case TG_POOL_MAX: max_plane_f64(t->g, a, b, idx); break;
            case TG_POOL_AVG: avg_plane_f64(t->g, a, b); break;
            case TG_POOL_AVG_GRAD: avg_grad_plane_f64(t->g, a, b); break;
            case TG_POOL_MAX_GRAD: bad |= max_grad_plane_f64(t->g, t->b_n, t->a_n, a, idx, b); break;
            case TG_POOL_SELECT: bad |= select_plane_f64(t->a_n, t->b_n, a, idx, b); break;
            }
        } else {
            PLANE_PTRS(float);
            switch (t->k) {
            case TG_POOL_MAX: max_plane_f32(t->g, a, b, idx); break;
            case TG_POOL_AVG: avg_plane_f32(t->g, a, b); break;
            case TG_POOL_AVG_GRAD: avg_grad_plane_f32(t->g, a, b); break;
            case TG_POOL_MAX_GRAD: bad |= max_grad_plane_f32(t->g, t->b_n, t->a_n, a, idx, b); break;
            case TG_POOL_SELECT: bad |= select_plane_f32(t->a_n, t->b_n, a, idx, b); break;
            }
        }
    }
    if (bad)
        atomic_store(&t->bad_index, true);
}


bool tg__pool2d(tg__pool_kind k, const tg__pool_geom *g, tg_dtype dt,
                const void *a, void *b, int64_t *idx, int64_t planes,
                int64_t a_n, int64_t b_n)
{
    task t = {.k = k, .g = g, .f64 = dt == TG_FLOAT64, .a = a, .b = b,
              .idx = idx, .a_n = a_n, .b_n = b_n};
    atomic_init(&t.bad_index, false);
    int64_t work = a_n > b_n ? a_n : b_n;
    if (g && k != TG_POOL_MAX_GRAD && k != TG_POOL_SELECT)
        work *= 1 + (g->kh * g->kw) / 4; /* windows overlap with large kernels */
    if (planes * work < POOL_PAR_MIN) {
        run_planes(&t, 0, planes);
    } else {
        int64_t grain = PAR_GRAIN / work; /* planes per chunk */
        tg_parallel_for(planes, grain < 1 ? 1 : grain, run_planes, &t);
    }
    return atomic_load(&t.bad_index);
}
