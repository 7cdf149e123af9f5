/* The pooling kernels below the ops (kernels/cpu/pool.h): the vectorized
 * 2 x 2 stride-2 max pooling and its gradient against plain loops, for
 * row lengths around the vector width, with ties, infinities and NaNs
 * (NaN wins, ties keep the first), float32 and float64; the gradient
 * with indices outside their windows (the general scatter) and outside
 * their planes by multiples of 2^32 (reported); rows shorter
 * than a vector, and planes of odd sizes (a row and column in no window);
 * the general kernel's windows of other sizes, strides and paddings. */
#include "harness.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/pool.h"

#include <stdlib.h>
#include <string.h>

static double value(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    unsigned r = (*seed >> 8) % 64;
    if (r == 0)
        return NAN;
    if (r == 1)
        return INFINITY;
    if (r == 2)
        return -INFINITY;
    return (double)(r % 5) - 2.0; /* few values: many ties */
}

/* one plane, any window: PyTorch's output size and window clipping,
 * NaN wins, ties keep the first in row-major window order */
static void ref_max(const double *x, const tg__pool_geom *g, double *y, int64_t *idx)
{
    for (int64_t oh = 0; oh < g->OH; oh++)
        for (int64_t ow = 0; ow < g->OW; ow++) {
            int64_t h0 = oh * g->sh - g->ph, w0 = ow * g->sw - g->pw;
            int64_t h1 = h0 + g->kh < g->H ? h0 + g->kh : g->H;
            int64_t w1 = w0 + g->kw < g->W ? w0 + g->kw : g->W;
            h0 = h0 < 0 ? 0 : h0;
            w0 = w0 < 0 ? 0 : w0;
            double m = -INFINITY;
            int64_t mi = h0 * g->W + w0;
            for (int64_t h = h0; h < h1; h++)
                for (int64_t w = w0; w < w1; w++)
                    if (x[h * g->W + w] > m || x[h * g->W + w] != x[h * g->W + w]) {
                        m = x[h * g->W + w];
                        mi = h * g->W + w;
                    }
            y[oh * g->OW + ow] = m;
            idx[oh * g->OW + ow] = mi;
        }
}

/* n values into x and, as float or double, into tx */
static void fill(double *x, char *tx, int64_t n, bool f64, unsigned *seed)
{
    for (int64_t i = 0; i < n; i++) {
        x[i] = value(seed);
        if (f64)
            ((double *)tx)[i] = x[i];
        else
            ((float *)tx)[i] = (float)x[i];
    }
}

static bool same(double a, double b) { return a == b || (a != a && b != b); }

/* the kernel's n maxima (float or double) and indices are the reference's */
static bool same_maxima(const char *ty, const int64_t *idx, const double *ey,
                        const int64_t *eidx, int64_t n, bool f64)
{
    bool ok = true;
    for (int64_t i = 0; i < n; i++) {
        double v = f64 ? ((const double *)ty)[i] : ((const float *)ty)[i];
        ok &= same(v, ey[i]) && idx[i] == eidx[i];
    }
    return ok;
}

/* planes of OH x OW outputs from 2 OH + odd x 2 OW + odd inputs (the last
 * row and column of odd sizes in no window) */
static void check(bool f64, int64_t OH, int64_t OW, int64_t odd, unsigned seed)
{
    int64_t H = 2 * OH + odd, W = 2 * OW + odd, planes = 3, in_n = H * W, out_n = OH * OW;
    size_t z = f64 ? sizeof(double) : sizeof(float);
    double *x = malloc(sizeof(double) * (size_t)(planes * in_n));
    double *ey = malloc(sizeof(double) * (size_t)(planes * out_n));
    int64_t *eidx = malloc(sizeof(int64_t) * (size_t)(planes * out_n));
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(planes * out_n));
    char *tx = malloc(z * (size_t)(planes * in_n)), *ty = malloc(z * (size_t)(planes * out_n));
    fill(x, tx, planes * in_n, f64, &seed);
    tg__pool_geom g = {.nd = 2, .in = {1, H, W}, .out = {1, OH, OW}, .k = {1, 2, 2}, .s = {1, 2, 2}};
    for (int64_t p = 0; p < planes; p++)
        ref_max(x + p * in_n, &g, ey + p * out_n, eidx + p * out_n);
    CHECK(!tg__pool_run(TG_POOL_MAX, &g, f64 ? TG_FLOAT64 : TG_FLOAT32, tx, ty, idx, planes,
                      in_n, out_n));
    CHECK(same_maxima(ty, idx, ey, eidx, planes * out_n, f64));
    /* one-byte offsets: the same maxima, the argmax's place in its window */
    char *cy = malloc(z * (size_t)(planes * out_n));
    uint8_t *off = malloc((size_t)(planes * out_n));
    if (f64)
        tg__maxpool2x2c_planes_f64((const double *)tx, planes, H, W, OH, OW, (double *)cy, off);
    else
        tg__maxpool2x2c_planes_f32((const float *)tx, planes, H, W, OH, OW, (float *)cy, off);
    bool ok = true;
    for (int64_t i = 0; i < planes * out_n; i++) {
        int64_t o = i % out_n, e = eidx[i], b = 2 * (o / OW) * W + 2 * (o % OW);
        int64_t want = (e - b) / W * 2 + (e - b) % W;
        double v = f64 ? ((double *)cy)[i] : ((float *)cy)[i];
        ok &= same(v, ey[i]) && off[i] == want;
    }
    CHECK(ok);
    /* the gradient: dy at each argmax, zeros elsewhere */
    char *dx = malloc(z * (size_t)(planes * in_n));
    for (int64_t i = 0; i < planes * out_n; i++) {
        if (f64)
            ((double *)ty)[i] = (double)(i + 1);
        else
            ((float *)ty)[i] = (float)(i + 1);
    }
    for (int round = 0; round < 2; round++) {
        if (round == 1 && out_n > 1) /* one index elsewhere in the plane */
            eidx[out_n / 2] = idx[out_n / 2] = (idx[out_n / 2] + 2 * W) % in_n;
        memset(dx, 0x7f, z * (size_t)(planes * in_n));
        CHECK(!tg__pool_run(TG_POOL_MAX_GRAD, &g, f64 ? TG_FLOAT64 : TG_FLOAT32, ty, dx,
                          idx, planes, out_n, in_n));
        double *e = calloc((size_t)(planes * in_n), sizeof(double));
        for (int64_t p = 0; p < planes; p++)
            for (int64_t o = 0; o < out_n; o++)
                e[p * in_n + eidx[p * out_n + o]] += (double)(p * out_n + o + 1);
        ok = true;
        for (int64_t i = 0; i < planes * in_n; i++)
            ok &= (f64 ? ((double *)dx)[i] : ((float *)dx)[i]) == e[i];
        CHECK(ok);
        if (round == 0 && !odd) { /* from the offsets */
            memset(dx, 0x7f, z * (size_t)(planes * in_n));
            CHECK(f64 ? tg__maxpool2x2c_grad_planes_f64((double *)ty, off, planes, OH, OW,
                                                        (double *)dx)
                      : tg__maxpool2x2c_grad_planes_f32((float *)ty, off, planes, OH, OW,
                                                        (float *)dx));
            ok = true;
            for (int64_t i = 0; i < planes * in_n; i++)
                ok &= (f64 ? ((double *)dx)[i] : ((float *)dx)[i]) == e[i];
            CHECK(ok);
            off[out_n / 2] = 4; /* outside its window */
            CHECK(!(f64 ? tg__maxpool2x2c_grad_planes_f64((double *)ty, off, planes, OH, OW,
                                                          (double *)dx)
                        : tg__maxpool2x2c_grad_planes_f32((float *)ty, off, planes, OH, OW,
                                                          (float *)dx)));
        }
        free(e);
    }
    /* positions whose low 32 bits name an element of the window (the
     * vector gradient compares offsets in int32 lanes) but which lie far
     * outside the plane, above it or below zero: reported, not taken */
    static const int64_t far[] = {(int64_t)1 << 32, -((int64_t)1 << 32), INT64_MIN};
    for (size_t f = 0; f < sizeof far / sizeof far[0]; f++) {
        int64_t o = out_n / 2, keep = idx[o];
        idx[o] = keep + far[f];
        CHECK(tg__pool_run(TG_POOL_MAX_GRAD, &g, f64 ? TG_FLOAT64 : TG_FLOAT32, ty, dx, idx,
                           planes, out_n, in_n));
        idx[o] = keep;
    }
    free(cy);
    free(off);
    free(x);
    free(ey);
    free(eidx);
    free(idx);
    free(tx);
    free(ty);
    free(dx);
}

static void test_max_2x2(void)
{
    static const int64_t widths[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 16, 17, 23};
    for (int f64 = 0; f64 < 2; f64++)
        for (int odd = 0; odd < 2; odd++)
            for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
                for (int64_t oh = 1; oh <= 5; oh += 2)
                    check(f64, oh + (int64_t)i % 2, widths[i], odd, 7u + (unsigned)i);
}

/* windows of other sizes, strides and paddings (the general kernel, whose
 * outputs inside a row run a vector at a time and the edges one by one),
 * rows from shorter than a vector to several vectors and a tail */
/* one geometry of windows k (kh, kw, sh, sw, ph, pw) over H x W planes */
/* the values alone (TG_POOL_MAX_VALUES, inference) at every instruction
 * set: max_plane's bits, with every other zero of x made -0 first (which of
 * -0 and +0 a window keeps, and which NaN, follow its window order) */
static void check_values(const tg__pool_geom *g, bool f64, char *tx, int64_t planes,
                         int64_t in_n, int64_t out_n)
{
    size_t z = f64 ? sizeof(double) : sizeof(float), bytes = z * (size_t)(planes * out_n);
    tg_dtype dt = f64 ? TG_FLOAT64 : TG_FLOAT32;
    int zeros = 0;
    for (int64_t i = 0; i < planes * in_n; i++) {
        double v = f64 ? ((double *)tx)[i] : ((float *)tx)[i];
        if (v == 0 && zeros++ % 2) {
            if (f64)
                ((double *)tx)[i] = -0.0;
            else
                ((float *)tx)[i] = -0.0f;
        }
    }
    char *want = malloc(bytes), *got = malloc(bytes);
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(planes * out_n));
    CHECK(!tg__pool_run(TG_POOL_MAX, g, dt, tx, want, idx, planes, in_n, out_n));
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
        tg__cpu_force((tg__isa)isa);
        memset(got, 0x55, bytes);
        CHECK(!tg__pool_run(TG_POOL_MAX_VALUES, g, dt, tx, got, NULL, planes, in_n, out_n));
        if (memcmp(got, want, bytes) != 0)
            tt_fail(__FILE__, __LINE__, "max values %s %s: %lldx%lld k %lldx%lld s %lldx%lld "
                    "p %lldx%lld: not max_plane's bits", tg__isa_name(tg__cpu_isa()),
                    f64 ? "f64" : "f32", (long long)g->H, (long long)g->W, (long long)g->kh,
                    (long long)g->kw, (long long)g->sh, (long long)g->sw, (long long)g->ph,
                    (long long)g->pw);
        tt_checks++;
    }
    tg__cpu_force(tg__cpu_detected());
    free(want);
    free(got);
    free(idx);
}

static void check_general(bool f64, int64_t H, int64_t W, const int64_t *k, unsigned *seed)
{
    tg__pool_geom g = {.nd = 2, .in = {1, H, W}, .k = {1, k[0], k[1]}, .s = {1, k[2], k[3]},
                       .p = {0, k[4], k[5]}};
    g.out[0] = 1;
    g.out[1] = (H + 2 * k[4] - k[0]) / k[2] + 1;
    g.out[2] = (W + 2 * k[5] - k[1]) / k[3] + 1;
    int64_t planes = 2, in_n = H * W, out_n = g.OH * g.OW;
    size_t z = f64 ? sizeof(double) : sizeof(float);
    double *x = malloc(sizeof(double) * (size_t)(planes * in_n));
    double *ey = malloc(sizeof(double) * (size_t)(planes * out_n));
    int64_t *eidx = malloc(sizeof(int64_t) * (size_t)(planes * out_n));
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(planes * out_n));
    char *tx = malloc(z * (size_t)(planes * in_n)), *ty = malloc(z * (size_t)(planes * out_n));
    fill(x, tx, planes * in_n, f64, seed);
    for (int64_t p = 0; p < planes; p++)
        ref_max(x + p * in_n, &g, ey + p * out_n, eidx + p * out_n);
    CHECK(!tg__pool_run(TG_POOL_MAX, &g, f64 ? TG_FLOAT64 : TG_FLOAT32, tx, ty, idx, planes,
                        in_n, out_n));
    CHECK(same_maxima(ty, idx, ey, eidx, planes * out_n, f64));
    check_values(&g, f64, tx, planes, in_n, out_n);
    free(x);
    free(ey);
    free(eidx);
    free(idx);
    free(tx);
    free(ty);
}

/* windows of other sizes, strides and paddings (the general kernel, whose
 * outputs inside a row run a vector at a time and the edges one by one),
 * rows from shorter than a vector to several vectors and a tail */
static void test_max_general(void)
{
    static const int64_t sizes[][2] = {{1, 1}, {3, 5}, {7, 9}, {12, 31}, {17, 40}};
    static const int64_t windows[][6] = { /* kh, kw, sh, sw, ph, pw */
        {3, 3, 2, 2, 1, 1}, {3, 3, 1, 1, 1, 1}, {2, 3, 1, 2, 0, 1}, {1, 5, 1, 3, 0, 2},
        {5, 2, 2, 1, 2, 0}, {3, 1, 3, 1, 0, 0}};
    unsigned seed = 3;
    for (int f64 = 0; f64 < 2; f64++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (size_t j = 0; j < sizeof windows / sizeof windows[0]; j++) {
                const int64_t *k = windows[j], H = sizes[i][0], W = sizes[i][1];
                if (k[0] <= H + 2 * k[4] && k[1] <= W + 2 * k[5])
                    check_general(f64, H, W, k, &seed);
            }
}

/* ceil mode: the last window of a row or column runs past the input */
static void test_values_ceil(void)
{
    unsigned seed = 11;
    for (int f64 = 0; f64 < 2; f64++) {
        tg__pool_geom g = {.nd = 2, .in = {1, 7, 10}, .k = {1, 3, 3}, .s = {1, 2, 2},
                           .p = {0, 1, 0}, .out = {1, 4, 5}};
        size_t z = f64 ? sizeof(double) : sizeof(float);
        double x[2 * 70];
        char *tx = malloc(z * 2 * 70);
        fill(x, tx, 2 * 70, f64, &seed);
        check_values(&g, f64, tx, 2, 70, 20);
        free(tx);
    }
}

/* the vector kernels of the values (pool_max_values_arch.h): float32
 * windows of 1 to 4 columns at column stride 1 or 2 with rows of at least
 * a vector of outputs (ResNet's 3 x 3 stride-2 pooling of 112 x 112
 * planes, 2 x 2 stride 2, 3 x 3 stride 1), odd sizes, padding of rows
 * and columns, ceil mode, several planes split over 1 and 2 threads, and
 * NaNs of different bits (the last in window order wins) */
static int64_t out_len(int64_t n, int64_t k, int64_t s, int64_t p, bool ceil_mode)
{
    int64_t o = (n + 2 * p - k + (ceil_mode ? s - 1 : 0)) / s + 1;
    if (ceil_mode && (o - 1) * s >= n + p)
        o--;
    return o;
}

static void check_vector(int64_t planes, int64_t H, int64_t W, const int64_t *k,
                         bool ceil_mode, unsigned *seed)
{
    tg__pool_geom g = {.nd = 2, .in = {1, H, W}, .k = {1, k[0], k[1]}, .s = {1, k[2], k[3]},
                       .p = {0, k[4], k[5]}, .ceil_mode = ceil_mode};
    g.out[0] = 1;
    g.out[1] = out_len(H, k[0], k[2], k[4], ceil_mode);
    g.out[2] = out_len(W, k[1], k[3], k[5], ceil_mode);
    int64_t in_n = H * W, out_n = g.OH * g.OW;
    double *x = malloc(sizeof(double) * (size_t)(planes * in_n));
    float *tx = malloc(sizeof(float) * (size_t)(planes * in_n));
    fill(x, (char *)tx, planes * in_n, false, seed);
    /* NaNs of either sign and two payloads: which one a window keeps shows */
    const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7fc00123u, 0xffa00001u};
    int n_nan = 0;
    for (int64_t i = 0; i < planes * in_n; i++)
        if (tx[i] != tx[i])
            memcpy(&tx[i], &nans[n_nan++ % 4], sizeof(float));
    for (int threads = 1; threads <= 2; threads++) {
        tg_set_num_threads(threads);
        check_values(&g, false, (char *)tx, planes, in_n, out_n);
    }
    free(x);
    free(tx);
}

static void test_values_vector(void)
{
    unsigned seed = 5;
    static const int64_t windows[][6] = { /* kh, kw, sh, sw, ph, pw */
        {3, 3, 2, 2, 1, 1}, {2, 2, 2, 2, 0, 0}, {3, 3, 1, 1, 1, 1}, {3, 3, 2, 2, 0, 0},
        {2, 3, 1, 2, 0, 1}, {1, 4, 1, 2, 0, 2}, {4, 1, 3, 1, 1, 0}, {5, 2, 2, 1, 2, 1},
        {1, 1, 1, 2, 0, 0}, {3, 4, 2, 1, 1, 0}};
    static const int64_t sizes[][2] = {{112, 112}, {9, 31}, {7, 32}, {6, 33}, {5, 34},
                                       {4, 47}, {3, 16}, {8, 17}, {2, 70}};
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int c = 0; c < 2; c++) {
                const int64_t *k = windows[w], H = sizes[i][0], W = sizes[i][1];
                if (k[0] <= H + 2 * k[4] && k[1] <= W + 2 * k[5])
                    check_vector(H == 112 ? 2 : 3, H, W, k, c == 1, &seed);
            }
    /* ResNet-18's pooling at batch 8 in one call: 512 planes, every split */
    check_vector(512, 112, 112, windows[0], false, &seed);
    tg_set_num_threads(2);
}

/* which windows take the vector kernels, at each instruction set: the
 * others (wider windows, strides above 2, rows shorter than a vector,
 * float64) keep the general loops */
static void test_values_lanes(void)
{
    struct {
        int64_t W, kw, sw, pw, OW;
        tg_dtype dt;
        int lanes[3]; /* generic, AVX2, AVX-512 */
    } cases[] = {
        {112, 3, 2, 1, 56, TG_FLOAT32, {0, 8, 16}}, /* ResNet-18 */
        {112, 3, 2, 1, 56, TG_FLOAT64, {0, 0, 0}},
        {28, 2, 2, 0, 14, TG_FLOAT32, {0, 8, 8}},
        {14, 2, 2, 0, 7, TG_FLOAT32, {0, 0, 0}},
        {56, 3, 1, 1, 56, TG_FLOAT32, {0, 8, 16}},
        {112, 3, 3, 1, 38, TG_FLOAT32, {0, 0, 0}},
        {112, 5, 2, 2, 56, TG_FLOAT32, {0, 0, 0}},
        {112, 4, 2, 2, 57, TG_FLOAT32, {0, 8, 16}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tg__pool_geom g = {.nd = 2, .in = {1, 9, cases[c].W}, .k = {1, 3, cases[c].kw},
                           .s = {1, 2, cases[c].sw}, .p = {0, 1, cases[c].pw},
                           .out = {1, 5, cases[c].OW}};
        for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
            tg__cpu_force((tg__isa)isa);
            int want = cases[c].lanes[tg__cpu_isa()];
            if (tg__maxpool_values_lanes(&g, cases[c].dt) != want)
                tt_fail(__FILE__, __LINE__, "case %zu at %s: %d lanes, expected %d", c,
                        tg__isa_name(tg__cpu_isa()), tg__maxpool_values_lanes(&g, cases[c].dt),
                        want);
            tt_checks++;
        }
        g.nd = 3; /* volumes never */
        CHECK(tg__maxpool_values_lanes(&g, cases[c].dt) == 0);
    }
    tg__cpu_force(tg__cpu_detected());
}

int main(void)
{
    RUN(test_max_2x2);
    RUN(test_max_general);
    RUN(test_values_ceil);
    RUN(test_values_vector);
    RUN(test_values_lanes);
    return tt_finish();
}
