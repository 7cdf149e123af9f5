/* Ops given the shapes and attributes a hostile-argument fuzz of the Python
 * package found crashing (tests/python/test_hostile_*.py has the Python
 * side): each case here used to kill the process. Now each gives a result
 * of the expected shape, or an error. */
#include "harness.h"
#include "tg/tg.h"

static tg_tensor *leaf(tg_dtype dt, int ndim, const int64_t *shape)
{
    tg_tensor *t = tg_ones(dt, ndim, shape);
    tg_set_requires_grad(t, true);
    return t;
}

/* a batch of matrices with no columns (or rows): the split of the batches
 * over threads divided by the work of one product, which was 0 (SIGFPE) */
static void test_batched_matmul_of_empty_matrices(void)
{
    const tg_dtype dts[2] = {TG_FLOAT32, TG_FLOAT64};
    for (int i = 0; i < 2; i++) {
        tg_dtype dt = dts[i];
        tg_tensor *a = leaf(dt, 3, (int64_t[]){3, 3, 3});
        tg_tensor *b = leaf(dt, 3, (int64_t[]){3, 3, 0});
        tg_tensor *y = tg_matmul(a, b);
        CHECK_SHAPE(y, 3, 3, 0);
        CHECK_OK(tg_backward(tg_sum(y, 0, NULL, false), NULL, false));
        CHECK_SHAPE(tg_grad(a), 3, 3, 3);
        y = tg_matmul(tg_ones(dt, 3, (int64_t[]){2, 0, 3}), tg_ones(dt, 3, (int64_t[]){2, 3, 4}));
        CHECK_SHAPE(y, 2, 0, 4);
        y = tg_matmul(tg_ones(dt, 3, (int64_t[]){4, 2, 0}), tg_ones(dt, 2, (int64_t[]){0, 5}));
        CHECK_SHAPE(y, 4, 2, 5);
        CHECK(tg_item(tg_sum(y, 0, NULL, false)) == 0.0);
    }
}

int main(void)
{
    RUN(test_batched_matmul_of_empty_matrices);
    return tt_finish();
}
