/* Graphs with unknown dims (-1, a symbolic batch): shape inference keeps
 * a dim unknown where it depends on one; a session specialises a plan to
 * each feed-shape signature and caches it; results and gradients equal
 * eager mode's for every batch size; wrong feeds are refused clearly. */
#include "harness.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define DIMS(...) (const int64_t[]){__VA_ARGS__}

static tg_tensor *ph(tg_graph *g, const char *name, tg_dtype dt, int nd, const int64_t *s)
{
    return tg_placeholder(g, name, dt, nd, s);
}

/* inference through elementwise, matmul, conv, pool, reshape(-1), reductions */
static void test_propagation(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("infer");
    tg_tensor *x = ph(g, "x", TG_FLOAT32, 4, DIMS(-1, 3, 8, 8));
    tg_tensor *w = tt_rand_dtype(TG_FLOAT32, 4, DIMS(4, 3, 3, 3), -1, 1);
    tg_tensor *y = tg_conv2d(x, w, NULL, NULL);
    CHECK_SHAPE(y, -1, 4, 6, 6);
    CHECK(tg_numel(y) == -1);
    tg_tensor *p = tg_max_pool2d(tg_relu(y), &(tg_pool2d_opts){{2, 2}, {0, 0}, {0, 0}, false, false});
    CHECK_SHAPE(p, -1, 4, 3, 3);
    tg_tensor *f = tg_reshape(p, 2, DIMS(-1, 36));
    CHECK_SHAPE(f, -1, 36);
    tg_tensor *fl = tg_flatten(p, 1, -1);
    CHECK_SHAPE(fl, -1, 36);
    tg_tensor *lw = tt_rand_dtype(TG_FLOAT32, 2, DIMS(5, 36), -1, 1);
    tg_tensor *lb = tt_rand_dtype(TG_FLOAT32, 1, DIMS(5), -1, 1);
    tg_tensor *l = tg_linear(f, lw, lb);
    CHECK_SHAPE(l, -1, 5);
    CHECK_SHAPE(tg_add(l, lb), -1, 5);
    CHECK_SHAPE(tg_sum(l, 1, (const int[]){0}, false), 5);
    CHECK_SHAPE(tg_sum(l, 1, (const int[]){1}, true), -1, 1);
    CHECK_SHAPE(tg_mean(l, 0, NULL, false));
    CHECK_SHAPE(tg_matmul(l, tt_rand_dtype(TG_FLOAT32, 2, DIMS(5, 2), -1, 1)), -1, 2);
    /* two unknown dims, broadcasting against 1 */
    tg_tensor *a = ph(g, "a", TG_FLOAT32, 2, DIMS(-1, -1));
    CHECK_SHAPE(tg_mul(a, a), -1, -1);
    tg_tensor *c = ph(g, "c", TG_FLOAT32, 2, DIMS(-1, 1));
    CHECK_SHAPE(tg_add(c, tt_rand_dtype(TG_FLOAT32, 2, DIMS(1, 4), -1, 1)), -1, 4);
    CHECK_SHAPE(tg_permute(a, (const int[]){1, 0}), -1, -1);
    /* an unknown dim that must equal a known size: refused at build time */
    tg_tensor *k = ph(g, "k", TG_FLOAT32, 2, DIMS(3, -1));
    CHECK_ERROR(tg_matmul(k, tt_rand_dtype(TG_FLOAT32, 2, DIMS(5, 2), -1, 1)), TG_ERR_SHAPE,
                "unknown dims (-1)");
    /* placeholders take -1 only */
    CHECK_ERROR(ph(g, "bad", TG_FLOAT32, 1, DIMS(-2)), TG_ERR_SHAPE, "dim 0 is -2");
    tg_graph_free(g);
    tg_scope_end();
}

/* a small CNN: conv, relu, pool, reshape(-1), linear, cross-entropy mean */
typedef struct cnn {
    tg_tensor *w, *b, *lw, *lb;
} cnn;

static tg_tensor *cnn_loss(const cnn *m, tg_tensor *x, tg_tensor *y, tg_tensor **logits)
{
    tg_tensor *h = tg_relu(tg_conv2d(x, m->w, m->b, NULL));
    h = tg_max_pool2d(h, &(tg_pool2d_opts){{2, 2}, {0, 0}, {0, 0}, false, false});
    h = tg_reshape(h, 2, DIMS(-1, 36));
    *logits = tg_linear(h, m->lw, m->lb);
    /* a mean over the batch, too, through its own gradient rule */
    tg_tensor *reg = tg_mean(tg_mul(*logits, *logits), 0, NULL, false);
    return tg_add(tg_cross_entropy(*logits, y, TG_REDUCTION_MEAN), tg_mul_scalar(reg, 0.01));
}

static void make_cnn(cnn *m, tg_dtype dt)
{
    m->w = tt_rand_dtype(dt, 4, DIMS(4, 3, 3, 3), -0.5, 0.5);
    m->b = tt_rand_dtype(dt, 1, DIMS(4), -0.5, 0.5);
    m->lw = tt_rand_dtype(dt, 2, DIMS(5, 36), -0.5, 0.5);
    m->lb = tt_rand_dtype(dt, 1, DIMS(5), -0.5, 0.5);
    tg_set_requires_grad(m->w, true);
    tg_set_requires_grad(m->b, true);
    tg_set_requires_grad(m->lw, true);
    tg_set_requires_grad(m->lb, true);
}

static tg_tensor *labels(int64_t n, int seed)
{
    double v[16];
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)((i * 7 + seed) % 5);
    return tt_tensor(TG_INT64, 1, &n, v);
}

/* one graph for every batch size: forward, loss and gradients equal eager's */
static void test_cnn_any_batch(tg_dtype dt)
{
    tg_scope_begin();
    cnn m;
    make_cnn(&m, dt);
    tg_tensor *params[4] = {m.w, m.b, m.lw, m.lb};
    tg_graph *g = tg_graph_new("cnn");
    tg_tensor *vars[4];
    for (int i = 0; i < 4; i++)
        vars[i] = tg_variable_ref(g, NULL, params[i]);
    tg_tensor *x = ph(g, "x", dt, 4, DIMS(-1, 3, 8, 8));
    tg_tensor *y = ph(g, "y", TG_INT64, 1, DIMS(-1));
    CHECK_OK(tg_graph_begin(g));
    tg_tensor *logits, *loss = cnn_loss(&m, x, y, &logits);
    tg_graph_end();
    CHECK(loss != NULL);
    CHECK_SHAPE(logits, -1, 5);
    CHECK_SHAPE(loss);
    tg_tensor *grads[4];
    CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 4, vars, grads));
    CHECK_SHAPE(grads[0], 4, 3, 3, 3);
    tg_session *s = tg_session_new(g);
    const int64_t batches[] = {4, 3, 4, 1, 3};
    for (int k = 0; k < 5; k++) {
        int64_t n = batches[k];
        tg_tensor *xv = tt_rand_dtype(dt, 4, DIMS(n, 3, 8, 8), -1, 1), *yv = labels(n, k);
        tg_tensor *fetch[6] = {loss, logits, grads[0], grads[1], grads[2], grads[3]}, *out[6];
        CHECK_OK(tg_session_run(s, 2, (tg_tensor *[]){x, y}, (tg_tensor *[]){xv, yv}, 6,
                                fetch, out, 0, NULL));
        /* eager, on the tape */
        tg_tensor *el, *eloss = cnn_loss(&m, xv, yv, &el), *eg[4];
        CHECK_OK(tg_autograd_grad(1, &eloss, NULL, 4, params, eg, false, false));
        CHECK_SHAPE(out[1], n, 5);
        CHECK(tt_rel_diff(out[0], eloss, 1e-30) == 0); /* forward: bitwise */
        CHECK(tt_rel_diff(out[1], el, 1e-30) == 0);
        /* gradients: sums over the batch may run in another order */
        double tol = dt == TG_FLOAT64 ? 1e-12 : 1e-4;
        for (int i = 0; i < 4; i++) {
            CHECK(tt_rel_diff(out[2 + i], eg[i], 1e-3) < tol);
            tg_release(eg[i]); /* tg_autograd_grad's results: no scope owns them */
        }
    }
    /* one plan per feed-shape signature: batches 4, 3, 1 */
    tg_session_stats st;
    tg_session_get_stats(s, &st);
    CHECK(st.plan_misses == 3);
    CHECK(st.plan_hits == 2);
    CHECK(st.n_plans == 3);
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

static void test_cnn_float64(void) { test_cnn_any_batch(TG_FLOAT64); }
static void test_cnn_float32(void) { test_cnn_any_batch(TG_FLOAT32); }

/* reductions and their gradients over unknown dims: sum, mean (the count
 * at run time), both kept and dropped axes, and two unknown dims */
static tg_tensor *red_fn(tg_tensor *a)
{
    tg_tensor *s0 = tg_sum(a, 1, (const int[]){0}, false);
    tg_tensor *m1 = tg_mean(a, 1, (const int[]){1}, true);
    tg_tensor *ma = tg_mean(tg_exp(a), 0, NULL, false);
    return tg_add(tg_add(tg_sum(tg_mul(s0, s0), 0, NULL, false),
                         tg_sum(tg_mul(m1, m1), 0, NULL, false)), ma);
}

static void test_reduction_gradients(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("red");
    tg_tensor *a = ph(g, "a", TG_FLOAT64, 2, DIMS(-1, -1));
    tg_tensor *r = red_fn(a), *ga;
    CHECK_SHAPE(r);
    CHECK_OK(tg_graph_gradients(g, 1, &r, NULL, 1, &a, &ga));
    CHECK_SHAPE(ga, -1, -1);
    tg_session *s = tg_session_new(g);
    const int64_t shapes[3][2] = {{3, 4}, {5, 2}, {1, 1}};
    for (int k = 0; k < 3; k++) {
        tg_tensor *av = tt_rand(2, shapes[k], -1, 1), *out[2];
        CHECK_OK(tg_session_run(s, 1, &a, &av, 2, (tg_tensor *[]){r, ga}, out, 0, NULL));
        tg_tensor *er = red_fn(av), *eg;
        CHECK_OK(tg_autograd_grad(1, &er, NULL, 1, &av, &eg, false, false));
        CHECK(tt_rel_diff(out[0], er, 1e-30) < 1e-14);
        CHECK(tt_rel_diff(out[1], eg, 1e-3) < 1e-12);
        tg_release(eg);
    }
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* wrong feeds: another rank, another known dim, no tensors to plan with */
static void test_wrong_feeds(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("feeds");
    tg_tensor *x = ph(g, "x", TG_FLOAT32, 2, DIMS(-1, 3));
    tg_tensor *y = tg_relu(x), *out;
    tg_session *s = tg_session_new(g);
    tg_tensor *bad_rank = tg_zeros(TG_FLOAT32, 3, DIMS(2, 3, 1));
    CHECK_FAILS(tg_session_run(s, 1, &x, &bad_rank, 1, &y, &out, 0, NULL), TG_ERR_SHAPE,
                "a different rank");
    tg_tensor *bad_dim = tg_zeros(TG_FLOAT32, 2, DIMS(2, 4));
    CHECK_FAILS(tg_session_run(s, 1, &x, &bad_dim, 1, &y, &out, 0, NULL), TG_ERR_SHAPE,
                "expected float32[-1, 3]");
    tg_memory_stats ms;
    CHECK_FAILS(tg_session_memory_stats(s, 1, &x, 1, &y, 0, NULL, &ms), TG_ERR_ARG,
                "unknown dims (-1)");
    tg_tensor *good = tg_ones(TG_FLOAT32, 2, DIMS(7, 3));
    CHECK_OK(tg_session_run(s, 1, &x, &good, 1, &y, &out, 0, NULL));
    CHECK_SHAPE(out, 7, 3);
    /* an unknown dim fed as 0 */
    tg_tensor *empty = tg_ones(TG_FLOAT32, 2, DIMS(0, 3));
    CHECK_OK(tg_session_run(s, 1, &x, &empty, 1, &y, &out, 0, NULL));
    CHECK_SHAPE(out, 0, 3);
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* reshape targets with several -1: tg_size of the unknown batch is -1, so
 * {tg_size(x, 0), -1} keeps the batch and infers the rest (equal to eager
 * for every batch size, through both reshape and view, and a dim after
 * the batch: {-1, 2, -1}); other targets fail clearly, eager ones as ever */
static void test_reshape_unknown_dims(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("reshape");
    tg_tensor *x = ph(g, "x", TG_FLOAT64, 3, DIMS(-1, 3, 4));
    tg_graph_begin(g);
    tg_tensor *y = tg_reshape(x, 2, DIMS(tg_size(x, 0), -1));
    tg_tensor *z = tg_view(tg_mul_scalar(x, 2), 3, DIMS(-1, 2, -1));
    CHECK(y && z);
    CHECK_SHAPE(y, -1, 12);
    CHECK_SHAPE(z, -1, 2, 6);
    CHECK_ERROR(tg_reshape(x, 3, DIMS(-1, 5, -1)), TG_ERR_SHAPE,
                "reshape: cannot reshape [-1, 3, 4] into [-1, 5, -1]: the known sizes");
    CHECK_ERROR(tg_reshape(x, 3, DIMS(12, -1, -1)), TG_ERR_SHAPE, "only one -1 can be inferred");
    tg_tensor *w = ph(g, "w", TG_FLOAT64, 3, DIMS(-1, -1, 4));
    CHECK_ERROR(tg_reshape(w, 2, DIMS(-1, -1)), TG_ERR_SHAPE,
                "cannot reshape [-1, -1, 4] into [-1, -1]: only one -1 can be inferred");
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    for (int64_t b = 1; b <= 5; b += 2) {
        tg_tensor *xv = tt_rand(3, DIMS(b, 3, 4), -1, 1), *out[2];
        CHECK_OK(tg_session_run(s, 1, &x, &xv, 2, (tg_tensor *[]){y, z}, out, 0, NULL));
        CHECK(tt_same(out[0], tg_reshape(xv, 2, DIMS(b, 12))));
        CHECK(tt_same(out[1], tg_reshape(tg_mul_scalar(xv, 2), 3, DIMS(b, 2, 6))));
    }
    /* eager: two -1 stay an error */
    CHECK_ERROR(tg_reshape(tg_zeros(TG_FLOAT64, 2, DIMS(2, 6)), 2, DIMS(-1, -1)), TG_ERR_SHAPE,
                "only one -1 is allowed");
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* ONNX: an unknown batch is exported as dim_param "batch"; importing it
 * in graph mode gives a -1 placeholder that runs any batch size */
static void test_onnx_symbolic_batch(void)
{
    tg_scope_begin();
    tg_generator *gen = tg_generator_new(11);
    tg_module *net = tg_lenet5(gen);
    char path[128];
    snprintf(path, sizeof path, "/tmp/tg_dynshape_%ld.onnx", (long)getpid());
    CHECK_OK(tg_onnx_export_module(net, 4, DIMS(-1, 1, 28, 28), path));
    tg_onnx_model *m = tg_onnx_load(path);
    CHECK(m != NULL);
    if (m) {
        tg_onnx_value_info in, out;
        CHECK_OK(tg_onnx_input_info(m, 0, &in));
        CHECK(in.ndim == 4 && in.shape[0] == -1 && in.dim_param[0] &&
              !strcmp(in.dim_param[0], "batch") && in.shape[1] == 1 && !in.dim_param[1]);
        CHECK_OK(tg_onnx_output_info(m, 0, &out));
        CHECK(out.ndim == 2 && out.shape[0] == -1 && out.dim_param[0] &&
              !strcmp(out.dim_param[0], "batch") && out.shape[1] == 10);
        tg_graph *g = tg_graph_new("imported");
        CHECK_OK(tg_graph_begin(g));
        tg_onnx_net *on = tg_onnx_build(m, 0, NULL, NULL, NULL);
        tg_graph_end();
        CHECK(on != NULL);
        if (on) {
            tg_tensor *x = tg_onnx_net_input(on, 0), *y = tg_onnx_net_output(on, 0);
            CHECK_SHAPE(x, -1, 1, 28, 28);
            CHECK_SHAPE(y, -1, 10);
            tg_session *s = tg_session_new(g);
            tg_module_train(net, false);
            for (int64_t n = 1; n <= 5; n += 2) {
                tg_tensor *xv = tg_rand_uniform(gen, TG_FLOAT32, 4, DIMS(n, 1, 28, 28), 0, 1);
                tg_tensor *yv = NULL;
                CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &y, &yv, 0, NULL));
                CHECK(tt_rel_diff(yv, tg_module_forward(net, xv), 1e-30) == 0);
            }
            tg_session_free(s);
        }
        tg_onnx_net_free(on);
        tg_graph_free(g);
    }
    tg_onnx_free(m);
    remove(path);
    tg_module_free(net);
    tg_generator_free(gen);
    tg_scope_end();
}

int main(void)
{
    RUN(test_propagation);
    RUN(test_cnn_float64);
    RUN(test_cnn_float32);
    RUN(test_reduction_gradients);
    RUN(test_wrong_feeds);
    RUN(test_reshape_unknown_dims);
    RUN(test_onnx_symbolic_batch);
    return tt_finish();
}
