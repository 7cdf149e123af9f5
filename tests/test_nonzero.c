/* nonzero (src/ops/nonzero.c): coordinates eagerly for every dtype, NaN,
 * 0-d and empty inputs; in a graph, a count known only at run time that
 * ops after it carry (the selected values and their sum, the same graph
 * run on inputs with different counts), gradients through the selection. */
#include "harness.h"

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

int main(void)
{
    RUN(test_eager);
    RUN(test_graph);
    return tt_finish();
}
