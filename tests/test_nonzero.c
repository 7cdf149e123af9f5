/* nonzero (src/ops/nonzero.c): coordinates eagerly for every dtype, NaN,
 * 0-d and empty inputs; in a graph, a count known only at run time that
 * ops after it carry (the selected values and their sum, the same graph
 * run on inputs with different counts), gradients through the selection;
 * a cond whose branches give a run-time length and a known one;
 * non_max_suppression the same way. */
#include "harness.h"
#include "ops/op.h"
#include "tg/control.h"

#include <math.h>

static tg_tensor *vec(tg_dtype dt, int n, const double *v)
{
    return tt_tensor(dt, 1, (int64_t[]){n}, v);
}

static void test_eager(void)
{
    tg_tensor *x = tt_tensor(TG_FLOAT32, 2, (int64_t[]){2, 3},
                             (double[]){0, 1.5, 0, NAN, 0, -2});
    tg_tensor *y = tg_nonzero(x);
    CHECK(tg_dtype_of(y) == TG_INT64);
    CHECK_SHAPE(y, 3, 2);
    CHECK_TENSOR(y, ((double[]){0, 1, 1, 0, 1, 2}), 0);
    CHECK_TENSOR(tg_nonzero(vec(TG_INT64, 4, (double[]){5, 0, 0, 7})), ((double[]){0, 3}), 0);
    CHECK_SHAPE(tg_nonzero(vec(TG_BOOL, 3, (double[]){0, 0, 0})), 0, 1);
    /* 0-d: [1, 0] when nonzero, [0, 0] when not (PyTorch's) */
    CHECK_SHAPE(tg_nonzero(tg_scalar(TG_FLOAT64, 3)), 1, 0);
    CHECK_SHAPE(tg_nonzero(tg_scalar(TG_FLOAT64, 0)), 0, 0);
    CHECK_SHAPE(tg_nonzero(tg_zeros(TG_FLOAT32, 2, (int64_t[]){0, 4})), 0, 2);
    /* a strided input */
    tg_tensor *t = tg_transpose(tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 2},
                                          (double[]){0, 1, 2, 0}), 0, 1);
    CHECK_TENSOR(tg_nonzero(t), ((double[]){0, 1, 1, 0}), 0);
    CHECK_ERROR(tg_nonzero(NULL), TG_ERR_ARG, "input is NULL");
}

/* sum of x over its positive elements, through nonzero + index_select */
static tg_tensor *positive_sum(tg_tensor *x)
{
    tg_tensor *idx = tg_reshape(tg_nonzero(tg_gt(x, tg_scalar(TG_FLOAT64, 0))), 1,
                                (int64_t[]){-1});
    return tg_sum(tg_index_select(x, 0, idx), 0, NULL, false);
}

static void test_graph(void)
{
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){5});
    tg_tensor *idx = tg_nonzero(x);
    CHECK(idx && tg_shape(idx)[0] == -1 && tg_shape(idx)[1] == 1);
    tg_tensor *s = positive_sum(x);
    tg_tensor *dx = NULL;
    CHECK_OK(tg_graph_gradients(g, 1, &s, NULL, 1, &x, &dx));
    tg_session *sess = tg_session_new(g);
    const double a[5] = {1, -2, 3, 0, 4}, b[5] = {-1, -1, 2, -1, -1};
    const double *in[3] = {a, b, (double[]){-1, -2, -3, -4, -5}};
    const double sums[3] = {8, 2, 0};
    const double grads[3][5] = {{1, 0, 1, 0, 1}, {0, 0, 1, 0, 0}, {0, 0, 0, 0, 0}};
    const int64_t nonzeros[3] = {4, 5, 5}; /* of x itself */
    for (int r = 0; r < 3; r++) {
        tg_tensor *xv = vec(TG_FLOAT64, 5, in[r]);
        tg_tensor *fetch[3] = {s, dx, idx}, *got[3] = {NULL, NULL, NULL};
        CHECK_OK(tg_session_run(sess, 1, &x, &xv, 3, fetch, got, 0, NULL));
        if (!got[0])
            continue;
        CHECK_NEAR(tg_item(got[0]), sums[r], 0);
        CHECK_TENSOR(got[1], grads[r], 0);
        CHECK(tg_shape(got[2])[0] == nonzeros[r]);
    }
    tg_session_free(sess);
    tg_graph_free(g);
}

/* a cond whose branches give a run-time length (nonzero) and a known one
 * (an empty selection): the output's dim is unknown until the run takes
 * a branch */
static tg_status then_nonzero(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_nonzero(in[0]);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status else_empty(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user, (void)in;
    out[0] = tg_zeros(TG_INT64, 2, (int64_t[]){0, 1});
    return out[0] ? TG_OK : tg_last_status();
}

static void test_cond_with_a_run_time_length(void)
{
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){4});
    tg_tensor *p = tg_placeholder(g, "p", TG_BOOL, 0, NULL);
    tg_tensor *y = NULL;
    CHECK_OK(tg_cond(p, then_nonzero, else_empty, NULL, 1, &x, 1, &y));
    CHECK(y && tg_shape(y)[0] == -1 && tg_shape(y)[1] == 1);
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = vec(TG_FLOAT64, 4, (double[]){0, 2, 0, 3});
    for (int take = 0; take < 2; take++) {
        tg_tensor *feeds[2] = {x, p}, *vals[2] = {xv, tg_full(TG_BOOL, 0, NULL, take)};
        tg_tensor *got = NULL;
        CHECK_OK(tg_session_run(s, 2, feeds, vals, 1, &y, &got, 0, NULL));
        if (!got)
            continue;
        CHECK_SHAPE(got, take ? 2 : 0, 1);
        if (take)
            CHECK_TENSOR(got, ((double[]){1, 3}), 0);
    }
    tg_session_free(s);
    tg_graph_free(g);
}

/* non_max_suppression eagerly and in a graph (the kept count at run
 * time): three boxes of one class, the second overlapping the first */
static void test_nms(void)
{
    const tg_op_def *op = tg_op_find("non_max_suppression");
    CHECK(op != NULL);
    if (!op)
        return;
    tg_tensor *bx = tt_tensor(TG_FLOAT32, 3, (int64_t[]){1, 3, 4},
                              (double[]){0, 0, 2, 2, 0, 0.1, 2, 2.1, 5, 5, 6, 6});
    tg_tensor *sc = tt_tensor(TG_FLOAT32, 3, (int64_t[]){1, 1, 3}, (double[]){0.9, 0.8, 0.7});
    tg_attr a[3] = {TG_AI("max_output", 10), TG_AF("iou_threshold", 0.5),
                    TG_AI("has_score", 0)};
    tg_tensor *in[2] = {bx, sc}, *y = NULL;
    CHECK_OK(tg_op_run(op, 2, in, a, 3, &y));
    CHECK_TENSOR(y, ((double[]){0, 0, 0, 0, 0, 2}), 0);
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *pb = tg_placeholder(g, "b", TG_FLOAT32, 3, (int64_t[]){1, 3, 4});
    tg_tensor *ps = tg_placeholder(g, "s", TG_FLOAT32, 3, (int64_t[]){1, 1, 3});
    tg_tensor *pin[2] = {pb, ps}, *py = NULL, *got = NULL;
    CHECK_OK(tg_op_run(op, 2, pin, a, 3, &py));
    CHECK(py && tg_shape(py)[0] == -1);
    tg_session *s = tg_session_new(g);
    CHECK_OK(tg_session_run(s, 2, pin, in, 1, &py, &got, 0, NULL));
    CHECK_TENSOR(got, ((double[]){0, 0, 0, 0, 0, 2}), 0);
    /* apart, all three are kept */
    tg_tensor *far = tt_tensor(TG_FLOAT32, 3, (int64_t[]){1, 3, 4},
                               (double[]){0, 0, 1, 1, 3, 3, 4, 4, 5, 5, 6, 6});
    tg_tensor *in2[2] = {far, sc};
    got = NULL;
    CHECK_OK(tg_session_run(s, 2, pin, in2, 1, &py, &got, 0, NULL));
    CHECK_SHAPE(got, 3, 3);
    tg_session_free(s);
    tg_graph_free(g);
    tg_attr bad[1] = {TG_AF("iou_threshold", 2)};
    CHECK_FAILS(tg_op_run(op, 2, in, bad, 1, &y), TG_ERR_ARG, "iou_threshold");
    tg_tensor *wrong[2] = {sc, bx};
    CHECK_FAILS(tg_op_run(op, 2, wrong, a, 3, &y), TG_ERR_SHAPE, "boxes should be");
}

int main(void)
{
    RUN(test_eager);
    RUN(test_graph);
    RUN(test_cond_with_a_run_time_length);
    RUN(test_nms);
    return tt_finish();
}
