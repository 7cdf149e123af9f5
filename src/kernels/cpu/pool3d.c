/* 3-D max and average pooling, volume by volume over N * C, in parallel
 * when the work is large. Max: NaN wins (as in PyTorch); ties keep the
 * first element in (d, h, w) order (and the last NaN, as PyTorch). Average: PyTorch's divisor, the window
 * clipped to the padded input (count_include_pad) or to the input. */
#include "kernels/cpu/pool3d.h"

#include "core/threadpool.h"

#include <math.h>
#include <string.h>

typedef tg__pool3_geom geom;

/* the window of output position o in dim i: [*a, *e) inside the input,
 * and its size clipped to the padded input only */
static inline int64_t window(const geom *g, int i, int64_t o, int64_t *a, int64_t *e)
{
    int64_t s = o * g->s[i] - g->p[i], end = s + g->k[i];
    if (end > g->in[i] + g->p[i])
        end = g->in[i] + g->p[i];
    int64_t padded = end - s;
    *a = s < 0 ? 0 : s;
    *e = end < g->in[i] ? end : g->in[i];
    return padded;
}

#define VOLUMES(SFX, T)                                                                   \
    static void volume_##SFX(tg__pool3_kind k, const geom *g, const T *a, T *b,          \
                             int64_t *idx)                                                \
    {                                                                                     \
        const int64_t H = g->in[1], W = g->in[2];                                         \
        if (k == TG_POOL3_AVG_GRAD)                                                       \
            memset(b, 0, (size_t)(g->in[0] * H * W) * sizeof(T));                         \
        int64_t o = 0;                                                                    \
        for (int64_t oz = 0; oz < g->out[0]; oz++)                                        \
            for (int64_t oy = 0; oy < g->out[1]; oy++)                                    \
                for (int64_t ox = 0; ox < g->out[2]; ox++, o++) {                         \
                    int64_t za, ze, ya, ye, xa, xe;                                       \
                    int64_t pz = window(g, 0, oz, &za, &ze), py = window(g, 1, oy, &ya, &ye); \
                    int64_t px = window(g, 2, ox, &xa, &xe);                              \
                    if (k == TG_POOL3_MAX) {                                              \
                        T m = -INFINITY;                                                  \
                        int64_t mi = (za * H + ya) * W + xa;                              \
                        for (int64_t z = za; z < ze; z++)                                 \
                            for (int64_t y = ya; y < ye; y++)                             \
                                for (int64_t x = xa; x < xe; x++) {                       \
                                    T v = a[(z * H + y) * W + x];                         \
                                    if (v > m || v != v) {                                \
                                        m = v;                                            \
                                        mi = (z * H + y) * W + x;                         \
                                    }                                                     \
                                }                                                         \
                        b[o] = m;                                                         \
                        idx[o] = mi;                                                      \
                        continue;                                                         \
                    }                                                                     \
                    int64_t div = g->include_pad ? pz * py * px                           \
                                                 : (ze - za) * (ye - ya) * (xe - xa);     \
                    if (k == TG_POOL3_AVG) {                                              \
                        double acc = 0;                                                   \
                        for (int64_t z = za; z < ze; z++)                                 \
                            for (int64_t y = ya; y < ye; y++)                             \
                                for (int64_t x = xa; x < xe; x++)                         \
                                    acc += a[(z * H + y) * W + x];                        \
                        b[o] = (T)(acc / (double)div);                                    \
                    } else {                                                              \
                        T gv = (T)((double)a[o] / (double)div);                           \
                        for (int64_t z = za; z < ze; z++)                                 \
                            for (int64_t y = ya; y < ye; y++)                             \
                                for (int64_t x = xa; x < xe; x++)                         \
                                    b[(z * H + y) * W + x] += gv;                         \
                    }                                                                     \
                }                                                                         \
    }
VOLUMES(f32, float)
VOLUMES(f64, double)

typedef struct job {
    tg__pool3_kind k;
    const geom *g;
    bool f64;
    const char *a;
    char *b;
    int64_t *idx;
    int64_t in_vol, out_vol;
} job;

static void run(void *ctx, int64_t begin, int64_t end)
{
    const job *j = ctx;
    size_t el = j->f64 ? sizeof(double) : sizeof(float);
    /* a is the input (x, or dy for the gradient), b the output */
    int64_t a_n = j->k == TG_POOL3_AVG_GRAD ? j->out_vol : j->in_vol;
    int64_t b_n = j->k == TG_POOL3_AVG_GRAD ? j->in_vol : j->out_vol;
    for (int64_t p = begin; p < end; p++) {
        const void *a = j->a + (size_t)(p * a_n) * el;
        void *b = j->b + (size_t)(p * b_n) * el;
        int64_t *idx = j->idx ? j->idx + p * j->out_vol : NULL;
        if (j->f64)
            volume_f64(j->k, j->g, a, b, idx);
        else
            volume_f32(j->k, j->g, a, b, idx);
    }
}

void tg__pool3d(tg__pool3_kind k, const geom *g, tg_dtype dt, const void *a, void *b,
                int64_t *idx, int64_t planes)
{
    job j = {k, g, dt == TG_FLOAT64, a, b, idx, g->in[0] * g->in[1] * g->in[2],
             g->out[0] * g->out[1] * g->out[2]};
    /* work per volume: every output reads its window */
    int64_t work = j.out_vol * g->k[0] * g->k[1] * g->k[2] + j.in_vol;
    if (work < 1)
        work = 1;
    if (planes * work < (1 << 16)) {
        run(&j, 0, planes);
        return;
    }
    int64_t grain = (1 << 16) / work;
    tg_parallel_for(planes, grain < 1 ? 1 : grain, run, &j);
}
