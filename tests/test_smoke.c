/* A first end-to-end check: add, mul, sum, backward. */
#include "harness.h"

static void test_add_backward(void)
{
    int64_t s[2] = {2, 3};
    double av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {10, 20, 30};
    tg_tensor *a = tt_tensor(TG_FLOAT32, 2, s, av);
    tg_tensor *b = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, bv);
    tg_set_requires_grad(a, true);
    tg_set_requires_grad(b, true);
    tg_tensor *y = tg_sum(tg_mul(tg_add(a, b), a), 0, NULL, false);
    CHECK_NEAR(tg_item(y), 1*11+2*22+3*33+4*14+5*25+6*36, 1e-3);
    CHECK_OK(tg_backward(y, NULL, false));
    /* d/da (a+b)*a = 2a + b ; d/db = sum over rows of a */
    double ga[6] = {12, 24, 36, 18, 30, 42}, gb[3] = {5, 7, 9};
    CHECK_TENSOR(tg_grad(a), ga, 1e-5);
    CHECK_TENSOR(tg_grad(b), gb, 1e-5);
    CHECK_FAILS(tg_backward(y, NULL, false), TG_ERR_AUTOGRAD, "retain_graph");
}

static tg_tensor *f_tanh_mul(int n, tg_tensor *const *in, void *user)
{
    (void)n; (void)user;
    return tg_mul(tg_tanh(in[0]), in[1]);
}

static void test_gradcheck_basic(void)
{
    int64_t s[2] = {3, 4};
    tg_tensor *in[2] = {tt_rand(2, s, -1, 1), tt_rand(1, (int64_t[]){4}, -1, 1)};
    CHECK_GRADCHECK(f_tanh_mul, NULL, 2, in);
}

int main(void)
{
    RUN(test_add_backward);
    RUN(test_gradcheck_basic);
    return tt_finish();
}
