/* Random ops as graph nodes and state updated by ops: training-mode
 * dropout draws from its generator at every run (the generator's state
 * is a variable of the graph, held by reference), giving eager mode's
 * numbers for the same seed and sequence of draws, at every optimization
 * level and with both executors; so do uniform and normal draws of a
 * shape given as values (tg_rand_uniform_by, tg_rand_normal_by), whose
 * dims may be known only when the graph runs; batch-norm training updates
 * its running statistics through assign nodes, as eager mode does. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define DIMS(...) (const int64_t[]){__VA_ARGS__}

static tg_session *session(tg_graph *g, int level, bool parallel)
{
    tg_session *s = tg_session_new(g);
    tg_session_options o = tg_session_default_options();
    o.opt_level = level;
    tg_session_set_options(s, &o);
    if (parallel)
        tg_session_set_executor(s, TG_EXECUTOR_PARALLEL);
    return s;
}

/* two dropouts on one generator, run 3 times: eager's masks, in order */
static void check_dropout(int level, bool parallel)
{
    tg_scope_begin();
    tg_generator *ga = tg_generator_new(5), *gb = tg_generator_new(5);
    tg_graph *g = tg_graph_new("dropout");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, DIMS(-1, 50));
    tg_tensor *y1 = tg_dropout(x, 0.3, true, ga);
    tg_tensor *y2 = tg_dropout(tg_relu(x), 0.5, true, ga);
    CHECK(y1 && y2);
    CHECK_SHAPE(y1, -1, 50);
    tg_session *s = session(g, level, parallel);
    tg_tensor *prev = NULL;
    for (int k = 0; k < 3; k++) {
        tg_tensor *xv = tt_rand_dtype(TG_FLOAT32, 2, DIMS(k + 2, 50), 0.5, 1.5), *out[2];
        CHECK_OK(tg_session_run(s, 1, &x, &xv, 2, (tg_tensor *[]){y1, y2}, out, 0, NULL));
        tg_tensor *e1 = tg_dropout(xv, 0.3, true, gb);
        tg_tensor *e2 = tg_dropout(tg_relu(xv), 0.5, true, gb);
        CHECK(tt_rel_diff(out[0], e1, 1e-30) == 0);
        CHECK(tt_rel_diff(out[1], e2, 1e-30) == 0);
        /* new numbers every run: never folded to a constant mask */
        if (prev && tg_size(prev, 0) == 2)
            CHECK(tt_rel_diff(out[0], prev, 1e-30) != 0);
        prev = out[0];
    }
    /* the generators advanced alike */
    CHECK(tg_generator_next(ga) == tg_generator_next(gb));
    tg_session_free(s);
    tg_graph_free(g);
    tg_generator_free(ga);
    tg_generator_free(gb);
    tg_scope_end();
}

static void test_dropout_levels(void)
{
    for (int level = 0; level <= 2; level++)
        for (int par = 0; par < 2; par++)
            check_dropout(level, par);
}

/* the same dropout twice (same input, same p): two draws, not one merged
 * node; a dropout of a constant is not folded; unfetched draws do not run */
static void test_passes_respect_random(void)
{
    tg_scope_begin();
    tg_generator *ga = tg_generator_new(9), *gb = tg_generator_new(9);
    tg_graph *g = tg_graph_new("cse");
    tg_tensor *c = tt_rand_dtype(TG_FLOAT32, 1, DIMS(64), 0.5, 1.5);
    tg_graph_begin(g);
    tg_tensor *a = tg_dropout(c, 0.5, true, ga), *b = tg_dropout(c, 0.5, true, ga);
    tg_tensor *unused = tg_dropout(c, 0.5, true, ga);
    tg_graph_end();
    CHECK(unused != NULL);
    tg_session *s = session(g, 2, false);
    for (int k = 0; k < 2; k++) {
        tg_tensor *out[2];
        CHECK_OK(tg_session_run(s, 0, NULL, NULL, 2, (tg_tensor *[]){a, b}, out, 0, NULL));
        CHECK(tt_rel_diff(out[0], out[1], 1e-30) != 0); /* not merged */
        CHECK(tt_rel_diff(out[0], tg_dropout(c, 0.5, true, gb), 1e-30) == 0);
        CHECK(tt_rel_diff(out[1], tg_dropout(c, 0.5, true, gb), 1e-30) == 0);
    }
    CHECK(tg_generator_next(ga) == tg_generator_next(gb)); /* `unused` never drew */
    tg_session_free(s);
    tg_graph_free(g);
    tg_generator_free(ga);
    tg_generator_free(gb);
    tg_scope_end();
}

/* gradients through the mask; the graph outlives the generator */
static void test_dropout_gradient(void)
{
    tg_scope_begin();
    tg_generator *ga = tg_generator_new(2), *gb = tg_generator_new(2);
    tg_graph *g = tg_graph_new("grad");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 2, DIMS(-1, 8)), *gx;
    tg_tensor *l = tg_sum(tg_mul(tg_dropout(x, 0.25, true, ga), x), 0, NULL, false);
    CHECK_OK(tg_graph_gradients(g, 1, &l, NULL, 1, &x, &gx));
    tg_generator_free(ga); /* the graph holds its state */
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tt_rand(2, DIMS(3, 8), -1, 1), *out[2];
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 2, (tg_tensor *[]){l, gx}, out, 0, NULL));
    tg_tensor *el = tg_sum(tg_mul(tg_dropout(xv, 0.25, true, gb), xv), 0, NULL, false), *eg;
    CHECK_OK(tg_autograd_grad(1, &el, NULL, 1, &xv, &eg, false, false));
    CHECK(tt_rel_diff(out[0], el, 1e-30) == 0);
    CHECK(tt_rel_diff(out[1], eg, 1e-30) == 0);
    tg_release(eg); /* tg_autograd_grad's result: no scope owns it */
    tg_session_free(s);
    tg_graph_free(g);
    tg_generator_free(gb);
    tg_scope_end();
}

/* batch norm training in a graph: y, the running statistics and the
 * batch count after each run equal eager mode's, bitwise */
static void test_batch_norm_training(void)
{
    tg_scope_begin();
    tg_module *mg = tg_nn_batch_norm2d(3, 1e-5, 0.1, true, true);
    tg_module *me = tg_nn_batch_norm2d(3, 1e-5, 0.1, true, true);
    tg_graph *g = tg_graph_new("bn");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, DIMS(-1, 3, 4, 4));
    tg_graph_begin(g);
    tg_tensor *y = tg_module_forward(mg, x);
    tg_graph_end();
    CHECK(y != NULL);
    tg_named_tensor *bg, *be;
    int nb = tg_module_state(mg, &bg);
    CHECK(nb == 5 && tg_module_state(me, &be) == 5);
    tg_session *s = tg_session_new(g);
    for (int k = 0; k < 3; k++) {
        tg_tensor *xv = tt_rand_dtype(TG_FLOAT32, 4, DIMS(2 + k, 3, 4, 4), -1, 2), *out;
        CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &y, &out, 0, NULL));
        CHECK(tt_rel_diff(out, tg_module_forward(me, xv), 1e-30) == 0);
        for (int i = 0; i < nb; i++)
            CHECK(tt_rel_diff(bg[i].tensor, be[i].tensor, 1e-30) == 0);
    }
    for (int i = 0; i < nb; i++)
        if (!strcmp(bg[i].name, "num_batches_tracked"))
            CHECK(tg_item(bg[i].tensor) == 3);
    /* eval mode reads the statistics the graph updated */
    tg_module_train(mg, false);
    tg_module_train(me, false);
    tg_tensor *xv = tt_rand_dtype(TG_FLOAT32, 4, DIMS(2, 3, 4, 4), -1, 2);
    CHECK(tt_rel_diff(tg_module_forward(mg, xv), tg_module_forward(me, xv), 1e-30) == 0);
    tg_named_tensors_free(bg);
    tg_named_tensors_free(be);
    tg_session_free(s);
    tg_graph_free(g);
    tg_module_free(mg);
    tg_module_free(me);
    tg_scope_end();
}

/* running statistics already used as constants cannot become state */
static void test_batch_norm_errors(void)
{
    tg_scope_begin();
    tg_tensor *rm = tg_zeros(TG_FLOAT32, 1, DIMS(3)), *rv = tg_ones(TG_FLOAT32, 1, DIMS(3));
    tg_graph *g = tg_graph_new("bn_err");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, DIMS(2, 3, 4, 4));
    tg_graph_begin(g);
    tg_tensor *c = tg_add(x, tg_reshape(rm, 4, DIMS(1, 3, 1, 1)));
    CHECK_ERROR(tg_batch_norm(c, rm, rv, NULL, NULL, true, 0.1, 1e-5), TG_ERR_ARG,
                "make it a variable");
    tg_graph_end();
    tg_module *m = tg_nn_batch_norm2d(3, 1e-5, TG_NN_MOMENTUM_CUMULATIVE, true, true);
    tg_graph_begin(g);
    CHECK_ERROR(tg_module_forward(m, x), TG_ERR_UNSUPPORTED, "cumulative");
    tg_graph_end();
    tg_module_free(m);
    tg_graph_free(g);
    tg_scope_end();
}

/* a small CNN with batch norm and dropout, trained 12 SGD steps with
 * momentum on random data of varying batch sizes, from ONE graph (an
 * unknown batch) and eagerly: the same losses, parameters and running
 * statistics, bitwise (the synthetic counterpart of tests/cli/lenet_bn.sh) */
static tg_module *bn_cnn(tg_generator *init, tg_generator *drop)
{
    tg_module *net = tg_nn_sequential(0, NULL);
    const tg_pool2d_opts pool = {.kernel = {2, 2}};
    tg_module_add(net, "conv", tg_nn_conv2d(1, 4, 3, 3, NULL, true, init));
    tg_module_add(net, "bn", tg_nn_batch_norm2d(4, 1e-5, 0.1, true, true));
    tg_module_add(net, "relu", tg_nn_relu());
    tg_module_add(net, "pool", tg_nn_max_pool2d(&pool));
    tg_module_add(net, "flatten", tg_nn_flatten(1, -1));
    tg_module_add(net, "drop", tg_nn_dropout(0.3, drop));
    tg_module_add(net, "fc", tg_nn_linear(36, 5, true, init));
    return net;
}

static void test_lenet_bn_synthetic(void)
{
    tg_scope_begin();
    tg_generator *ia = tg_generator_new(4), *ib = tg_generator_new(4);
    tg_generator *da = tg_generator_new(8), *db = tg_generator_new(8);
    tg_generator *data = tg_generator_new(1);
    tg_module *ma = bn_cnn(ia, da), *mb = bn_cnn(ib, db);
    tg_named_tensor *pa, *pb, *sa, *sb;
    int n = tg_module_parameters(ma, &pa);
    CHECK(n == 6 && tg_module_parameters(mb, &pb) == 6);
    int ns = tg_module_state(ma, &sa);
    CHECK(tg_module_state(mb, &sb) == ns);
    tg_tensor *params_a[6], *params_b[6], *vars[6], *updates[6];
    tg_graph *g = tg_graph_new("bn_cnn_step");
    for (int i = 0; i < n; i++) {
        params_a[i] = pa[i].tensor;
        params_b[i] = pb[i].tensor;
        vars[i] = tg_variable_ref(g, pa[i].name, params_a[i]);
    }
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, DIMS(-1, 1, 8, 8));
    tg_tensor *y = tg_placeholder(g, "y", TG_INT64, 1, DIMS(-1));
    tg_graph_begin(g);
    tg_tensor *loss = tg_cross_entropy(tg_module_forward(ma, x), y, TG_REDUCTION_MEAN);
    tg_graph_end();
    CHECK(loss != NULL);
    tg_sgd_opts o = tg_sgd_defaults();
    o.lr = 0.05;
    o.momentum = 0.9;
    CHECK_OK(tg_graph_sgd(loss, n, vars, &o, NULL, updates));
    tg_optimizer *opt = tg_optim_sgd(n, params_b, &o);
    tg_session *s = tg_session_new(g);
    const int64_t batches[] = {8, 5, 8, 3};
    for (int k = 0; k < 12; k++) {
        tg_scope_begin();
        int64_t b = batches[k % 4];
        tg_tensor *xv = tg_rand_normal(data, TG_FLOAT32, 4, DIMS(b, 1, 8, 8), 0, 1);
        tg_tensor *yv = tg_cast(tg_mul_scalar(tg_rand_uniform(data, TG_FLOAT32, 1, &b, 0, 1), 4.99),
                                TG_INT64);
        tg_tensor *lg;
        CHECK_OK(tg_session_run(s, 2, (tg_tensor *[]){x, y}, (tg_tensor *[]){xv, yv}, 1, &loss,
                                &lg, n, updates));
        tg_tensor *le = tg_cross_entropy(tg_module_forward(mb, xv), yv, TG_REDUCTION_MEAN);
        tg_optim_zero_grad(opt);
        CHECK_OK(tg_backward(le, NULL, false));
        CHECK_OK(tg_optim_step(opt));
        CHECK(tg_item(lg) == tg_item(le));
        tg_scope_end();
    }
    for (int i = 0; i < ns; i++) /* parameters and buffers (bn statistics) */
        CHECK(tt_rel_diff(sa[i].tensor, sb[i].tensor, 1e-30) == 0);
    tg_session_stats st;
    tg_session_get_stats(s, &st);
    CHECK(st.n_plans == 3); /* batches 8, 5, 3 */
    tg_session_free(s);
    tg_graph_free(g);
    tg_optim_free(opt);
    tg_named_tensors_free(pa);
    tg_named_tensors_free(pb);
    tg_named_tensors_free(sa);
    tg_named_tensors_free(sb);
    tg_module_free(ma);
    tg_module_free(mb);
    tg_generator_free(ia);
    tg_generator_free(ib);
    tg_generator_free(da);
    tg_generator_free(db);
    tg_generator_free(data);
    tg_scope_end();
}

static tg_tensor *dims_of(int n, const int64_t *v)
{
    return tg_from_data(TG_INT64, 1, (int64_t[]){n}, v);
}

/* eagerly the _by forms draw tg_rand_uniform's and tg_rand_normal's
 * numbers (an odd count: Box-Muller's last pair half used) */
static void test_draws_by_eager(void)
{
    tg_scope_begin();
    for (int k = 0; k < 2; k++) {
        tg_dtype dt = k ? TG_FLOAT64 : TG_FLOAT32;
        tg_generator *ga = tg_generator_new(3), *gb = tg_generator_new(3);
        tg_tensor *shape = dims_of(2, DIMS(3, 5));
        tg_tensor *u = tg_rand_uniform_by(ga, shape, dt, -2, 3);
        tg_tensor *n = tg_rand_normal_by(ga, shape, dt, 1, 0.5);
        CHECK(u && n && tg_dtype_of(u) == dt && !tg_is_symbolic(u));
        CHECK_SHAPE(n, 3, 5);
        CHECK(tt_rel_diff(u, tg_rand_uniform(gb, dt, 2, DIMS(3, 5), -2, 3), 1e-30) == 0);
        CHECK(tt_rel_diff(n, tg_rand_normal(gb, dt, 2, DIMS(3, 5), 1, 0.5), 1e-30) == 0);
        CHECK(tg_generator_next(ga) == tg_generator_next(gb));
        CHECK_SHAPE(tg_rand_normal_by(ga, dims_of(1, DIMS(0)), dt, 0, 1), 0); /* empty */
        tg_generator_free(ga);
        tg_generator_free(gb);
    }
    tg_scope_end();
}

/* in a graph: a uniform draw shaped like a placeholder of unknown rows and
 * a normal one of a constant shape, new numbers every run, eager's numbers
 * in creation order, at every level and with both executors */
static void check_draws_by_graph(int level, bool parallel)
{
    tg_scope_begin();
    tg_generator *ga = tg_generator_new(11), *gb = tg_generator_new(11);
    tg_graph *g = tg_graph_new("draws");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, DIMS(-1, 7));
    tg_tensor *u = tg_rand_uniform_by(ga, tg_shape_of(x), TG_FLOAT32, 0, 1);
    CHECK(u && tg_is_symbolic(u));
    CHECK_SHAPE(u, -1, 7); /* shape_of(x): x's known dims kept */
    tg_tensor *y = tg_add(x, u);
    tg_graph_begin(g);
    tg_tensor *n = tg_rand_normal_by(ga, dims_of(2, DIMS(2, 3)), TG_FLOAT64, 0, 1);
    tg_graph_end();
    CHECK(n && tg_is_symbolic(n));
    CHECK_SHAPE(n, 2, 3);
    tg_session *s = session(g, level, parallel);
    tg_tensor *prev = NULL;
    for (int k = 0; k < 3; k++) {
        tg_tensor *xv = tt_rand_dtype(TG_FLOAT32, 2, DIMS(k + 1, 7), -1, 1), *out[2];
        CHECK_OK(tg_session_run(s, 1, &x, &xv, 2, (tg_tensor *[]){y, n}, out, 0, NULL));
        tg_tensor *ue = tg_rand_uniform(gb, TG_FLOAT32, 2, DIMS(k + 1, 7), 0, 1);
        tg_tensor *ne = tg_rand_normal(gb, TG_FLOAT64, 2, DIMS(2, 3), 0, 1);
        CHECK(tt_rel_diff(out[0], tg_add(xv, ue), 1e-30) == 0);
        CHECK(tt_rel_diff(out[1], ne, 1e-30) == 0);
        if (prev)
            CHECK(tt_rel_diff(out[1], prev, 1e-30) != 0); /* never folded */
        prev = out[1];
    }
    CHECK(tg_generator_next(ga) == tg_generator_next(gb));
    tg_session_free(s);
    tg_graph_free(g);
    tg_generator_free(ga);
    tg_generator_free(gb);
    tg_scope_end();
}

static void test_draws_by_graph(void)
{
    for (int level = 0; level <= 2; level++)
        for (int par = 0; par < 2; par++)
            check_draws_by_graph(level, par);
}

/* two equal draws of a constant shape are two nodes, not one merged one */
static void test_draws_not_merged(void)
{
    tg_scope_begin();
    tg_generator *gen = tg_generator_new(2);
    tg_graph *g = tg_graph_new("merge");
    tg_tensor *shape = dims_of(1, DIMS(16));
    tg_graph_begin(g);
    tg_tensor *a = tg_rand_uniform_by(gen, shape, TG_FLOAT32, 0, 1);
    tg_tensor *b = tg_rand_uniform_by(gen, shape, TG_FLOAT32, 0, 1);
    tg_graph_end();
    tg_session *s = session(g, 2, false);
    tg_tensor *out[2];
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 2, (tg_tensor *[]){a, b}, out, 0, NULL));
    CHECK(tt_rel_diff(out[0], out[1], 1e-30) != 0);
    tg_session_free(s);
    tg_graph_free(g);
    tg_generator_free(gen);
    tg_scope_end();
}

static void test_draws_by_errors(void)
{
    tg_scope_begin();
    tg_generator *gen = tg_generator_new(1);
    tg_tensor *shape = dims_of(1, DIMS(4));
    CHECK_ERROR(tg_rand_uniform_by(NULL, shape, TG_FLOAT32, 0, 1), TG_ERR_ARG, "generator");
    CHECK_ERROR(tg_rand_normal_by(gen, NULL, TG_FLOAT32, 0, 1), TG_ERR_ARG, "shape");
    CHECK_ERROR(tg_rand_uniform_by(gen, shape, TG_INT32, 0, 1), TG_ERR_DTYPE, "float");
    CHECK_ERROR(tg_rand_normal_by(gen, dims_of(1, DIMS(-3)), TG_FLOAT32, 0, 1), TG_ERR_SHAPE,
                "is -3");
    CHECK_ERROR(tg_rand_normal_by(gen, tg_zeros(TG_FLOAT64, 1, DIMS(2)), TG_FLOAT32, 0, 1),
                TG_ERR_DTYPE, NULL); /* float64 dims */
    CHECK_ERROR(tg_rand_normal_by(gen, tg_zeros(TG_INT64, 2, DIMS(1, 2)), TG_FLOAT32, 0, 1),
                TG_ERR_SHAPE, "1-D");
    /* a negative dim fed when the graph runs: an error, the session intact */
    tg_graph *g = tg_graph_new("bad");
    tg_tensor *d = tg_placeholder(g, "dims", TG_INT64, 1, DIMS(2));
    tg_tensor *u = tg_rand_uniform_by(gen, d, TG_FLOAT64, 0, 1);
    CHECK(u != NULL);
    tg_session *s = tg_session_new(g);
    tg_tensor *out = NULL, *bad = dims_of(2, DIMS(2, -1)), *good = dims_of(2, DIMS(2, 2));
    CHECK(tg_session_run(s, 1, &d, &bad, 1, &u, &out, 0, NULL) == TG_ERR_SHAPE);
    CHECK_OK(tg_session_run(s, 1, &d, &good, 1, &u, &out, 0, NULL));
    CHECK_SHAPE(out, 2, 2);
    tg_session_free(s);
    tg_graph_free(g);
    tg_generator_free(gen);
    tg_scope_end();
}

int main(void)
{
    RUN(test_dropout_levels);
    RUN(test_draws_by_eager);
    RUN(test_draws_by_graph);
    RUN(test_draws_not_merged);
    RUN(test_draws_by_errors);
    RUN(test_passes_respect_random);
    RUN(test_dropout_gradient);
    RUN(test_batch_norm_training);
    RUN(test_batch_norm_errors);
    RUN(test_lenet_bn_synthetic);
    return tt_finish();
}
