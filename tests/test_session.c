/* Sessions: graph runs match eager execution exactly, pruning runs only
 * what the fetches need, the plan cache, every run error, variables and
 * a graph-mode SGD training loop against the eager one. */
#include "graph/graph_impl.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>


/* at most level 1: the test counts the nodes a run executes (or names
 * them), which fusion at level 2 changes */
static void without_fusion(tg_session *s)
{
    tg_session_options o = tg_session_default_options();
    if (o.opt_level > 1)
        o.opt_level = 1;
    CHECK_OK(tg_session_set_options(s, &o));
}
static tg_tensor *linear(tg_tensor *x, tg_tensor *w, tg_tensor *b)
{
    return tg_linear(x, w, b);
}

static tg_tensor *mse(tg_tensor *y, tg_tensor *t)
{
    return tg_mse_loss(y, t, TG_REDUCTION_MEAN);
}


static int64_t last_run(const tg_session *s)
{
    tg_session_stats st;
    tg_session_get_stats(s, &st);
    return st.nodes_last_run;
}

/* ---- graph runs equal eager runs --------------------------------------------------- */
static void test_mlp_forward_matches_eager(void)
{
    tg_tensor *x = tt_rand(2, (int64_t[]){4, 3}, -1, 1);
    tg_tensor *w1 = tt_rand(2, (int64_t[]){5, 3}, -1, 1), *b1 = tt_rand(1, (int64_t[]){5}, -1, 1);
    tg_tensor *w2 = tt_rand(2, (int64_t[]){2, 5}, -1, 1), *b2 = tt_rand(1, (int64_t[]){2}, -1, 1);
    tg_tensor *t = tt_rand(2, (int64_t[]){4, 2}, -1, 1);
    tg_tensor *y = tg_relu(linear(tg_tanh(linear(x, w1, b1)), w2, b2));
    tg_tensor *loss = mse(y, t);

    tg_graph *g = tg_graph_new("mlp");
    tg_tensor *sx = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){4, 3});
    tg_tensor *st = tg_placeholder(g, "t", TG_FLOAT64, 2, (int64_t[]){4, 2});
    tg_tensor *v1 = tg_variable(g, "w1", w1), *v2 = tg_variable(g, "w2", w2);
    tg_graph_begin(g);
    /* b1, b2 are eager tensors: captured as constants */
    tg_tensor *sy = tg_relu(linear(tg_tanh(linear(sx, v1, b1)), v2, b2));
    tg_tensor *sloss = mse(sy, st);
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *feeds[2] = {sx, st}, *vals[2] = {x, t}, *fetch[2] = {sy, sloss}, *r[2];
    CHECK_OK(tg_session_run(s, 2, feeds, vals, 2, fetch, r, 0, NULL));
    CHECK(tt_same(r[0], y));
    CHECK(tt_same(r[1], loss));
    CHECK(!tg_is_symbolic(r[0]) && tg_scope_depth() == 1);
    /* float32 too */
    tg_tensor *x32 = tg_cast(x, TG_FLOAT32);
    tg_graph *h = tg_graph_new("f32");
    tg_tensor *hx = tg_placeholder(h, "x", TG_FLOAT32, 2, (int64_t[]){4, 3});
    tg_tensor *w32 = tg_cast(w1, TG_FLOAT32), *b32 = tg_cast(b1, TG_FLOAT32);
    tg_graph_begin(h);
    tg_tensor *hy = tg_sigmoid(linear(hx, w32, b32));
    tg_graph_end();
    tg_session *s2 = tg_session_new(h);
    CHECK_OK(tg_session_run(s2, 1, &hx, &x32, 1, &hy, r, 0, NULL));
    CHECK(tt_same(r[0], tg_sigmoid(linear(x32, w32, b32))));
    tg_session_free(s2);
    tg_graph_free(h);
    tg_session_free(s);
    tg_graph_free(g);
}

/* views of non-contiguous values: the executor copies where a view
 * cannot alias (as tg_reshape does eagerly); a node used twice; fan-out */
static tg_tensor *branchy(tg_tensor *a, tg_tensor *c)
{
    tg_tensor *ct = tg_transpose(c, 0, 1);                    /* [3,4] strided */
    tg_tensor *r = tg_reshape(ct, 2, (int64_t[]){2, 6});      /* needs a copy */
    tg_tensor *f = tg_flatten(tg_slice(ct, 1, 0, 4, 2), 0, 1); /* strided again */
    tg_tensor *e = tg_exp(a);
    tg_tensor *u = tg_add(tg_mul(e, ct), e);
    tg_tensor *z = tg_sum(tg_mul(u, u), 1, (int[]){1}, false);
    return tg_add(tg_add(tg_sum(r, 0, NULL, false), tg_sum(f, 0, NULL, false)), z);
}

static void test_views_match_eager(void)
{
    tg_tensor *a = tt_rand(2, (int64_t[]){3, 4}, -1, 1);
    tg_tensor *c = tt_rand(2, (int64_t[]){4, 3}, -1, 1);
    tg_tensor *y = branchy(a, c);
    tg_graph *g = tg_graph_new("views");
    tg_tensor *sa = tg_placeholder(g, "a", TG_FLOAT64, 2, (int64_t[]){3, 4});
    tg_tensor *sc = tg_placeholder(g, "c", TG_FLOAT64, 2, (int64_t[]){4, 3});
    tg_tensor *sy = branchy(sa, sc);
    tg_session *s = tg_session_new(g);
    tg_tensor *feeds[2] = {sa, sc}, *vals[2] = {a, c}, *r;
    CHECK_OK(tg_session_run(s, 2, feeds, vals, 1, &sy, &r, 0, NULL));
    CHECK(tt_same(r, y));
    /* non-contiguous feeds work too */
    tg_tensor *ct = tg_transpose(tg_contiguous(tg_transpose(c, 0, 1)), 0, 1);
    CHECK(!tg_is_contiguous(ct));
    vals[1] = ct;
    CHECK_OK(tg_session_run(s, 2, feeds, vals, 1, &sy, &r, 0, NULL));
    CHECK(tt_same(r, y));
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- pruning --------------------------------------------------------------------- */
static void test_pruning(void)
{
    tg_graph *g = tg_graph_new("prune");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *unused = tg_placeholder(g, "unused", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *a = tg_exp(x);
    tg_tensor *b = tg_sin(a);
    tg_tensor *c = tg_add(b, a);
    tg_tensor *d = tg_tanh(x);
    tg_tensor *e = tg_mul(d, unused);
    tg_tensor *w = tg_variable(g, "w", tg_ones(TG_FLOAT64, 1, (int64_t[]){3}));
    tg_tensor *f = tg_mul(c, w);
    (void)e;
    tg_session *s = tg_session_new(g);
    without_fusion(s);
    tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0, 1, 2});
    tg_tensor *r[2];
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &a, r, 0, NULL));
    CHECK(last_run(s) == 1);
    CHECK_NEAR(tg_get(r[0], (int64_t[]){1}), exp(1.0), 1e-15);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &b, r, 0, NULL));
    CHECK(last_run(s) == 2);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &c, r, 0, NULL));
    CHECK(last_run(s) == 3);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &f, r, 0, NULL));
    CHECK(last_run(s) == 4); /* the variable binds, it does not count */
    tg_tensor *cd[2] = {c, d};
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 2, cd, r, 0, NULL));
    CHECK(last_run(s) == 4);
    CHECK_NEAR(tg_get(r[1], (int64_t[]){2}), tanh(2.0), 1e-15);
    /* targets run without fetching; a fed intermediate cuts its producers */
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 0, NULL, NULL, 1, &b));
    CHECK(last_run(s) == 2);
    tg_tensor *av = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0, 0.5, 1});
    CHECK_OK(tg_session_run(s, 1, &a, &av, 1, &c, r, 0, NULL)); /* x not needed */
    CHECK(last_run(s) == 2);
    CHECK_NEAR(tg_get(r[0], (int64_t[]){1}), sin(0.5) + 0.5, 1e-15);
    tg_session_stats st;
    tg_session_get_stats(s, &st);
    CHECK(st.runs == 7 && st.nodes_total == 1 + 2 + 3 + 4 + 4 + 2 + 2);
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- the plan cache ------------------------------------------------------------------- */
static void test_plan_cache(void)
{
    tg_graph *g = tg_graph_new("cache");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 0, NULL);
    tg_tensor *a = tg_exp(x), *b = tg_neg(x);
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_scalar(TG_FLOAT64, 1.0), *r[2];
    tg_session_stats st;
    tg_tensor *ab[2] = {a, b}, *ba[2] = {b, a};
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 2, ab, r, 0, NULL));
    tg_session_get_stats(s, &st);
    CHECK(st.plan_misses == 1 && st.plan_hits == 0 && st.n_plans == 1);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 2, ab, r, 0, NULL));
    tg_session_get_stats(s, &st);
    CHECK(st.plan_misses == 1 && st.plan_hits == 1);
    /* the signature is a set: order does not matter, results follow it */
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 2, ba, r, 0, NULL));
    tg_session_get_stats(s, &st);
    CHECK(st.plan_misses == 1 && st.plan_hits == 2);
    CHECK_NEAR(tg_item(r[0]), -1.0, 0);
    CHECK_NEAR(tg_item(r[1]), exp(1.0), 1e-15);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &a, r, 0, NULL));
    tg_session_get_stats(s, &st);
    CHECK(st.plan_misses == 2 && st.n_plans == 2);
    /* appending nodes keeps plans; editing an existing node drops them */
    tg_tensor *c = tg_sin(x);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &a, r, 0, NULL));
    tg_session_get_stats(s, &st);
    CHECK(st.plan_misses == 2 && st.plan_hits == 3);
    CHECK_OK(tg_graph_add_control_dep(a, c));
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &a, r, 0, NULL));
    tg_session_get_stats(s, &st);
    CHECK(st.plan_misses == 3 && st.n_plans == 2);
    CHECK(last_run(s) == 2); /* sin now runs first */
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- errors ---------------------------------------------------------------------------- */
static void test_run_errors(void)
{
    tg_graph *g = tg_graph_new("err");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){2, 3});
    tg_tensor *y = tg_placeholder(g, "y", TG_FLOAT64, 2, (int64_t[]){2, 3});
    tg_tensor *a = tg_exp(x);
    tg_tensor *b = tg_add(a, y);
    tg_tensor *w = tg_variable(g, "w", tg_ones(TG_FLOAT64, 0, NULL));
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_ones(TG_FLOAT64, 2, (int64_t[]){2, 3}), *r[2] = {xv, xv};
    /* an unfed placeholder on the path, named with who needs it */
    CHECK_FAILS(tg_session_run(s, 1, &x, &xv, 1, &b, r, 0, NULL), TG_ERR_ARG,
                "placeholder 'y' must be fed: node 'add' (add) needs it");
    CHECK(r[0] == NULL);
    CHECK_FAILS(tg_session_run(s, 0, NULL, NULL, 1, &x, r, 0, NULL), TG_ERR_ARG,
                "placeholder 'x' must be fed");
    CHECK_FAILS(tg_session_run(s, 1, &x, &xv, 1, &x, r, 0, NULL), TG_ERR_ARG,
                "'x' is both fed and fetched");
    tg_tensor *xx[2] = {x, x}, *vv[2] = {xv, xv};
    CHECK_FAILS(tg_session_run(s, 2, xx, vv, 1, &a, r, 0, NULL), TG_ERR_ARG, "fed twice");
    tg_tensor *bad_shape = tg_ones(TG_FLOAT64, 2, (int64_t[]){3, 2});
    CHECK_FAILS(tg_session_run(s, 1, &x, &bad_shape, 1, &a, r, 0, NULL), TG_ERR_SHAPE,
                "placeholder 'x' was fed a float64[3, 2] tensor, expected float64[2, 3]");
    tg_tensor *bad_dtype = tg_ones(TG_FLOAT32, 2, (int64_t[]){2, 3});
    CHECK_FAILS(tg_session_run(s, 1, &x, &bad_dtype, 1, &a, r, 0, NULL), TG_ERR_DTYPE,
                "placeholder 'x' was fed a float32[2, 3] tensor, expected float64[2, 3]");
    tg_tensor *one = tg_ones(TG_FLOAT64, 0, NULL);
    CHECK_FAILS(tg_session_run(s, 1, &w, &one, 1, &a, r, 0, NULL), TG_ERR_ARG,
                "'w' is a variable and cannot be fed");
    CHECK_FAILS(tg_session_run(s, 1, &x, &a, 1, &a, r, 0, NULL), TG_ERR_ARG,
                "is symbolic; feeds must be concrete");
    tg_tensor *nul = NULL;
    CHECK_FAILS(tg_session_run(s, 1, &x, &nul, 1, &a, r, 0, NULL), TG_ERR_ARG, "is NULL");
    CHECK_FAILS(tg_session_run(s, 1, &x, &xv, 1, &xv, r, 0, NULL), TG_ERR_ARG,
                "a fetched value is a concrete tensor that graph 'err' does not use");
    tg_graph *h = tg_graph_new("other");
    tg_tensor *z = tg_placeholder(h, "z", TG_FLOAT64, 0, NULL);
    CHECK_FAILS(tg_session_run(s, 0, NULL, NULL, 1, &z, r, 0, NULL), TG_ERR_ARG,
                "belongs to graph 'other', not to 'err'");
    CHECK_FAILS(tg_session_run(s, 0, NULL, NULL, 0, NULL, NULL, 0, NULL), TG_ERR_ARG,
                "nothing to fetch");
    CHECK_FAILS(tg_session_run(NULL, 0, NULL, NULL, 1, &a, r, 0, NULL), TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_session_run(s, -1, NULL, NULL, 1, &a, r, 0, NULL), TG_ERR_ARG, "bad counts");
    /* by name */
    const char *fn[1] = {"nope"};
    const char *xn[1] = {"x"};
    CHECK_FAILS(tg_session_run_named(s, 1, xn, &xv, 1, fn, r, 0, NULL), TG_ERR_ARG,
                "graph 'err' has no node named 'nope'");
    const char *bn[1] = {"exp:3"};
    CHECK_FAILS(tg_session_run_named(s, 1, xn, &xv, 1, bn, r, 0, NULL), TG_ERR_INDEX,
                "no output 3");
    /* a kernel failure names the node: a variable assigned a bool mask */
    tg_session_stats st;
    tg_session_get_stats(s, &st);
    CHECK(st.runs == 0);
    CHECK(tg_session_new(NULL) == NULL);
    tg_session_free(s);
    tg_graph_free(h);
    tg_graph_free(g);
}

static void test_named_and_feeds(void)
{
    tg_graph *g = tg_graph_new("named");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){2});
    tg_tensor *y = tg_mul_scalar(x, 3.0);
    CHECK_OK(tg_graph_set_name(y, "y"));
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2}), *r[2];
    const char *feeds[1] = {"x"}, *fetches[2] = {"y", "x:0"};
    CHECK_OK(tg_session_run_named(s, 1, feeds, &xv, 1, fetches, r, 0, NULL));
    CHECK_TENSOR(r[0], ((double[]){3, 6}), 0);
    /* feeding the constant the scalar became, by its name */
    const char *both[2] = {"x", "const"};
    tg_tensor *vals[2] = {xv, tg_scalar(TG_FLOAT64, 10)};
    CHECK_OK(tg_session_run_named(s, 2, both, vals, 1, fetches, r, 0, NULL));
    CHECK_TENSOR(r[0], ((double[]){10, 20}), 0);
    /* a fed value is used as it is: the caller's tensor is not copied */
    tg_tensor *id = tg_graph_find(g, "x");
    (void)id;
    tg_session_free(s);
    tg_graph_free(g);
}

/* a constant captures its eager tensor by reference */
static void test_capture_by_reference(void)
{
    tg_tensor *k = tg_ones(TG_FLOAT64, 1, (int64_t[]){2});
    tg_graph *g = tg_graph_new("cap");
    tg_graph_begin(g);
    tg_tensor *y = tg_mul_scalar(k, 2.0);
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *r;
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 1, &y, &r, 0, NULL));
    CHECK_TENSOR(r, ((double[]){2, 2}), 0);
    CHECK_OK(tg_fill_(k, 4.0));
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 1, &y, &r, 0, NULL));
    CHECK_TENSOR(r, ((double[]){8, 8}), 0);
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- variables, assigns, training ------------------------------------------------------ */
static void test_variables(void)
{
    tg_graph *g = tg_graph_new("vars");
    tg_tensor *init = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *w = tg_variable(g, "w", init);
    tg_tensor *d = tg_placeholder(g, "d", TG_FLOAT64, 1, (int64_t[]){2});
    tg_tensor *twice = tg_mul_scalar(w, 2.0);
    tg_tensor *wt = tg_unsqueeze(w, 0); /* a view of the variable */
    tg_tensor *upd = tg_assign_sub(w, d, 0.5);
    tg_session *s = tg_session_new(g);
    tg_tensor *dv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){2, 2}), *r[4];
    /* reads in the same run see the value before the update */
    tg_tensor *fetch[4] = {twice, w, wt, upd};
    CHECK_OK(tg_session_run(s, 1, &d, &dv, 4, fetch, r, 0, NULL));
    CHECK_TENSOR(r[0], ((double[]){2, 4}), 0);
    CHECK_TENSOR(r[1], ((double[]){1, 2}), 0);
    CHECK_TENSOR(r[2], ((double[]){1, 2}), 0);
    CHECK_TENSOR(r[3], ((double[]){0, 1}), 0);
    CHECK(!tg_shares_storage(r[1], init));
    tg_tensor *live = tg_variable_value(w);
    CHECK_TENSOR(live, ((double[]){0, 1}), 0);
    CHECK(!tg_shares_storage(r[3], live)); /* fetched state is copied */
    CHECK_OK(tg_session_run(s, 1, &d, &dv, 0, NULL, NULL, 1, &upd));
    CHECK_TENSOR(live, ((double[]){-1, 0}), 0);
    CHECK_TENSOR(r[3], ((double[]){0, 1}), 0);
    CHECK_TENSOR(init, ((double[]){1, 2}), 0); /* the initial value is untouched */
    /* assign: a plain write, with broadcasting */
    tg_tensor *reset = tg_assign(w, tg_scalar(TG_FLOAT64, 7));
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 0, NULL, NULL, 1, &reset));
    CHECK_TENSOR(live, ((double[]){7, 7}), 0);
    /* the assign is ordered after the earlier readers */
    const tg_gnode *an = &g->nodes[g->values[upd->value].node];
    CHECK(an->n_ctrl == 0 && an->n_order == 2); /* mul (twice), the unsqueeze view */
    CHECK_OK(tg_graph_verify(g));
    tg_session_free(s);
    tg_graph_free(g);
}

/* SGD on the MLP: the graph's step (gradients + assign_sub) against the
 * eager one (tg_autograd_grad + tg_add_), step by step */
static void test_sgd_training_matches_eager(void)
{
    const double lr = 0.1;
    const int steps = 5;
    tg_tensor *x = tt_rand(2, (int64_t[]){6, 3}, -1, 1);
    tg_tensor *t = tt_rand(2, (int64_t[]){6, 2}, -1, 1);
    tg_tensor *p[4] = {tt_rand(2, (int64_t[]){4, 3}, -1, 1), tt_rand(1, (int64_t[]){4}, -1, 1),
                       tt_rand(2, (int64_t[]){2, 4}, -1, 1), tt_rand(1, (int64_t[]){2}, -1, 1)};
    /* the graph: variables start from the same values */
    tg_graph *g = tg_graph_new("sgd");
    tg_tensor *sx = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){6, 3});
    tg_tensor *st = tg_placeholder(g, "t", TG_FLOAT64, 2, (int64_t[]){6, 2});
    tg_tensor *v[4], *dv[4], *upd[4];
    for (int i = 0; i < 4; i++)
        v[i] = tg_variable(g, NULL, p[i]);
    tg_graph_begin(g);
    tg_tensor *sloss = mse(linear(tg_tanh(linear(sx, v[0], v[1])), v[2], v[3]), st);
    tg_graph_end();
    CHECK_OK(tg_graph_gradients(g, 1, &sloss, NULL, 4, v, dv));
    for (int i = 0; i < 4; i++)
        upd[i] = tg_assign_sub(v[i], dv[i], lr);
    CHECK_OK(tg_graph_verify(g));
    tg_session *s = tg_session_new(g);
    tg_tensor *feeds[2] = {sx, st}, *vals[2] = {x, t};
    for (int k = 0; k < steps; k++) {
        tg_scope_begin();
        tg_tensor *loss = mse(linear(tg_tanh(linear(x, p[0], p[1])), p[2], p[3]), t);
        tg_tensor *grads[4];
        CHECK_OK(tg_autograd_grad(1, &loss, NULL, 4, p, grads, false, false));
        tg_tensor *gl;
        CHECK_OK(tg_session_run(s, 2, feeds, vals, 1, &sloss, &gl, 4, upd));
        CHECK(tt_rel_diff(gl, loss, 1.0) <= 1e-12);
        tg_no_grad_begin();
        for (int i = 0; i < 4; i++) {
            CHECK_OK(tg_add_(p[i], grads[i], -lr));
            tg_release(grads[i]);
        }
        tg_no_grad_end();
        tg_scope_end();
    }
    for (int i = 0; i < 4; i++) {
        tg_tensor *live = tg_variable_value(v[i]);
        CHECK(tt_rel_diff(live, p[i], 1.0) <= 1e-12);
    }
    tg_session_stats stats;
    tg_session_get_stats(s, &stats);
    CHECK(stats.plan_misses == 1 && stats.plan_hits == steps - 1);
    tg_session_free(s);
    tg_graph_free(g);
}

/* a run from inside a graph scope still executes */
static void test_run_inside_graph_scope(void)
{
    tg_graph *g = tg_graph_new("inner");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 0, NULL);
    tg_tensor *y = tg_exp(x);
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_scalar(TG_FLOAT64, 0.0), *r;
    tg_graph_begin(g);
    int n = tg_graph_num_nodes(g);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &y, &r, 0, NULL));
    CHECK(tg_graph_num_nodes(g) == n && !tg_is_symbolic(r));
    tg_graph_end();
    CHECK_NEAR(tg_item(r), 1.0, 0);
    /* a hand-broken graph is caught before a plan is compiled */
    g->values[y->value].meta.shape[0] = 3;
    g->values[y->value].meta.ndim = 1;
    tg_tensor *z = tg_sin(x); /* a new signature */
    CHECK_FAILS(tg_session_run(s, 1, &x, &xv, 1, &z, &r, 0, NULL), TG_ERR_INTERNAL,
                "node 'exp' (exp): output 0 is stored as float64[3]");
    g->values[y->value].meta.ndim = 0;
    tg_session_free(s);
    tg_graph_free(g);
}

int main(void)
{
    RUN(test_mlp_forward_matches_eager);
    RUN(test_views_match_eager);
    RUN(test_pruning);
    RUN(test_plan_cache);
    RUN(test_run_errors);
    RUN(test_named_and_feeds);
    RUN(test_capture_by_reference);
    RUN(test_variables);
    RUN(test_sgd_training_matches_eager);
    RUN(test_run_inside_graph_scope);
    return tt_finish();
}
