/* The dense implicit-GEMM convolution (kernels/cpu/conv_dense.h) against
 * plain reference loops in float64: output channels around the tile
 * heights (6, 12) and input channels around the vector widths, strides 1,
 * 2 and 3 (and unequal ones), padding, dilation, rectangular images and
 * kernels, 1x1 strided projections and a 7x7 stride-2 stem, batch 1 and
 * several images, with and without bias and relu, float32 and float64,
 * with and without a shortcut added before relu (ResNet's residual
 * connection), on 1 and 2 threads (every shape split into the threads'
 * homes on 2, and on 3 and 4), with each tile shape and the narrower tails
 * of the last positions, at every instruction set this CPU has. Also: relu's
 * bits (NaN passes, -0 becomes +0), the automatic choice (which shapes
 * come here, groups > 1 refused), and one result for every thread count. */
#include "conv_reference.h"
#include "harness.h"
#include "kernel_data.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_dense.h"
#include "kernels/cpu/cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef conv_shape shape;

static const shape grid[] = {
    {1, 64, 12, 12, 64, 3, 3, 1, 1, 1, 1, 1, 1},  /* ResNet's 3x3, small plane */
    {2, 17, 9, 11, 37, 3, 3, 1, 1, 1, 1, 1, 1},   /* odd channels and plane */
    {3, 5, 13, 10, 13, 3, 3, 2, 2, 1, 1, 1, 1},   /* stride 2, odd sizes */
    {1, 16, 14, 14, 32, 1, 1, 2, 2, 0, 0, 1, 1},  /* 1x1 stride-2 projection */
    {1, 3, 30, 30, 19, 7, 7, 2, 2, 3, 3, 1, 1},   /* 7x7 stride-2 stem */
    {2, 8, 11, 17, 7, 3, 3, 1, 1, 2, 2, 2, 2},    /* dilation 2 */
    {1, 9, 16, 15, 25, 3, 2, 3, 2, 1, 0, 1, 3},   /* unequal strides, dilation */
    {2, 12, 7, 7, 70, 3, 3, 1, 1, 1, 1, 1, 1},    /* 7x7 plane, o past the tiles */
    {1, 4, 5, 6, 1, 5, 5, 1, 1, 3, 3, 1, 1},      /* one output channel, wide padding */
    {1, 2, 1, 40, 11, 1, 3, 1, 1, 0, 1, 1, 1},    /* one row */
    {1, 6, 6, 6, 12, 2, 2, 3, 3, 0, 0, 1, 1},     /* stride past the kernel */
    /* batches whose threads' homes hold several images, each prepared
     * just before its units (odd planes, stride 1 and 2) */
    {8, 9, 11, 9, 40, 3, 3, 1, 1, 1, 1, 1, 1},
    {7, 6, 13, 11, 33, 3, 3, 2, 2, 1, 1, 1, 1},
    /* the last positions of an image in a narrower tail (wide positions
     * p: every remainder a tail takes, at every vector width) */
    {1, 8, 14, 14, 20, 3, 3, 2, 2, 1, 1, 1, 1},   /* ResNet's 14 -> 7, p 55 */
    {1, 16, 14, 14, 13, 1, 1, 2, 2, 0, 0, 1, 1},  /* 1x1 14 -> 7, p 49 */
    {2, 7, 5, 5, 9, 3, 3, 1, 1, 1, 1, 1, 1},      /* p 29 */
    {1, 5, 1, 41, 30, 1, 1, 1, 1, 0, 0, 1, 1},    /* p 41 */
    {1, 5, 1, 37, 30, 1, 1, 1, 1, 0, 0, 1, 1},    /* p 37 */
    {1, 5, 1, 19, 30, 1, 1, 1, 1, 0, 0, 1, 1},    /* p 19 */
    {1, 5, 1, 21, 30, 1, 1, 1, 1, 0, 0, 1, 1},    /* p 21 */
    {1, 5, 1, 10, 30, 1, 1, 1, 1, 0, 0, 1, 1},    /* p 10 */
};

static double value(const void *p, int64_t i, bool f64)
{
    return f64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

/* the weights as an ONNX model's initializers (a frozen storage's serial,
 * conv.h): packed on the first call where the tiles read them packed, the
 * packed form reused on the second; both give the bits of `want`, the
 * run with the weights as they are (the same sums in the same order) */
static void check_frozen(const tg__conv_geom *g0, bool f64, const void *x, const void *w,
                         const void *b, const void *res, bool relu, const void *want,
                         int64_t ny)
{
    static uint64_t serial = (uint64_t)1 << 40;
    tg__conv_geom g = *g0;
    g.w_serial = ++serial;
    size_t bytes = (size_t)ny * (f64 ? 8 : 4);
    void *y = malloc(bytes);
    for (int call = 0; call < 2; call++) {
        memset(y, 0x7f, bytes);
        CHECK_OK(tg__conv_dense_forward_res(f64 ? TG_FLOAT64 : TG_FLOAT32, &g, x, w, b, res,
                                            relu, y));
        CHECK(memcmp(y, want, bytes) == 0);
    }
    free(y);
}

/* one run: every output within the dtype's rounding of a sum of fan
 * unit-sized products; relu's outputs are +0 or positive or NaN; with
 * res, a shortcut added before relu (tg__conv_dense_forward_res) */
static void check_run(const shape *s, bool f64, bool bias, bool relu, bool res, int threads)
{
    tg__conv_geom g = conv_geom_of(s);
    int64_t nx = g.n * g.c * g.h * g.w, nw = g.o * g.c * g.kh * g.kw;
    int64_t ny = g.n * g.o * g.oh * g.ow;
    double *x = malloc(sizeof(double) * (size_t)nx), *w = malloc(sizeof(double) * (size_t)nw);
    double *b = malloc(sizeof(double) * (size_t)g.o), *y = malloc(sizeof(double) * (size_t)ny);
    fill(x, nx, 1);
    fill(w, nw, 2);
    fill(b, g.o, 3);
    double *r = malloc(sizeof(double) * (size_t)ny);
    fill(r, ny, 6);
    conv_reference(&g, x, w, bias ? b : NULL, res ? r : NULL, relu, y);
    void *tx = typed(x, nx, f64), *tw = typed(w, nw, f64), *tb = typed(b, g.o, f64);
    void *tr = typed(r, ny, f64), *out = malloc((size_t)ny * 8);
    tg_set_num_threads(threads);
    CHECK_OK(tg__conv_dense_forward_res(f64 ? TG_FLOAT64 : TG_FLOAT32, &g, tx, tw,
                                        bias ? tb : NULL, res ? tr : NULL, relu, out));
    double worst = 0, tol = (f64 ? 1e-12 : 3e-6) * (double)(g.c * g.kh * g.kw + 1);
    bool signs = true;
    for (int64_t i = 0; i < ny; i++) {
        double v = value(out, i, f64), d = fabs(v - y[i]);
        worst = d > worst || d != d ? d : worst;
        signs &= !relu || (v > 0 || (v == 0 && !signbit(v)));
    }
    tt_checks++;
    if (!(worst <= tol) || !signs)
        tt_fail(__FILE__, __LINE__,
                "%s %s bias %d relu %d res %d threads %d: n%lld c%lld %lldx%lld o%lld k%lldx%lld "
                "s%lldx%lld p%lldx%lld d%lldx%lld: worst error %g (tol %g), relu signs %d",
                tg__isa_name(tg__cpu_isa()), f64 ? "f64" : "f32", bias, relu, res, threads,
                (long long)s->n, (long long)s->c, (long long)s->h, (long long)s->w,
                (long long)s->o, (long long)s->kh, (long long)s->kw, (long long)s->sh,
                (long long)s->sw, (long long)s->ph, (long long)s->pw, (long long)s->dh,
                (long long)s->dw, worst, tol, signs);
    check_frozen(&g, f64, tx, tw, bias ? tb : NULL, res ? tr : NULL, relu, out, ny);
    free(x), free(w), free(b), free(y), free(r), free(tx), free(tw), free(tb), free(tr);
    free(out);
}

static void test_every_shape_and_isa(void)
{
    tg__conv_dense_set_par_work(0); /* every shape over the threads' homes on 2 */
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
        tg__cpu_force((tg__isa)isa);
        for (int kind = -1; kind < 5; kind++) { /* chosen, then each tile shape */
            tg__conv_dense_force_tile(kind);
            for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++)
                for (int run = 0; run < 16; run++)
                    check_run(&grid[i], run & 1, run & 2, run & 4, run & 8,
                              1 + (int)(i + (size_t)run) % 2);
        }
    }
    tg__conv_dense_force_tile(-1);
    tg__cpu_force(tg__cpu_detected());
    /* a batch of 3 in chunks of one image, and of two (~4 KB each in
     * float32, ~8 KB in float64) with one left */
    const int64_t chunks[] = {1, 9000, 17000};
    for (int i = 0; i < 3; i++) {
        tg__conv_dense_set_chunk_bytes(chunks[i]);
        check_run(&grid[2], false, true, true, true, 2);
        check_run(&grid[2], true, true, false, false, 1);
    }
    tg__conv_dense_set_chunk_bytes((int64_t)32 << 20);
    /* 3 and 4 threads: homes beyond the second, some of them empty */
    for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++)
        for (int run = 0; run < 4; run++)
            check_run(&grid[i], run & 1, true, true, run & 2, 3 + (int)(i % 2));
    tg__conv_dense_set_par_work((int64_t)1 << 19);
    tg_set_num_threads(2);
}

/* a layer's input, weights, bias and shortcut in the dtype, filled from
 * seed; y's bytes */
typedef struct layer {
    void *x, *w, *b, *r;
    size_t bytes;
} layer;

static layer make_layer(const tg__conv_geom *g, bool f64, int seed)
{
    int64_t nx = g->n * g->c * g->h * g->w, nw = g->o * g->c * g->kh * g->kw;
    int64_t ny = g->n * g->o * g->oh * g->ow;
    double *d = malloc(sizeof(double) * (size_t)(nx + nw + g->o + ny));
    fill(d, nx + nw + g->o + ny, seed);
    layer l = {typed(d, nx, f64), typed(d + nx, nw, f64), typed(d + nx + nw, g->o, f64),
               typed(d + nx + nw + g->o, ny, f64), (size_t)ny * (f64 ? 8 : 4)};
    free(d);
    return l;
}

static void free_layer(layer *l) { free(l->x), free(l->w), free(l->b), free(l->r); }

/* every tail of every tile shape at every instruction set and dtype is
 * run by some shape of the grid (so that test_every_shape_and_isa checks
 * it), and gives the bits of the whole tile it replaces (each output is
 * the same sum over the taps in the same order) */
static void test_tails(void)
{
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
        tg__cpu_force((tg__isa)isa);
        for (int kind = 0; kind < 5; kind++) {
            tg__conv_dense_force_tile(kind);
            for (int f64 = 0; f64 < 2; f64++) {
                tg_dtype dt = f64 ? TG_FLOAT64 : TG_FLOAT32;
                unsigned seen = 0, wanted = 0;
                for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++) {
                    tg__conv_geom g = conv_geom_of(&grid[i]);
                    tg__dense_plan plan;
                    tg__conv_dense_describe(dt, &g, &plan);
                    if (plan.over_out) /* rows of their own width: no tails */
                        break;
                    wanted = (1u << plan.nv) - 2; /* tails of 1 .. nv - 1 vectors */
                    if (!plan.tail_nv)
                        continue;
                    seen |= 1u << plan.tail_nv;
                    CHECK(plan.tail_nv < plan.nv);
                    /* the same bits without the tail, with a shortcut and relu */
                    layer l = make_layer(&g, f64, 7);
                    void *y1 = malloc(l.bytes), *y2 = malloc(l.bytes);
                    CHECK_OK(tg__conv_dense_forward_res(dt, &g, l.x, l.w, l.b, l.r, true, y1));
                    tg__conv_dense_set_tails(false);
                    CHECK_OK(tg__conv_dense_forward_res(dt, &g, l.x, l.w, l.b, l.r, true, y2));
                    tg__conv_dense_set_tails(true);
                    CHECK(memcmp(y1, y2, l.bytes) == 0);
                    free_layer(&l), free(y1), free(y2);
                }
                if ((seen & wanted) != wanted)
                    tt_fail(__FILE__, __LINE__, "%s kind %d %s: tails seen 0x%x of 0x%x",
                            tg__isa_name(tg__cpu_isa()), kind, f64 ? "f64" : "f32",
                            seen, wanted);
                tt_checks++;
            }
        }
    }
    tg__conv_dense_force_tile(-1);
    tg__cpu_force(tg__cpu_detected());
}

/* the tiles over output channels give the same bits when they take
 * each panel's taps a few at a time, every block's tiles keeping their
 * sums between the parts (conv_dense.c, run_block_split), on one thread
 * and on two, with a shortcut and relu */
static void test_panel_parts(void)
{
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
        tg__cpu_force((tg__isa)isa);
        for (int kind = 0; kind < 5; kind++) {
            tg__conv_dense_force_tile(kind);
            for (int f64 = 0; f64 < 2; f64++) {
                tg_dtype dt = f64 ? TG_FLOAT64 : TG_FLOAT32;
                for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++) {
                    tg__conv_geom g = conv_geom_of(&grid[i]);
                    tg__dense_plan plan;
                    tg__conv_dense_describe(dt, &g, &plan);
                    if (!plan.over_out)
                        break;
                    layer l = make_layer(&g, f64, 8);
                    void *whole = malloc(l.bytes), *parts = malloc(l.bytes);
                    tg_set_num_threads(1);
                    CHECK_OK(tg__conv_dense_forward_res(dt, &g, l.x, l.w, l.b, l.r, true, whole));
                    for (int64_t taps = 1; taps <= 5; taps += 4) {
                        tg__conv_dense_set_part_bytes(taps * plan.mr * (f64 ? 8 : 4));
                        for (int threads = 1; threads <= 2; threads++) {
                            tg_set_num_threads(threads);
                            memset(parts, 0x7f, l.bytes);
                            CHECK_OK(tg__conv_dense_forward_res(dt, &g, l.x, l.w, l.b, l.r, true,
                                                                parts));
                            CHECK(memcmp(whole, parts, l.bytes) == 0);
                        }
                    }
                    tg__conv_dense_set_part_bytes((int64_t)256 * 1024);
                    free_layer(&l), free(whole), free(parts);
                }
            }
        }
    }
    tg_set_num_threads(2);
    tg__conv_dense_force_tile(-1);
    tg__cpu_force(tg__cpu_detected());
}

/* ResNet's layer 4 (7x7 planes) runs its last positions in a tail at
 * every vector width: 55 wide positions in 56, not 64 */
static void test_tail_chosen(void)
{
    shape l4 = {1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1};
    tg__conv_geom g = conv_geom_of(&l4);
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
        tg__cpu_force((tg__isa)isa);
        tg__dense_plan plan;
        tg__conv_dense_describe(TG_FLOAT32, &g, &plan);
        int64_t nr = (int64_t)plan.lanes * plan.nv, tiles = (plan.positions + nr - 1) / nr;
        int64_t computed = (tiles - 1) * nr +
                           (int64_t)plan.lanes * (plan.tail_nv ? plan.tail_nv : plan.nv);
        CHECK(plan.positions == 55);
        if (computed - plan.positions >= plan.lanes)
            tt_fail(__FILE__, __LINE__, "%s: %s %dx%d tail %d computes %lld positions for 55",
                    tg__isa_name(tg__cpu_isa()), plan.isa, plan.mr, plan.nv, plan.tail_nv,
                    (long long)computed);
        tt_checks++;
    }
    tg__cpu_force(tg__cpu_detected());
}

/* a ResNet-sized layer on 1 and 2 threads: the same bits (each output is
 * one tile's sum over the taps in order, whoever computes it) */
static void test_threads_same_bits(void)
{
    shape s = {2, 64, 14, 14, 96, 3, 3, 1, 1, 1, 1, 1, 1};
    tg__conv_geom g = conv_geom_of(&s);
    int64_t nx = g.n * g.c * g.h * g.w, nw = g.o * g.c * 9, ny = g.n * g.o * g.oh * g.ow;
    double *x = malloc(sizeof(double) * (size_t)nx), *w = malloc(sizeof(double) * (size_t)nw);
    fill(x, nx, 4);
    fill(w, nw, 5);
    float *fx = typed(x, nx, false), *fw = typed(w, nw, false);
    float *a = malloc(sizeof(float) * (size_t)ny), *b = malloc(sizeof(float) * (size_t)ny);
    tg_set_num_threads(1);
    CHECK_OK(tg__conv_dense_forward(TG_FLOAT32, &g, fx, fw, NULL, true, a));
    tg_set_num_threads(2);
    CHECK_OK(tg__conv_dense_forward(TG_FLOAT32, &g, fx, fw, NULL, true, b));
    CHECK(memcmp(a, b, sizeof(float) * (size_t)ny) == 0);
    free(x), free(w), free(fx), free(fw), free(a), free(b);
}

/* NaN in the input reaches the outputs that read it through relu; -0
 * sums become +0; on a plane whose rows are stored element by element
 * (6 wide) and one whose rows are whole vectors (40 wide), with and
 * without a shortcut (+0 everywhere: the same outputs) */
static void check_relu_bits(int64_t hw, bool res)
{
    shape s = {1, 64, hw, hw, 40, 3, 3, 1, 1, 1, 1, 1, 1};
    tg__conv_geom g = conv_geom_of(&s);
    int64_t plane = hw * hw, nx = g.c * plane, nw = g.o * g.c * 9, ny = g.o * plane;
    float *x = calloc((size_t)nx, sizeof(float)), *w = calloc((size_t)nw, sizeof(float));
    float *y = malloc(sizeof(float) * (size_t)ny), *b = malloc(sizeof(float) * (size_t)g.o);
    float *r = calloc((size_t)ny, sizeof(float));
    for (int64_t o = 0; o < g.o; o++)
        b[o] = -0.0f;
    for (int64_t i = 0; i < nw; i++)
        w[i] = -1.0f;
    x[2 * hw + 2] = NAN; /* channel 0, (2, 2): read by outputs (1..3, 1..3) */
    CHECK_OK(tg__conv_dense_forward_res(TG_FLOAT32, &g, x, w, b, res ? r : NULL, true, y));
    int64_t nan_ok = 0, zero_ok = 0;
    for (int64_t o = 0; o < g.o; o++)
        for (int64_t p = 0; p < plane; p++) {
            int64_t oy = p / hw, ox = p % hw;
            bool reads = oy >= 1 && oy <= 3 && ox >= 1 && ox <= 3;
            float v = y[o * plane + p];
            nan_ok += reads ? isnan(v) : 0;
            zero_ok += !reads ? v == 0 && !signbit(v) : 0;
        }
    CHECK(nan_ok == 40 * 9);
    CHECK(zero_ok == 40 * (plane - 9));
    free(x), free(w), free(y), free(b), free(r);
}

static void test_relu_bits(void)
{
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
        tg__cpu_force((tg__isa)isa);
        for (int res = 0; res < 2; res++) {
            check_relu_bits(6, res);
            check_relu_bits(40, res);
        }
    }
    tg__cpu_force(tg__cpu_detected());
}

/* which shapes the automatic choice sends here, and the refusal of
 * groups (the caller checks wanted first; a direct call says why) */
static void test_choice(void)
{
    shape resnet = {1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1};
    shape lenet1 = {64, 1, 28, 28, 6, 5, 5, 1, 1, 2, 2, 1, 1};
    shape lenet2 = {64, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0, 1, 1};
    shape mobile_stem = {1, 3, 224, 224, 32, 3, 3, 2, 2, 1, 1, 1, 1};
    tg__conv_geom g = conv_geom_of(&resnet);
    CHECK(tg__conv_dense_wanted(&g));
    g.groups = 2;
    CHECK(!tg__conv_dense_wanted(&g));
    float one = 1;
    CHECK(tg__conv_dense_forward(TG_FLOAT32, &g, &one, &one, NULL, false, &one) == TG_ERR_ARG);
    g = conv_geom_of(&lenet1);
    CHECK(!tg__conv_dense_wanted(&g));
    g = conv_geom_of(&lenet2);
    CHECK(!tg__conv_dense_wanted(&g));
    g = conv_geom_of(&mobile_stem);
    CHECK(!tg__conv_dense_wanted(&g));
}

int main(void)
{
    RUN(test_every_shape_and_isa);
    RUN(test_tails);
    RUN(test_panel_parts);
    RUN(test_tail_chosen);
    RUN(test_threads_same_bits);
    RUN(test_relu_bits);
    RUN(test_choice);
    return tt_finish();
}
