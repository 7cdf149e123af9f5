/* Eager forward mode with dual tensors (tg_dual_level_enter, tg_make_dual,
 * tg_dual_tangent; autodiff/forward_ad.c): the levels and their errors,
 * tangents through ops, views and the in-place ops, what carries no
 * tangent, reverse mode over the tangents, and the tangents dropped when
 * the level closes. Every op's rule is checked eagerly against the
 * graph's in test_jvp.c (its fourth way). */
#include "harness.h"

#include <string.h>

static tg_tensor *vec3(double a, double b, double c)
{
    return tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){a, b, c});
}

static void test_levels(void)
{
    tg_tensor *x = vec3(1, 2, 3), *v = vec3(1, 0, 0);
    CHECK(!tg_dual_level_open());
    CHECK_ERROR(tg_make_dual(x, v), TG_ERR_AUTOGRAD, "no dual level is open");
    CHECK_FAILS(tg_dual_level_exit(), TG_ERR_AUTOGRAD, "no level is open");
    int64_t level = tg_dual_level_enter();
    CHECK(level > 0 && tg_dual_level_open());
    CHECK(tg_dual_level_enter() == -1);
    CHECK(strstr(tg_last_error(), "nested forward mode AD is not supported") != NULL);
    tg_tensor *v2 = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2});
    CHECK_ERROR(tg_make_dual(x, v2), TG_ERR_SHAPE,
                "tangent's shape [2] differs from the primal's [3]");
    tg_tensor *ints = tt_tensor(TG_INT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    CHECK_ERROR(tg_make_dual(ints, v), TG_ERR_DTYPE, "primal must be floating point");
    CHECK_ERROR(tg_make_dual(NULL, v), TG_ERR_ARG, "primal is NULL");
    tg_tensor *d = tg_make_dual(x, v);
    CHECK(d && d != x && tg_data(d) == tg_data(x));
    CHECK(tg_dual_tangent(x) == NULL); /* the primal itself gets none */
    CHECK(tg_dual_tangent(d) == v);
    tg_tensor *p = tg_dual_primal(d);
    CHECK(p && tg_dual_tangent(p) == NULL && tg_data(p) == tg_data(x));
    CHECK_OK(tg_dual_level_exit());
    CHECK(tg_dual_tangent(d) == NULL); /* dropped with the level */
    CHECK(tg_dual_level_enter() > level); /* levels are never reused */
    CHECK(tg_dual_tangent(d) == NULL);
    CHECK_OK(tg_dual_level_exit());
}

static void test_ops(void)
{
    CHECK(tg_dual_level_enter() > 0);
    tg_tensor *x = vec3(0.5, -1, 2), *v = vec3(1, 2, -1);
    tg_tensor *d = tg_make_dual(x, v);
    /* y = sin(x) x: y' = (cos x x + sin x) v */
    tg_tensor *y = tg_mul(tg_sin(d), d);
    double e[3], xs[3] = {0.5, -1, 2}, vs[3] = {1, 2, -1};
    for (int i = 0; i < 3; i++)
        e[i] = (cos(xs[i]) * xs[i] + sin(xs[i])) * vs[i];
    CHECK_TENSOR(tg_dual_tangent(y), e, 1e-14);
    /* a float32 tangent of a float64 primal is cast */
    tg_tensor *v32 = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 2, -1});
    CHECK(tg_dtype_of(tg_dual_tangent(tg_make_dual(x, v32))) == TG_FLOAT64);
    /* views: the tangent's view */
    tg_tensor *s = tg_slice(d, 0, 1, 3, 1);
    CHECK_TENSOR(tg_dual_tangent(s), ((double[]){2, -1}), 0);
    /* outputs that are not differentiable carry none */
    CHECK(tg_dual_tangent(tg_gt(d, x)) == NULL);
    CHECK(tg_dual_tangent(tg_argmax(d, 0, false)) == NULL);
    /* an op on tensors without tangents gives none */
    CHECK(tg_dual_tangent(tg_exp(x)) == NULL);
    CHECK_OK(tg_dual_level_exit());
}

static void test_in_place(void)
{
    CHECK(tg_dual_level_enter() > 0);
    tg_tensor *v = vec3(1, 2, 3);
    tg_tensor *d = tg_make_dual(tg_clone(vec3(1, 1, 1)), v);
    CHECK_OK(tg_mul_scalar_(d, 2));
    CHECK_TENSOR(tg_dual_tangent(d), ((double[]){2, 4, 6}), 0);
    tg_tensor *w = tg_make_dual(vec3(0, 0, 0), vec3(1, 1, 1));
    CHECK_OK(tg_add_(d, w, 0.5));
    CHECK_TENSOR(tg_dual_tangent(d), ((double[]){2.5, 4.5, 6.5}), 0);
    CHECK_OK(tg_copy_(d, w)); /* the source's tangent */
    CHECK_TENSOR(tg_dual_tangent(d), ((double[]){1, 1, 1}), 0);
    CHECK_OK(tg_fill_(d, 3)); /* a constant: none */
    CHECK(tg_dual_tangent(d) == NULL);
    /* a tensor without a tangent takes one from what is added to it */
    tg_tensor *plain = tg_clone(vec3(1, 1, 1));
    CHECK_OK(tg_add_(plain, w, 2));
    CHECK_TENSOR(tg_dual_tangent(plain), ((double[]){2, 2, 2}), 0);
    CHECK_OK(tg_dual_level_exit());
}

/* the tangent is a function of the primal like any value: reverse mode
 * differentiates it (d/dx of (x^3)' v = 6 x v) */
static void test_reverse_over_forward(void)
{
    CHECK(tg_dual_level_enter() > 0);
    tg_tensor *x = vec3(1, 2, 3);
    CHECK_OK(tg_set_requires_grad(x, true));
    tg_tensor *d = tg_make_dual(x, vec3(1, 1, 1));
    tg_tensor *y = tg_mul(tg_mul(d, d), d);
    tg_tensor *t = tg_dual_tangent(y); /* 3 x^2 */
    CHECK_TENSOR(t, ((double[]){3, 12, 27}), 1e-14);
    CHECK_OK(tg_backward(tg_sum(t, 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){6, 12, 18}), 1e-14);
    CHECK_OK(tg_dual_level_exit());
}

int main(void)
{
    RUN(test_levels);
    RUN(test_ops);
    RUN(test_in_place);
    RUN(test_reverse_over_forward);
    return tt_finish();
}
