/* The eager autograd engine: accumulation into leaves, retain_graph,
 * explicit output gradients, shared subexpressions, very long chains,
 * higher-order gradients against analytic second derivatives, grad mode,
 * detach, version counters, custom functions, and gradcheck itself. */
#include "harness.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>

static tg_tensor *leaf(tg_dtype dt, int nd, const int64_t *s, const double *v)
{
    tg_tensor *t = tt_tensor(dt, nd, s, v);
    tg_set_requires_grad(t, true);
    return t;
}

static tg_tensor *sum_all(tg_tensor *x) { return tg_sum(x, 0, NULL, false); }

/* ---- backward basics --------------------------------------------------------- */
static void test_accumulate_two_backwards(void)
{
    double v[3] = {1, -2, 3};
    tg_tensor *x = leaf(TG_FLOAT32, 1, (int64_t[]){3}, v);
    CHECK(tg_grad(x) == NULL);
    CHECK_OK(tg_backward(sum_all(tg_mul(x, x)), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){2, -4, 6}), 0);
    tg_tensor *g1 = tg_grad(x);
    /* a second, separate graph adds into the same grad */
    CHECK_OK(tg_backward(sum_all(tg_mul_scalar(x, 3)), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){5, -1, 9}), 0);
    CHECK(tg_grad(x) == g1); /* accumulated in place */
    CHECK(!tg_requires_grad(tg_grad(x)) && tg_dtype_of(tg_grad(x)) == TG_FLOAT32);
    tg_zero_grad(x);
    CHECK(tg_grad(x) == NULL);
    CHECK_OK(tg_backward(sum_all(x), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){1, 1, 1}), 0);
    /* backward on a one-element leaf itself */
    tg_tensor *s = leaf(TG_FLOAT64, 0, NULL, (double[]){4});
    CHECK_OK(tg_backward(s, NULL, false));
    CHECK_NEAR(tg_item(tg_grad(s)), 1, 0);
    /* a leaf's grad does not alias the gradient that flowed (expand) */
    tg_tensor *b = leaf(TG_FLOAT64, 2, (int64_t[]){2, 1}, (double[]){1, 2});
    CHECK_OK(tg_backward(sum_all(tg_expand(b, 2, (int64_t[]){2, 3})), NULL, false));
    CHECK(tg_is_contiguous(tg_grad(b)));
    CHECK_TENSOR(tg_grad(b), ((double[]){3, 3}), 0);
}

/* a node that saved nothing keeps its rule: a second backward through
 * only such nodes (add of a constant, sum) runs and accumulates again, as
 * PyTorch's; one through a node whose saved tensors were freed fails */
static void test_second_backward_without_saved(void)
{
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *y = sum_all(tg_add_scalar(x, 3.0));
    CHECK_OK(tg_backward(y, NULL, false));
    CHECK_OK(tg_backward(y, NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){2, 2}), 0);
    tg_tensor *z = sum_all(tg_mul(x, x));
    CHECK_OK(tg_backward(z, NULL, false));
    CHECK_FAILS(tg_backward(z, NULL, false), TG_ERR_AUTOGRAD, "second time");
    CHECK_TENSOR(tg_grad(x), ((double[]){4, 6}), 1e-12);
}

static void test_retain_graph(void)
{
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *y = sum_all(tg_exp(tg_mul(x, x)));
    CHECK_OK(tg_backward(y, NULL, true));
    double g[2] = {2 * exp(1.0), 4 * exp(4.0)};
    CHECK_TENSOR(tg_grad(x), g, 1e-12);
    CHECK_OK(tg_backward(y, NULL, false)); /* allowed: the graph was kept */
    double g2[2] = {2 * g[0], 2 * g[1]};
    CHECK_TENSOR(tg_grad(x), g2, 1e-12);
    CHECK_FAILS(tg_backward(y, NULL, false), TG_ERR_AUTOGRAD, "retain_graph");
    CHECK_FAILS(tg_backward(y, NULL, true), TG_ERR_AUTOGRAD, "second time");
    CHECK_TENSOR(tg_grad(x), g2, 1e-12); /* the failures changed nothing */
    /* a new graph over part of the freed one fails too, naming the node */
    tg_tensor *z = leaf(TG_FLOAT64, 0, NULL, (double[]){0.5});
    tg_tensor *m = tg_mul(z, z);
    CHECK_OK(tg_backward(tg_tanh(m), NULL, false));
    CHECK_FAILS(tg_backward(tg_sin(m), NULL, false), TG_ERR_AUTOGRAD, "'mul'");
    /* functional grad without retain frees the graph as well */
    tg_tensor *w = tg_exp(z), *r = NULL;
    CHECK_OK(tg_autograd_grad(1, &w, NULL, 1, &z, &r, false, false));
    tg_release(r);
    CHECK_FAILS(tg_backward(w, NULL, false), TG_ERR_AUTOGRAD, "retain_graph");
}

static void test_backward_seed(void)
{
    tg_tensor *x = leaf(TG_FLOAT32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4});
    tg_tensor *y = tg_mul(x, x);
    CHECK_FAILS(tg_backward(y, NULL, false), TG_ERR_AUTOGRAD,
                "implicitly created only for a one-element output");
    CHECK_FAILS(tg_backward(y, NULL, false), TG_ERR_AUTOGRAD, "[2, 2]");
    CHECK_FAILS(tg_backward(y, tg_ones(TG_FLOAT32, 1, (int64_t[]){4}), false), TG_ERR_SHAPE,
                "gradient has shape [4], the output has shape [2, 2]");
    /* an explicit gradient (of another dtype: it is cast) */
    tg_tensor *seed = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 2}, (double[]){1, 0.5, -1, 2});
    CHECK_OK(tg_backward(y, seed, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){2, 2, -6, 16}), 0);
    CHECK(tg_dtype_of(tg_grad(x)) == TG_FLOAT32);
    /* a one-element root with more than 0 dims needs no seed */
    tg_tensor *u = leaf(TG_FLOAT64, 2, (int64_t[]){1, 1}, (double[]){3});
    CHECK_OK(tg_backward(tg_mul(u, u), NULL, false));
    CHECK_TENSOR(tg_grad(u), ((double[]){6}), 0);
    /* roots that cannot start a backward */
    CHECK_FAILS(tg_backward(tg_ones(TG_FLOAT32, 0, NULL), NULL, false), TG_ERR_AUTOGRAD,
                "does not require grad");
    CHECK_FAILS(tg_backward(NULL, NULL, false), TG_ERR_ARG, "NULL");
}

static void test_diamond(void)
{
    /* x feeds two branches that meet again: gradients must add */
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0.5, -1, 2});
    tg_tensor *a = tg_mul_scalar(x, 2), *b = tg_exp(x);
    tg_tensor *y = sum_all(tg_mul(a, b)); /* 2 x e^x */
    CHECK_OK(tg_backward(y, NULL, false));
    double e[3];
    const double xv[3] = {0.5, -1, 2};
    for (int i = 0; i < 3; i++)
        e[i] = 2 * exp(xv[i]) * (1 + xv[i]);
    CHECK_TENSOR(tg_grad(x), e, 1e-12);
    /* x used twice by one op, and a node whose output is used twice */
    tg_tensor *z = leaf(TG_FLOAT64, 0, NULL, (double[]){3});
    tg_tensor *s = tg_sin(z);
    CHECK_OK(tg_backward(tg_add(tg_mul(z, z), tg_mul(s, s)), NULL, false));
    CHECK_NEAR(tg_item(tg_grad(z)), 6 + 2 * sin(3.0) * cos(3.0), 1e-12);
    /* several paths of different lengths into one leaf */
    tg_tensor *w = leaf(TG_FLOAT64, 0, NULL, (double[]){1.5});
    tg_tensor *p = w;
    tg_tensor *acc = w;
    for (int i = 0; i < 5; i++) {
        p = tg_mul(p, w);            /* w^(i+2) */
        acc = tg_add(acc, p);        /* w + w^2 + ... + w^6 */
    }
    CHECK_OK(tg_backward(acc, NULL, false));
    double want = 0;
    for (int k = 1; k <= 6; k++)
        want += k * pow(1.5, k - 1);
    CHECK_NEAR(tg_item(tg_grad(w)), want, 1e-9);
}

static void test_long_chain(void)
{
    const int n = 100000;
    tg_tensor *x = leaf(TG_FLOAT64, 0, NULL, (double[]){1});
    tg_tensor *one = tg_scalar(TG_FLOAT64, 1.0);
    /* a chain of muls saves every intermediate: freeing it must not
     * recurse once per node */
    tg_scope_begin();
    tg_tensor *y = x;
    for (int i = 0; i < n; i++)
        y = tg_mul(y, one);
    CHECK(y && strcmp(tg_grad_fn_name(y), "mul") == 0);
    CHECK_OK(tg_backward(y, NULL, false));
    tg_scope_end();
    CHECK_NEAR(tg_item(tg_grad(x)), 1, 0);
    /* a chain that is never run backward, dropped from its root */
    tg_scope_begin();
    y = x;
    for (int i = 0; i < n; i++)
        y = tg_add(y, one);
    tg_retain(y);
    tg_scope_end(); /* every intermediate tensor goes; the nodes remain */
    CHECK_NEAR(tg_item(y), n + 1, 0);
    tg_release(y); /* the whole graph goes at once */
    /* a chain run with retain_graph, then freed */
    tg_scope_begin();
    y = x;
    for (int i = 0; i < n / 10; i++)
        y = tg_neg(y);
    tg_zero_grad(x);
    CHECK_OK(tg_backward(y, NULL, true));
    CHECK_OK(tg_backward(y, NULL, false));
    tg_scope_end();
    CHECK_NEAR(tg_item(tg_grad(x)), 2, 0);
}

/* ---- higher order -------------------------------------------------------------- */
/* d/dx and d2/dx2 of sum(f(x)), elementwise, by the engine; the results
 * belong to the caller (tg_autograd_grad does not hand them to a scope) */
static void grad2(tg_tensor *(*f)(tg_tensor *), tg_tensor *x, tg_tensor **g1, tg_tensor **g2)
{
    tg_tensor *y = sum_all(f(x));
    *g1 = *g2 = NULL;
    CHECK_OK(tg_autograd_grad(1, &y, NULL, 1, &x, g1, false, true));
    if (!*g1)
        return;
    CHECK(tg_requires_grad(*g1)); /* create_graph: differentiable */
    tg_tensor *s = sum_all(*g1);
    CHECK_OK(tg_autograd_grad(1, &s, NULL, 1, &x, g2, false, false));
    CHECK(*g2 && !tg_requires_grad(*g2));
}

static void test_grad_of_grad(void)
{
    double xv[4] = {-1.3, -0.2, 0.4, 1.7};
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){4}, xv);
    double e1[4], e2[4];
    tg_tensor *g1, *g2;
    /* tanh: 1 - t^2 and -2 t (1 - t^2) */
    grad2(tg_tanh, x, &g1, &g2);
    for (int i = 0; i < 4; i++) {
        double t = tanh(xv[i]);
        e1[i] = 1 - t * t;
        e2[i] = -2 * t * (1 - t * t);
    }
    CHECK_TENSOR(g1, e1, 1e-12);
    CHECK_TENSOR(g2, e2, 1e-12);
    tg_release(g1);
    tg_release(g2);
    /* sigmoid: s (1 - s) and s (1 - s) (1 - 2 s) */
    grad2(tg_sigmoid, x, &g1, &g2);
    for (int i = 0; i < 4; i++) {
        double s = 1 / (1 + exp(-xv[i]));
        e1[i] = s * (1 - s);
        e2[i] = s * (1 - s) * (1 - 2 * s);
    }
    CHECK_TENSOR(g1, e1, 1e-12);
    CHECK_TENSOR(g2, e2, 1e-12);
    tg_release(g1);
    tg_release(g2);
    /* exp: e^x twice */
    grad2(tg_exp, x, &g1, &g2);
    for (int i = 0; i < 4; i++)
        e1[i] = exp(xv[i]);
    CHECK_TENSOR(g1, e1, 1e-12);
    CHECK_TENSOR(g2, e1, 1e-12);
    tg_release(g1);
    tg_release(g2);
    /* TODO(linalg): grad of grad of matmul, once tg_matmul lands */
}

/* backward(create_graph): x.grad is differentiable; two roots in one pass */
static void test_backward_create_graph(void)
{
    double xv[3] = {-0.7, 0.3, 1.1};
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){3}, xv);
    tg_scope_begin();
    tg_tensor *y = tg_sum(tg_mul(tg_sin(x), x), 0, NULL, false); /* d: cos x * x + sin x */
    CHECK_OK(tg_backward_ex(1, &y, NULL, false, true));
    tg_tensor *g = tg_grad(x);
    CHECK(g && tg_requires_grad(g));
    double e[3];
    for (int i = 0; i < 3; i++)
        e[i] = cos(xv[i]) * xv[i] + sin(xv[i]);
    CHECK_TENSOR(g, e, 1e-12);
    tg_tensor *gs = tg_sum(g, 0, NULL, false);
    tg_zero_grad(x); /* g stays alive through gs's history */
    CHECK_OK(tg_backward_ex(1, &gs, NULL, false, false)); /* d2: 2 cos x - x sin x */
    for (int i = 0; i < 3; i++)
        e[i] = 2 * cos(xv[i]) - xv[i] * sin(xv[i]);
    CHECK_TENSOR(tg_grad(x), e, 1e-12);
    CHECK(!tg_requires_grad(tg_grad(x)));
    /* two roots, one seeded: x.grad = 2 * 1 + cos x * [1, 2, 3] */
    tg_zero_grad(x);
    tg_tensor *roots[2] = {tg_sum(tg_mul_scalar(x, 2), 0, NULL, false), tg_sin(x)};
    double sv[3] = {1, 2, 3};
    tg_tensor *seeds[2] = {NULL, tg_from_data(TG_FLOAT64, 1, (int64_t[]){3}, sv)};
    CHECK_OK(tg_backward_ex(2, roots, seeds, false, false));
    for (int i = 0; i < 3; i++)
        e[i] = 2 + cos(xv[i]) * sv[i];
    CHECK_TENSOR(tg_grad(x), e, 1e-12);
    CHECK_FAILS(tg_backward_ex(0, roots, NULL, false, false), TG_ERR_ARG, "root");
    CHECK_FAILS(tg_backward_ex(2, roots, NULL, false, false), TG_ERR_AUTOGRAD, "one-element");
    tg_scope_end();
}

static void test_grad_of_grad_mul(void)
{
    /* z = sum(x * x * y): dz/dx = 2xy; d(sum dz/dx)/dx = 2y, /dy = 2x */
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, -2, 0.5});
    tg_tensor *y = leaf(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){3, 0.25, -1});
    tg_tensor *z = sum_all(tg_mul(tg_mul(x, x), y));
    tg_tensor *gx = NULL;
    CHECK_OK(tg_autograd_grad(1, &z, NULL, 1, &x, &gx, false, true));
    CHECK_TENSOR(gx, ((double[]){6, -1, -1}), 1e-15);
    CHECK(tg_grad_fn_name(gx) != NULL);
    tg_tensor *s = sum_all(gx);
    tg_tensor *in[2] = {x, y}, *g[2] = {NULL, NULL};
    CHECK_OK(tg_autograd_grad(1, &s, NULL, 2, in, g, true, false));
    CHECK_TENSOR(g[0], ((double[]){6, 0.5, -2}), 1e-15);
    CHECK_TENSOR(g[1], ((double[]){2, -4, 1}), 1e-15);
    /* leaves' grad fields were never touched by the functional API */
    CHECK(tg_grad(x) == NULL && tg_grad(y) == NULL);
    tg_release(g[0]);
    tg_release(g[1]);
    /* third order through exp: still e^x */
    tg_tensor *w = leaf(TG_FLOAT64, 0, NULL, (double[]){0.7});
    tg_tensor *cur = tg_exp(w), *prev = NULL;
    for (int k = 0; k < 3; k++) {
        tg_tensor *d = NULL;
        CHECK_OK(tg_autograd_grad(1, &cur, NULL, 1, &w, &d, false, true));
        if (!d)
            break;
        CHECK_NEAR(tg_item(d), exp(0.7), 1e-12);
        tg_release(prev);
        prev = cur = d;
    }
    tg_release(prev);
    tg_release(gx);
}

static void test_functional_grad(void)
{
    tg_tensor *a = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *b = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){3, 4});
    tg_tensor *c = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){5, 6});
    tg_tensor *h = tg_mul(a, b); /* non-leaf input */
    tg_tensor *y1 = sum_all(tg_mul(h, h)), *y2 = tg_mul_scalar(a, 10);
    tg_tensor *outs[2] = {y1, y2};
    tg_tensor *seeds[2] = {tg_scalar(TG_FLOAT64, 1), tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, -1})};
    tg_tensor *ins[3] = {a, h, c}, *res[3];
    CHECK_OK(tg_autograd_grad(2, outs, seeds, 3, ins, res, true, false));
    /* dy1/da = 2 h b = 2 a b^2; dy2/da = 10 * seed */
    CHECK_TENSOR(res[0], ((double[]){18 + 10, 64 - 10}), 1e-12);
    CHECK_TENSOR(res[1], ((double[]){6, 16}), 1e-12); /* 2h */
    CHECK(res[2] == NULL); /* c is not reachable */
    for (int i = 0; i < 3; i++)
        tg_release(res[i]);
    CHECK(tg_grad(a) == NULL && tg_grad(b) == NULL);
    /* errors */
    tg_tensor *nr = tg_ones(TG_FLOAT64, 1, (int64_t[]){2});
    tg_tensor *r1[1];
    tg_tensor *nrs[1] = {nr};
    CHECK_FAILS(tg_autograd_grad(1, &y1, NULL, 1, nrs, r1, true, false), TG_ERR_AUTOGRAD,
                "input 0 does not require grad");
    CHECK_FAILS(tg_autograd_grad(1, &h, NULL, 1, ins, r1, true, false), TG_ERR_AUTOGRAD,
                "one-element");
    CHECK_FAILS(tg_autograd_grad(0, outs, NULL, 1, ins, r1, true, false), TG_ERR_ARG,
                "at least one output");
    CHECK_FAILS(tg_autograd_grad(1, &y1, NULL, 1, ins, NULL, true, false), TG_ERR_ARG,
                "results");
}

/* ---- grad mode, detach, names ------------------------------------------------ */
static void test_no_grad_and_detach(void)
{
    tg_tensor *x = leaf(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    CHECK(tg_grad_enabled());
    tg_no_grad_begin();
    CHECK(!tg_grad_enabled());
    tg_tensor *y = tg_mul(x, x);
    CHECK(!tg_requires_grad(y) && tg_grad_fn_name(y) == NULL && tg_is_leaf(y));
    tg_no_grad_begin(); /* nested */
    tg_no_grad_end();
    CHECK(!tg_grad_enabled());
    CHECK(!tg_requires_grad(tg_exp(x)));
    tg_no_grad_end();
    CHECK(tg_grad_enabled());
    tg_no_grad_end(); /* unbalanced: ignored */
    CHECK(tg_grad_enabled());
    /* set_grad_enabled inside no_grad is undone by its end */
    tg_no_grad_begin();
    tg_set_grad_enabled(true);
    CHECK(tg_requires_grad(tg_exp(x)));
    tg_no_grad_end();
    tg_set_grad_enabled(false);
    tg_no_grad_begin();
    tg_no_grad_end();
    CHECK(!tg_grad_enabled());
    tg_set_grad_enabled(true);
    CHECK_FAILS(tg_backward(y, tg_ones_like(y), false), TG_ERR_AUTOGRAD, "does not require grad");
    /* detach: same storage, no history, no grad */
    tg_tensor *m = tg_mul(x, x);
    tg_tensor *d = tg_detach(m);
    CHECK(d && tg_shares_storage(d, m) && tg_data(d) == tg_data(m));
    CHECK(!tg_requires_grad(d) && tg_grad_fn_name(d) == NULL && tg_is_leaf(d));
    tg_tensor *z = sum_all(tg_mul(m, d)); /* d is a constant here */
    CHECK_OK(tg_backward(z, NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){2 * 1 * 1, 2 * 2 * 4}), 0);
    CHECK(tg_detach(NULL) == NULL);
}

static void test_requires_grad_rules(void)
{
    tg_tensor *i = tg_ones(TG_INT32, 1, (int64_t[]){2});
    CHECK_FAILS(tg_set_requires_grad(i, true), TG_ERR_DTYPE, "only floating-point tensors");
    CHECK_FAILS(tg_set_requires_grad(tg_ones(TG_BOOL, 0, NULL), true), TG_ERR_DTYPE, "bool");
    CHECK_OK(tg_set_requires_grad(i, false));
    CHECK_FAILS(tg_set_requires_grad(NULL, true), TG_ERR_ARG, "NULL");
    tg_tensor *x = leaf(TG_FLOAT64, 0, NULL, (double[]){2});
    tg_tensor *y = tg_exp(x);
    CHECK_FAILS(tg_set_requires_grad(y, false), TG_ERR_AUTOGRAD, "produced by 'exp'");
    CHECK(tg_is_leaf(x) && !tg_is_leaf(y) && tg_requires_grad(y));
    CHECK_OK(tg_set_requires_grad(x, false));
    CHECK(!tg_requires_grad(tg_exp(x)));
    /* integer results of a graph carry no gradient */
    CHECK_OK(tg_set_requires_grad(x, true));
    tg_tensor *k = tg_cast(x, TG_INT64);
    CHECK(!tg_requires_grad(k) && tg_grad_fn_name(k) == NULL);
}

static void test_grad_fn_names(void)
{
    tg_tensor *a = tg_ones(TG_FLOAT32, 1, (int64_t[]){4});
    tg_tensor *b = tg_ones(TG_FLOAT32, 1, (int64_t[]){4});
    CHECK(tg_grad_fn_name(tg_add(a, b)) == NULL && !tg_requires_grad(tg_add(a, b)));
    tg_set_requires_grad(a, true);
    /* the dispatch benchmark's grad=true case really records a node */
    tg_tensor *y = tg_add(a, b);
    CHECK(y && tg_requires_grad(y) && strcmp(tg_grad_fn_name(y), "add") == 0);
    CHECK(tg_grad_fn_name(a) == NULL);
    struct { tg_tensor *t; const char *name; } c[] = {
        {tg_sub(b, a), "sub"}, {tg_mul(a, b), "mul"}, {tg_div(a, b), "div"},
        {tg_pow(a, b), "pow"}, {tg_maximum(a, b), "maximum"}, {tg_neg(a), "neg"},
        {tg_tanh(a), "tanh"}, {tg_sum(a, 0, NULL, false), "sum"},
        {tg_reshape(a, 2, (int64_t[]){2, 2}), "view"}, {tg_cast(a, TG_FLOAT64), "cast"},
        {tg_where(tg_gt(a, b), a, b), "where"}, {tg_clamp(a, 0, 1), "clamp"},
        {tg_add_scalar(a, 1), "add"}, {tg_mul_scalar(a, 2), "mul"},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        const char *n = tg_grad_fn_name(c[k].t);
        if (!n || strcmp(n, c[k].name) != 0)
            tt_fail(__FILE__, __LINE__, "grad_fn %s, expected %s", n ? n : "NULL", c[k].name);
        tt_checks++;
    }
}

/* ---- version counters ----------------------------------------------------------- */
static void test_version_counter(void)
{
    /* a leaf saved by mul, then updated in no_grad */
    tg_tensor *x = leaf(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *y = sum_all(tg_mul(x, x));
    tg_no_grad_begin();
    CHECK_OK(tg_mul_scalar_(x, 2));
    tg_no_grad_end();
    CHECK_FAILS(tg_backward(y, NULL, false), TG_ERR_AUTOGRAD, "modified by an in-place operation");
    CHECK_FAILS(tg_backward(y, NULL, false), TG_ERR_AUTOGRAD, "'mul'");
    /* a constant (no grad) saved by mul, modified freely */
    tg_tensor *w = leaf(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *c = tg_full(TG_FLOAT32, 1, (int64_t[]){2}, 3);
    tg_tensor *z = sum_all(tg_mul(w, c));
    CHECK_OK(tg_fill_(c, 5));
    CHECK_FAILS(tg_backward(z, NULL, false), TG_ERR_AUTOGRAD, "modified by an in-place operation");
    CHECK(tg_grad(w) == NULL);
    /* through a view of the saved tensor: one counter per storage */
    tg_tensor *c2 = tg_full(TG_FLOAT32, 1, (int64_t[]){4}, 3);
    tg_tensor *z2 = sum_all(tg_mul(w, tg_slice(c2, 0, 0, 4, 2)));
    CHECK_OK(tg_fill_(tg_slice(c2, 0, 1, 2, 1), 7)); /* not even an element mul read */
    CHECK_FAILS(tg_backward(z2, NULL, false), TG_ERR_AUTOGRAD, "in-place");
    /* a saved output (exp saves its result) */
    tg_tensor *e = tg_exp(w);
    tg_tensor *ze = sum_all(e);
    tg_no_grad_begin();
    CHECK_OK(tg_fill_(e, 0));
    tg_no_grad_end();
    CHECK_FAILS(tg_backward(ze, NULL, false), TG_ERR_AUTOGRAD, "output 0 of 'exp'");
    /* add saves nothing: modifying its inputs is fine */
    tg_tensor *c3 = tg_full(TG_FLOAT32, 1, (int64_t[]){2}, 3);
    tg_tensor *z3 = sum_all(tg_add(w, c3));
    CHECK_OK(tg_fill_(c3, 1));
    CHECK_OK(tg_backward(z3, NULL, false));
    CHECK_TENSOR(tg_grad(w), ((double[]){1, 1}), 0);
    /* modifying after backward is fine */
    tg_tensor *c4 = tg_full(TG_FLOAT32, 1, (int64_t[]){2}, 3);
    CHECK_OK(tg_backward(sum_all(tg_mul(w, c4)), NULL, false));
    CHECK_OK(tg_fill_(c4, 1));
    CHECK_TENSOR(tg_grad(w), ((double[]){4, 4}), 0);
}

/* ---- custom functions ------------------------------------------------------------ */
/* PyTorch's MyReLU example: forward saves the input, backward masks dy */
static int relu_forward_calls;
static tg_tensor *my_relu_forward(tg_function_ctx *ctx, int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    relu_forward_calls++;
    if (tg_grad_enabled())
        return NULL; /* forward must run with grad off */
    tg_ctx_save_for_backward(ctx, 1, in);
    return tg_clamp(in[0], 0, INFINITY);
}

static tg_status my_relu_backward(tg_function_ctx *ctx, tg_tensor *dy, int n, tg_tensor **dx,
                                  void *u)
{
    (void)n; (void)u;
    tg_tensor *x = tg_ctx_saved(ctx, 0);
    if (!x)
        return tg_last_status();
    if (tg_ctx_needs_input_grad(ctx, 0))
        dx[0] = tg_where(tg_lt(x, tg_zeros_like(x)), tg_zeros_like(dy), dy);
    return TG_OK;
}

static const tg_function my_relu = {"my_relu", my_relu_forward, my_relu_backward};

/* the same, with a wrong backward (twice the gradient) */
static tg_status wrong_backward(tg_function_ctx *ctx, tg_tensor *dy, int n, tg_tensor **dx, void *u)
{
    tg_status s = my_relu_backward(ctx, dy, n, dx, u);
    if (s == TG_OK && dx[0])
        dx[0] = tg_mul_scalar(dx[0], 2);
    return s;
}
static const tg_function wrong_relu = {"wrong_relu", my_relu_forward, wrong_backward};

static tg_tensor *f_custom(int n, tg_tensor *const *in, void *u)
{
    return tg_mul(tg_function_apply(u, n, in, NULL), in[0]);
}

static void test_custom_function(void)
{
    double v[4] = {-1.5, -0.5, 0.5, 2};
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){4}, v);
    relu_forward_calls = 0;
    tg_tensor *y = tg_function_apply(&my_relu, 1, &x, NULL);
    CHECK(relu_forward_calls == 1);
    CHECK(y && strcmp(tg_grad_fn_name(y), "my_relu") == 0 && tg_requires_grad(y));
    CHECK_TENSOR(y, ((double[]){0, 0, 0.5, 2}), 0);
    tg_tensor *seed = tt_tensor(TG_FLOAT64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    CHECK_OK(tg_backward(y, seed, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){0, 0, 3, 4}), 0);
    /* gradcheck, contiguous and strided */
    tg_tensor *in[1] = {tt_rand(2, (int64_t[]){3, 4}, -1, 1)};
    double *d = tg_data(in[0]);
    for (int i = 0; i < 12; i++)
        if (fabs(d[i]) < 0.05)
            d[i] = 0.1;
    CHECK_GRADCHECK(f_custom, (void *)&my_relu, 1, in);
    /* a wrong backward is caught */
    CHECK_FAILS(tg_gradcheck(f_custom, (void *)&wrong_relu, 1, in, NULL), TG_ERR_AUTOGRAD,
                "Jacobian mismatch");
    /* the saved input modified in place: backward refuses */
    tg_tensor *x2 = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){-1, 1});
    tg_tensor *y2 = sum_all(tg_function_apply(&my_relu, 1, &x2, NULL));
    tg_no_grad_begin();
    CHECK_OK(tg_add_(x2, tg_ones_like(x2), 1));
    tg_no_grad_end();
    CHECK_FAILS(tg_backward(y2, NULL, false), TG_ERR_AUTOGRAD, "modified by an in-place operation");
    CHECK_FAILS(tg_backward(y2, NULL, false), TG_ERR_AUTOGRAD, "my_relu");
    /* without grad: runs forward, records nothing */
    tg_no_grad_begin();
    tg_tensor *y3 = tg_function_apply(&my_relu, 1, &x, NULL);
    tg_no_grad_end();
    CHECK(y3 && !tg_requires_grad(y3) && tg_grad_fn_name(y3) == NULL);
    /* second backward without retain_graph */
    tg_tensor *y4 = sum_all(tg_function_apply(&my_relu, 1, &x, NULL));
    CHECK_OK(tg_backward(y4, NULL, false));
    CHECK_FAILS(tg_backward(y4, NULL, false), TG_ERR_AUTOGRAD, "retain_graph");
}

/* identity passing its input through, and a square differentiable twice */
static tg_tensor *ident_fwd(tg_function_ctx *ctx, int n, tg_tensor *const *in, void *u)
{
    (void)ctx; (void)n; (void)u;
    return in[0];
}
static tg_status ident_bwd(tg_function_ctx *ctx, tg_tensor *dy, int n, tg_tensor **dx, void *u)
{
    (void)ctx; (void)n; (void)u;
    dx[0] = dy;
    return TG_OK;
}
static tg_tensor *square_fwd(tg_function_ctx *ctx, int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    tg_ctx_save_for_backward(ctx, 1, in);
    return tg_mul(in[0], in[0]);
}
static tg_status square_bwd(tg_function_ctx *ctx, tg_tensor *dy, int n, tg_tensor **dx, void *u)
{
    (void)n; (void)u;
    tg_tensor *x = tg_ctx_saved(ctx, 0);
    dx[0] = x ? tg_mul(tg_mul_scalar(x, 2), dy) : NULL;
    return x ? TG_OK : tg_last_status();
}
static tg_tensor *bad_fwd(tg_function_ctx *ctx, int n, tg_tensor *const *in, void *u)
{
    (void)ctx; (void)n; (void)in; (void)u;
    return NULL;
}
static tg_status bad_shape_bwd(tg_function_ctx *ctx, tg_tensor *dy, int n, tg_tensor **dx, void *u)
{
    (void)ctx; (void)n; (void)u; (void)dy;
    dx[0] = tg_ones(TG_FLOAT64, 1, (int64_t[]){5});
    return TG_OK;
}
static tg_status failing_bwd(tg_function_ctx *ctx, tg_tensor *dy, int n, tg_tensor **dx, void *u)
{
    (void)ctx; (void)n; (void)u; (void)dy; (void)dx;
    return TG_ERR_UNSUPPORTED;
}

static void test_custom_function_more(void)
{
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){3, -2});
    const tg_function ident = {"ident", ident_fwd, ident_bwd};
    tg_tensor *y = tg_function_apply(&ident, 1, &x, NULL);
    CHECK(y && y != x && tg_shares_storage(y, x) && tg_is_leaf(x));
    CHECK(tg_grad_fn_name(x) == NULL);
    CHECK_OK(tg_backward(sum_all(tg_mul_scalar(y, 3)), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){3, 3}), 0);
    /* double backward through a custom backward made of tg ops */
    const tg_function square = {"square", square_fwd, square_bwd};
    tg_tensor *s = sum_all(tg_function_apply(&square, 1, &x, NULL));
    CHECK_NEAR(tg_item(s), 13, 0);
    tg_tensor *g = NULL, *gg = NULL;
    CHECK_OK(tg_autograd_grad(1, &s, NULL, 1, &x, &g, false, true));
    CHECK_TENSOR(g, ((double[]){6, -4}), 0);
    tg_tensor *sg = sum_all(tg_mul(g, g)); /* sum 4x^2: derivative 8x */
    CHECK_OK(tg_autograd_grad(1, &sg, NULL, 1, &x, &gg, false, false));
    CHECK_TENSOR(gg, ((double[]){24, -16}), 0);
    tg_release(g);
    tg_release(gg);
    /* user errors are reported as such */
    const tg_function bad = {"bad", bad_fwd, ident_bwd};
    CHECK_ERROR(tg_function_apply(&bad, 1, &x, NULL), TG_ERR_ARG, "'bad': forward returned NULL");
    const tg_function bad_shape = {"bad_shape", ident_fwd, bad_shape_bwd};
    CHECK_FAILS(tg_backward(sum_all(tg_function_apply(&bad_shape, 1, &x, NULL)), NULL, false),
                TG_ERR_AUTOGRAD, "'bad_shape'");
    const tg_function failing = {"failing", ident_fwd, failing_bwd};
    CHECK_FAILS(tg_backward(sum_all(tg_function_apply(&failing, 1, &x, NULL)), NULL, false),
                TG_ERR_UNSUPPORTED, "'failing': backward failed");
    CHECK_ERROR(tg_function_apply(NULL, 1, &x, NULL), TG_ERR_ARG, "forward");
    const tg_function nob = {"nob", ident_fwd, NULL};
    CHECK_ERROR(tg_function_apply(&nob, 1, &x, NULL), TG_ERR_ARG, "backward");
    tg_tensor *nul = NULL;
    CHECK_ERROR(tg_function_apply(&ident, 1, &nul, NULL), TG_ERR_ARG, "input 0 is NULL");
    tg_function_ctx *no_ctx = NULL;
    CHECK_ERROR(tg_ctx_saved(no_ctx, 0), TG_ERR_INDEX, "no saved tensor 0");
    CHECK(tg_ctx_num_saved(NULL) == 0 && !tg_ctx_needs_input_grad(NULL, 0));
}

/* ---- nesting and pruning -------------------------------------------------------------- */
/* activation checkpointing: forward keeps only the input; backward
 * recomputes f under grad mode and differentiates it with a nested run */
static tg_tensor *ck_f(tg_tensor *x) { return tg_mul(tg_tanh(x), x); }
static tg_tensor *ck_fwd(tg_function_ctx *ctx, int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    tg_ctx_save_for_backward(ctx, 1, in);
    return ck_f(in[0]);
}
static tg_status ck_bwd(tg_function_ctx *ctx, tg_tensor *dy, int n, tg_tensor **dx, void *u)
{
    (void)n;
    tg_tensor *x = tg_ctx_saved(ctx, 0);
    if (!x)
        return tg_last_status();
    bool detach = *(const bool *)u;
    if (detach) { /* the usual way: a fresh leaf */
        x = tg_detach(x);
        tg_set_requires_grad(x, true);
    }
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *y = ck_f(x), *g = NULL;
    tg_status s = tg_autograd_grad(1, &y, &dy, 1, &x, &g, false, false);
    tg_set_grad_enabled(was);
    if (s != TG_OK)
        return s;
    dx[0] = tg_detach(g); /* into this scope: the engine takes it from there */
    tg_release(g);
    return TG_OK;
}

/* in a graph a custom function's forward is traced and its output marked;
 * a graph's gradients cannot call its backward, so they fail, naming the
 * mark (a symbolic input used to crash the alias of the output) */
static void test_custom_function_in_a_graph(void)
{
    tg_graph *g = tg_graph_new("custom");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){2});
    const tg_function ident = {"ident", ident_fwd, ident_bwd};
    const tg_function square = {"square", square_fwd, square_bwd};
    tg_tensor *y = tg_function_apply(&ident, 1, &x, NULL);
    CHECK(y && tg_is_symbolic(y) && y != x);
    CHECK(strcmp(tg_graph_node_name(y), "custom_function") == 0);
    tg_tensor *s = sum_all(tg_mul(y, y)), *dx = NULL;
    CHECK_FAILS(tg_graph_gradients(g, 1, &s, NULL, 1, &x, &dx), TG_ERR_UNSUPPORTED,
                "custom_function");
    CHECK(dx == NULL);
    /* one that saves its input for backward is traced too */
    tg_tensor *q = tg_function_apply(&square, 1, &x, NULL);
    CHECK(q && tg_is_symbolic(q) && tg_last_status() == TG_OK);
    tg_graph_free(g); /* the test's scope releases the tensors */
}

static void test_nested_backward(void)
{
    const tg_function ck = {"checkpoint", ck_fwd, ck_bwd};
    for (int d = 0; d < 2; d++) {
        bool detach = d;
        tg_tensor *x0 = leaf(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0.25, -0.5, 1});
        /* a non-leaf input: without detach, the nested run reaches nodes of
         * the graph being differentiated (the mul_scalar), which it must
         * neither disturb nor run */
        tg_tensor *x = tg_mul_scalar(x0, 2);
        tg_tensor *y = tg_function_apply(&ck, 1, &x, &detach);
        CHECK_OK(tg_backward(sum_all(tg_mul(y, x)), NULL, false));
        /* d/dx0 of sum(tanh(2x0) * (2x0)^2) */
        double e[3];
        const double xv[3] = {0.25, -0.5, 1};
        for (int i = 0; i < 3; i++) {
            double u = 2 * xv[i], t = tanh(u);
            e[i] = 2 * ((1 - t * t) * u * u + 2 * t * u);
        }
        CHECK_TENSOR(tg_grad(x0), e, 1e-12);
    }
}

static int expensive_calls;
static tg_status counting_bwd(tg_function_ctx *ctx, tg_tensor *dy, int n, tg_tensor **dx, void *u)
{
    expensive_calls++;
    return ident_bwd(ctx, dy, n, dx, u);
}

static void test_functional_pruning(void)
{
    /* only the branches that lead to the requested inputs run */
    const tg_function counted = {"counted", ident_fwd, counting_bwd};
    tg_tensor *a = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *b = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){3, 4});
    tg_tensor *y = sum_all(tg_mul(a, tg_function_apply(&counted, 1, &b, NULL)));
    tg_tensor *g = NULL;
    expensive_calls = 0;
    CHECK_OK(tg_autograd_grad(1, &y, NULL, 1, &a, &g, true, false));
    CHECK_TENSOR(g, ((double[]){3, 4}), 0);
    CHECK(expensive_calls == 0);
    tg_release(g);
    CHECK_OK(tg_autograd_grad(1, &y, NULL, 1, &b, &g, true, false));
    CHECK_TENSOR(g, ((double[]){1, 2}), 0);
    CHECK(expensive_calls == 1);
    tg_release(g);
    CHECK_OK(tg_backward(y, NULL, false)); /* backward runs everything */
    CHECK(expensive_calls == 2);
    /* a gradient w.r.t. a non-leaf without retain_graph leaves the graph
     * beyond it intact, for a later backward through it */
    tg_tensor *w = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){0, 1});
    tg_tensor *h = tg_exp(w);
    tg_tensor *z = sum_all(tg_mul(h, h));
    CHECK_OK(tg_autograd_grad(1, &z, NULL, 1, &h, &g, false, false));
    CHECK_TENSOR(g, ((double[]){2, 2 * exp(1.0)}), 1e-12);
    tg_release(g);
    CHECK_OK(tg_backward(sum_all(h), NULL, false));
    CHECK_TENSOR(tg_grad(w), ((double[]){1, exp(1.0)}), 1e-12);
    CHECK_FAILS(tg_backward(z, NULL, false), TG_ERR_AUTOGRAD, "retain_graph");
    /* inputs on one path: a non-leaf and the leaf behind it */
    tg_tensor *v = leaf(TG_FLOAT64, 0, NULL, (double[]){0.5});
    tg_tensor *m = tg_mul(v, v);
    tg_tensor *o = tg_sin(m);
    tg_tensor *ins[2] = {m, v}, *res[2];
    CHECK_OK(tg_autograd_grad(1, &o, NULL, 2, ins, res, false, false));
    CHECK_NEAR(tg_item(res[0]), cos(0.25), 1e-15);
    CHECK_NEAR(tg_item(res[1]), cos(0.25) * 2 * 0.5, 1e-15);
    tg_release(res[0]);
    tg_release(res[1]);
}

/* ---- gradcheck itself -------------------------------------------------------------- */
static tg_tensor *f_nan(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return tg_mul(in[0], tg_scalar(TG_FLOAT64, NAN));
}
static tg_tensor *f_null(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u; (void)in;
    return tg_add(tg_ones(TG_FLOAT64, 1, (int64_t[]){2}), tg_ones(TG_FLOAT64, 1, (int64_t[]){3}));
}
static tg_tensor *f_const(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return tg_detach(in[0]);
}
static tg_tensor *f_sq(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return tg_mul(in[0], in[0]);
}

static void test_gradcheck_itself(void)
{
    tg_tensor *x[1] = {tt_rand(1, (int64_t[]){3}, -1, 1)};
    CHECK_OK(tg_gradcheck(f_sq, NULL, 1, x, NULL));
    tg_gradcheck_opts loose = {1e-3, 1e-2, 1e-2};
    CHECK_OK(tg_gradcheck(f_sq, NULL, 1, x, &loose));
    CHECK_FAILS(tg_gradcheck(f_nan, NULL, 1, x, NULL), TG_ERR_AUTOGRAD, "mismatch");
    CHECK_FAILS(tg_gradcheck(f_null, NULL, 1, x, NULL), TG_ERR_SHAPE, "add");
    CHECK_FAILS(tg_gradcheck(f_const, NULL, 1, x, NULL), TG_ERR_AUTOGRAD,
                "does not require grad");
    tg_tensor *c[1] = {tg_ones(TG_FLOAT64, 1, (int64_t[]){3})};
    CHECK_FAILS(tg_gradcheck(f_sq, NULL, 1, c, NULL), TG_ERR_AUTOGRAD, "");
    CHECK_FAILS(tg_gradcheck(NULL, NULL, 1, x, NULL), TG_ERR_ARG, "gradcheck");
    tg_tensor *nul[1] = {NULL};
    CHECK_FAILS(tg_gradcheck(f_sq, NULL, 1, nul, NULL), TG_ERR_ARG, "input 0 is NULL");
    /* the inputs are left exactly as they were */
    double before[3], after[3];
    tg_copy_to(x[0], TG_FLOAT64, before);
    tg_gradcheck(f_sq, NULL, 1, x, NULL);
    tg_copy_to(x[0], TG_FLOAT64, after);
    CHECK(memcmp(before, after, sizeof before) == 0);
    CHECK(tg_grad(x[0]) == NULL);
}

/* relu's fused backward (relu_grad) is differentiable in dy: the gradient
 * of sum(relu'(x) * x * w) w.r.t. w, through create_graph, is relu'(x) * x */
static tg_tensor *relu_grad_fn(int n, tg_tensor *const *in, void *user)
{
    (void)n; (void)user;
    tg_tensor *x = in[0], *w = in[1], *g;
    tg_tensor *y = tg_sum(tg_mul(tg_relu(x), w), 0, NULL, false);
    if (tg_autograd_grad(1, &y, NULL, 1, &x, &g, true, true) != TG_OK)
        return NULL;
    tg_tensor *r = tg_mul(g, x); /* g = relu'(x) * w, differentiable in w */
    tg_release(g);
    return r;
}

static void test_relu_grad_of_grad(void)
{
    double xv[6] = {-1.5, -0.2, 0.3, 0.7, 1.1, -2.0};
    int64_t s[1] = {6};
    tg_tensor *x = tt_tensor(TG_FLOAT64, 1, s, xv);
    tg_set_requires_grad(x, true);
    tg_tensor *in[2] = {x, tt_rand(1, s, -1, 1)};
    CHECK_GRADCHECK(relu_grad_fn, NULL, 2, in);
    CHECK(tg_op_find("relu_grad") != NULL);
}

/* ---- gradient rules that fail ------------------------------------------------------ */
/* y = x, with a rule that fails (an op inside it errs) or forgets dx */
static tg_status copy_infer(tg_op_ctx *c)
{
    return tg_infer_set(c, 0, c->in[0]->dtype, c->in[0]->ndim, c->in[0]->shape);
}

static tg_status copy_kernel(tg_op_ctx *c) { return tg_copy_(c->out[0], c->in[0]); }

static tg_status failing_rule(tg_grad_ctx *g)
{
    g->dx[0] = tg_reshape(g->dy[0], 1, (int64_t[]){7}); /* the wrong size: NULL */
    return TG_OK;
}

static tg_status forgetful_rule(tg_grad_ctx *g)
{
    (void)g;
    return TG_OK;
}

static const tg_arg_spec copy_args[] = {{"x", TG_DTS_FLOAT}, {0}};
static const tg_op_def failing_op = {
    .name = "failing", .n_in = 1, .n_out = 1, .inputs = copy_args, .outputs = copy_args,
    .flags = TG_OP_PURE, .infer = copy_infer, .kernel = {[TG_CPU] = copy_kernel},
    .grad = failing_rule};
static const tg_op_def forgetful_op = {
    .name = "forgetful", .n_in = 1, .n_out = 1, .inputs = copy_args, .outputs = copy_args,
    .flags = TG_OP_PURE, .infer = copy_infer, .kernel = {[TG_CPU] = copy_kernel},
    .grad = forgetful_rule};

/* a rule's failure reaches the caller of every gradient function, naming
 * the op and carrying the cause; no gradient is delivered */
static void test_failing_rules(void)
{
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    tg_tensor *y = sum_all(tg_op_call(&failing_op, 1, &x, NULL, 0));
    CHECK_FAILS(tg_backward(y, NULL, true), TG_ERR_SHAPE,
                "backward: the gradient rule of 'failing' failed for input 0: reshape");
    CHECK(tg_grad(x) == NULL);
    tg_tensor *dx = NULL;
    CHECK_FAILS(tg_autograd_grad(1, &y, NULL, 1, &x, &dx, true, false), TG_ERR_SHAPE,
                "gradient rule of 'failing' failed");
    CHECK(dx == NULL);
    tg_tensor *z = sum_all(tg_op_call(&forgetful_op, 1, &x, NULL, 0));
    CHECK_FAILS(tg_backward(z, NULL, false), TG_ERR_INTERNAL,
                "the gradient rule of 'forgetful' gave no gradient for input 0");
    CHECK(tg_grad(x) == NULL);
    /* symbolic gradients: the same rule, named with the node */
    tg_graph *g = tg_graph_new("fails");
    tg_tensor *p = tg_placeholder(g, "p", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *q = sum_all(tg_op_call(&failing_op, 1, (tg_tensor *[]){tg_exp(p)}, NULL, 0));
    tg_tensor *r = tg_op_call(&failing_op, 1, &p, NULL, 0);
    CHECK_OK(tg_graph_set_name(r, "second"));
    tg_tensor *dp = NULL;
    CHECK_FAILS(tg_graph_gradients(g, 1, &q, NULL, 1, &p, &dp), TG_ERR_SHAPE,
                "the gradient rule of 'failing' failed for input 0");
    CHECK(dp == NULL);
    CHECK_FAILS(tg_graph_gradients(g, 1, &r, (tg_tensor *[]){tg_ones(TG_FLOAT64, 1,
                (int64_t[]){3})}, 1, &p, &dp), TG_ERR_SHAPE,
                "the gradient rule of 'failing' (node 'second') failed for input 0");
    CHECK(dp == NULL);
    tg_graph_free(g);
}

/* inputs whose gradient is zero by definition (where's condition,
 * relu_grad's y) get none without an error */
static void test_no_grad_inputs(void)
{
    tg_tensor *k = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 0});
    tg_tensor *a = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){5, 6});
    CHECK_OK(tg_backward(sum_all(tg_where(k, a, tg_neg(a))), NULL, false));
    CHECK(tg_grad(k) == NULL);
    CHECK_TENSOR(tg_grad(a), ((double[]){1, -1}), 0);
}

/* a successful gradient call leaves no earlier error to be read */
static void test_success_clears_error(void)
{
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *y = sum_all(tg_exp(x)), *dx;
    CHECK(tg_exp(NULL) == NULL && tg_last_status() != TG_OK);
    CHECK_OK(tg_backward(y, NULL, true));
    CHECK(tg_last_status() == TG_OK && tg_last_error()[0] == 0);
    CHECK(tg_exp(NULL) == NULL && tg_last_status() != TG_OK);
    CHECK_OK(tg_autograd_grad(1, &y, NULL, 1, &x, &dx, false, false));
    CHECK(tg_last_status() == TG_OK);
    tg_release(dx); /* tg_autograd_grad's results belong to the caller */
    tg_graph *g = tg_graph_new("clears");
    tg_tensor *p = tg_placeholder(g, "p", TG_FLOAT64, 0, NULL), *dp;
    tg_tensor *q = tg_exp(p);
    CHECK(tg_exp(NULL) == NULL && tg_last_status() != TG_OK);
    CHECK_OK(tg_graph_gradients(g, 1, &q, NULL, 1, &p, &dp));
    CHECK(tg_last_status() == TG_OK);
    tg_graph_free(g);
}

/* ---- in-place updates are recorded ------------------------------------------------- */
/* y = sin(x) + 0 (a fresh result), y += x / 2, y *= 3; y * y */
static tg_tensor *inplace_chain(int n, tg_tensor *const *in, void *user)
{
    (void)n, (void)user;
    tg_tensor *y = tg_add_scalar(tg_sin(in[0]), 0);
    if (tg_add_(y, in[0], 0.5) != TG_OK || tg_mul_scalar_(y, 3) != TG_OK)
        return NULL;
    return tg_mul(y, y);
}

static void test_inplace_recorded(void)
{
    double v[3] = {0.5, -1, 2};
    /* y = sin(x); y *= 2: the history goes on through the update */
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){3}, v);
    tg_tensor *y = tg_sin(x);
    CHECK_OK(tg_mul_scalar_(y, 2));
    CHECK(strcmp(tg_grad_fn_name(y), "mul_scalar_") == 0);
    CHECK_OK(tg_backward(sum_all(y), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){2 * cos(0.5), 2 * cos(-1.0), 2 * cos(2.0)}), 1e-15);
    /* y = 3x; y += 2x: 5 */
    tg_tensor *x2 = leaf(TG_FLOAT64, 1, (int64_t[]){3}, v);
    tg_tensor *y2 = tg_mul_scalar(x2, 3);
    CHECK_OK(tg_add_(y2, x2, 2));
    CHECK_OK(tg_backward(sum_all(y2), NULL, false));
    CHECK_TENSOR(tg_grad(x2), ((double[]){5, 5, 5}), 0);
    /* a buffer that did not require grad takes a source's history */
    tg_tensor *x3 = leaf(TG_FLOAT64, 1, (int64_t[]){3}, v);
    tg_tensor *buf = tg_zeros(TG_FLOAT64, 2, (int64_t[]){2, 3});
    CHECK_OK(tg_copy_(buf, x3)); /* broadcast: each row is x */
    CHECK(tg_requires_grad(buf));
    CHECK_OK(tg_backward(sum_all(tg_mul(buf, buf)), NULL, false));
    CHECK_TENSOR(tg_grad(x3), ((double[]){2, -4, 8}), 0);
    /* overwritten values get no gradient: y = 3x; y.fill_(1); sum(y * x) */
    tg_tensor *x4 = leaf(TG_FLOAT64, 1, (int64_t[]){3}, v);
    tg_tensor *y4 = tg_mul_scalar(x4, 3);
    CHECK_OK(tg_fill_(y4, 1));
    CHECK_OK(tg_backward(sum_all(tg_mul(y4, x4)), NULL, false));
    CHECK_TENSOR(tg_grad(x4), ((double[]){1, 1, 1}), 0);
    /* under no-grad an update is not recorded */
    tg_tensor *y5 = tg_sin(x4);
    tg_no_grad_begin();
    CHECK_OK(tg_add_(y5, x4, 1));
    tg_no_grad_end();
    CHECK(strcmp(tg_grad_fn_name(y5), "sin") == 0);
    /* against finite differences */
    tg_tensor *xs = leaf(TG_FLOAT64, 1, (int64_t[]){3}, v);
    CHECK_GRADCHECK(inplace_chain, NULL, 1, &xs);
}

/* y = 2x; y[1:3] *= 3 through a view; y[0:2] = sin(y[0:2]) through
 * another one (read after the first write: its history is refreshed);
 * then y^2: every write reaches y's gradient (sin of a copy: sin saves
 * its input, which the write then changes, an error as in PyTorch) */
static tg_tensor *views_chain(int n, tg_tensor *const *in, void *user)
{
    (void)n, (void)user;
    tg_tensor *y = tg_mul_scalar(in[0], 2);
    tg_tensor *mid = tg_slice(y, 0, 1, 3, 1), *head = tg_slice(y, 0, 0, 2, 1);
    if (tg_mul_scalar_(mid, 3) != TG_OK ||
        tg_copy_(head, tg_sin(tg_mul_scalar(head, 1))) != TG_OK)
        return NULL;
    return tg_mul(y, y);
}

static void test_inplace_through_views(void)
{
    double v[4] = {0.5, -1, 2, 1.5};
    /* the base sees a write through its view: y = [2x0, 6x1, 6x2, 2x3] */
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){4}, v);
    tg_tensor *y = tg_mul_scalar(x, 2);
    CHECK_OK(tg_mul_scalar_(tg_slice(y, 0, 1, 3, 1), 3));
    CHECK_OK(tg_backward(sum_all(tg_mul(y, y)), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){8 * 0.5, 72 * -1, 72 * 2, 8 * 1.5}), 1e-12);
    /* a view read after its base was written: v = 6 x[0:2] */
    tg_tensor *x2 = leaf(TG_FLOAT64, 1, (int64_t[]){4}, v);
    tg_tensor *y2 = tg_mul_scalar(x2, 2);
    tg_tensor *head = tg_slice(y2, 0, 0, 2, 1);
    CHECK_OK(tg_mul_scalar_(y2, 3));
    CHECK_OK(tg_backward(sum_all(head), NULL, false));
    CHECK_TENSOR(tg_grad(x2), ((double[]){6, 6, 0, 0}), 0);
    /* ... also as the root of backward itself */
    tg_tensor *x5 = leaf(TG_FLOAT64, 1, (int64_t[]){4}, v);
    tg_tensor *y5 = tg_mul_scalar(x5, 2);
    tg_tensor *head5 = tg_slice(y5, 0, 0, 2, 1);
    CHECK_OK(tg_mul_scalar_(y5, 3));
    CHECK_OK(tg_backward(head5, tg_ones(TG_FLOAT64, 1, (int64_t[]){2}), false));
    CHECK_TENSOR(tg_grad(x5), ((double[]){6, 6, 0, 0}), 0);
    /* a value that needs grad copied into a view of zeros: the zeros
     * tensor takes its history (z^2 sums to x3^2) */
    tg_tensor *x3 = leaf(TG_FLOAT64, 1, (int64_t[]){2}, v);
    tg_tensor *z = tg_zeros(TG_FLOAT64, 1, (int64_t[]){4});
    CHECK_OK(tg_copy_(tg_slice(z, 0, 1, 3, 1), x3));
    CHECK(tg_requires_grad(z));
    CHECK_OK(tg_backward(sum_all(tg_mul(z, z)), NULL, false));
    CHECK_TENSOR(tg_grad(x3), ((double[]){1, -2}), 0);
    /* against finite differences */
    tg_tensor *xs = leaf(TG_FLOAT64, 1, (int64_t[]){4}, v);
    CHECK_GRADCHECK(views_chain, NULL, 1, &xs);
}

/* what stays an error: leaves and their views, and tensors a rule saved
 * (exp keeps its result: PyTorch fails there too) */
static void test_inplace_refused(void)
{
    double v[3] = {0.5, -1, 2};
    tg_tensor *x = leaf(TG_FLOAT64, 1, (int64_t[]){3}, v);
    CHECK_FAILS(tg_add_(x, x, 1), TG_ERR_AUTOGRAD, "add_: in-place update of a leaf");
    CHECK_FAILS(tg_fill_(tg_slice(x, 0, 0, 2, 1), 0), TG_ERR_AUTOGRAD,
                "fill_: a view of a leaf tensor that requires grad");
    tg_tensor *e = tg_exp(x);
    CHECK_OK(tg_mul_scalar_(e, 2));
    CHECK_FAILS(tg_backward(sum_all(e), NULL, false), TG_ERR_AUTOGRAD,
                "output 0 of 'exp', saved for its gradient, was modified by an in-place");
    /* in-place ops are eager only: symbolic tensors are refused */
    tg_graph *g = tg_graph_new("inplace");
    tg_tensor *p = tg_placeholder(g, "p", TG_FLOAT64, 0, NULL);
    CHECK_FAILS(tg_fill_(p, 1), TG_ERR_ARG, "symbolic");
    tg_graph_free(g);
}

/* anomaly mode: the first NaN a backward function gives stops backward
 * with PyTorch's message naming it; off, the NaN reaches the leaf */
static void test_anomaly_check(void)
{
    tg_tensor *x = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 0});
    CHECK_OK(tg_set_requires_grad(x, true));
    CHECK(!tg_anomaly_check());
    tg_set_anomaly_check(true);
    tg_tensor *y = tg_sum(tg_mul_scalar(tg_sqrt(x), 0), 0, NULL, false);
    CHECK_FAILS(tg_backward(y, NULL, false), TG_ERR_AUTOGRAD,
                "Function 'SqrtBackward0' returned nan values in its 0th output.");
    tg_tensor *w = tt_tensor(TG_FLOAT64, 2, (int64_t[]){1, 2}, (double[]){NAN, 0});
    CHECK_OK(tg_set_requires_grad(w, true));
    CHECK_FAILS(tg_backward(tg_sum(tg_log_softmax(w, 1), 0, NULL, false), NULL, false),
                TG_ERR_AUTOGRAD, "Function 'LogSoftmaxBackward0' returned nan values");
    tg_set_anomaly_check(false);
    y = tg_sum(tg_mul_scalar(tg_sqrt(x), 0), 0, NULL, false);
    CHECK_OK(tg_backward(y, NULL, false));
    CHECK(isnan(tg_item(tg_slice(tg_grad(x), 0, 1, 2, 1))));
}

int main(void)
{
    RUN(test_accumulate_two_backwards);
    RUN(test_anomaly_check);
    RUN(test_retain_graph);
    RUN(test_second_backward_without_saved);
    RUN(test_backward_seed);
    RUN(test_diamond);
    RUN(test_long_chain);
    RUN(test_grad_of_grad);
    RUN(test_grad_of_grad_mul);
    RUN(test_backward_create_graph);
    RUN(test_relu_grad_of_grad);
    RUN(test_functional_grad);
    RUN(test_no_grad_and_detach);
    RUN(test_requires_grad_rules);
    RUN(test_grad_fn_names);
    RUN(test_version_counter);
    RUN(test_custom_function);
    RUN(test_custom_function_more);
    RUN(test_custom_function_in_a_graph);
    RUN(test_nested_backward);
    RUN(test_functional_pruning);
    RUN(test_gradcheck_itself);
    RUN(test_failing_rules);
    RUN(test_no_grad_inputs);
    RUN(test_success_clears_error);
    RUN(test_inplace_recorded);
    RUN(test_inplace_refused);
    RUN(test_inplace_through_views);
    return tt_finish();
}
