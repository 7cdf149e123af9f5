/* as_strided (src/ops/as_strided.c): the view's values, its offset from a
 * strided input's first element, writes through it, gradients (overlapping
 * views, an input that overlaps itself, finite differences of first and
 * second order, forward mode), graph mode against eager, and every error. */
#include "harness.h"
#include "ops/op.h"

#include <stdint.h>
#include <stdlib.h>

static tg_tensor *arange(tg_dtype dt, int64_t n)
{
    return tg_arange(dt, 0, (double)n, 1);
}

static void test_values(void)
{
    /* sliding windows of 3, step 2, over 0..8 */
    tg_tensor *x = arange(TG_FLOAT32, 9);
    tg_tensor *y = tg_as_strided(x, 2, (int64_t[]){4, 3}, (int64_t[]){2, 1}, 0);
    CHECK_SHAPE(y, 4, 3);
    CHECK_TENSOR(y, ((double[]){0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8}), 0);
    /* an offset; a stride-0 dim; a 0-d view */
    CHECK_TENSOR(tg_as_strided(x, 2, (int64_t[]){2, 2}, (int64_t[]){0, 3}, 5),
                 ((double[]){5, 8, 5, 8}), 0);
    tg_tensor *s = tg_as_strided(x, 0, NULL, NULL, 7);
    CHECK(s && tg_ndim(s) == 0 && tg_item(s) == 7);
    /* an empty view may have any offset; within the storage it keeps it
     * (as PyTorch's), past it the input's (so its data pointer stays in) */
    tg_tensor *e = tg_as_strided(x, 1, (int64_t[]){0}, (int64_t[]){1}, 7);
    CHECK_SHAPE(e, 0);
    CHECK(tg_offset(e) == 7);
    CHECK(tg_offset(tg_as_strided(x, 1, (int64_t[]){0}, (int64_t[]){1}, 100)) == 0);
    e = tg_as_strided(x, 1, (int64_t[]){0}, (int64_t[]){1}, INT64_MAX);
    CHECK(e && tg_offset(e) == 0);
    /* integer and bool inputs too */
    tg_tensor *xi = arange(TG_INT64, 6);
    CHECK_TENSOR(tg_as_strided(xi, 1, (int64_t[]){3}, (int64_t[]){2}, 1),
                 ((double[]){1, 3, 5}), 0);
}

/* positions count from a strided input's first element, with its strides
 * (PyTorch's storage positions, the offset relative to the input's) */
static void test_strided_input(void)
{
    tg_tensor *base = tg_reshape(arange(TG_FLOAT64, 12), 2, (int64_t[]){3, 4});
    tg_tensor *col = tg_slice(base, 1, 1, 4, 1); /* [3, 3], first element 1 */
    CHECK_TENSOR(tg_as_strided(col, 1, (int64_t[]){4}, (int64_t[]){2}, 1),
                 ((double[]){2, 4, 6, 8}), 0);
    tg_tensor *t = tg_transpose(base, 0, 1); /* strides (1, 4) */
    CHECK_TENSOR(tg_as_strided(t, 2, (int64_t[]){2, 2}, (int64_t[]){4, 1}, 2),
                 ((double[]){2, 3, 6, 7}), 0);
    /* a write through the view reaches the input's memory */
    tg_tensor *v = tg_as_strided(base, 1, (int64_t[]){3}, (int64_t[]){5}, 0);
    CHECK_OK(tg_fill_(v, -1));
    CHECK_TENSOR(base, ((double[]){-1, 1, 2, 3, 4, -1, 6, 7, 8, 9, -1, 11}), 0);
}

typedef struct view_args {
    int nd;
    int64_t size[4], stride[4], offset;
} view_args;

static tg_tensor *f_view(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const view_args *a = user;
    return tg_as_strided(in[0], a->nd, a->size, a->stride, a->offset);
}

/* nonlinear around the view, so that its gradient depends on the input
 * and the second order differentiates as_strided_grad (both directions) */
static tg_tensor *f_view_sq(int n, tg_tensor *const *in, void *user)
{
    tg_tensor *y = f_view(n, in, user);
    return tg_mul(y, y);
}

static void test_gradients(void)
{
    /* y[i, j] = x[i + j]: each x[k] gets the sum of dy over i + j = k */
    tg_tensor *x = tt_rand(1, (int64_t[]){4}, -1, 1);
    tg_tensor *y = tg_as_strided(x, 2, (int64_t[]){3, 2}, (int64_t[]){1, 1}, 0);
    tg_tensor *w = tt_tensor(TG_FLOAT64, 2, (int64_t[]){3, 2}, (double[]){1, 2, 3, 4, 5, 6});
    CHECK_OK(tg_backward(tg_sum(tg_mul(y, w), 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){1, 2 + 3, 4 + 5, 6}), 1e-15);

    /* an input that overlaps itself (an expanded row): each element gets
     * its position's gradient divided by the elements sharing it, as
     * PyTorch's as_strided_backward */
    tg_tensor *r = tt_rand(2, (int64_t[]){1, 3}, -1, 1);
    tg_tensor *e = tg_expand(r, 2, (int64_t[]){2, 3});
    tg_tensor *ve = tg_as_strided(e, 1, (int64_t[]){3}, (int64_t[]){1}, 0);
    tg_tensor *g = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){6, 8, 10});
    CHECK_OK(tg_backward(tg_sum(tg_mul(ve, g), 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(r), ((double[]){6, 8, 10}), 1e-15); /* 2 x half */

    /* finite differences, first and second order */
    view_args a = {2, {3, 3}, {2, 1}, 1};
    tg_tensor *in[1] = {tt_rand(1, (int64_t[]){9}, -1, 1)};
    CHECK_OK(tg_gradcheck(f_view, &a, 1, in, NULL));
    view_args b = {3, {2, 2, 3}, {3, 0, 1}, 0};
    tg_tensor *in2[1] = {tt_rand(2, (int64_t[]){2, 3}, -1, 1)};
    CHECK_OK(tg_gradcheck(f_view, &b, 1, in2, NULL));
    tt_grad_of go = {f_view_sq, &a, tg_detach(tt_rand(2, (int64_t[]){3, 3}, -1, 1)), 0};
    CHECK_OK(tg_gradcheck(tt_grad_of_fn, &go, 1, in, NULL));
}

/* eager forward mode (dual tensors): the tangent takes the same view */
static void test_forward_mode(void)
{
    view_args a = {2, {2, 3}, {1, 2}, 1};
    CHECK(tg_dual_level_enter() > 0);
    tg_tensor *x = tg_make_dual(arange(TG_FLOAT64, 8), tg_mul_scalar(arange(TG_FLOAT64, 8), 10));
    tg_tensor *y = f_view(1, &x, &a);
    CHECK_TENSOR(y, ((double[]){1, 3, 5, 2, 4, 6}), 0);
    CHECK_TENSOR(tg_dual_tangent(y), ((double[]){10, 30, 50, 20, 40, 60}), 0);
    CHECK_OK(tg_dual_level_exit());
}

/* refused on a graph's values (their layout is not the eager tensor's) */
static tg_status traced(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = f_view(1, in, user);
    return out[0] ? TG_OK : tg_last_status();
}

static void test_graph_refused(void)
{
    view_args a = {2, {3, 4}, {2, 1}, 1};
    tg_tensor *x = tt_rand(1, (int64_t[]){10}, -1, 1);
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *ph = NULL, *out = NULL;
    CHECK_FAILS(tg_graph_trace(g, traced, &a, 1, &x, NULL, &ph, 1, &out), TG_ERR_UNSUPPORTED,
                "runs in eager mode only");
    tg_graph_free(g);
}

static void test_errors(void)
{
    tg_tensor *x = arange(TG_FLOAT32, 6);
    CHECK_ERROR(tg_as_strided(x, 1, (int64_t[]){4}, (int64_t[]){2}, 0), TG_ERR_ARG,
                "outside the input's memory (0 to 5)");
    CHECK_ERROR(tg_as_strided(x, 1, (int64_t[]){2}, (int64_t[]){1}, -1), TG_ERR_ARG,
                "reaches elements -1 to 0");
    CHECK_ERROR(tg_as_strided(x, 1, (int64_t[]){2}, (int64_t[]){-1}, 3), TG_ERR_ARG,
                "negative strides are not supported");
    CHECK_ERROR(tg_as_strided(x, 1, (int64_t[]){-2}, (int64_t[]){1}, 0), TG_ERR_ARG,
                "negative size -2");
    CHECK_ERROR(tg_as_strided(x, 2, (int64_t[]){INT64_MAX, 2}, (int64_t[]){1, 1}, 0),
                TG_ERR_ARG, "overflows");
    CHECK_ERROR(tg_as_strided(x, 2, (int64_t[]){2, 2}, (int64_t[]){INT64_MAX, 1}, 0),
                TG_ERR_ARG, "beyond");
    CHECK_ERROR(tg_as_strided(x, 9, (int64_t[9]){0}, (int64_t[9]){0}, 0), TG_ERR_ARG,
                "0 to 8 allowed");
    CHECK_ERROR(tg_as_strided(NULL, 1, (int64_t[]){1}, (int64_t[]){1}, 0), TG_ERR_ARG,
                "input is NULL");
    CHECK_ERROR(tg_as_strided(x, 1, NULL, (int64_t[]){1}, 0), TG_ERR_ARG, "NULL");
    /* an empty input has no memory to view */
    CHECK_ERROR(tg_as_strided(arange(TG_FLOAT32, 0), 1, (int64_t[]){1}, (int64_t[]){1}, 0),
                TG_ERR_ARG, "outside the input's memory");
    /* the gradient op checks its shapes */
    tg_tensor *dy = arange(TG_FLOAT64, 5);
    tg_attr at[5] = {TG_AINTS("size", ((int64_t[]){2, 2}), 2),
                     TG_AINTS("stride", ((int64_t[]){1, 1}), 2), TG_AI("offset", 0),
                     TG_AINTS("input_shape", ((int64_t[]){3}), 1),
                     TG_AINTS("input_stride", ((int64_t[]){1}), 1)};
    tg_tensor *out = NULL;
    CHECK_FAILS(tg_op_run(tg_op_find("as_strided_grad"), 1, &dy, at, 5, &out), TG_ERR_SHAPE,
                "where the view's shape [2, 2] is needed");
}

int main(void)
{
    RUN(test_values);
    RUN(test_strided_input);
    RUN(test_gradients);
    RUN(test_forward_mode);
    RUN(test_graph_refused);
    RUN(test_errors);
    return tt_finish();
}
