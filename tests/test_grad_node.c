/* The eager graph's nodes through the public API (tg_grad_node): grad_fn,
 * names, next edges to nodes, leaves and nothing, references that outlive
 * the tensors, node hooks (order, replacement, errors, freeing their
 * state) and the error paths of NULL and out-of-range arguments. */
#include "harness.h"

#include <string.h>

static tg_tensor *leaf(int n, const double *v)
{
    tg_tensor *t = tt_tensor(TG_FLOAT32, 1, (int64_t[]){n}, v);
    tg_set_requires_grad(t, true);
    return t;
}

static tg_tensor *sum_all(tg_tensor *x) { return tg_sum(x, 0, NULL, false); }

/* ---- reading the graph ------------------------------------------------------------- */
static void test_edges(void)
{
    tg_tensor *x = leaf(2, (double[]){1, 2});
    tg_tensor *w = tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){3, 4});
    tg_tensor *y = tg_mul(x, w), *e = tg_exp(y), *z = tg_add(e, y);
    CHECK(tg_grad_fn(x) == NULL && tg_grad_fn(w) == NULL);
    tg_grad_node *ny = tg_grad_fn(y), *ne = tg_grad_fn(e), *nz = tg_grad_fn(z);
    CHECK(ny && ne && nz && ny != ne && ne != nz);
    CHECK(tg_grad_fn(y) == ny); /* the same node each time (a second reference) */
    tg_grad_node_release(ny);
    CHECK(strcmp(tg_grad_node_name(ny), "mul") == 0 && strcmp(tg_grad_node_name(nz), "add") == 0);
    CHECK(strcmp(tg_grad_node_name(ny), tg_grad_fn_name(y)) == 0);
    CHECK(tg_grad_node_num_next(ny) == 2 && tg_grad_node_num_outputs(ny) == 1);
    tg_grad_node *next = (tg_grad_node *)1;
    tg_tensor *lf = (tg_tensor *)1;
    int nr = -1;
    /* mul: x's AccumulateGrad, nothing for w */
    CHECK_OK(tg_grad_node_next(ny, 0, &next, &nr, &lf));
    CHECK(next == NULL && lf == x && nr == 0);
    CHECK_OK(tg_grad_node_next(ny, 1, &next, &nr, &lf));
    CHECK(next == NULL && lf == NULL && nr == 0);
    /* add(exp(y), y): two nodes */
    CHECK_OK(tg_grad_node_next(nz, 0, &next, &nr, &lf));
    CHECK(next == ne && lf == NULL && nr == 0);
    tg_grad_node_release(next);
    CHECK_OK(tg_grad_node_next(nz, 1, &next, &nr, &lf));
    CHECK(next == ny && lf == NULL && nr == 0);
    tg_grad_node_release(next);
    CHECK(tg_grad_node_retain(nz) == nz);
    tg_grad_node_release(nz);
    tg_grad_node_release(ny);
    tg_grad_node_release(ne);
    tg_grad_node_release(nz);
}

static void test_multi_output(void)
{
    tg_tensor *x = leaf(4, (double[]){3, 1, 4, 2});
    tg_tensor *v = NULL, *idx = NULL;
    CHECK_OK(tg_topk(x, 2, 0, true, true, &v, &idx));
    tg_grad_node *n = tg_grad_fn(v);
    CHECK(n && strcmp(tg_grad_node_name(n), "topk") == 0);
    CHECK(tg_grad_node_num_outputs(n) == 2 && tg_grad_node_num_next(n) == 1);
    CHECK(tg_grad_fn(idx) == NULL); /* integer results carry no history */
    tg_grad_node *m = tg_grad_fn(tg_mul(v, v)), *next = NULL;
    tg_tensor *lf = NULL;
    int nr = -1;
    CHECK_OK(tg_grad_node_next(m, 1, &next, &nr, &lf));
    CHECK(next == n && nr == 0 && lf == NULL);
    tg_grad_node_release(next);
    tg_grad_node_release(m);
    tg_grad_node_release(n);
}

/* a reference keeps the node and what its edges reach after the tensors go */
static void test_outlives_tensors(void)
{
    tg_tensor *x = tg_retain(leaf(2, (double[]){1, 2}));
    tg_scope_begin();
    tg_tensor *y = tg_exp(tg_mul(x, x));
    tg_grad_node *n = tg_grad_fn(y);
    tg_scope_end(); /* y and mul's result go */
    CHECK(n && strcmp(tg_grad_node_name(n), "exp") == 0);
    tg_grad_node *mul = NULL;
    tg_tensor *lf = NULL;
    int nr = -1;
    CHECK_OK(tg_grad_node_next(n, 0, &mul, &nr, &lf));
    CHECK(mul && strcmp(tg_grad_node_name(mul), "mul") == 0);
    tg_grad_node_release(n); /* mul's reference keeps mul alive alone */
    CHECK_OK(tg_grad_node_next(mul, 1, &n, &nr, &lf));
    CHECK(n == NULL && lf == x);
    tg_grad_node_release(mul);
    tg_release(x);
}

static void test_errors(void)
{
    tg_tensor *x = leaf(2, (double[]){1, 2});
    tg_grad_node *n = tg_grad_fn(tg_exp(x)), *next;
    tg_tensor *lf;
    int nr;
    CHECK(tg_grad_fn(NULL) == NULL && tg_grad_node_name(NULL) == NULL);
    CHECK(tg_grad_node_retain(NULL) == NULL);
    tg_grad_node_release(NULL);
    CHECK_ERROR(tg_grad_node_num_next(NULL) >= 0, TG_ERR_ARG, "NULL");
    CHECK_ERROR(tg_grad_node_num_outputs(NULL) >= 0, TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_grad_node_next(n, 1, &next, &nr, &lf), TG_ERR_ARG, "input 1 of a node with 1");
    CHECK_FAILS(tg_grad_node_next(n, -1, &next, &nr, &lf), TG_ERR_ARG, "input -1");
    CHECK_FAILS(tg_grad_node_next(NULL, 0, &next, &nr, &lf), TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_grad_node_next(n, 0, NULL, &nr, &lf), TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_grad_node_next(n, 0, &next, NULL, &lf), TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_grad_node_next(n, 0, &next, &nr, NULL), TG_ERR_ARG, "NULL");
    tg_grad_node_release(n);
}

/* ---- hooks -------------------------------------------------------------------------- */
typedef struct {
    char log[64];
    double scale;   /* pre: scales grad_outputs[0]; post: grad_inputs[0] (0: none) */
    tg_status fail; /* returned when not TG_OK */
    int freed;
    int seen_in, seen_out;
    bool saw_null_in;
} hook_state;

static tg_status log_hook(hook_state *st, const char *tag, int n_in, tg_tensor **gi, int n_out,
                          tg_tensor **go)
{
    strncat(st->log, tag, sizeof st->log - strlen(st->log) - 1);
    st->seen_in = n_in;
    st->seen_out = n_out;
    st->saw_null_in = gi && n_in > 1 && gi[1] == NULL;
    if (st->fail != TG_OK)
        return st->fail;
    tg_tensor **g = gi ? gi : go;
    if (st->scale != 0 && g[0]) {
        tg_tensor *r = tg_mul_scalar(g[0], st->scale);
        tg_release(g[0]);
        g[0] = r;
    }
    return TG_OK;
}

static tg_status pre_a(void *u, tg_grad_node *n, int n_in, tg_tensor **gi, int n_out,
                       tg_tensor **go)
{
    (void)n;
    return log_hook(u, gi ? "?" : "a", n_in, gi, n_out, go);
}

static tg_status post_b(void *u, tg_grad_node *n, int n_in, tg_tensor **gi, int n_out,
                        tg_tensor **go)
{
    (void)n;
    return log_hook(u, gi ? "b" : "?", n_in, gi, n_out, go);
}

static tg_status wrong_shape(void *u, tg_grad_node *n, int n_in, tg_tensor **gi, int n_out,
                             tg_tensor **go)
{
    (void)u, (void)n, (void)n_in, (void)gi, (void)n_out;
    tg_release(go[0]);
    go[0] = tg_ones(TG_FLOAT32, 1, (int64_t[]){3});
    return TG_OK;
}

static void count_free(void *u) { ((hook_state *)u)->freed++; }

static void test_hooks_replace(void)
{
    hook_state pre = {.scale = 10}, post = {.scale = 0.5}, later = {.scale = 0};
    tg_tensor *x = leaf(2, (double[]){1, 2});
    tg_tensor *w = tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){3, 4});
    tg_scope_begin();
    tg_tensor *y = tg_mul(x, w);
    tg_tensor *s = sum_all(y);
    tg_grad_node *n = tg_grad_fn(y);
    CHECK_OK(tg_grad_node_add_hook(n, true, pre_a, &pre, count_free));
    CHECK_OK(tg_grad_node_add_hook(n, false, post_b, &post, count_free));
    CHECK_OK(tg_grad_node_add_hook(n, true, pre_a, &later, NULL));
    CHECK(tg_grad_node_hook_user(n, true, pre_a) == &pre);
    CHECK(tg_grad_node_hook_user(n, false, post_b) == &post);
    CHECK(tg_grad_node_hook_user(n, false, pre_a) == NULL);
    CHECK(tg_grad_node_hook_user(NULL, false, pre_a) == NULL);
    CHECK_OK(tg_backward(s, NULL, true));
    /* d/dx = w * 10 (pre) * 0.5 (post) */
    CHECK_TENSOR(tg_grad(x), ((double[]){15, 20}), 1e-6);
    CHECK(strcmp(pre.log, "a") == 0 && strcmp(post.log, "b") == 0 && strcmp(later.log, "a") == 0);
    CHECK(post.seen_in == 2 && post.seen_out == 1 && post.saw_null_in); /* w needs none */
    CHECK(pre.seen_in == 2 && pre.seen_out == 1);
    tg_grad_node_release(n);
    CHECK(pre.freed == 0); /* y still holds the node */
    tg_scope_end();
    CHECK(pre.freed == 1 && post.freed == 1);
}

static void test_hook_errors(void)
{
    tg_tensor *x = leaf(2, (double[]){1, 2});
    tg_tensor *y = tg_exp(x);
    tg_grad_node *n = tg_grad_fn(y);
    hook_state st = {.fail = TG_ERR_AUTOGRAD};
    CHECK_FAILS(tg_grad_node_add_hook(NULL, true, pre_a, &st, NULL), TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_grad_node_add_hook(n, true, NULL, &st, NULL), TG_ERR_ARG, "NULL");
    CHECK_OK(tg_grad_node_add_hook(n, false, post_b, &st, NULL));
    CHECK(tg_backward(sum_all(y), NULL, true) == TG_ERR_AUTOGRAD);
    CHECK(tg_grad(x) == NULL); /* the error stopped the gradient before x */
    tg_clear_error();
    tg_grad_node_release(n);

    /* a replacement of another shape */
    tg_tensor *y2 = tg_exp(x);
    n = tg_grad_fn(y2);
    CHECK_OK(tg_grad_node_add_hook(n, true, wrong_shape, NULL, NULL));
    CHECK_FAILS(tg_backward(sum_all(y2), NULL, true), TG_ERR_AUTOGRAD,
                "a hook of 'exp' gave a gradient of shape [3] for output 0 of shape [2]");
    tg_grad_node_release(n);
}

/* hooks run in tg_autograd_grad for the nodes whose rules run, only those */
static void test_hooks_functional(void)
{
    tg_tensor *x = leaf(2, (double[]){1, 2}), *u = leaf(2, (double[]){5, 6});
    tg_tensor *a = tg_mul(x, x), *b = tg_exp(u);
    tg_tensor *s = sum_all(tg_add(a, b));
    hook_state on_a = {.scale = 3}, on_b = {.scale = 0};
    tg_grad_node *na = tg_grad_fn(a), *nb = tg_grad_fn(b);
    CHECK_OK(tg_grad_node_add_hook(na, false, post_b, &on_a, NULL));
    CHECK_OK(tg_grad_node_add_hook(nb, false, post_b, &on_b, NULL));
    tg_tensor *g = NULL;
    CHECK_OK(tg_autograd_grad(1, &s, NULL, 1, &x, &g, true, false));
    CHECK_TENSOR(g, ((double[]){4, 8}), 1e-6); /* x + x, the first tripled by the hook */
    CHECK(strcmp(on_a.log, "b") == 0 && on_b.log[0] == 0);
    CHECK(tg_grad(x) == NULL);
    tg_release(g);
    tg_grad_node_release(na);
    tg_grad_node_release(nb);
}

int main(void)
{
    RUN(test_edges);
    RUN(test_multi_output);
    RUN(test_outlives_tensors);
    RUN(test_errors);
    RUN(test_hooks_replace);
    RUN(test_hook_errors);
    RUN(test_hooks_functional);
    return tt_finish();
}
