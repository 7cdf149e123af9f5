/* Shapes read when a graph runs: slice_by (ONNX Slice with its bounds as
 * tensors), range_by (Range on computed bounds), shape_of (a shape as
 * values), full_by (a full tensor of such a shape) and append_row (a list
 * whose first row fixes its dims). Eagerly against ONNX's clamping rules, worked by hand; in a
 * graph, one graph run with different bounds and sizes, gradients
 * included; the errors. The ONNX importer's use of them is checked by
 * onnx_conformance (the window expansions) and
 * tests/python/test_onnx_run_time_shapes.py. */
#include "harness.h"
#include "ops/op.h"

#include <stdint.h>

static tg_tensor *ints(int n, const int64_t *v)
{
    return tg_from_data(TG_INT64, 1, (int64_t[]){n}, v);
}

/* x = 0..9 sliced on axis 0 from start towards end by step */
static tg_tensor *slice10(int64_t start, int64_t end, int64_t step)
{
    tg_tensor *x = tg_range(TG_FLOAT64, 0, 10, 1);
    return tg_slice_by(x, ints(1, &start), ints(1, &end), ints(1, (int64_t[]){0}),
                       ints(1, &step));
}

static void test_onnx_clamping(void)
{
    CHECK_TENSOR(slice10(2, 7, 2), ((double[]){2, 4, 6}), 0);
    CHECK_TENSOR(slice10(-3, INT64_MAX, 1), ((double[]){7, 8, 9}), 0);
    CHECK_TENSOR(slice10(INT64_MIN, 2, 1), ((double[]){0, 1}), 0);
    /* negative steps: start clamped to dim - 1, end to -1 */
    CHECK_TENSOR(slice10(INT64_MAX, INT64_MIN, -3), ((double[]){9, 6, 3, 0}), 0);
    CHECK_TENSOR(slice10(-2, -6, -2), ((double[]){8, 6}), 0);
    CHECK_TENSOR(slice10(5, 5, -1), ((double[]){0}), 0); /* empty */
    CHECK_SHAPE(slice10(5, 5, -1), 0);
    CHECK_SHAPE(slice10(8, 2, 1), 0);
    /* an empty axis stays empty whichever way it is walked */
    tg_tensor *e = tg_zeros(TG_FLOAT32, 1, (int64_t[]){0});
    for (int64_t step = -1; step <= 1; step += 2)
        CHECK_SHAPE(tg_slice_by(e, ints(1, (int64_t[]){-1}), ints(1, (int64_t[]){-5}),
                                ints(1, (int64_t[]){0}), ints(1, &step)), 0);
    /* a step far longer than the axis gives one element */
    CHECK_TENSOR(slice10(1, 10, INT64_MAX), ((double[]){1}), 0);
    CHECK_TENSOR(slice10(9, -100, INT64_MIN), ((double[]){9}), 0);
    /* two axes, int32 bounds, a strided input */
    tg_tensor *x = tg_transpose(tg_reshape(tg_range(TG_FLOAT32, 0, 12, 1), 2,
                                           (int64_t[]){3, 4}), 0, 1); /* [4, 3] */
    tg_tensor *i32[4];
    const int32_t st[2] = {-1, 1}, en[2] = {0, 3}, ax[2] = {1, 0}, sp[2] = {-1, 2};
    const int32_t *src[4] = {st, en, ax, sp};
    for (int k = 0; k < 4; k++)
        i32[k] = tg_from_data(TG_INT32, 1, (int64_t[]){2}, src[k]);
    tg_tensor *y = tg_slice_by(x, i32[0], i32[1], i32[2], i32[3]);
    CHECK_SHAPE(y, 1, 2); /* rows 1 of 1:3:2, columns 2, 1 */
    CHECK_TENSOR(y, ((double[]){9, 5}), 0);
}

/* the gradient is dy at the sliced positions: checked against finite
 * differences by tests/test_op_samples.c; here its values and a second
 * order through it */
static void test_gradient(void)
{
    tg_tensor *x = tg_range(TG_FLOAT64, 0, 5, 1);
    tg_set_requires_grad(x, true);
    tg_tensor *y = tg_slice_by(x, ints(1, (int64_t[]){3}), ints(1, (int64_t[]){0}),
                               ints(1, (int64_t[]){0}), ints(1, (int64_t[]){-2}));
    CHECK_TENSOR(y, ((double[]){3, 1}), 0);
    tg_tensor *w = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){10, 20});
    tg_tensor *dx = NULL;
    tg_tensor *loss = tg_sum(tg_mul(tg_mul(y, y), w), 0, NULL, false);
    CHECK_OK(tg_autograd_grad(1, &loss, NULL, 1, &x, &dx, false, true));
    CHECK_TENSOR(dx, ((double[]){0, 40, 0, 60, 0}), 0); /* 2 w y */
    tg_tensor *d2 = NULL, *s = tg_sum(dx, 0, NULL, false);
    CHECK_OK(tg_autograd_grad(1, &s, NULL, 1, &x, &d2, false, false));
    CHECK_TENSOR(d2, ((double[]){0, 40, 0, 20, 0}), 0); /* 2 w */
    tg_release(dx);
    tg_release(d2);
}

/* one graph: x of unknown length, the bounds fed; sizes and bounds
 * differ between runs, values and gradients follow */
static void test_graph(void)
{
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){-1, 2});
    tg_tensor *st = tg_placeholder(g, "start", TG_INT64, 1, (int64_t[]){1});
    tg_tensor *en = tg_placeholder(g, "end", TG_INT64, 1, (int64_t[]){1});
    tg_tensor *y = tg_slice_by(x, st, en, ints(1, (int64_t[]){0}), ints(1, (int64_t[]){1}));
    CHECK(y && tg_shape(y)[0] == -1 && tg_shape(y)[1] == 2);
    tg_tensor *n = tg_shape_of(y); /* the run's length, as values */
    tg_tensor *s = tg_sum(tg_mul(y, y), 0, NULL, false);
    s = tg_sum(s, 0, NULL, false);
    tg_tensor *dx = NULL;
    CHECK_OK(tg_graph_gradients(g, 1, &s, NULL, 1, &x, &dx));
    tg_session *sess = tg_session_new(g);
    struct {
        int rows;
        int64_t start, end;
        int64_t len;
    } runs[3] = {{4, 1, 3, 2}, {6, -2, INT64_MAX, 2}, {3, 0, 10, 3}};
    for (int r = 0; r < 3; r++) {
        double v[12];
        for (int i = 0; i < 2 * runs[r].rows; i++)
            v[i] = i + 1;
        tg_tensor *feeds[3] = {tt_tensor(TG_FLOAT64, 2, (int64_t[]){runs[r].rows, 2}, v),
                               ints(1, &runs[r].start), ints(1, &runs[r].end)};
        tg_tensor *ph[3] = {x, st, en}, *fetch[3] = {y, n, dx}, *got[3] = {0};
        CHECK_OK(tg_session_run(sess, 3, ph, feeds, 3, fetch, got, 0, NULL));
        if (!got[0] || !got[2])
            continue;
        CHECK(tg_shape(got[0])[0] == runs[r].len);
        CHECK_TENSOR(got[1], ((double[]){(double)runs[r].len, 2}), 0);
        /* eager on the same values gives the same slice and gradient */
        tg_tensor *xe = feeds[0];
        tg_set_requires_grad(xe, true);
        tg_tensor *ye = tg_slice_by(xe, feeds[1], feeds[2], ints(1, (int64_t[]){0}),
                                    ints(1, (int64_t[]){1}));
        tg_tensor *le = tg_sum(tg_mul(ye, ye), 0, NULL, false), *de = NULL;
        le = tg_sum(le, 0, NULL, false);
        CHECK_OK(tg_autograd_grad(1, &le, NULL, 1, &xe, &de, false, false));
        CHECK(tt_same(got[0], ye));
        CHECK(tt_same(got[2], de));
        tg_release(de);
    }
    tg_session_free(sess);
    tg_graph_free(g);
}

static void test_step_fed_at_run_time(void)
{
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){4});
    tg_tensor *sp = tg_placeholder(g, "step", TG_INT64, 1, (int64_t[]){1});
    tg_tensor *y = tg_slice_by(x, ints(1, (int64_t[]){0}), ints(1, (int64_t[]){4}),
                               ints(1, (int64_t[]){0}), sp);
    CHECK(y && tg_shape(y)[0] == -1);
    tg_session *sess = tg_session_new(g);
    tg_tensor *xv = tg_range(TG_FLOAT32, 0, 4, 1), *got = NULL;
    tg_tensor *feeds[2] = {xv, ints(1, (int64_t[]){2})}, *ph[2] = {x, sp};
    CHECK_OK(tg_session_run(sess, 2, ph, feeds, 1, &y, &got, 0, NULL));
    CHECK_TENSOR(got, ((double[]){0, 2}), 0);
    feeds[1] = ints(1, (int64_t[]){0});
    CHECK_FAILS(tg_session_run(sess, 2, ph, feeds, 1, &y, &got, 0, NULL), TG_ERR_ARG,
                "step 0 is 0");
    tg_session_free(sess);
    tg_graph_free(g);
}

static void test_errors(void)
{
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, (int64_t[]){3, 4});
    tg_tensor *one = ints(1, (int64_t[]){1}), *two = ints(2, (int64_t[]){0, 1});
    CHECK_ERROR(tg_slice_by(x, one, one, one, ints(1, (int64_t[]){0})), TG_ERR_ARG,
                "step 0 is 0");
    CHECK_ERROR(tg_slice_by(x, two, two, ints(2, (int64_t[]){1, -1}), ints(2, (int64_t[]){1, 1})),
                TG_ERR_ARG, "axis 1 is sliced twice");
    CHECK_ERROR(tg_slice_by(x, one, one, ints(1, (int64_t[]){2}), one), TG_ERR_INDEX,
                "axis 2 is out of range for 2 dims");
    CHECK_ERROR(tg_slice_by(x, two, one, one, one), TG_ERR_SHAPE, "the same length");
    CHECK_ERROR(tg_slice_by(x, tg_zeros(TG_INT64, 2, (int64_t[]){1, 1}), one, one, one),
                TG_ERR_SHAPE, "must be 1-D");
    CHECK_ERROR(tg_slice_by(x, tg_ones(TG_FLOAT32, 1, (int64_t[]){1}), one, one, one),
                TG_ERR_DTYPE, "starts");
    CHECK_ERROR(tg_slice_by(x, NULL, one, one, one), TG_ERR_ARG, "input 1 is NULL");
    CHECK_ERROR(tg_shape_of(NULL), TG_ERR_ARG, "input is NULL");
    CHECK_ERROR(tg_range_by(NULL, NULL, NULL), TG_ERR_ARG, "input 0 is NULL");
}

static void test_shape_of(void)
{
    CHECK_TENSOR(tg_shape_of(tg_zeros(TG_FLOAT32, 3, (int64_t[]){2, 0, 5})),
                 ((double[]){2, 0, 5}), 0);
    CHECK_SHAPE(tg_shape_of(tg_scalar(TG_FLOAT32, 1)), 0);
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *x = tg_placeholder(g, "x", TG_BOOL, 2, (int64_t[]){-1, 3});
    tg_tensor *n = tg_shape_of(x);
    CHECK(n && tg_ndim(n) == 1 && tg_shape(n)[0] == 2);
    tg_session *sess = tg_session_new(g);
    tg_tensor *xv = tg_zeros(TG_BOOL, 2, (int64_t[]){7, 3}), *got = NULL;
    CHECK_OK(tg_session_run(sess, 1, &x, &xv, 1, &n, &got, 0, NULL));
    CHECK_TENSOR(got, ((double[]){7, 3}), 0);
    tg_session_free(sess);
    tg_graph_free(g);
}

static void test_range_by(void)
{
    tg_tensor *r = tg_range_by(tg_scalar(TG_INT64, 3), tg_scalar(TG_INT64, 10),
                               tg_scalar(TG_INT64, 3));
    CHECK(r && tg_dtype_of(r) == TG_INT64);
    CHECK_TENSOR(r, ((double[]){3, 6, 9}), 0);
    CHECK_TENSOR(tg_range_by(tg_scalar(TG_FLOAT32, 1), tg_scalar(TG_FLOAT32, 0),
                             tg_scalar(TG_FLOAT32, -0.25)),
                 ((double[]){1, 0.75, 0.5, 0.25}), 0);
    CHECK_SHAPE(tg_range_by(tg_scalar(TG_FLOAT64, 5), tg_scalar(TG_FLOAT64, 1),
                            tg_scalar(TG_FLOAT64, 1)), 0);
    CHECK_ERROR(tg_range_by(tg_scalar(TG_INT64, 0), tg_scalar(TG_INT64, 4),
                            tg_scalar(TG_INT64, 0)), TG_ERR_ARG, "non-zero delta");
    CHECK_ERROR(tg_range_by(tg_scalar(TG_INT64, 0), tg_scalar(TG_FLOAT32, 4),
                            tg_scalar(TG_INT64, 1)), TG_ERR_SHAPE, "start's dtype");
    CHECK_ERROR(tg_range_by(tg_scalar(TG_FLOAT32, 0), tg_ones(TG_FLOAT32, 1, (int64_t[]){1}),
                            tg_scalar(TG_FLOAT32, 1)), TG_ERR_SHAPE, "0-d tensor");
    CHECK_ERROR(tg_range_by(tg_scalar(TG_BOOL, 0), tg_scalar(TG_BOOL, 1), tg_scalar(TG_BOOL, 1)),
                TG_ERR_DTYPE, "not a numeric dtype");
    /* in a graph: the limit fed, one graph for several lengths */
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *lim = tg_placeholder(g, "limit", TG_FLOAT64, 0, NULL);
    tg_tensor *y = tg_range_by(tg_scalar(TG_FLOAT64, 0), lim, tg_scalar(TG_FLOAT64, 0.5));
    CHECK(y && tg_shape(y)[0] == -1);
    tg_tensor *s = tg_sum(y, 0, NULL, false);
    tg_session *sess = tg_session_new(g);
    const double limits[3] = {2, 0.2, -1}, sums[3] = {3, 0, 0};
    for (int k = 0; k < 3; k++) {
        tg_tensor *lv = tg_scalar(TG_FLOAT64, limits[k]), *got = NULL;
        CHECK_OK(tg_session_run(sess, 1, &lim, &lv, 1, &s, &got, 0, NULL));
        if (got)
            CHECK_NEAR(tg_item(got), sums[k], 0);
    }
    tg_session_free(sess);
    tg_graph_free(g);
}

static void test_full_by(void)
{
    tg_tensor *shape = ints(2, (int64_t[]){2, 3});
    CHECK_TENSOR(tg__full_by(shape, TG_INT32, 7, 0, NULL), ((double[]){7, 7, 7, 7, 7, 7}), 0);
    CHECK_SHAPE(tg__full_by(shape, TG_FLOAT32, 1, 2, (int64_t[]){-1, 3}), 2, 3);
    CHECK_ERROR(tg__full_by(ints(1, (int64_t[]){-2}), TG_FLOAT32, 0, 0, NULL), TG_ERR_SHAPE,
                "shape value 0 is -2");
    CHECK_ERROR(tg__full_by(shape, TG_FLOAT32, 0, 1, (int64_t[]){-1}), TG_ERR_ARG,
                "a hint of 1 dims for a shape of 2");
    /* in a graph: the hint's known dims at build, the fed values at run */
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *s = tg_placeholder(g, "s", TG_INT64, 1, (int64_t[]){2});
    tg_tensor *y = tg__full_by(s, TG_FLOAT64, 0.5, 2, (int64_t[]){-1, 3});
    CHECK(y && tg_shape(y)[0] == -1 && tg_shape(y)[1] == 3);
    tg_tensor *sum = tg_sum(y, 0, NULL, false);
    tg_session *sess = tg_session_new(g);
    for (int64_t rows = 0; rows < 3; rows++) {
        tg_tensor *sv = ints(2, (int64_t[]){rows, 3}), *got = NULL;
        CHECK_OK(tg_session_run(sess, 1, &s, &sv, 1, &sum, &got, 0, NULL));
        if (got)
            CHECK_NEAR(tg_item(got), 1.5 * (double)rows, 0);
    }
    tg_session_free(sess);
    tg_graph_free(g);
}

static void test_append_row(void)
{
    tg_tensor *row = tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *list = tg__append_row(tg_zeros(TG_FLOAT32, 2, (int64_t[]){0, 0}), row);
    CHECK_SHAPE(list, 1, 2); /* the first row fixes the dims */
    list = tg__append_row(list, tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){3, 4}));
    CHECK_TENSOR(list, ((double[]){1, 2, 3, 4}), 0);
    CHECK_ERROR(tg__append_row(list, tg_zeros(TG_FLOAT32, 1, (int64_t[]){3})), TG_ERR_SHAPE,
                "does not fit");
    CHECK_ERROR(tg__append_row(list, tg_zeros(TG_FLOAT64, 1, (int64_t[]){2})), TG_ERR_SHAPE,
                "cannot append");
    CHECK_ERROR(tg__append_row(list, tg_scalar(TG_FLOAT32, 1)), TG_ERR_SHAPE, "cannot append");
}

int main(void)
{
    RUN(test_onnx_clamping);
    RUN(test_gradient);
    RUN(test_graph);
    RUN(test_step_fed_at_run_time);
    RUN(test_errors);
    RUN(test_shape_of);
    RUN(test_range_by);
    RUN(test_full_by);
    RUN(test_append_row);
    return tt_finish();
}
