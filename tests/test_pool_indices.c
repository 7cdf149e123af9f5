/* The pool_indices pass (level 2) and the ops it makes
 * (max_pool2d_compact, max_pool2d_compact_grad: one-byte argmax offsets
 * in the window instead of int64 plane positions): pooled values and
 * input gradients bitwise equal to level 0 for window shapes, strides,
 * padding and ceil_mode, overlapping windows (gradients that add up),
 * ties, NaN and infinities, float32 and float64, in both executors; where
 * the pass must not apply (indices fetched or read by another op, windows
 * over 256 elements); the ops run directly against max_pool2d and
 * max_pool2d_grad (also split across the pool), and their errors. */
#include "harness.h"
#include "ops/op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* values with many ties (multiples of 1/2 in [-2, 2]) and, with specials,
 * NaN, +inf and -inf here and there (a whole -inf window included) */
static tg_tensor *tied(tg_dtype dt, int64_t n, int64_t c, int64_t h, int64_t w,
                       bool specials, uint32_t seed)
{
    int64_t numel = n * c * h * w;
    double *v = malloc((size_t)numel * sizeof *v);
    for (int64_t i = 0; i < numel; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (double)((seed >> 24) % 9) / 2 - 2;
        if (specials && i % 23 == 7)
            v[i] = NAN;
        else if (specials && i % 29 == 3)
            v[i] = (i / 29) % 2 ? INFINITY : -INFINITY;
    }
    if (specials && h >= 2 && w >= 2)
        v[0] = v[1] = v[w] = v[w + 1] = -INFINITY;
    tg_tensor *t = tt_tensor(dt, 4, (int64_t[]){n, c, h, w}, v);
    free(v);
    return t;
}

static int compacted(tg_session *s, tg_tensor *x, int n_fetch, tg_tensor **f)
{
    return tt_pass_count(s, x, n_fetch, f, "pool_indices", "compacted");
}

/* fetches f (n of them) from x fed xv at levels 0 and 2, in both
 * executors: bitwise equal */
static void check_levels_equal(tg_session *s, tg_tensor *x, tg_tensor *xv, int n,
                               tg_tensor **f)
{
    tg_tensor *r0[4], *r[4];
    CHECK_OK(tg_session_set_executor(s, TG_EXECUTOR_SERIAL));
    tt_set_opt_level(s, 0);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, n, f, r0, 0, NULL));
    for (int e = 0; e < 2; e++) {
        CHECK_OK(tg_session_set_executor(s, e ? TG_EXECUTOR_PARALLEL : TG_EXECUTOR_SERIAL));
        tt_set_opt_level(s, 2);
        CHECK_OK(tg_session_run(s, 1, &x, &xv, n, f, r, 0, NULL));
        for (int i = 0; i < n; i++)
            if (!tt_same(r0[i], r[i]))
                tt_fail(__FILE__, __LINE__, "fetch %d differs from level 0 (%s executor)", i,
                        e ? "parallel" : "serial");
    }
}

typedef struct geo {
    int64_t h, w;
    tg_pool2d_opts o;
    int compacted; /* what the pass should do */
} geo;

static const geo geos[] = {
    {8, 8, {.kernel = {2, 2}}, 1}, /* LeNet's: whole 2x2 windows */
    {7, 9, {.kernel = {2, 2}}, 1}, /* odd planes: the general gradient */
    {9, 9, {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .ceil_mode = true}, 1},
    {6, 7, {.kernel = {3, 3}, .stride = {1, 1}}, 1}, /* overlapping: gradients add */
    {5, 8, {.kernel = {2, 3}, .stride = {1, 2}, .padding = {1, 1}}, 1},
    {16, 17, {.kernel = {16, 16}, .stride = {1, 1}}, 1}, /* 256: offsets up to 255 */
    {18, 17, {.kernel = {17, 16}}, 0},                   /* 272: int64 indices stay */
};

/* y = max_pool2d(x), loss = sum(y * c): y and dloss/dx at level 2 equal
 * level 0's */
static void test_levels_equal(void)
{
    for (size_t k = 0; k < sizeof geos / sizeof *geos; k++)
        for (int d = 0; d < 2; d++) {
            const geo *q = &geos[k];
            tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
            tg_graph *g = tg_graph_new("pool");
            tg_tensor *x = tg_placeholder(g, "x", dt, 4, (int64_t[]){2, 3, q->h, q->w});
            CHECK_OK(tg_graph_begin(g));
            tg_tensor *y = tg_max_pool2d(x, &q->o);
            CHECK_OK(tg_graph_end()); /* c is a concrete tensor (a constant) */
            tg_tensor *c = tt_rand_dtype(dt, 4, tg_shape(y), -1, 1);
            CHECK_OK(tg_graph_begin(g));
            tg_tensor *loss = tg_sum(tg_mul(y, c), 0, NULL, false);
            CHECK_OK(tg_graph_end());
            tg_tensor *f[2] = {y, NULL};
            CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 1, &x, &f[1]));
            tg_session *s = tg_session_new(g);
            int n = compacted(s, x, 2, f);
            if (n != q->compacted)
                tt_fail(__FILE__, __LINE__, "geometry %zu: compacted %d, expected %d", k, n,
                        q->compacted);
            for (int sp = 0; sp < 2; sp++)
                check_levels_equal(s, x, tied(dt, 2, 3, q->h, q->w, sp, 7u + (uint32_t)k), 2,
                                   f);
            tg_session_free(s);
            tg_graph_free(g);
        }
}

/* inference (the pooled values fetched, nothing differentiated): the
 * pass pool_values drops the indices (max_pool2d_values), bitwise level
 * 0's values; eager tg_max_pool2d without a gradient to record runs the
 * same op, with one the indexed one: the same bits again */
static void test_values_only(void)
{
    for (size_t k = 0; k < sizeof geos / sizeof *geos; k++)
        for (int d = 0; d < 2; d++) {
            const geo *q = &geos[k];
            tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
            tg_graph *g = tg_graph_new("pool_values");
            tg_tensor *x = tg_placeholder(g, "x", dt, 4, (int64_t[]){2, 3, q->h, q->w});
            CHECK_OK(tg_graph_begin(g));
            tg_tensor *y = tg_max_pool2d(x, &q->o);
            CHECK_OK(tg_graph_end());
            tg_session *s = tg_session_new(g);
            CHECK(tt_pass_count(s, x, 1, &y, "pool_values", "values_only") == 1);
            for (int sp = 0; sp < 2; sp++) {
                tg_tensor *xv = tied(dt, 2, 3, q->h, q->w, sp, 5u + (uint32_t)k);
                check_levels_equal(s, x, xv, 1, &y);
                tg_tensor *r0;
                tt_set_opt_level(s, 0);
                CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &y, &r0, 0, NULL));
                tg_tensor *plain = tg_max_pool2d(xv, &q->o); /* no gradient: the values op */
                CHECK_OK(tg_set_requires_grad(xv, true));
                tg_tensor *recorded = tg_max_pool2d(xv, &q->o);
                CHECK(plain && recorded && tt_same(plain, r0) && tt_same(recorded, r0));
                CHECK(tg_requires_grad(recorded));
            }
            tg_session_free(s);
            tg_graph_free(g);
        }
}

/* indices that something else reads stay int64 */
static void test_indices_used_elsewhere(void)
{
    tg_graph *g = tg_graph_new("pool_idx");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, (int64_t[]){1, 2, 6, 6});
    CHECK_OK(tg_graph_begin(g));
    int64_t k[2] = {2, 2};
    tg_attr a[4] = {TG_AINTS("kernel", k, 2), TG_AINTS("stride", k, 2),
                    TG_AINTS("padding", ((int64_t[]){0, 0}), 2), TG_AI("ceil_mode", 0)};
    tg_tensor *out[2] = {NULL, NULL};
    CHECK_OK(tg_op_run(tg_op_find("max_pool2d"), 1, &x, a, 4, out));
    tg_tensor *loss = tg_sum(tg_mul(out[0], out[0]), 0, NULL, false);
    tg_tensor *idx_plus = tg_add_scalar(out[1], 1.0); /* another reader */
    CHECK_OK(tg_graph_end());
    tg_tensor *dx;
    CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 1, &x, &dx));
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tied(TG_FLOAT32, 1, 2, 6, 6, true, 3);
    /* fetched */
    tg_tensor *f1[2] = {dx, out[1]};
    CHECK(compacted(s, x, 2, f1) == 0);
    check_levels_equal(s, x, xv, 2, f1);
    /* read by another op */
    tg_tensor *f2[2] = {dx, idx_plus};
    CHECK(compacted(s, x, 2, f2) == 0);
    check_levels_equal(s, x, xv, 2, f2);
    /* the gradient alone: compacted */
    CHECK(compacted(s, x, 1, &dx) == 1);
    check_levels_equal(s, x, xv, 1, &dx);
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- the ops run directly ---------------------------------------------------------- */
static int window_attrs(const tg_pool2d_opts *o, int64_t *buf, tg_attr *a)
{
    for (int i = 0; i < 2; i++) {
        buf[i] = o->kernel[i];
        buf[2 + i] = o->stride[i] ? o->stride[i] : o->kernel[i];
        buf[4 + i] = o->padding[i];
    }
    a[0] = (tg_attr)TG_AINTS("kernel", buf, 2);
    a[1] = (tg_attr)TG_AINTS("stride", buf + 2, 2);
    a[2] = (tg_attr)TG_AINTS("padding", buf + 4, 2);
    a[3] = (tg_attr)TG_AI("ceil_mode", o->ceil_mode);
    return 4;
}

/* y and the offsets against max_pool2d's y and indices (decoded), and the
 * gradient against max_pool2d_grad's */
static void check_ops(tg_tensor *x, const tg_pool2d_opts *o)
{
    int64_t buf[8];
    tg_attr a[5];
    int na = window_attrs(o, buf, a);
    tg_tensor *ref[2] = {NULL, NULL}, *cmp[2] = {NULL, NULL};
    CHECK_OK(tg_op_run(tg_op_find("max_pool2d"), 1, &x, a, na, ref));
    CHECK_OK(tg_op_run(tg_op_find("max_pool2d_compact"), 1, &x, a, na, cmp));
    if (!ref[1] || !cmp[1])
        return;
    CHECK(tt_same(ref[0], cmp[0]));
    CHECK(tg_dtype_of(cmp[1]) == TG_UINT8);
    const int64_t *sh = tg_shape(ref[1]);
    int64_t W = tg_shape(x)[3], OH = sh[2], OW = sh[3], planes = sh[0] * sh[1];
    int64_t n = tg_numel(ref[1]), bad = 0;
    double *pos = malloc((size_t)n * sizeof *pos), *off = malloc((size_t)n * sizeof *off);
    CHECK_OK(tg_copy_to(ref[1], TG_FLOAT64, pos));
    CHECK_OK(tg_copy_to(cmp[1], TG_FLOAT64, off));
    for (int64_t p = 0, i = 0; p < planes; p++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++, i++) {
                int64_t k = (int64_t)off[i];
                int64_t h = oh * buf[2] - buf[4] + k / buf[1], w = ow * buf[3] - buf[5] + k % buf[1];
                bad += h * W + w != (int64_t)pos[i];
            }
    CHECK(bad == 0);
    free(pos);
    free(off);
    /* the gradients */
    const int64_t *xs = tg_shape(x);
    tg_tensor *dy = tt_rand_dtype(tg_dtype_of(x), 4, sh, -1, 1);
    int64_t hw[2] = {xs[2], xs[3]};
    a[na] = (tg_attr)TG_AINTS("input_size", hw, 2);
    tg_tensor *g0 = tg_op_call(tg_op_find("max_pool2d_grad"), 2,
                               (tg_tensor *[]){dy, ref[1]}, &a[na], 1);
    tg_tensor *g1 = tg_op_call(tg_op_find("max_pool2d_compact_grad"), 2,
                               (tg_tensor *[]){dy, cmp[1]}, a, na + 1);
    CHECK(g0 && g1 && tt_same(g0, g1));
}

static void test_ops_direct(void)
{
    for (size_t k = 0; k < sizeof geos / sizeof *geos - 1; k++) /* all but the large one */
        for (int d = 0; d < 2; d++)
            check_ops(tied(d ? TG_FLOAT64 : TG_FLOAT32, 2, 3, geos[k].h, geos[k].w, true,
                           11u + (uint32_t)k),
                      &geos[k].o);
    /* big enough to be split across the pool (and in chunks of planes) */
    check_ops(tied(TG_FLOAT32, 16, 64, 32, 32, true, 5), &geos[0].o);
    check_ops(tied(TG_FLOAT64, 8, 40, 33, 31, false, 6), &geos[2].o);
}

static void test_errors(void)
{
    tg_tensor *x = tied(TG_FLOAT32, 1, 1, 20, 20, false, 9);
    int64_t buf[8];
    tg_attr a[5];
    tg_pool2d_opts big = {.kernel = {17, 16}};
    int na = window_attrs(&big, buf, a);
    CHECK_ERROR(tg_op_call(tg_op_find("max_pool2d_compact"), 1, &x, a, na), TG_ERR_ARG,
                "more than 256 elements");
    tg_pool2d_opts two = {.kernel = {2, 2}};
    na = window_attrs(&two, buf, a);
    tg_tensor *out[2] = {NULL, NULL};
    CHECK_OK(tg_op_run(tg_op_find("max_pool2d_compact"), 1, &x, a, na, out));
    tg_tensor *dy = tt_rand_dtype(TG_FLOAT32, 4, tg_shape(out[0]), -1, 1);
    int64_t hw[2] = {20, 20};
    a[na] = (tg_attr)TG_AINTS("input_size", hw, 2);
    const tg_op_def *grad = tg_op_find("max_pool2d_compact_grad");
    /* an offset outside its 2x2 window */
    tg_tensor *badoff = tg_full(TG_UINT8, 4, tg_shape(out[1]), 4);
    CHECK_ERROR(tg_op_call(grad, 2, (tg_tensor *[]){dy, badoff}, a, na + 1), TG_ERR_INDEX,
                "outside its 2x2 window");
    /* offsets of another shape; a plane the window does not give dy's size */
    tg_tensor *small = tg_full(TG_UINT8, 4, (int64_t[]){1, 1, 3, 3}, 0);
    CHECK_ERROR(tg_op_call(grad, 2, (tg_tensor *[]){dy, small}, a, na + 1), TG_ERR_SHAPE,
                "do not match");
    hw[0] = 30;
    CHECK_ERROR(tg_op_call(grad, 2, (tg_tensor *[]){dy, out[1]}, a, na + 1), TG_ERR_SHAPE,
                "not the gradient's 10x10");
    /* int64 indices are not offsets */
    hw[0] = 20;
    tg_tensor *idx = tg_full(TG_INT64, 4, tg_shape(out[1]), 0);
    CHECK(tg_op_call(grad, 2, (tg_tensor *[]){dy, idx}, a, na + 1) == NULL);
}

int main(void)
{
    RUN(test_levels_equal);
    RUN(test_indices_used_elsewhere);
    RUN(test_values_only);
    RUN(test_ops_direct);
    RUN(test_errors);
    return tt_finish();
}
