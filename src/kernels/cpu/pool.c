/* Pooling kernels (see pool.h): one loop nest over 1 to 3 spatial dims
 * for max, average and the average's gradient, expanded for float and
 * double and run over the N*C planes (volumes); LeNet's 2 x 2 stride-2
 * planes go to the vector kernels of pool_2x2*.c. The max pooling's
 * gradient and its adjoint work on positions and so on any rank. */
#include "kernels/cpu/pool.h"
#include "core/threadpool.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

typedef tg__pool_geom geom;

/* the widest plane the 2 x 2 kernels take (their window offsets are int32) */
#define MAX_2X2_W ((int64_t)1 << 30)

/* LeNet's 2x2 stride 2 pooling of planes with every window inside the input */
static inline bool is_2x2(const geom *g)
{
    return g->nd == 2 && g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 &&
           g->ph == 0 && g->pw == 0 && 2 * g->OH <= g->H && 2 * g->OW <= g->W &&
           g->W < MAX_2X2_W;
}

/* a max pooling gradient the 2 x 2 kernels may take: 2-D planes tiled
 * exactly by 2 x 2 windows (whether the indices are theirs, they check) */
static inline bool grad_is_2x2(const geom *g)
{
    return g && g->nd == 2 && g->H == 2 * g->OH && g->W == 2 * g->OW && g->W < MAX_2X2_W;
}

/* ... with rows long enough for them over a run of planes: float32 on x86
 * any (the AVX2 and AVX-512 levels take rows under 8 a group each; the
 * baseline declines them), else 8 outputs (shorter rows: zeroing and
 * scattering is faster) */
static inline bool max_grad_run_is_2x2(const geom *g, bool f64)
{
#if defined(__x86_64__)
    const int64_t min_ow = f64 ? 8 : 1;
#else
    const int64_t min_ow = 8;
#endif
    return grad_is_2x2(g) && g->OW >= min_ow;
}

/* ---- kernels over one plane (volume), expanded for float and double --------------
 * Max: NaN wins (as in PyTorch); ties keep the first element in row-major
 * window order. The index is the position within the plane (volume).
 * Average: the sum in double, in row-major order, over PyTorch's divisor
 * (the window clipped to the padded input, or to the input without
 * count_include_pad). */
#define TAKE(T, v, at)                              \
    {                                               \
        T v_ = (v);                                 \
        bool t_ = TG__POOL_TAKES(m, v_);            \
        m = t_ ? v_ : m; /* selects, not branches */ \
        mi = t_ ? (at) : mi;                        \
    }

/* for every output o (row-major, counted in o_) of g: the window
 * [za, ze) x [ya, ye) x [xa, xe) inside the input and its divisor div;
 * the body (the variadic arguments) runs once per output. VOL is a
 * constant: false for planes (nd <= 2), whose depth loops then vanish
 * from the code the compiler makes, true for volumes. */
#define EACH_WINDOW(g, VOL, ...)                                                \
    int64_t o_ = 0;                                                              \
    const int64_t OD_ = (VOL) ? (g)->OD : 1, OH_ = (g)->OH, OW_ = (g)->OW;       \
    for (int64_t oz = 0; oz < OD_; oz++) {                                       \
        int64_t za = 0, ze = 1, pz = 1;                                          \
        if (VOL)                                                                 \
            pz = tg__pool_window((g), 0, oz, &za, &ze);                          \
        for (int64_t oy = 0; oy < OH_; oy++) {                                   \
            int64_t ya, ye, py = tg__pool_window((g), 1, oy, &ya, &ye);          \
            for (int64_t ox = 0; ox < OW_; ox++, o_++) {                         \
                int64_t xa, xe, px = tg__pool_window((g), 2, ox, &xa, &xe);      \
                int64_t div = (g)->include_pad ? pz * py * px                    \
                                               : (ze - za) * (ye - ya) * (xe - xa); \
                (void)div;                                                       \
                __VA_ARGS__                                                      \
            }                                                                    \
        }                                                                        \
    }

/* the average kernels are written once, always inlined into a plane (VOL
 * false) and a volume (VOL true) copy */
#define INLINE static inline __attribute__((always_inline))

/* a plane's max pooling takes the outputs inside a row a vector at a time
 * (max_plane): 16-byte vectors, the baseline's registers, of values and
 * of ints of the same width (the comparisons' masks and the taps they
 * select) joined by bit selects, so no branch */
typedef float vec_f32 __attribute__((vector_size(16)));
typedef int32_t mask_f32 __attribute__((vector_size(16)));
typedef double vec_f64 __attribute__((vector_size(16)));
typedef int64_t mask_f64 __attribute__((vector_size(16)));

#define PLANES(SFX, T)                                                           \
    enum { MAX_RUN_##SFX = sizeof(vec_##SFX) / sizeof(T) };                      \
    INLINE void avg_nd_##SFX(const geom *g, const T *x, T *y, const bool VOL)    \
    {                                                                            \
        const int64_t H = g->H, W = g->W;                                        \
        EACH_WINDOW(g, VOL, {                                                    \
            double acc = 0;                                                      \
            for (int64_t z = za; z < ze; z++)                                    \
                for (int64_t h = ya; h < ye; h++) {                              \
                    const T *row = x + (z * H + h) * W;                          \
                    for (int64_t w = xa; w < xe; w++)                            \
                        acc += row[w];                                           \
                }                                                                \
            y[o_] = (T)(acc / (double)div);                                      \
        })                                                                       \
    }                                                                            \
    /* dx (zeroed) gets each dy spread evenly over its window */                \
    INLINE void avg_grad_nd_##SFX(const geom *g, const T *dy, T *dx,             \
                                  const bool VOL)                                \
    {                                                                            \
        const int64_t H = g->H, W = g->W;                                        \
        memset(dx, 0, (size_t)((VOL ? g->D : 1) * H * W) * sizeof(T));           \
        EACH_WINDOW(g, VOL, {                                                    \
            T d = dy[o_] / (T)div;                                               \
            for (int64_t z = za; z < ze; z++)                                    \
                for (int64_t h = ya; h < ye; h++) {                              \
                    T *row = dx + (z * H + h) * W;                               \
                    for (int64_t w = xa; w < xe; w++)                            \
                        row[w] += d;                                             \
                }                                                                \
        })                                                                       \
    }                                                                            \
    /* one output: the window [ya, ye) x [xa, xe) of plane x */                \
    INLINE void max_one_##SFX(const T *x, int64_t W, int64_t ya, int64_t ye,     \
                              int64_t xa, int64_t xe, T *y, int64_t *idx)        \
    {                                                                            \
        T m = -INFINITY;                                                         \
        int64_t mi = ya * W + xa;                                                \
        for (int64_t h = ya; h < ye; h++)                                        \
            for (int64_t w = xa; w < xe; w++)                                    \
                TAKE(T, x[h * W + w], h * W + w)                                 \
        *y = m;                                                                  \
        *idx = mi;                                                               \
    }                                                                            \
    /* a plane row by row: outputs whose windows lie inside the row are     \
     * taken a vector at a time, tap by tap, in vectors with bit selects (the \
     * window loop compiles to a branch per element, mispredicted on about   \
     * half of them: 5 ms for ResNet's 3x3/2 pooling of [64,112,112]); each \
     * output sees \
     * its window's elements in the same order, so values and indices are   \
     * the window loop's. Clipped windows at the edges and a tail shorter    \
     * than a vector take the window loop. */                                 \
    static void max_plane_##SFX(const geom *g, const T *x, T *y, int64_t *idx)  \
    {                                                                            \
        const int64_t W = g->W, OW = g->OW, sw = g->sw, pw = g->pw, kw = g->kw;  \
        /* inside: ox * sw - pw >= 0 and ox * sw - pw + kw <= W */              \
        int64_t c0 = (pw + sw - 1) / sw;                                         \
        int64_t c1 = W - kw + pw >= 0 ? (W - kw + pw) / sw + 1 : 0;              \
        c1 = c1 < OW ? c1 : OW;                                                  \
        c0 = c0 < c1 ? c0 : c1;                                                  \
        int64_t runs_end = c0 + (c1 - c0) / MAX_RUN_##SFX * MAX_RUN_##SFX;                   \
        for (int64_t oy = 0; oy < g->OH; oy++) {                                 \
            int64_t ya, ye;                                                      \
            tg__pool_window(g, 1, oy, &ya, &ye);                                 \
            T *yr = y + oy * OW;                                                 \
            int64_t *ir = idx + oy * OW;                                         \
            for (int64_t ox = 0; ox < OW; ox++) {                                \
                if (ox == c0) /* the runs inside */                              \
                    ox = runs_end;                                               \
                if (ox >= OW)                                                    \
                    break;                                                       \
                int64_t xa, xe;                                                  \
                tg__pool_window(g, 2, ox, &xa, &xe);                             \
                max_one_##SFX(x, W, ya, ye, xa, xe, yr + ox, ir + ox);           \
            }                                                                    \
            for (int64_t o0 = c0; o0 < runs_end; o0 += MAX_RUN_##SFX) {                \
                vec_##SFX mv;                                                    \
                mask_##SFX mt = {0}; /* the tap of each max so far */            \
                for (int r = 0; r < MAX_RUN_##SFX; r++)                                \
                    mv[r] = -INFINITY;                                           \
                int tap = 0;                                                     \
                for (int64_t h = ya; h < ye; h++)                                \
                    for (int64_t j = 0; j < kw; j++, tap++) {                    \
                        const T *at = x + h * W + o0 * sw - pw + j;              \
                        vec_##SFX v;                                             \
                        for (int r = 0; r < MAX_RUN_##SFX; r++)                        \
                            v[r] = at[r * sw];                                   \
                        mask_##SFX take = TG__POOL_TAKES(mv, v);                 \
                        mv = (vec_##SFX)(((mask_##SFX)v & take) |                \
                                         ((mask_##SFX)mv & ~take));              \
                        mt = (tap & take) | (mt & ~take);                        \
                    }                                                            \
                for (int r = 0; r < MAX_RUN_##SFX; r++) {                              \
                    int64_t t = (int64_t)mt[r];                                  \
                    yr[o0 + r] = mv[r];                                          \
                    ir[o0 + r] = (ya + t / kw) * W + (o0 + r) * sw - pw + t % kw; \
                }                                                                \
            }                                                                    \
        }                                                                        \
    }                                                                            \
    /* volumes: the window loop (planes have max_plane) */                  \
    static void max_volume_##SFX(const geom *g, const T *x, T *y, int64_t *idx) \
    {                                                                            \
        const int64_t H = g->H, W = g->W;                                        \
        EACH_WINDOW(g, true, {                                                   \
            T m = -INFINITY;                                                     \
            int64_t mi = (za * H + ya) * W + xa;                                 \
            for (int64_t z = za; z < ze; z++)                                    \
                for (int64_t h = ya; h < ye; h++) {                              \
                    int64_t row = (z * H + h) * W;                               \
                    for (int64_t w = xa; w < xe; w++)                            \
                        TAKE(T, x[row + w], row + w)                             \
                }                                                                \
            y[o_] = m;                                                           \
            idx[o_] = mi;                                                        \
        })                                                                       \
    }                                                                            \
    static void avg_plane_##SFX(const geom *g, const T *x, T *y)                 \
    {                                                                            \
        avg_nd_##SFX(g, x, y, false);                                            \
    }                                                                            \
    static void avg_volume_##SFX(const geom *g, const T *x, T *y)                \
    {                                                                            \
        avg_nd_##SFX(g, x, y, true);                                             \
    }                                                                            \
    static void avg_grad_plane_##SFX(const geom *g, const T *dy, T *dx)          \
    {                                                                            \
        avg_grad_nd_##SFX(g, dy, dx, false);                                     \
    }                                                                            \
    static void avg_grad_volume_##SFX(const geom *g, const T *dy, T *dx)         \
    {                                                                            \
        avg_grad_nd_##SFX(g, dy, dx, true);                                      \
    }                                                                            \
    /* LeNet's 2 x 2 average pooling of a plane, and its gradient: 2 x 2   \
     * windows (disjoint) are written whole, 0 + dy / 4 as the adds give    \
     * (+0 for -0) */                                                        \
    static void avg_2x2_##SFX(const geom *g, const T *x, T *y)                   \
    {                                                                            \
        const int64_t W = g->W, OW = g->OW;                                      \
        for (int64_t oh = 0; oh < g->OH; oh++) {                                 \
            const T *r0 = x + 2 * oh * W, *r1 = r0 + W;                          \
            for (int64_t ow = 0; ow < OW; ow++)                                  \
                y[oh * OW + ow] = (r0[2 * ow] + r0[2 * ow + 1] + r1[2 * ow] +    \
                                   r1[2 * ow + 1]) * (T)0.25;                    \
        }                                                                        \
    }                                                                            \
    static void avg_grad_2x2_##SFX(const geom *g, const T *dy, T *dx)            \
    {                                                                            \
        const int64_t H = g->H, W = g->W, OW = g->OW;                            \
        if (H != 2 * g->OH || W != 2 * OW) /* a row or column in none */         \
            memset(dx, 0, (size_t)(H * W) * sizeof(T));                          \
        for (int64_t oh = 0; oh < g->OH; oh++) {                                 \
            T *r0 = dx + 2 * oh * W, *r1 = r0 + W;                               \
            const T *d = dy + oh * OW;                                           \
            for (int64_t ow = 0; ow < OW; ow++) {                                \
                T v = (T)0 + d[ow] / (T)4;                                       \
                r0[2 * ow] = r0[2 * ow + 1] = r1[2 * ow] = r1[2 * ow + 1] = v;   \
            }                                                                    \
        }                                                                        \
    }                                                                            \
    /* dx (zeroed) gets each dy added at its argmax; indices are checked as  \
     * they are used (true: one was outside the plane). When every index is   \
     * in its 2 x 2 window (g: a 2-D plane's sizes), windows are written whole. */ \
    static bool max_grad_plane_##SFX(const geom *g, int64_t in_n, int64_t out_n, \
                                     const T *dy, const int64_t *idx, T *dx)     \
    {                                                                            \
        bool bad = false, done = grad_is_2x2(g) && g->OW >= 8 &&                  \
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

/* ---- running the plane kernels over N*C planes (volumes) -------------------------
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

/* 2 x 2 max pooling, float32 2 x 2 average pooling and their gradients
 * over the planes [begin, end) at once (rows run on across planes); false
 * when not that case, or when an index is outside its window (the planes
 * are then done one by one) */
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
    if (!t->f64 && t->k == TG_POOL_AVG && is_2x2(g)) {
        tg__avgpool2x2_planes_f32((const float *)t->a + begin * t->a_n, n, g->H, g->W, g->OH,
                                  g->OW, (float *)t->b + begin * t->b_n);
        return true;
    }
    /* the average's gradient spreads dy over the window: 2 x 2 windows only
     * (grad_is_2x2 alone also holds for 3 x 3 stride-2 windows of an even
     * plane, which the max gradient's indices sort out and this cannot) */
    if (!t->f64 && t->k == TG_POOL_AVG_GRAD && is_2x2(g) && grad_is_2x2(g)) {
        tg__avgpool2x2_grad_planes_f32((const float *)t->a + begin * t->a_n, n, g->OH, g->OW,
                                       (float *)t->b + begin * t->b_n);
        return true;
    }
    /* the gradient of rows shorter than a vector: zeroing and scattering
     * the int64 indices does better (measured at LeNet's 5 x 5 outputs) */
    if (t->k != TG_POOL_MAX_GRAD || !max_grad_run_is_2x2(g, t->f64))
        return false;
    if (t->f64)
        return tg__maxpool2x2_grad_planes_f64((const double *)t->a + begin * t->a_n,
                                              t->idx + begin * t->a_n, n, g->OH, g->OW,
                                              (double *)t->b + begin * t->b_n);
    return tg__maxpool2x2_grad_planes_f32((const float *)t->a + begin * t->a_n,
                                          t->idx + begin * t->a_n, n, g->OH, g->OW,
                                          (float *)t->b + begin * t->b_n);
}

/* plane (volume) p of the task by the kernel of its kind, rank and
 * dtype; true when an index was outside its plane */
#define RUN_PLANE(SFX, T)                                                        \
    static bool run_plane_##SFX(const task *t, int64_t p, bool two, bool vol,    \
                                int64_t *idx)                                    \
    {                                                                            \
        const T *a = (const T *)t->a + p * t->a_n;                               \
        T *b = (T *)t->b + p * t->b_n;                                           \
        switch (t->k) {                                                          \
        case TG_POOL_MAX:                                                        \
            (vol ? max_volume_##SFX : max_plane_##SFX)(t->g, a, b, idx);         \
            return false;                                                        \
        case TG_POOL_AVG:                                                        \
            (two ? avg_2x2_##SFX : vol ? avg_volume_##SFX : avg_plane_##SFX)(t->g, a, b); \
            return false;                                                        \
        case TG_POOL_AVG_GRAD:                                                   \
            (two ? avg_grad_2x2_##SFX                                            \
                 : vol ? avg_grad_volume_##SFX : avg_grad_plane_##SFX)(t->g, a, b); \
            return false;                                                        \
        case TG_POOL_MAX_GRAD:                                                   \
            return max_grad_plane_##SFX(t->g, t->b_n, t->a_n, a, idx, b);        \
        case TG_POOL_SELECT:                                                     \
            return select_plane_##SFX(t->a_n, t->b_n, a, idx, b);                \
        case TG_POOL_MAX_VALUES: /* run_planes takes them all at once */         \
            break;                                                               \
        }                                                                        \
        return false;                                                            \
    }
RUN_PLANE(f32, float)
RUN_PLANE(f64, double)

/* the max pooling gradient of planes (volumes) [begin, end) the 2 x 2
 * kernels do not take (any rank and window; LeNet's 5 x 5 outputs): dx
 * zeroed in one pass over the whole range, then each dy added at its
 * argmax; true when an index was outside its plane. As max_grad_plane
 * without the 2 x 2 attempt, one memset for all planes (a call per plane
 * of 100 elements cost about as much as its scatter) */
#define SCATTER_PLANES(SFX, T)                                                   \
    static bool scatter_planes_##SFX(const task *t, int64_t begin, int64_t end)  \
    {                                                                            \
        const int64_t in_n = t->b_n, out_n = t->a_n;                             \
        bool bad = false;                                                        \
        memset((T *)t->b + begin * in_n, 0, (size_t)((end - begin) * in_n) * sizeof(T)); \
        for (int64_t p = begin; p < end; p++) {                                  \
            const T *dy = (const T *)t->a + p * out_n;                           \
            const int64_t *idx = t->idx + p * out_n;                             \
            T *dx = (T *)t->b + p * in_n;                                        \
            for (int64_t o = 0; o < out_n; o++) {                                \
                if ((uint64_t)idx[o] < (uint64_t)in_n)                           \
                    dx[idx[o]] += dy[o];                                         \
                else                                                             \
                    bad = true;                                                  \
            }                                                                    \
        }                                                                        \
        return bad;                                                              \
    }
SCATTER_PLANES(f32, float)
SCATTER_PLANES(f64, double)

static void run_planes(void *ctx, int64_t begin, int64_t end)
{
    task *t = ctx;
    bool bad = false;
    if (t->k == TG_POOL_MAX_VALUES) { /* a false return: no memory for a row */
        int64_t n = end - begin;
        bool ok = t->f64 ? tg__maxpool_values_f64(t->g, (const double *)t->a + begin * t->a_n,
                                                  (double *)t->b + begin * t->b_n, n, t->a_n,
                                                  t->b_n)
                         : tg__maxpool_values_f32(t->g, (const float *)t->a + begin * t->a_n,
                                                  (float *)t->b + begin * t->b_n, n, t->a_n,
                                                  t->b_n);
        if (!ok)
            atomic_store(&t->bad_index, true);
        return;
    }
    if (run_2x2(t, begin, end))
        return;
    if (t->k == TG_POOL_MAX_GRAD && !(grad_is_2x2(t->g) && t->g->OW >= 8)) {
        if (t->f64 ? scatter_planes_f64(t, begin, end) : scatter_planes_f32(t, begin, end))
            atomic_store(&t->bad_index, true);
        return;
    }
    /* the kernel's choice, once for all planes */
    bool two = t->g && is_2x2(t->g), vol = t->g && t->g->nd == 3;
    /* the indices have the shape of the pooled side: b, except for max_grad */
    int64_t idx_n = t->k == TG_POOL_MAX_GRAD ? t->a_n : t->b_n;
    for (int64_t p = begin; p < end; p++) {
        int64_t *idx = t->idx ? t->idx + p * idx_n : NULL;
        bad |= t->f64 ? run_plane_f64(t, p, two, vol, idx) : run_plane_f32(t, p, two, vol, idx);
    }
    if (bad)
        atomic_store(&t->bad_index, true);
}

bool tg__pool_run(tg__pool_kind k, const tg__pool_geom *g, tg_dtype dt,
                  const void *a, void *b, int64_t *idx, int64_t planes,
                  int64_t a_n, int64_t b_n)
{
    task t = {.k = k, .g = g, .f64 = dt == TG_FLOAT64, .a = a, .b = b,
              .idx = idx, .a_n = a_n, .b_n = b_n};
    atomic_init(&t.bad_index, false);
    int64_t work = a_n > b_n ? a_n : b_n;
    if (g && k != TG_POOL_MAX_GRAD && k != TG_POOL_SELECT)
        work *= 1 + (g->kd * g->kh * g->kw) / 4; /* windows overlap with large kernels */
    if (planes * work < POOL_PAR_MIN) {
        run_planes(&t, 0, planes);
    } else {
        int64_t grain = PAR_GRAIN / work; /* planes per chunk */
        tg_parallel_for(planes, grain < 1 ? 1 : grain, run_planes, &t);
    }
    return atomic_load(&t.bad_index);
}
