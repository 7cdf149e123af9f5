/* tg_set_grad: assigning a leaf's gradient (PyTorch's `x.grad = g`): the
 * tensor itself is kept and later backward passes accumulate into it;
 * wrong shapes and dtypes are refused; NULL drops the gradient. */
#include "harness.h"

static tg_tensor *sum_all(tg_tensor *x) { return tg_sum(x, 0, NULL, false); }

static void test_assign_then_accumulate(void)
{
    tg_tensor *x = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    CHECK_OK(tg_set_requires_grad(x, true));
    tg_tensor *g = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, (double[]){10, 20, 30});
    CHECK_OK(tg_set_grad(x, g));
    CHECK(tg_grad(x) == g);
    CHECK_OK(tg_backward(sum_all(tg_mul(x, x)), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){12, 24, 36}), 0);
    CHECK_TENSOR(g, ((double[]){12, 24, 36}), 0); /* accumulated into g itself */
    CHECK_OK(tg_set_grad(x, NULL));
    CHECK(tg_grad(x) == NULL);
}

static void test_refused(void)
{
    tg_tensor *x = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    tg_tensor *wrong_shape = tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *wrong_type = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    CHECK_FAILS(tg_set_grad(x, wrong_shape), TG_ERR_SHAPE, "different size");
    CHECK_FAILS(tg_set_grad(x, wrong_type), TG_ERR_DTYPE, "different type");
    CHECK_FAILS(tg_set_grad(NULL, x), TG_ERR_ARG, "NULL");
    CHECK(tg_grad(x) == NULL);
}

int main(void)
{
    RUN(test_assign_then_accumulate);
    RUN(test_refused);
    return tt_finish();
}
