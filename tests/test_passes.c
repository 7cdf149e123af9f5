/* Graph optimization passes: the options API; each pass on graphs made to
 * exercise it (what it changes, counted in its record, and results equal
 * to the graph as built: bitwise for every level-1 pass); state (assigns)
 * and captured constants that passes must not move across or freeze; and
 * random graphs of elementwise and shape ops compared across levels. The
 * tests run with TG_VERIFY_PASSES=1: the verifier checks the graph after
 * every pass. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static void set_level(tg_session *s, int level, int n_disabled, const char *const *disabled)
{
    tg_session_options o = tg_session_default_options();
    o.opt_level = level;
    o.n_disabled = n_disabled;
    o.disabled_passes = disabled;
    CHECK_OK(tg_session_set_options(s, &o));
}

/* the optimised graph's node count for fetching y from x, at level */
static int nodes_at(tg_session *s, int level, tg_tensor *x, tg_tensor *y, tg_pass_record *rec,
                    int *n_rec)
{
    set_level(s, level, 0, NULL);
    int n = 0;
    tg_graph *g = tg_session_optimized_graph(s, x ? 1 : 0, &x, NULL, 1, &y, 0, NULL,
                                             rec ? 32 : 0, rec, &n);
    CHECK(g != NULL);
    if (n_rec)
        *n_rec = n;
    int nodes = tg_graph_num_nodes(g);
    tg_graph_free(g);
    return nodes;
}

/* y fetched with x fed at levels 0 and `level`: bitwise equal */
static void check_levels_equal(tg_session *s, tg_tensor *x, tg_tensor *xv, tg_tensor *y,
                               int level)
{
    tg_tensor *r0 = NULL, *r1 = NULL;
    set_level(s, 0, 0, NULL);
    CHECK_OK(tg_session_run(s, x ? 1 : 0, &x, &xv, 1, &y, &r0, 0, NULL));
    set_level(s, level, 0, NULL);
    CHECK_OK(tg_session_run(s, x ? 1 : 0, &x, &xv, 1, &y, &r1, 0, NULL));
    CHECK(tt_same(r0, r1));
}

/* ---- the options ------------------------------------------------------------------ */
static void test_options(void)
{
    CHECK(tg_pass_count() >= 4);
    bool seen[4] = {0};
    static const char *const names[4] = {"dce", "fold", "cse", "simplify"};
    for (int i = 0; i < tg_pass_count(); i++) {
        int level = -1;
        const char *name = tg_pass_info(i, &level);
        CHECK(name && level >= 1 && level <= 2);
        for (int k = 0; k < 4; k++)
            seen[k] |= name && !strcmp(name, names[k]);
    }
    for (int k = 0; k < 4; k++)
        CHECK(seen[k]);
    CHECK(tg_pass_info(tg_pass_count(), NULL) == NULL);
    CHECK(tg_pass_info(-1, NULL) == NULL);

    tg_graph *g = tg_graph_new("opts");
    tg_session *s = tg_session_new(g);
    tg_session_options o = tg_session_default_options();
    o.opt_level = 3;
    CHECK_FAILS(tg_session_set_options(s, &o), TG_ERR_ARG, "optimization level 3");
    o.opt_level = 1;
    const char *bad[1] = {"no_such_pass"};
    o.n_disabled = 1;
    o.disabled_passes = bad;
    CHECK_FAILS(tg_session_set_options(s, &o), TG_ERR_ARG, "no pass is named 'no_such_pass'");
    o.disabled_passes = NULL;
    CHECK_FAILS(tg_session_set_options(s, &o), TG_ERR_ARG, "disabled passes");
    CHECK_FAILS(tg_session_set_options(NULL, &o), TG_ERR_ARG, "session is NULL");
    CHECK_FAILS(tg_session_set_options(s, NULL), TG_ERR_ARG, "options is NULL");
    CHECK(tg_session_optimized_graph(s, 0, NULL, NULL, 0, NULL, 0, NULL, 0, NULL, NULL) ==
          NULL);
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- each pass ---------------------------------------------------------------------- */
static void test_cse(void)
{
    tg_graph *g = tg_graph_new("cse");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){3, 4});
    tg_graph_begin(g);
    tg_tensor *a = tg_mul(tg_exp(x), tg_sin(x));
    tg_tensor *b = tg_mul(tg_sin(x), tg_exp(x)); /* the same, commuted */
    tg_tensor *c = tg_exp(tg_sub(x, tg_sin(x)));
    tg_tensor *d = tg_exp(tg_sub(tg_sin(x), x)); /* sub does not commute */
    tg_tensor *y = tg_add(tg_add(a, b), tg_add(c, d));
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_pass_record rec[32];
    int n;
    int n0 = nodes_at(s, 0, x, y, NULL, NULL), n1 = nodes_at(s, 1, x, y, rec, &n);
    /* b's exp, sin and mul merge with a's, and so do c's and d's sin; the
     * subs and their exps stay apart */
    CHECK(tt_record_count(rec, n, "cse", "merged") == 5);
    CHECK(n1 == n0 - 5);
    check_levels_equal(s, x, tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){3, 4}, -2, 2), y, 1);
    /* disabled, it does not run */
    set_level(s, 1, 1, (const char *[]){"cse"});
    tg_graph *og = tg_session_optimized_graph(s, 1, &x, NULL, 1, &y, 0, NULL, 32, rec, &n);
    CHECK(og && tg_graph_num_nodes(og) == n0 && tt_record_count(rec, n, "cse", "merged") == -1);
    tg_graph_free(og);
    tg_session_free(s);
    tg_graph_free(g);
}

/* reads of a variable on either side of an assign are different inputs */
static void test_cse_respects_assigns(void)
{
    tg_graph *g = tg_graph_new("state");
    tg_tensor *w = tg_variable(g, "w", tt_tensor(TG_FLOAT64, 1, (int64_t[]){2},
                                                 (double[]){1, 2}));
    tg_graph_begin(g);
    tg_tensor *before = tg_mul_scalar(w, 3.0);
    tg_tensor *snap = tg_add(w, tg_zeros(TG_FLOAT64, 1, (int64_t[]){2})); /* a snapshot */
    tg_tensor *upd = tg_assign(w, tg_add_scalar(w, 1.0));
    tg_tensor *after = tg_mul_scalar(w, 3.0);
    tg_tensor *late = tg_mul_scalar(snap, 2.0); /* reads the snapshot after the update */
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *wv = tg_variable_value(w);
    for (int level = 0; level <= 2; level++) {
        set_level(s, level, 0, NULL);
        CHECK_OK(tg_copy_(wv, tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2})));
        tg_tensor *fetch[3] = {before, after, late}, *r[3];
        CHECK_OK(tg_session_run(s, 0, NULL, NULL, 3, fetch, r, 1, &upd));
        CHECK_TENSOR(r[0], ((double[]){3, 6}), 0);
        CHECK_TENSOR(r[1], ((double[]){6, 9}), 0);
        CHECK_TENSOR(r[2], ((double[]){2, 4}), 0);
    }
    tg_session_free(s);
    tg_graph_free(g);
}

static void test_fold_and_guard(void)
{
    tg_tensor *k = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    tg_graph *g = tg_graph_new("fold");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    tg_graph_begin(g);
    tg_tensor *kk = tg_exp(tg_mul_scalar(k, 0.5)); /* constant: folds */
    tg_tensor *y = tg_add(x, kk);
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_pass_record rec[32];
    int n;
    int n0 = nodes_at(s, 0, x, y, NULL, NULL), n1 = nodes_at(s, 1, x, y, rec, &n);
    CHECK(tt_record_count(rec, n, "fold", "folded") == 2); /* mul, exp */
    CHECK(n1 < n0);
    tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0, 0, 0}), *r;
    check_levels_equal(s, x, xv, y, 1);
    /* k is captured by reference: writing it in place is seen */
    tg_session_stats st0, st1;
    tg_session_get_stats(s, &st0);
    CHECK_OK(tg_copy_(k, tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0, 0, 0})));
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &y, &r, 0, NULL));
    CHECK_TENSOR(r, ((double[]){1, 1, 1}), 0);
    tg_session_get_stats(s, &st1);
    CHECK(st1.plan_misses == st0.plan_misses + 1); /* compiled again */
    tg_session_free(s);
    tg_graph_free(g);
}

static void test_fold_size_cap(void)
{
    tg_tensor *big = tg_ones(TG_FLOAT64, 1, (int64_t[]){100000});
    tg_graph *g = tg_graph_new("cap");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){100000});
    tg_graph_begin(g);
    tg_tensor *y = tg_add(x, tg_exp(big)); /* 800 KB: above the cap */
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_pass_record rec[32];
    int n;
    nodes_at(s, 1, x, y, rec, &n);
    CHECK(tt_record_count(rec, n, "fold", "folded") == 0);
    tg_session_free(s);
    tg_graph_free(g);
}

static void test_simplify(void)
{
    tg_graph *g = tg_graph_new("simplify");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_tensor *i = tg_placeholder(g, "i", TG_INT32, 1, (int64_t[]){4});
    tg_graph_begin(g);
    tg_tensor *one = tg_ones(TG_FLOAT32, 0, NULL), *zero = tg_zeros(TG_FLOAT32, 1, (int64_t[]){3});
    tg_tensor *t = tg_mul(tg_add(x, zero), one);                    /* x */
    t = tg_sub(tg_div(t, one), zero);                               /* x */
    t = tg_cast(t, TG_FLOAT32);                                     /* x */
    t = tg_transpose(tg_transpose(t, 0, 1), 1, 0);                  /* x */
    t = tg_view(tg_view(t, 1, (int64_t[]){6}), 2, (int64_t[]){3, 2}); /* one view */
    t = tg_neg(tg_neg(t));                                          /* t */
    t = tg_sum(tg_unsqueeze(t, 0), 1, (int[]){0}, false);          /* a view */
    tg_tensor *y = tg_exp(t);
    tg_tensor *zi = tg_sub(i, i); /* integer zeros */
    tg_tensor *big = tg_mul(x, tg_ones(TG_FLOAT32, 3, (int64_t[]){4, 2, 3})); /* broadcasts */
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_pass_record rec[32];
    int n;
    int n0 = nodes_at(s, 0, x, y, NULL, NULL), n1 = nodes_at(s, 1, x, y, rec, &n);
    CHECK(n1 <= 4); /* x, the view, exp (and nothing else) */
    CHECK(n1 < n0);
    CHECK(tt_record_count(rec, n, "simplify", "simplified") >= 8);
    check_levels_equal(s, x, tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){2, 3}, -2, 2), y, 1);
    tg_tensor *iv = tt_tensor(TG_INT32, 1, (int64_t[]){4}, (double[]){1, -2, 3, 7}), *r;
    set_level(s, 1, 0, NULL);
    CHECK_OK(tg_session_run(s, 1, &i, &iv, 1, &zi, &r, 0, NULL));
    CHECK_TENSOR(r, ((double[]){0, 0, 0, 0}), 0);
    check_levels_equal(s, x, tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){2, 3}, -2, 2), big, 1);
    /* a fetched value the passes turn into the feed is still the caller's own */
    tg_tensor *xv = tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){2, 3}, -2, 2);
    tg_tensor *fx = NULL;
    tg_graph_begin(g);
    tg_tensor *same_x = tg_mul(x, one);
    tg_graph_end();
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &same_x, &fx, 0, NULL));
    CHECK(fx && fx != xv && tt_same(fx, xv));
    tg_session_free(s);
    tg_graph_free(g);
}

static void test_dce(void)
{
    tg_graph *g = tg_graph_new("dce");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){5});
    tg_graph_begin(g);
    tg_tensor *y = tg_mul(tg_exp(x), tg_ones(TG_FLOAT64, 0, NULL)); /* exp(x) */
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_pass_record rec[32];
    int n;
    int n1 = nodes_at(s, 1, x, y, rec, &n);
    CHECK(n1 == 2);                                     /* x, exp */
    CHECK(tt_record_count(rec, n, "simplify", "simplified") == 1); /* x * 1 */
    CHECK(tt_record_count(rec, n, "dce", "removed") == 1);     /* the constant 1 */
    tg_session_free(s);
    tg_graph_free(g);
}

/* a training step: level 0 and 1 give the same bits; fetching every value
 * the passes touch works */
static void test_training_step(void)
{
    tg_tensor *w0 = tt_rand(2, (int64_t[]){3, 4}, -1, 1), *b0 = tt_rand(1, (int64_t[]){3}, -1, 1);
    tg_tensor *xv = tt_rand(2, (int64_t[]){5, 4}, -1, 1), *tv = tt_rand(2, (int64_t[]){5, 3}, -1, 1);
    tg_tensor *loss_at[3][3];
    tg_tensor *w_at[3];
    for (int level = 0; level <= 2; level++) {
        tg_graph *g = tg_graph_new("step");
        tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){5, 4});
        tg_tensor *t = tg_placeholder(g, "t", TG_FLOAT64, 2, (int64_t[]){5, 3});
        tg_tensor *w = tg_variable(g, "w", w0), *b = tg_variable(g, "b", b0);
        tg_graph_begin(g);
        tg_tensor *loss = tg_mse_loss(tg_tanh(tg_linear(x, w, b)), t, TG_REDUCTION_MEAN);
        tg_graph_end();
        tg_sgd_opts o = tg_sgd_defaults();
        o.lr = 0.1;
        o.momentum = 0.9;
        tg_tensor *params[2] = {w, b}, *upd[2];
        CHECK_OK(tg_graph_sgd(loss, 2, params, &o, NULL, upd));
        tg_session *s = tg_session_new(g);
        set_level(s, level, 0, NULL);
        tg_tensor *feeds[2] = {x, t}, *vals[2] = {xv, tv};
        for (int k = 0; k < 3; k++)
            CHECK_OK(tg_session_run(s, 2, feeds, vals, 1, &loss, &loss_at[level][k], 2, upd));
        w_at[level] = tg_variable_value(w);
        tg_session_free(s);
        tg_graph_free(g);
    }
    for (int level = 1; level <= 2; level++) {
        for (int k = 0; k < 3; k++)
            CHECK(tt_same(loss_at[level][k], loss_at[0][k]));
        CHECK(tt_same(w_at[level], w_at[0]));
    }
}

/* relu_grad moved before max-pooling's gradient: bitwise the same input
 * gradient, for 2x2 windows and for overlapping 3x3 windows (gradients
 * that add up), float32 and float64 */
static void test_pool_grad(void)
{
    static const tg_pool2d_opts pools[2] = {{.kernel = {2, 2}},
                                            {.kernel = {3, 3}, .stride = {2, 2}}};
    for (int k = 0; k < 4; k++) {
        tg_dtype dt = k % 2 ? TG_FLOAT64 : TG_FLOAT32;
        const tg_pool2d_opts *po = &pools[k / 2];
        tg_graph *g = tg_graph_new("pool");
        tg_tensor *x = tg_placeholder(g, "x", dt, 4, (int64_t[]){2, 3, 8, 8});
        tg_tensor *w = tt_rand_dtype(dt, 4, (int64_t[]){3, 3, 1, 1}, -1, 1);
        tg_graph_begin(g);
        tg_tensor *p = tg_max_pool2d(tg_relu(x), po);
        tg_tensor *loss = tg_sum(tg_mul(tg_conv2d(p, w, NULL, NULL), p), 0, NULL, false);
        tg_graph_end();
        tg_tensor *dx;
        CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 1, &x, &dx));
        tg_session *s = tg_session_new(g);
        tg_pass_record rec[32];
        int n = 0;
        set_level(s, 2, 0, NULL);
        tg_graph_free(tg_session_optimized_graph(s, 1, &x, NULL, 1, &dx, 0, NULL, 32, rec, &n));
        CHECK(tt_record_count(rec, n, "pool_grad", "moved") == 1);
        /* half the activations negative: the mask matters */
        check_levels_equal(s, x, tt_rand_dtype(dt, 4, (int64_t[]){2, 3, 8, 8}, -1, 1), dx, 2);
        tg_session_free(s);
        tg_graph_free(g);
    }
}

/* ---- random graphs of elementwise and shape ops ------------------------------------ */
typedef struct rgraph {
    uint64_t state;
    tg_tensor *pool[64];
    int n;
} rgraph;

static int pick(rgraph *r, int n)
{
    r->state = r->state * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((r->state >> 33) % (uint64_t)n);
}

static tg_tensor *any(rgraph *r) { return r->pool[pick(r, r->n)]; }

static tg_tensor *unary(rgraph *r, tg_tensor *v)
{
    switch (pick(r, 7)) {
    case 0: return tg_neg(v);
    case 1: return tg_tanh(v);
    case 2: return tg_sin(v);
    case 3: return tg_abs(v);
    case 4: return tg_relu(v);
    case 5: return tg_sigmoid(v);
    default: return tg_exp(tg_tanh(v));
    }
}

static tg_tensor *binary(rgraph *r, tg_tensor *a, tg_tensor *b)
{
    switch (pick(r, 5)) {
    case 0: return tg_add(a, b);
    case 1: return tg_sub(a, b);
    case 2: return tg_mul(a, b);
    case 3: return tg_maximum(a, b);
    default: return tg_minimum(a, b);
    }
}

/* x unchanged through ops the simplifier removes (or keeps, exactly) */
static tg_tensor *identity(rgraph *r, tg_tensor *v)
{
    tg_dtype dt = tg_dtype_of(v);
    switch (pick(r, 6)) {
    case 0: return tg_mul(v, tg_ones(dt, 0, NULL));
    case 1: return tg_add(tg_zeros(dt, 1, (int64_t[]){tg_ndim(v) ? tg_shape(v)[tg_ndim(v) - 1] : 1}), v);
    case 2: return tg_cast(v, dt);
    case 3: return tg_neg(tg_neg(v));
    case 4: return tg_ndim(v) == 2 ? tg_transpose(tg_transpose(v, 0, 1), 0, 1) : tg_clone(v);
    default: {
        int64_t n = tg_numel(v);
        return tg_view(tg_view(v, 1, &n), tg_ndim(v), tg_shape(v));
    }
    }
}

static tg_tensor *reduce_or_shape(rgraph *r, tg_tensor *v)
{
    if (tg_ndim(v) != 2)
        return tg_sum(tg_unsqueeze(v, 0), 1, (int[]){0}, false); /* over nothing */
    switch (pick(r, 3)) {
    case 0: return tg_sum(v, 1, (int[]){pick(r, 2)}, true);
    case 1: return tg_max(v, 1, (int[]){pick(r, 2)}, true);
    default: return tg_clone(tg_transpose(tg_transpose(v, 0, 1), 1, 0));
    }
}

/* one random graph: n_steps ops over x [R, C], y [C] and constants;
 * returns the values to fetch (out[0..4)) */
static void random_graph(rgraph *r, tg_tensor *const *in, tg_tensor **out)
{
    r->n = 0;
    r->pool[r->n++] = in[0];
    r->pool[r->n++] = in[1];
    r->pool[r->n++] = tg_tanh(in[2]); /* a constant: folds */
    r->pool[r->n++] = in[3];
    tg_tensor *last = NULL;
    while (r->n < 40) {
        tg_tensor *v = NULL;
        switch (pick(r, 6)) {
        case 0: v = unary(r, any(r)); break;
        case 1:
        case 2: v = binary(r, any(r), any(r)); break;
        case 3: v = identity(r, any(r)); break;
        case 4: v = reduce_or_shape(r, any(r)); break;
        default: /* the same op again: a common subexpression */
            v = last ? tg_add(last, last) : unary(r, any(r));
        }
        CHECK(v != NULL);
        if (!v)
            return;
        last = v;
        r->pool[r->n++] = v;
    }
    out[0] = r->pool[r->n - 1];
    out[1] = r->pool[r->n - 2];
    out[2] = r->pool[4 + pick(r, r->n - 4)]; /* computed: not a feed */
    out[3] = tg_add(any(r), any(r));
}

static void test_random_graphs(void)
{
    /* simplified, merged, folded, fused: the passes had work */
    int changed[4] = {0};
    for (int seed = 1; seed <= 40; seed++) {
        tg_dtype dt = seed % 2 ? TG_FLOAT32 : TG_FLOAT64;
        /* small, and large enough that fused nodes run several blocks */
        int64_t R = seed % 4 >= 2 ? 300 : 3, C = seed % 4 >= 2 ? 70 : 4;
        rgraph r = {.state = (uint64_t)seed * 2654435761u};
        tg_graph *g = tg_graph_new("random");
        tg_tensor *x = tg_placeholder(g, "x", dt, 2, (int64_t[]){R, C});
        tg_tensor *y = tg_placeholder(g, "y", dt, 1, (int64_t[]){C});
        tg_tensor *out[4] = {0};
        tg_tensor *in[4] = {x, y, tt_rand_dtype(dt, 2, (int64_t[]){R, 1}, -1, 1),
                            tt_rand_dtype(dt, 2, (int64_t[]){1, C}, -1, 1)};
        tg_graph_begin(g);
        random_graph(&r, in, out);
        tg_graph_end();
        tg_session *s = tg_session_new(g);
        tg_tensor *feeds[2] = {x, y};
        tg_tensor *vals[2] = {tt_rand_dtype(dt, 2, (int64_t[]){R, C}, -2, 2),
                              tt_rand_dtype(dt, 1, (int64_t[]){C}, -2, 2)};
        tg_tensor *res[3][4];
        for (int level = 0; level <= 2; level++) {
            set_level(s, level, 0, NULL);
            CHECK_OK(tg_session_run(s, 2, feeds, vals, 4, out, res[level], 0, NULL));
        }
        tg_pass_record rec[32];
        int n = 0;
        tg_graph_free(tg_session_optimized_graph(s, 2, feeds, NULL, 4, out, 0, NULL, 32, rec,
                                                 &n));
        changed[0] += tt_record_count(rec, n, "simplify", "simplified");
        changed[1] += tt_record_count(rec, n, "cse", "merged");
        changed[2] += tt_record_count(rec, n, "fold", "folded");
        changed[3] += tt_record_count(rec, n, "fuse_elementwise", "ops");
        for (int level = 1; level <= 2; level++)
            for (int k = 0; k < 4; k++)
                if (!tt_same(res[level][k], res[0][k]))
                    tt_fail(__FILE__, __LINE__, "seed %d: fetch %d differs at level %d",
                            seed, k, level);
        tg_session_free(s);
        tg_graph_free(g);
    }
    /* (large constants are not merged: fewer merges than with small shapes) */
    CHECK(changed[0] > 40 && changed[1] > 10 && changed[2] > 20 && changed[3] > 60);
}

int main(void)
{
    RUN(test_options);
    RUN(test_cse);
    RUN(test_cse_respects_assigns);
    RUN(test_fold_and_guard);
    RUN(test_fold_size_cap);
    RUN(test_simplify);
    RUN(test_dce);
    RUN(test_training_step);
    RUN(test_pool_grad);
    RUN(test_random_graphs);
    return tt_finish();
}
