/* The convolution kernels below the ops (kernels/cpu/conv.h, and the
 * general path of every rank, kernels/cpu/conv_nd.h, on the same 2-D
 * shapes, as planes and as volumes of depth 1): forward,
 * input gradient and weight gradient against plain reference loops, over
 * a grid of batch sizes (partial lane blocks), channels, planes, kernel
 * sizes, strides, paddings, dilations and groups, float32 and float64, by
 * every path (GEMM, batch lanes, plane vectors, the cost-based choice,
 * which is where the pointwise and depthwise paths of conv_pw.c and
 * conv_dw.c run) for every instruction set this CPU has. LeNet's two
 * layers are in the grid. */
#include "harness.h"
#include "kernel_data.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_nd.h"
#include "kernels/cpu/conv_pw.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/gemm.h"

#include <stdlib.h>
#include <string.h>

typedef struct shape {
    int64_t n, c, h, w, o, kh, kw, s, p, d, g;
} shape;

static const shape grid[] = {
    {64, 1, 28, 28, 6, 5, 5, 1, 2, 1, 1},  /* LeNet conv1 */
    {64, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1}, /* LeNet conv2 */
    {1, 1, 5, 5, 1, 3, 3, 1, 0, 1, 1},     {3, 2, 7, 9, 5, 3, 3, 1, 1, 1, 1},
    {17, 3, 6, 11, 7, 2, 3, 1, 1, 1, 1},   {5, 4, 9, 8, 6, 3, 3, 1, 2, 2, 2},
    {9, 6, 10, 10, 9, 3, 1, 1, 1, 1, 3},   {2, 3, 8, 8, 4, 3, 3, 2, 1, 1, 1},
    {4, 2, 9, 7, 3, 3, 2, 2, 0, 2, 1},     {33, 2, 5, 19, 20, 1, 1, 1, 0, 1, 1},
    {2, 8, 6, 6, 8, 3, 3, 1, 1, 1, 8},     {20, 5, 4, 4, 17, 4, 4, 1, 3, 1, 1},
    {3, 2, 20, 37, 3, 5, 3, 1, 2, 1, 1},
    /* depthwise (conv_dw.c in the auto mode): batch 1, strides 1 and 2,
     * 5x5, dilation, rows of several vectors at every width, odd tails */
    {1, 8, 13, 13, 8, 3, 3, 1, 1, 1, 8},   {3, 5, 17, 19, 5, 3, 3, 2, 1, 1, 5},
    {2, 6, 9, 41, 6, 5, 5, 2, 2, 1, 6},    {2, 4, 6, 70, 4, 3, 3, 1, 1, 1, 4},
    {2, 3, 7, 9, 3, 3, 3, 1, 2, 2, 3},     {1, 16, 7, 7, 16, 3, 3, 1, 1, 1, 16},
    {2, 3, 9, 9, 3, 3, 2, 3, 0, 1, 3},
    /* depthwise over channel lanes (conv_dwc.c): several blocks of a
     * vector's channels with a partial last one, planes cut into strips
     * of rows (stride 1 and 2, dilation, a short last strip), many images
     * of small planes (which take the batch lanes below AVX-512) */
    {2, 20, 150, 40, 20, 3, 3, 1, 1, 1, 20}, {1, 33, 161, 37, 33, 3, 3, 2, 1, 1, 33},
    {1, 17, 100, 50, 17, 3, 3, 1, 2, 2, 17}, {16, 24, 7, 7, 24, 3, 3, 1, 1, 1, 24},
    {3, 40, 14, 14, 40, 5, 5, 2, 2, 1, 40},
    /* few input channels, strided (conv_few.c in the auto mode): the
     * MobileNets' stem, output channels not a multiple of the tile's 4,
     * strides 2 and 3, 5x5, dilation, strips of rows with a short last
     * one, odd output rows, rows of several vectors and a tail; ResNet's
     * 7x7 stem (conv_dense.c's below AVX-512) */
    {1, 3, 17, 19, 8, 3, 3, 2, 1, 1, 1},   {2, 3, 15, 33, 6, 3, 3, 2, 1, 1, 1},
    {2, 3, 30, 26, 64, 7, 7, 2, 3, 1, 1},
    {1, 2, 11, 40, 5, 5, 5, 2, 2, 1, 1},   {3, 1, 9, 10, 3, 3, 3, 3, 0, 1, 1},
    {1, 4, 12, 12, 7, 3, 3, 2, 2, 2, 1},   {1, 3, 66, 70, 16, 3, 3, 2, 1, 1, 1},
    {2, 3, 37, 98, 9, 3, 3, 2, 1, 1, 1},
    /* pointwise */
    {2, 24, 9, 11, 40, 1, 1, 1, 0, 1, 1},  {1, 70, 7, 7, 33, 1, 1, 1, 0, 1, 1},
};

static tg__conv_geom geom_of(const shape *s)
{
    tg__conv_geom g = {.n = s->n, .c = s->c, .h = s->h, .w = s->w, .o = s->o,
                       .kh = s->kh, .kw = s->kw, .sh = s->s, .sw = s->s, .ph = s->p,
                       .pw = s->p, .dh = s->d, .dw = s->d, .groups = s->g};
    g.oh = (s->h + 2 * s->p - s->d * (s->kh - 1) - 1) / s->s + 1;
    g.ow = (s->w + 2 * s->p - s->d * (s->kw - 1) - 1) / s->s + 1;
    return g;
}

/* g as the general path's geometry of rank nd (2: a plane; 3: a volume of
 * depth 1 and kernel depth 1) */
static tg__conv_nd nd_of(const tg__conv_geom *g, int nd)
{
    return (tg__conv_nd){.nd = nd, .n = g->n, .c = g->c, .o = g->o, .groups = g->groups,
                         .in = {1, g->h, g->w}, .k = {1, g->kh, g->kw},
                         .out = {1, g->oh, g->ow}, .s = {1, g->sh, g->sw},
                         .p = {0, g->ph, g->pw}, .d = {1, g->dh, g->dw}};
}

/* the reference: y (forward), dx and dw from the same loops */
static void reference(const tg__conv_geom *g, const double *x, const double *w,
                      const double *b, const double *dy, double *y, double *dx,
                      double *dw)
{
    int64_t cg = g->c / g->groups, og = g->o / g->groups;
    int64_t ny = g->n * g->o * g->oh * g->ow;
    for (int64_t i = 0; i < ny; i++)
        y[i] = b[i / (g->oh * g->ow) % g->o];
    memset(dx, 0, sizeof(double) * (size_t)(g->n * g->c * g->h * g->w));
    memset(dw, 0, sizeof(double) * (size_t)(g->o * cg * g->kh * g->kw));
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t o = 0; o < g->o; o++)
            for (int64_t oy = 0; oy < g->oh; oy++)
                for (int64_t ox = 0; ox < g->ow; ox++) {
                    int64_t yi = ((n * g->o + o) * g->oh + oy) * g->ow + ox;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t i = 0; i < g->kh; i++)
                            for (int64_t j = 0; j < g->kw; j++) {
                                int64_t r = oy * g->sh - g->ph + i * g->dh;
                                int64_t q = ox * g->sw - g->pw + j * g->dw;
                                if (r < 0 || r >= g->h || q < 0 || q >= g->w)
                                    continue;
                                int64_t ci = o / og * cg + c;
                                int64_t xi = ((n * g->c + ci) * g->h + r) * g->w + q;
                                int64_t wi = ((o * cg + c) * g->kh + i) * g->kw + j;
                                y[yi] += w[wi] * x[xi];
                                dx[xi] += w[wi] * dy[yi];
                                dw[wi] += dy[yi] * x[xi];
                            }
                }
}

static void compare(const char *what, const shape *s, bool f64, const void *got,
                    const double *want, int64_t n, double scale)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = f64 ? ((const double *)got)[i] : ((const float *)got)[i];
        double d = fabs(v - want[i]);
        worst = d > worst || d != d ? d : worst;
    }
    double tol = (f64 ? 1e-11 : 2e-5) * scale;
    tt_checks++;
    if (!(worst <= tol))
        tt_fail(__FILE__, __LINE__, "%s %s mode %d %s: n%lld c%lld %lldx%lld o%lld k%lldx%lld "
                "s%lld p%lld d%lld g%lld: worst error %g (tol %g)", tg__isa_name(tg__cpu_isa()),
                what, (int)tg__conv_get_mode(), f64 ? "f64" : "f32", (long long)s->n,
                (long long)s->c, (long long)s->h, (long long)s->w, (long long)s->o,
                (long long)s->kh, (long long)s->kw, (long long)s->s, (long long)s->p,
                (long long)s->d, (long long)s->g, worst, tol);
}

/* the forward product through relu gives relu's bits of the plain one
 * (y): NaN passes, -0 and negatives become +0 */
static void check_relu(tg_dtype dt, const tg__conv_geom *g, const void *x, const void *w,
                       const void *b, const void *y, int64_t ny)
{
    bool f64 = dt == TG_FLOAT64;
    size_t el = f64 ? sizeof(double) : sizeof(float);
    char *got = malloc((size_t)ny * el + 8), *want = malloc((size_t)ny * el + 8);
    CHECK_OK(tg__conv2d_forward_relu(dt, g, x, w, b, true, got));
    for (int64_t i = 0; i < ny; i++) {
        double v = f64 ? ((const double *)y)[i] : ((const float *)y)[i];
        double r = v > 0 || v != v ? v : 0;
        if (f64)
            ((double *)want)[i] = r;
        else
            ((float *)want)[i] = (float)r;
    }
    CHECK(memcmp(got, want, (size_t)ny * el) == 0);
    free(got);
    free(want);
}

/* the activations' scalar forms, as the clamp and hardswish ops compute
 * them in each dtype (NaN passes; lo and hi rounded to the dtype) */
#define ACT_REF(T)                                                               \
    static T act_ref_##T(const tg__conv_act *a, T v)                            \
    {                                                                            \
        if (a->kind == TG_CONV_ACT_CLAMP)                                        \
            return v < (T)a->lo ? (T)a->lo : v > (T)a->hi ? (T)a->hi : v;        \
        T t = v + 3;                                                             \
        return v * (t < 0 ? (T)0 : t > 6 ? (T)6 : t) / 6;                        \
    }
ACT_REF(float)
ACT_REF(double)

/* the forward product through clamp and through hardswish gives the ops'
 * bits of the plain one (y) */
static void check_acts(tg_dtype dt, const tg__conv_geom *g, const void *x, const void *w,
                       const void *b, const void *y, int64_t ny)
{
    bool f64 = dt == TG_FLOAT64;
    size_t el = f64 ? sizeof(double) : sizeof(float);
    const tg__conv_act acts[] = {{TG_CONV_ACT_CLAMP, -0.3, 0.55},
                                 {TG_CONV_ACT_HARDSWISH, 0, 0}};
    char *got = malloc((size_t)ny * el + 8), *want = malloc((size_t)ny * el + 8);
    for (int k = 0; k < 2; k++) {
        CHECK_OK(tg__conv2d_forward_act(dt, g, x, w, b, &acts[k], got));
        for (int64_t i = 0; i < ny; i++)
            if (f64)
                ((double *)want)[i] = act_ref_double(&acts[k], ((const double *)y)[i]);
            else
                ((float *)want)[i] = act_ref_float(&acts[k], ((const float *)y)[i]);
        CHECK(memcmp(got, want, (size_t)ny * el) == 0);
    }
    free(got);
    free(want);
}

/* where the pointwise path takes g: the product with a shortcut r added
 * in its store, then relu or not, gives the add (and relu) ops' bits of
 * the plain product y */
static void check_residual(tg_dtype dt, const tg__conv_geom *g, const void *x,
                           const void *w, const void *b, const void *y, int64_t ny)
{
    if (!tg__conv_pw_wanted(g))
        return;
    bool f64 = dt == TG_FLOAT64;
    size_t el = f64 ? sizeof(double) : sizeof(float);
    double *rd = malloc(sizeof(double) * (size_t)ny);
    fill(rd, ny, 5);
    void *r = typed(rd, ny, f64);
    char *got = malloc((size_t)ny * el + 8), *want = malloc((size_t)ny * el + 8);
    for (int relu = 0; relu < 2; relu++) {
        tg__conv_act act = {relu ? TG_CONV_ACT_RELU : TG_CONV_ACT_NONE, 0, 0};
        tg_status st = TG_ERR_ARG;
        CHECK(tg__conv_pw_forward_res(dt, g, x, w, b, r, &act, got, &st));
        CHECK_OK(st);
        for (int64_t i = 0; i < ny; i++) {
            if (f64) {
                double v = ((const double *)y)[i] + ((const double *)r)[i];
                ((double *)want)[i] = relu && !(v > 0 || v != v) ? 0 : v;
            } else {
                float v = ((const float *)y)[i] + ((const float *)r)[i];
                ((float *)want)[i] = relu && !(v > 0 || v != v) ? 0 : v;
            }
        }
        CHECK(memcmp(got, want, (size_t)ny * el) == 0);
    }
    free(rd);
    free(r);
    free(got);
    free(want);
}

static void check_shape(const shape *s)
{
    tg__conv_geom g = geom_of(s);
    int64_t nx = g.n * g.c * g.h * g.w, ny = g.n * g.o * g.oh * g.ow;
    int64_t nw = g.o * (g.c / g.groups) * g.kh * g.kw;
    double *x = malloc(sizeof(double) * (size_t)nx), *w = malloc(sizeof(double) * (size_t)nw);
    double *b = malloc(sizeof(double) * (size_t)g.o), *dy = malloc(sizeof(double) * (size_t)ny);
    double *y = malloc(sizeof(double) * (size_t)ny), *dx = malloc(sizeof(double) * (size_t)nx);
    double *dw = malloc(sizeof(double) * (size_t)nw);
    fill(x, nx, 1);
    fill(w, nw, 2);
    fill(b, g.o, 3);
    fill(dy, ny, 4);
    reference(&g, x, w, b, dy, y, dx, dw);
    /* sums of up to this many unit-sized products */
    double fan = (double)((g.c / g.groups) * g.kh * g.kw + 1);
    double wfan = (double)(g.n * g.oh * g.ow + 1);
    /* runs: instruction set (slowest varying), path, dtype */
    int n_isa = (int)tg__cpu_detected() + 1, n_mode = TG_CONV_PLANES + 1;
    for (int run = 0; run < n_isa * n_mode * 2; run++) {
        bool f64 = run % 2;
        tg__cpu_force((tg__isa)(run / (2 * n_mode)));
        tg__conv_set_mode((tg__conv_mode)(run / 2 % n_mode));
        tg_dtype dt = f64 ? TG_FLOAT64 : TG_FLOAT32;
        void *tx = typed(x, nx, f64), *tw = typed(w, nw, f64), *tb = typed(b, g.o, f64);
        void *tdy = typed(dy, ny, f64);
        int64_t most = nx > ny ? nx : ny;
        void *out = malloc((size_t)(most > nw ? most : nw) * 8 + 8);
        CHECK_OK(tg__conv2d_forward(dt, &g, tx, tw, tb, out));
        compare("forward", s, f64, out, y, ny, fan);
        check_relu(dt, &g, tx, tw, tb, out, ny);
        check_acts(dt, &g, tx, tw, tb, out, ny);
        check_residual(dt, &g, tx, tw, tb, out, ny);
        CHECK_OK(tg__conv2d_grad_input(dt, &g, tdy, tw, out));
        compare("input grad", s, f64, out, dx, nx, fan * (double)g.o);
        CHECK_OK(tg__conv2d_grad_weight(dt, &g, tdy, tx, out));
        compare("weight grad", s, f64, out, dw, nw, wfan);
        for (int nd = 2; nd <= 3 && run / 2 % n_mode == 0; nd++) { /* the general path */
            tg__conv_nd gn = nd_of(&g, nd);
            CHECK_OK(tg__conv_general_forward(dt, &gn, tx, tw, tb, out));
            compare("general forward", s, f64, out, y, ny, fan);
            CHECK_OK(tg__conv_general_grad_input(dt, &gn, tdy, tw, out));
            compare("general input grad", s, f64, out, dx, nx, fan * (double)g.o);
            CHECK_OK(tg__conv_general_grad_weight(dt, &gn, tdy, tx, out));
            compare("general weight grad", s, f64, out, dw, nw, wfan);
        }
        if (run / 2 % n_mode == 0) { /* a volume's product through relu: relu's bits */
            tg__conv_nd gn = nd_of(&g, 3);
            size_t es = f64 ? sizeof(double) : sizeof(float);
            void *plain = malloc((size_t)ny * es + 8);
            CHECK_OK(tg__conv_forward(dt, &gn, tx, tw, tb, NULL, plain));
            CHECK_OK(tg__conv_forward(dt, &gn, tx, tw, tb,
                                      &(tg__conv_act){TG_CONV_ACT_RELU, 0, 0}, out));
            bool same = true;
            for (int64_t i = 0; i < ny; i++) {
                double v = f64 ? ((double *)plain)[i] : ((float *)plain)[i];
                double r = f64 ? ((double *)out)[i] : ((float *)out)[i];
                same &= v > 0 ? r == v : (r == 0 && !signbit(r));
            }
            CHECK(same);
            free(plain);
        }
        free(tx);
        free(tw);
        free(tb);
        free(tdy);
        free(out);
    }
    free(x);
    free(w);
    free(b);
    free(dy);
    free(y);
    free(dx);
    free(dw);
}

/* each shape's reference once, then every instruction set, path and dtype */
static void test_every_path_and_isa(void)
{
    for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++)
        check_shape(&grid[i]);
    tg__conv_set_mode(TG_CONV_AUTO);
    tg__cpu_force(tg__cpu_detected());
}

/* NaN reaches relu's and clamp's outputs (x NaN at one pixel: every
 * output that reads it is NaN), every path; a dense, a depthwise and a
 * pointwise shape */
static void check_nan(const shape *s)
{
    tg__conv_geom g = geom_of(s);
    int64_t nx = g.n * g.c * g.h * g.w, ny = g.n * g.o * g.oh * g.ow;
    int64_t nw = g.o * (g.c / g.groups) * g.kh * g.kw;
    float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
    float *b = calloc((size_t)g.o, sizeof(float)), *y = malloc(sizeof(float) * (size_t)ny);
    float *r = malloc(sizeof(float) * (size_t)ny), *cl = malloc(sizeof(float) * (size_t)ny);
    for (int64_t i = 0; i < nx; i++)
        x[i] = (float)(i % 7) - 3;
    for (int64_t i = 0; i < nw; i++)
        w[i] = (float)(i % 5) - 2;
    x[g.h * g.w / 2] = NAN;
    tg__conv_act clamp = {TG_CONV_ACT_CLAMP, -2, 3};
    for (int m = TG_CONV_AUTO; m <= TG_CONV_PLANES; m++) {
        tg__conv_set_mode((tg__conv_mode)m);
        CHECK_OK(tg__conv2d_forward(TG_FLOAT32, &g, x, w, b, y));
        CHECK_OK(tg__conv2d_forward_relu(TG_FLOAT32, &g, x, w, b, true, r));
        CHECK_OK(tg__conv2d_forward_act(TG_FLOAT32, &g, x, w, b, &clamp, cl));
        int64_t nans = 0, bad = 0;
        for (int64_t i = 0; i < ny; i++) {
            nans += y[i] != y[i];
            float want = y[i] > 0 || y[i] != y[i] ? y[i] : 0.0f;
            float want_c = y[i] < -2 ? -2.0f : y[i] > 3 ? 3.0f : y[i];
            bad += memcmp(&want, &r[i], sizeof want) != 0;
            bad += memcmp(&want_c, &cl[i], sizeof want_c) != 0;
        }
        CHECK(nans > 0);
        CHECK(bad == 0);
    }
    tg__conv_set_mode(TG_CONV_AUTO);
    free(x);
    free(w);
    free(b);
    free(y);
    free(r);
    free(cl);
}

static void test_relu_nan(void)
{
    static const shape shapes[] = {
        {3, 2, 7, 9, 5, 3, 3, 1, 1, 1, 1},
        {2, 8, 13, 21, 8, 3, 3, 2, 1, 1, 8},
        {2, 24, 9, 11, 40, 1, 1, 1, 0, 1, 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        check_nan(&shapes[i]);
}

/* a single thread gives the same bits as two (fixed parts, summed in order) */
static void test_threads_same_bits(void)
{
    const shape *s = &grid[1];
    tg__conv_geom g = geom_of(s);
    int64_t nx = g.n * g.c * g.h * g.w, ny = g.n * g.o * g.oh * g.ow, nw = g.o * g.c * 25;
    double *x = malloc(sizeof(double) * (size_t)nx), *dy = malloc(sizeof(double) * (size_t)ny);
    fill(x, nx, 5);
    fill(dy, ny, 6);
    float *fx = typed(x, nx, false), *fdy = typed(dy, ny, false);
    float *a = malloc(sizeof(float) * (size_t)nw), *b = malloc(sizeof(float) * (size_t)nw);
    tg_set_num_threads(1);
    CHECK_OK(tg__conv2d_grad_weight(TG_FLOAT32, &g, fdy, fx, a));
    tg_set_num_threads(2);
    CHECK_OK(tg__conv2d_grad_weight(TG_FLOAT32, &g, fdy, fx, b));
    CHECK(memcmp(a, b, sizeof(float) * (size_t)nw) == 0);
    free(x);
    free(dy);
    free(fx);
    free(fdy);
    free(a);
    free(b);
}

int main(void)
{
    tg__gemm_set_mode(TG_GEMM_BUILTIN); /* the built-in GEMM at every level (the rule takes the BLAS at generic) */
    RUN(test_every_path_and_isa);
    RUN(test_threads_same_bits);
    RUN(test_relu_nan);
    return tt_finish();
}
