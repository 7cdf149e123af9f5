/* Targets and counts read when a graph runs: expand_by (ONNX Expand with
 * its shape as a tensor, broadcasting both ways), tile_by (Tile with its
 * repeats as a tensor), their gradient family (tile_sum, tile_like),
 * reshape_by (Reshape with its target as a tensor) and
 * unique (distinct slices, their count known when a graph runs). Eagerly
 * against tg_expand / tg_tile and values worked by hand; in a graph, one
 * graph run with different shapes, repeats and values, gradients
 * included, against eager bitwise; every error, eager and at run time.
 * Finite differences: tests/test_op_samples.c; the ONNX importer's use of
 * them: tests/python/test_onnx_run_time_shapes.py. */
#include "harness.h"
#include "ops/op.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static tg_tensor *ints(int n, const int64_t *v)
{
    return tg_from_data(TG_INT64, 1, (int64_t[]){n}, v);
}

/* x [r0, r1] of 1, 2, 3, ... */
static tg_tensor *counting(tg_dtype dt, int r0, int r1)
{
    return tg_reshape(tg_range(dt, 1, 1 + r0 * r1, 1), 2, (int64_t[]){r0, r1});
}

/* expand_by against tg_expand to the broadcast shape `want` */
static void check_expand(tg_tensor *x, int n, const int64_t *v, int nd, const int64_t *want)
{
    tg_tensor *y = tg_expand_by(x, ints(n, v));
    CHECK(y && tg_ndim(y) == nd);
    CHECK(y && tt_same(y, tg_contiguous(tg_expand(x, nd, want))));
}

static void test_expand_forward(void)
{
    tg_tensor *x = counting(TG_FLOAT32, 3, 1);
    /* ONNX's bidirectional broadcast: a 1 in the shape keeps x's dim */
    check_expand(x, 1, (int64_t[]){4}, 2, (int64_t[]){3, 4});
    check_expand(x, 2, (int64_t[]){1, 1}, 2, (int64_t[]){3, 1});
    check_expand(x, 3, (int64_t[]){2, 1, 5}, 3, (int64_t[]){2, 3, 5});
    check_expand(x, 0, NULL, 2, (int64_t[]){3, 1});
    check_expand(counting(TG_FLOAT32, 1, 3), 2, (int64_t[]){2, 3}, 2, (int64_t[]){2, 3});
    /* a 1 expanded to 0 */
    check_expand(x, 2, (int64_t[]){3, 0}, 2, (int64_t[]){3, 0});
    /* int64 and bool values, a strided input, int32 shapes */
    check_expand(tg_transpose(counting(TG_INT64, 1, 3), 0, 1), 2, (int64_t[]){3, 2}, 2,
                 (int64_t[]){3, 2});
    check_expand(tg_gt(x, tg_scalar(TG_FLOAT32, 1.5)), 2, (int64_t[]){3, 2}, 2,
                 (int64_t[]){3, 2});
    tg_tensor *s32 = tg_from_data(TG_INT32, 1, (int64_t[]){2}, (int32_t[]){2, 1});
    tg_tensor *y = tg_expand_by(counting(TG_FLOAT64, 1, 2), s32);
    CHECK_SHAPE(y, 2, 2);
    CHECK_TENSOR(y, ((double[]){1, 2, 1, 2}), 0);
}

static void test_tile_forward(void)
{
    tg_tensor *x = counting(TG_FLOAT64, 2, 3);
    int64_t reps[][2] = {{1, 1}, {2, 1}, {1, 3}, {3, 2}, {0, 2}};
    for (int k = 0; k < 5; k++) {
        tg_tensor *y = tg_tile_by(x, ints(2, reps[k]));
        CHECK(y && tt_same(y, tg_contiguous(tg_tile(x, 2, reps[k]))));
    }
    CHECK_TENSOR(tg_tile_by(x, ints(2, (int64_t[]){1, 2})),
                 ((double[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}), 0);
    /* a strided input, an empty one */
    tg_tensor *xt = tg_transpose(x, 0, 1);
    CHECK(tt_same(tg_tile_by(xt, ints(2, (int64_t[]){2, 2})),
                  tg_contiguous(tg_tile(xt, 2, (int64_t[]){2, 2}))));
    CHECK_SHAPE(tg_tile_by(tg_zeros(TG_FLOAT32, 2, (int64_t[]){0, 2}), ints(2, (int64_t[]){3, 2})),
                0, 4);
}

/* the gradient sums over the broadcast dims and over the tiles; second
 * order through tile_sum and tile_like */
static void test_gradient(void)
{
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){1, 3}, (double[]){1, 2, 3});
    tg_set_requires_grad(x, true);
    tg_tensor *w = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
    tg_tensor *y = tg_expand_by(x, ints(2, (int64_t[]){2, 3}));
    tg_tensor *loss = tg_sum(tg_mul(tg_mul(y, y), w), 0, NULL, false), *dx = NULL;
    CHECK_OK(tg_autograd_grad(1, &loss, NULL, 1, &x, &dx, false, true));
    CHECK_TENSOR(dx, ((double[]){2 * 1 * 5, 2 * 2 * 7, 2 * 3 * 9}), 0); /* 2 x sum w */
    tg_tensor *d2 = NULL, *s = tg_sum(tg_mul(dx, dx), 0, NULL, false);
    CHECK_OK(tg_autograd_grad(1, &s, NULL, 1, &x, &d2, false, false));
    /* d/dx sum (2 x W)^2 = 8 x W^2 */
    CHECK_TENSOR(d2, ((double[]){8 * 1 * 25, 8 * 2 * 49, 8 * 3 * 81}), 0);
    tg_release(dx);
    tg_release(d2);

    tg_tensor *t = tg_tile_by(x, ints(2, (int64_t[]){2, 2})); /* [2, 6] */
    tg_tensor *wt = tg_tile(w, 2, (int64_t[]){1, 2});
    loss = tg_sum(tg_mul(t, wt), 0, NULL, false);
    CHECK_OK(tg_autograd_grad(1, &loss, NULL, 1, &x, &dx, false, false));
    CHECK_TENSOR(dx, ((double[]){2 * 5, 2 * 7, 2 * 9}), 0);
    tg_release(dx);
}

/* one graph: x's rows and the target shape fed, a shape of 1s expanded
 * to a size read from another input (ONNX's Expand(x, Shape(b))) */
static void test_expand_graph(void)
{
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){1, 3});
    tg_tensor *b = tg_placeholder(g, "b", TG_FLOAT64, 3, (int64_t[]){-1, 1, 3});
    /* shape_of's values are known when the graph runs; x's 3 is known */
    tg_tensor *y0 = tg_expand_by(x, tg_shape_of(b));
    CHECK(y0 && tg_ndim(y0) == 3 && tg_shape(y0)[0] == -1 && tg_shape(y0)[1] == -1 &&
          tg_shape(y0)[2] == 3);
    /* with the values the caller knows (the ONNX importer's marked dims) */
    tg_tensor *y = tg__expand_by(x, tg_shape_of(b), 3, (int64_t[]){-1, 1, 3});
    CHECK(y && tg_ndim(y) == 3 && tg_shape(y)[0] == -1 && tg_shape(y)[1] == 1 &&
          tg_shape(y)[2] == 3);
    y = tg_add(y, tg_mul_scalar(y0, 0)); /* both run */
    tg_tensor *s = tg_sum(tg_mul(tg_mul(y, y), b), 0, NULL, false), *dx = NULL;
    CHECK_OK(tg_graph_gradients(g, 1, &s, NULL, 1, &x, &dx));
    tg_session *sess = tg_session_new(g);
    for (int batch = 1; batch <= 5; batch += 2) {
        double bv[15];
        for (int i = 0; i < 3 * batch; i++)
            bv[i] = 0.5 * i - 1;
        tg_tensor *feeds[2] = {tt_tensor(TG_FLOAT64, 2, (int64_t[]){1, 3}, (double[]){1, -2, 3}),
                               tt_tensor(TG_FLOAT64, 3, (int64_t[]){batch, 1, 3}, bv)};
        tg_tensor *ph[2] = {x, b}, *fetch[2] = {y, dx}, *got[2] = {0};
        CHECK_OK(tg_session_run(sess, 2, ph, feeds, 2, fetch, got, 0, NULL));
        if (!got[0] || !got[1])
            continue;
        tg_tensor *xe = feeds[0];
        tg_set_requires_grad(xe, true);
        tg_tensor *ye = tg_expand_by(xe, tg_shape_of(feeds[1]));
        tg_tensor *le = tg_sum(tg_mul(tg_mul(ye, ye), feeds[1]), 0, NULL, false), *de = NULL;
        CHECK_OK(tg_autograd_grad(1, &le, NULL, 1, &xe, &de, false, false));
        CHECK(tg_shape(got[0])[0] == batch);
        CHECK(tt_same(got[0], ye));
        CHECK(tt_same(got[1], de));
        tg_release(de);
    }
    tg_session_free(sess);
    tg_graph_free(g);
}

/* one graph: the repeats fed, each run a different output shape; x's
 * gradient sums the tiles */
static void test_tile_graph(void)
{
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){2, -1});
    tg_tensor *r = tg_placeholder(g, "repeats", TG_INT64, 1, (int64_t[]){2});
    tg_tensor *y = tg_tile_by(x, r);
    CHECK(y && tg_shape(y)[0] == -1 && tg_shape(y)[1] == -1);
    tg_tensor *s = tg_sum(tg_mul(y, y), 0, NULL, false), *dx = NULL;
    CHECK_OK(tg_graph_gradients(g, 1, &s, NULL, 1, &x, &dx));
    tg_session *sess = tg_session_new(g);
    int64_t reps[3][2] = {{1, 1}, {3, 2}, {2, 0}};
    for (int k = 0; k < 3; k++) {
        int cols = 1 + k;
        tg_tensor *xv = tg_range(TG_FLOAT64, 0, 2 * cols, 1);
        xv = tg_reshape(xv, 2, (int64_t[]){2, cols});
        tg_tensor *feeds[2] = {xv, ints(2, reps[k])}, *ph[2] = {x, r};
        tg_tensor *fetch[2] = {y, dx}, *got[2] = {0};
        CHECK_OK(tg_session_run(sess, 2, ph, feeds, 2, fetch, got, 0, NULL));
        if (!got[0] || !got[1])
            continue;
        tg_tensor *xe = tg_detach(xv);
        tg_set_requires_grad(xe, true);
        tg_tensor *ye = tg_tile_by(xe, feeds[1]);
        tg_tensor *le = tg_sum(tg_mul(ye, ye), 0, NULL, false), *de = NULL;
        CHECK_OK(tg_autograd_grad(1, &le, NULL, 1, &xe, &de, false, false));
        CHECK(tt_same(got[0], ye));
        CHECK(tt_same(got[1], de));
        CHECK(tg_shape(got[0])[0] == 2 * reps[k][0] && tg_shape(got[0])[1] == cols * reps[k][1]);
        tg_release(de);
    }
    tg_session_free(sess);
    tg_graph_free(g);
}

static void test_unique(void)
{
    double v[8] = {3, 1, NAN, 3, 2, 1, NAN, 5};
    tg_tensor *x = tt_tensor(TG_FLOAT64, 1, (int64_t[]){8}, v), *r[3];
    CHECK_OK(tg__unique(x, 0, true, r));
    CHECK_TENSOR(r[0], ((double[]){1, 4, 0, 7, 2}), 0);          /* 1 2 3 5 NaN */
    CHECK_TENSOR(r[1], ((double[]){2, 0, 4, 2, 1, 0, 4, 3}), 0);
    CHECK_TENSOR(r[2], ((double[]){2, 1, 2, 1, 2}), 0);
    CHECK_OK(tg__unique(x, 0, false, r)); /* order of first occurrence: 3 1 NaN 2 5 */
    CHECK_TENSOR(r[0], ((double[]){0, 1, 2, 4, 7}), 0);
    CHECK_TENSOR(r[1], ((double[]){0, 1, 2, 0, 3, 1, 2, 4}), 0);
    CHECK_TENSOR(r[2], ((double[]){2, 2, 2, 1, 1}), 0);
    /* rows of an int matrix (axis -2), a strided one */
    tg_tensor *m = tt_tensor(TG_INT64, 2, (int64_t[]){2, 4}, (double[]){1, 0, 1, 0, 2, 1, 2, 1});
    CHECK_OK(tg__unique(tg_transpose(m, 0, 1), -2, true, r)); /* rows (1,2) (0,1) x2 */
    CHECK_TENSOR(r[0], ((double[]){1, 0}), 0);
    CHECK_TENSOR(r[1], ((double[]){1, 0, 1, 0}), 0);
    CHECK_TENSOR(r[2], ((double[]){2, 2}), 0);
    CHECK_OK(tg__unique(tg_zeros(TG_FLOAT32, 1, (int64_t[]){0}), 0, true, r));
    CHECK_SHAPE(r[0], 0);

    /* in a graph: the count is known when it runs, and differs by run */
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *p = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){5});
    CHECK_OK(tg__unique(p, 0, true, r));
    CHECK(tg_shape(r[0])[0] == -1 && tg_shape(r[1])[0] == 5 && tg_shape(r[2])[0] == -1);
    tg_tensor *vals = tg_index_select(p, 0, r[0]);
    tg_tensor *s = tg_sum(tg_mul(vals, vals), 0, NULL, false), *dx = NULL;
    CHECK_OK(tg_graph_gradients(g, 1, &s, NULL, 1, &p, &dx));
    tg_session *sess = tg_session_new(g);
    double runs[2][5] = {{2, 2, 2, 0, 0}, {4, 3, 2, 1, 4}};
    for (int k = 0; k < 2; k++) {
        tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){5}, runs[k]);
        tg_tensor *fetch[5] = {vals, r[0], r[1], r[2], dx}, *got[5] = {0};
        CHECK_OK(tg_session_run(sess, 1, &p, &xv, 5, fetch, got, 0, NULL));
        tg_tensor *e[3];
        tg_tensor *xe = tg_detach(xv);
        tg_set_requires_grad(xe, true);
        CHECK_OK(tg__unique(xe, 0, true, e));
        tg_tensor *ve = tg_index_select(xe, 0, e[0]), *de = NULL;
        tg_tensor *le = tg_sum(tg_mul(ve, ve), 0, NULL, false);
        CHECK_OK(tg_autograd_grad(1, &le, NULL, 1, &xe, &de, false, false));
        for (int j = 0; j < 3; j++)
            CHECK(got[j + 1] && tt_same(got[j + 1], e[j]));
        CHECK(got[0] && tt_same(got[0], ve));
        CHECK(got[4] && tt_same(got[4], de));
        CHECK(got[0] && tg_shape(got[0])[0] == (k ? 4 : 2));
        tg_release(de);
    }
    tg_session_free(sess);
    tg_graph_free(g);
}

static void test_errors(void)
{
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, (int64_t[]){3, 4});
    CHECK_ERROR(tg_expand_by(x, ints(2, (int64_t[]){3, -1})), TG_ERR_SHAPE,
                "shape[1] is -1 (negative)");
    CHECK_ERROR(tg_expand_by(x, ints(2, (int64_t[]){2, 4})), TG_ERR_SHAPE,
                "do not broadcast");
    CHECK_ERROR(tg_expand_by(x, ints(1, (int64_t[]){INT64_MAX})), TG_ERR_SHAPE,
                "do not broadcast");
    CHECK_ERROR(tg_expand_by(tg_zeros(TG_FLOAT32, 2, (int64_t[]){1, 1}),
                             ints(2, (int64_t[]){INT64_MAX, INT64_MAX})),
                TG_ERR_SHAPE, "expand_by");
    CHECK_ERROR(tg_expand_by(x, tg_zeros(TG_INT64, 2, (int64_t[]){1, 2})), TG_ERR_SHAPE,
                "must be 1-D");
    CHECK_ERROR(tg_expand_by(x, tg_zeros(TG_FLOAT32, 1, (int64_t[]){2})), TG_ERR_DTYPE,
                "shape must be int64 or int32, got float32");
    CHECK_ERROR(tg_tile_by(x, tg_zeros(TG_FLOAT64, 1, (int64_t[]){2})), TG_ERR_DTYPE,
                "repeats must be int64 or int32");
    CHECK_ERROR(tg_expand_by(x, NULL), TG_ERR_ARG, "input 1 is NULL");
    CHECK_ERROR(tg_expand_by(NULL, ints(1, (int64_t[]){1})), TG_ERR_ARG, "input 0 is NULL");
    CHECK_ERROR(tg__expand_by(x, ints(2, (int64_t[]){3, 4}), 1, (int64_t[]){3}), TG_ERR_ARG,
                "a hint of 1 values");
    CHECK_ERROR(tg_tile_by(x, ints(1, (int64_t[]){2})), TG_ERR_SHAPE,
                "1 repeats for an input of 2 dims");
    CHECK_ERROR(tg_tile_by(x, ints(2, (int64_t[]){2, -3})), TG_ERR_SHAPE,
                "repeats[1] is -3 (negative)");
    CHECK_ERROR(tg_tile_by(x, ints(2, (int64_t[]){INT64_MAX / 2, 1})), TG_ERR_SHAPE,
                "tile_by");
    CHECK_ERROR(tg_tile_by(NULL, NULL), TG_ERR_ARG, "input 0 is NULL");
    tg_tensor *r[3];
    CHECK_FAILS(tg__unique(x, 2, true, r), TG_ERR_INDEX, "axis 2 is out of range");
    CHECK_FAILS(tg__unique(tg_scalar(TG_FLOAT32, 1), 0, true, r), TG_ERR_INDEX,
                "out of range for 0 dims");
    /* the gradient ops refuse shapes that do not tile */
    const tg_op_def *sum = tg_op_find("tile_sum"), *like = tg_op_find("tile_like");
    CHECK(sum && like);
    tg_tensor *in[2] = {tg_zeros(TG_FLOAT32, 2, (int64_t[]){3, 5}), x};
    CHECK_ERROR(sum ? tg_op_call(sum, 2, in, NULL, 0) : NULL, TG_ERR_SHAPE, "does not tile");
    tg_tensor *in2[2] = {x, in[0]};
    CHECK_ERROR(like ? tg_op_call(like, 2, in2, NULL, 0) : NULL, TG_ERR_SHAPE, "does not tile");
}

/* values fed at run time that the graph cannot take: errors, no crash */
static void test_run_time_errors(void)
{
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){-1, 3});
    tg_tensor *sh = tg_placeholder(g, "shape", TG_INT64, 1, (int64_t[]){2});
    tg_tensor *rp = tg_placeholder(g, "repeats", TG_INT64, 1, (int64_t[]){2});
    tg_tensor *y = tg_expand_by(x, sh), *t = tg_tile_by(x, rp);
    /* a known target: x's rows must be 1 or 4 when it runs */
    tg_tensor *k = tg_expand_by(x, ints(2, (int64_t[]){4, 3}));
    CHECK(k && tg_shape(k)[0] == 4 && tg_shape(k)[1] == 3);
    tg_session *sess = tg_session_new(g);
    tg_tensor *xv = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3}), *got = NULL;
    tg_tensor *ph[2] = {x, sh}, *feeds[2] = {xv, ints(2, (int64_t[]){2, -3})};
    CHECK_FAILS(tg_session_run(sess, 2, ph, feeds, 1, &y, &got, 0, NULL), TG_ERR_SHAPE,
                "negative");
    feeds[1] = ints(2, (int64_t[]){3, 3});
    CHECK_FAILS(tg_session_run(sess, 2, ph, feeds, 1, &y, &got, 0, NULL), TG_ERR_SHAPE,
                "do not broadcast");
    feeds[1] = ints(2, (int64_t[]){2, 1});
    CHECK_OK(tg_session_run(sess, 2, ph, feeds, 1, &y, &got, 0, NULL));
    CHECK_SHAPE(got, 2, 3);
    tg_tensor *ph2[2] = {x, rp}, *f2[2] = {xv, ints(2, (int64_t[]){-1, 1})};
    CHECK_FAILS(tg_session_run(sess, 2, ph2, f2, 1, &t, &got, 0, NULL), TG_ERR_SHAPE,
                "negative");
    f2[1] = ints(2, (int64_t[]){INT64_MAX / 2, INT64_MAX / 2});
    CHECK_FAILS(tg_session_run(sess, 2, ph2, f2, 1, &t, &got, 0, NULL), TG_ERR_SHAPE,
                "tile_by");
    CHECK_FAILS(tg_session_run(sess, 1, &x, &xv, 1, &k, &got, 0, NULL), TG_ERR_SHAPE,
                "expand_by");
    tg_tensor *one = tg_ones(TG_FLOAT32, 2, (int64_t[]){1, 3});
    CHECK_OK(tg_session_run(sess, 1, &x, &one, 1, &k, &got, 0, NULL));
    CHECK_SHAPE(got, 4, 3);
    tg_session_free(sess);
    tg_graph_free(g);

    /* a matmul contracting two run-time lengths: its output is known when
     * the graph is built, its inputs are checked when it runs (lengths
     * that differ are an error, not a read past the data) */
    g = tg_graph_new(NULL);
    tg_tensor *m1 = tg_placeholder(g, "m1", TG_FLOAT32, 1, (int64_t[]){4});
    tg_tensor *m2 = tg_placeholder(g, "m2", TG_FLOAT32, 1, (int64_t[]){4});
    tg_tensor *a = tg_index_select(tg_ones(TG_FLOAT32, 2, (int64_t[]){2, 4}), 1,
                                   tg_reshape(tg_nonzero(m1), 1, (int64_t[]){-1}));
    tg_tensor *b = tg_index_select(tg_ones(TG_FLOAT32, 2, (int64_t[]){4, 3}), 0,
                                   tg_reshape(tg_nonzero(m2), 1, (int64_t[]){-1}));
    tg_tensor *mm = tg_matmul(a, b);
    CHECK(mm && tg_shape(mm)[0] == 2 && tg_shape(mm)[1] == 3);
    sess = tg_session_new(g);
    tg_tensor *mph[2] = {m1, m2};
    tg_tensor *mv[2] = {tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, (double[]){1, 0, 1, 1}),
                        tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, (double[]){0, 1, 1, 1})};
    CHECK_OK(tg_session_run(sess, 2, mph, mv, 1, &mm, &got, 0, NULL));
    CHECK_TENSOR(got, ((double[]){3, 3, 3, 3, 3, 3}), 0);
    mv[1] = tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, (double[]){0, 1, 0, 1});
    CHECK_FAILS(tg_session_run(sess, 2, mph, mv, 1, &mm, &got, 0, NULL), TG_ERR_SHAPE,
                "matmul");
    tg_session_free(sess);
    tg_graph_free(g);
}

static tg_tensor *reshape_to(tg_tensor *x, int n, const int64_t *v, bool allowzero)
{
    return tg__reshape_by(x, ints(n, v), allowzero, 0, NULL);
}

/* ONNX Reshape's rule (0 copies, one -1 inferred, allowzero) eagerly, and
 * in a graph whose target is fed: a batch and a length both known only
 * when it runs merged into one dim */
static void test_reshape_by(void)
{
    tg_tensor *x = counting(TG_FLOAT32, 2, 6);
    CHECK(tt_same(reshape_to(x, 3, (int64_t[]){0, 3, -1}, false),
                  tg_reshape(x, 3, (int64_t[]){2, 3, 2})));
    CHECK(tt_same(reshape_to(tg_transpose(x, 0, 1), 1, (int64_t[]){-1}, false),
                  tg_reshape(tg_contiguous(tg_transpose(x, 0, 1)), 1, (int64_t[]){12})));
    CHECK_SHAPE(reshape_to(tg_zeros(TG_FLOAT32, 2, (int64_t[]){0, 3}), 2,
                           (int64_t[]){0, 5}, true), 0, 5);
    CHECK_SHAPE(reshape_to(tg_zeros(TG_FLOAT32, 2, (int64_t[]){0, 3}), 2,
                           (int64_t[]){0, 3}, false), 0, 3);
    CHECK_ERROR(reshape_to(x, 2, (int64_t[]){-1, -1}, false), TG_ERR_SHAPE, "more than one -1");
    CHECK_ERROR(reshape_to(x, 2, (int64_t[]){-2, 6}, false), TG_ERR_SHAPE, "negative");
    CHECK_ERROR(reshape_to(x, 3, (int64_t[]){1, 1, 0}, false), TG_ERR_SHAPE,
                "copies a dim the input (2 dims) does not have");
    CHECK_ERROR(reshape_to(x, 2, (int64_t[]){5, -1}, false), TG_ERR_SHAPE, "cannot infer");
    CHECK_ERROR(reshape_to(x, 2, (int64_t[]){5, 2}, false), TG_ERR_SHAPE,
                "cannot reshape 12 elements");
    CHECK_ERROR(reshape_to(x, 2, (int64_t[]){0, -1}, true), TG_ERR_SHAPE,
                "a -1 beside a 0 with allowzero");
    CHECK_ERROR(reshape_to(x, 2, (int64_t[]){INT64_MAX, INT64_MAX}, false), TG_ERR_SHAPE,
                "reshape_by");
    CHECK_ERROR(tg__reshape_by(x, ints(1, (int64_t[]){12}), false, 2, (int64_t[]){1, 2}),
                TG_ERR_ARG, "a hint of 2 values");
    CHECK_ERROR(tg__reshape_by(x, NULL, false, 0, NULL), TG_ERR_ARG, "input 1 is NULL");
    CHECK_ERROR(tg__reshape_by(x, tg_zeros(TG_FLOAT32, 1, (int64_t[]){1}), false, 0, NULL),
                TG_ERR_DTYPE, "shape must be int64 or int32");

    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *p = tg_placeholder(g, "x", TG_FLOAT64, 3, (int64_t[]){-1, -1, 2});
    tg_tensor *t = tg_placeholder(g, "target", TG_INT64, 1, (int64_t[]){2});
    tg_tensor *y = tg__reshape_by(p, t, false, 2, (int64_t[]){INT64_MIN, 2});
    CHECK(y && tg_shape(y)[0] == -1 && tg_shape(y)[1] == 2);
    tg_tensor *w = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 1}, (double[]){1, -3});
    tg_tensor *s = tg_sum(tg_mul(tg_matmul(y, w), tg_matmul(y, w)), 0, NULL, false), *dx = NULL;
    CHECK_OK(tg_graph_gradients(g, 1, &s, NULL, 1, &p, &dx));
    tg_session *sess = tg_session_new(g);
    for (int b = 1; b <= 3; b++) {
        tg_tensor *xv = tg_reshape(tg_range(TG_FLOAT64, 0, 2 * b * 3, 1), 3,
                                   (int64_t[]){b, 3, 2});
        tg_tensor *feeds[2] = {xv, ints(2, (int64_t[]){b * 3, 2})}, *ph[2] = {p, t};
        tg_tensor *fetch[2] = {y, dx}, *got[2] = {0};
        CHECK_OK(tg_session_run(sess, 2, ph, feeds, 2, fetch, got, 0, NULL));
        if (!got[0] || !got[1])
            continue;
        tg_tensor *xe = tg_detach(xv), *de = NULL;
        tg_set_requires_grad(xe, true);
        tg_tensor *ye = tg__reshape_by(xe, feeds[1], false, 0, NULL);
        tg_tensor *le = tg_sum(tg_mul(tg_matmul(ye, w), tg_matmul(ye, w)), 0, NULL, false);
        CHECK_OK(tg_autograd_grad(1, &le, NULL, 1, &xe, &de, false, false));
        CHECK(tt_same(got[0], ye));
        CHECK(tt_same(got[1], de));
        tg_release(de);
    }
    tg_tensor *xv = tg_zeros(TG_FLOAT64, 3, (int64_t[]){2, 3, 2}), *got = NULL;
    tg_tensor *feeds[2] = {xv, ints(2, (int64_t[]){5, 2})}, *ph[2] = {p, t};
    CHECK_FAILS(tg_session_run(sess, 2, ph, feeds, 1, &y, &got, 0, NULL), TG_ERR_SHAPE,
                "reshape_by");
    feeds[1] = ints(2, (int64_t[]){-1, -1});
    CHECK_FAILS(tg_session_run(sess, 2, ph, feeds, 1, &y, &got, 0, NULL), TG_ERR_SHAPE,
                "more than one -1");
    tg_session_free(sess);
    tg_graph_free(g);
    const tg_op_def *like = tg_op_find("reshape_like");
    tg_tensor *in[2] = {x, tg_zeros(TG_FLOAT32, 1, (int64_t[]){5})};
    CHECK_ERROR(like ? tg_op_call(like, 2, in, NULL, 0) : NULL, TG_ERR_SHAPE, "cannot reshape");
}

/* ONNX's Expand(w, Shape(y)) with y's batch a dim_param: a graph
 * exported (expand_by as Expand, shape_of as Shape, the batch written as
 * a dim_param) and imported into a graph whose y has an unknown batch
 * (the importer refused the 1 expanded to it before); one graph for
 * every batch, values and w's gradient bitwise eager's */
static void test_onnx_symbolic_batch(void)
{
    tg_graph *g = tg_graph_new("src");
    tg_tensor *w = tg_placeholder(g, "w", TG_FLOAT32, 2, (int64_t[]){1, 3});
    tg_tensor *y = tg_placeholder(g, "y", TG_FLOAT32, 2, (int64_t[]){-1, 3});
    tg_graph_begin(g);
    tg_tensor *z = tg_mul(tg_expand_by(w, tg_shape_of(y)), y);
    tg_graph_end();
    char path[128];
    snprintf(path, sizeof path, "/tmp/tg_expand_by_%ld.onnx", (long)getpid());
    CHECK_OK(tg_onnx_export(g, 1, &z, path));
    tg_graph_free(g);
    tg_onnx_model *m = tg_onnx_load(path);
    CHECK(m != NULL);
    if (!m)
        return;
    g = tg_graph_new("imported");
    tg_tensor *pw = tg_placeholder(g, "w", TG_FLOAT32, 2, (int64_t[]){1, 3});
    tg_tensor *py = tg_placeholder(g, "y", TG_FLOAT32, 2, (int64_t[]){-1, 3});
    const char *names[2] = {"w", "y"};
    tg_tensor *ins[2] = {pw, py};
    CHECK_OK(tg_graph_begin(g));
    tg_onnx_net *net = tg_onnx_build(m, 2, names, ins, NULL);
    tg_tensor *out = net ? tg_onnx_net_output(net, 0) : NULL, *dw = NULL;
    tg_tensor *loss = out ? tg_sum(tg_mul(out, out), 0, NULL, false) : NULL;
    tg_graph_end();
    CHECK(out && tg_shape(out)[0] == -1 && tg_shape(out)[1] == 3);
    if (loss)
        CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 1, &pw, &dw));
    tg_session *sess = dw ? tg_session_new(g) : NULL;
    tg_tensor *wv = tt_tensor(TG_FLOAT32, 2, (int64_t[]){1, 3}, (double[]){0.5, -2, 3});
    for (int b = 1; sess && b <= 4; b += 3) {
        tg_tensor *yv = tg_reshape(tg_range(TG_FLOAT32, -2, 3 * b - 2, 1), 2,
                                   (int64_t[]){b, 3});
        tg_tensor *feeds[2] = {wv, yv}, *fetch[2] = {out, dw}, *got[2] = {0};
        CHECK_OK(tg_session_run(sess, 2, ins, feeds, 2, fetch, got, 0, NULL));
        tg_tensor *we = tg_detach(wv), *de = NULL;
        tg_set_requires_grad(we, true);
        tg_tensor *ze = tg_mul(tg_expand_by(we, tg_shape_of(yv)), yv);
        tg_tensor *le = tg_sum(tg_mul(ze, ze), 0, NULL, false);
        CHECK_OK(tg_autograd_grad(1, &le, NULL, 1, &we, &de, false, false));
        CHECK(got[0] && tt_same(got[0], ze));
        CHECK(got[1] && tt_same(got[1], de));
        tg_release(de);
    }
    tg_session_free(sess);
    tg_onnx_net_free(net);
    tg_graph_free(g);
    tg_onnx_free(m);
    remove(path);
}

int main(void)
{
    RUN(test_expand_forward);
    RUN(test_tile_forward);
    RUN(test_gradient);
    RUN(test_expand_graph);
    RUN(test_tile_graph);
    RUN(test_unique);
    RUN(test_errors);
    RUN(test_run_time_errors);
    RUN(test_reshape_by);
    RUN(test_onnx_symbolic_batch);
    return tt_finish();
}
