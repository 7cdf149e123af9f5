/* The fusion passes of level 2 (docs/PASSES.md), the fusion part of
 * tests/test_passes.c: each on graphs made to exercise it (what it fused,
 * counted in its record) with results bitwise equal to the graph as built
 * (level 0) in both executors; where fusion must stop (values read twice,
 * fetched, of another shape, variables written in between); the fused
 * ops run directly (programs checked like op calls, clear errors). Runs
 * with TG_VERIFY_PASSES=1: the verifier checks the graph after every pass. */
#include "harness.h"
#include "ops/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct sig {
    int n_feeds, n_fetches, n_targets;
    tg_tensor **feeds, **vals, **fetches, **targets;
} sig;

/* the level-2 records of a signature; the graph's dump into *dump when asked */
static int records(tg_session *s, const sig *q, tg_pass_record *rec, char **dump)
{
    tt_set_opt_level(s, 2);
    int n = 0;
    tg_graph *g = tg_session_optimized_graph(s, q->n_feeds, q->feeds, NULL, q->n_fetches,
                                             q->fetches, q->n_targets, q->targets, 32, rec,
                                             &n);
    CHECK(g != NULL);
    if (dump && g) {
        size_t len = 0;
        FILE *f = open_memstream(dump, &len);
        CHECK_OK(tg_graph_dump(g, f));
        fclose(f);
    }
    tg_graph_free(g);
    return n;
}

/* runs the signature `runs` times at level 0 (serial) and at level 2 in
 * both executors, each from the same state (n_state variables set to
 * their init first); every fetch and the final state bitwise equal */
static void check_equal(tg_session *s, const sig *q, int runs, int n_state,
                        tg_tensor *const *vars, tg_tensor *const *inits)
{
    tg_tensor *r[3][8], *state[3][8];
    for (int c = 0; c < 3; c++) {
        for (int v = 0; v < n_state; v++)
            CHECK_OK(tg_copy_(tg_variable_value(vars[v]), inits[v]));
        tt_set_opt_level(s, c == 0 ? 0 : 2);
        CHECK_OK(tg_session_set_executor(s, c == 2 ? TG_EXECUTOR_PARALLEL
                                                   : TG_EXECUTOR_SERIAL));
        for (int k = 0; k < runs; k++)
            CHECK_OK(tg_session_run(s, q->n_feeds, q->feeds, q->vals, q->n_fetches, q->fetches,
                                    r[c], q->n_targets, q->targets));
        for (int v = 0; v < n_state; v++)
            state[c][v] = tg_clone(tg_variable_value(vars[v]));
    }
    for (int c = 1; c < 3; c++) {
        for (int i = 0; i < q->n_fetches; i++)
            if (!tt_same(r[c][i], r[0][i]))
                tt_fail(__FILE__, __LINE__, "fetch %d differs from level 0 (%s executor)",
                        i, c == 2 ? "parallel" : "serial");
        for (int v = 0; v < n_state; v++)
            if (!tt_same(state[c][v], state[0][v]))
                tt_fail(__FILE__, __LINE__, "variable %d differs from level 0 (%s executor)",
                        v, c == 2 ? "parallel" : "serial");
    }
    CHECK_OK(tg_session_set_executor(s, TG_EXECUTOR_SERIAL));
}

/* ---- elementwise chains ------------------------------------------------------------- */
/* relu(tanh(x * b + c) - t) * 0.5 over shapes that cut blocks differently:
 * one block, a range of a middle dim, a range of the last dim, split over
 * the pool (over 512 Ki elements), 0-d, empty; b and c broadcast, and t is
 * a transposed (strided) value for 2-d shapes */
static void test_chain_shapes(void)
{
    static const struct {
        int nd;
        int64_t s[3];
    } shapes[] = {{2, {3, 4}}, {3, {5, 7, 3000}}, {2, {2, 20000}}, {2, {1100, 1000}},
                  {0, {0}},    {2, {0, 5}},       {3, {4, 1, 9000}}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int nd = shapes[k].nd;
        const int64_t *S = shapes[k].s;
        tg_dtype dt = k % 2 ? TG_FLOAT64 : TG_FLOAT32;
        tg_graph *g = tg_graph_new("chain");
        tg_tensor *x = tg_placeholder(g, "x", dt, nd, S);
        int64_t ts[3] = {nd == 2 ? S[1] : 0, nd == 2 ? S[0] : 0};
        tg_tensor *tp = tg_placeholder(g, "tp", dt, nd == 2 ? 2 : nd, nd == 2 ? ts : S);
        tg_tensor *b = tt_rand_dtype(dt, nd ? 1 : 0, nd ? &S[nd - 1] : NULL, -1, 1);
        int64_t cs[3] = {S[0], 1, 1};
        tg_tensor *c = tt_rand_dtype(dt, nd, cs, -1, 1);
        tg_graph_begin(g);
        tg_tensor *t = nd == 2 ? tg_transpose(tp, 0, 1) : tp;
        tg_tensor *y = tg_mul_scalar(tg_relu(tg_sub(tg_tanh(tg_add(tg_mul(x, b), c)), t)), 0.5);
        tg_graph_end();
        tg_tensor *feeds[2] = {x, tp};
        tg_tensor *vals[2] = {tt_rand_dtype(dt, nd, S, -2, 2),
                              tt_rand_dtype(dt, nd == 2 ? 2 : nd, nd == 2 ? ts : S, -1, 1)};
        sig q = {2, 1, 0, feeds, vals, &y, NULL};
        tg_session *s = tg_session_new(g);
        tg_pass_record rec[32];
        char *dump = NULL;
        int n = records(s, &q, rec, &dump);
        if (tt_record_count(rec, n, "fuse_elementwise", "fused") != 1 ||
            tt_record_count(rec, n, "fuse_elementwise", "ops") != 6)
            tt_fail(__FILE__, __LINE__, "shape %zu: fused %d nodes of %d ops", k,
                    tt_record_count(rec, n, "fuse_elementwise", "fused"),
                    tt_record_count(rec, n, "fuse_elementwise", "ops"));
        CHECK(dump && strstr(dump, "fused_elementwise") &&
              strstr(dump, "program=\"mul(%0, %1); add($0, %2); tanh($1); sub($2, %3); "
                           "relu($3); mul($4, %4)\""));
        free(dump);
        check_equal(s, &q, 1, 0, NULL, NULL);
        tg_session_free(s);
        tg_graph_free(g);
    }
}

/* where fusion stops: a value read twice, a fetched intermediate, an
 * intermediate of a smaller shape (it would be computed per output
 * element), ops that are not elementwise */
static void test_chain_boundaries(void)
{
    tg_graph *g = tg_graph_new("bounds");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){3, 4});
    tg_tensor *v = tg_placeholder(g, "v", TG_FLOAT32, 1, (int64_t[]){4});
    tg_graph_begin(g);
    tg_tensor *a = tg_exp(x);
    tg_tensor *y1 = tg_neg(tg_add_scalar(a, 1)); /* fused: add, neg (a read twice) */
    tg_tensor *y2 = tg_mul(a, a);                /* alone: no fusion */
    tg_tensor *t = tg_tanh(x);
    tg_tensor *y3 = tg_relu(t);                  /* t fetched: no fusion */
    tg_tensor *y4 = tg_mul(x, tg_sin(tg_cos(v))); /* [4] with [3, 4]: cos+sin fused alone */
    tg_tensor *y5 = tg_sigmoid(tg_sum(tg_abs(x), 1, (int[]){1}, false)); /* a reduction */
    tg_graph_end();
    tg_tensor *fetch[6] = {y1, y2, t, y3, y4, y5}, *feeds[2] = {x, v};
    tg_tensor *vals[2] = {tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){3, 4}, -1, 1),
                          tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){4}, -1, 1)};
    sig q = {2, 6, 0, feeds, vals, fetch, NULL};
    tg_session *s = tg_session_new(g);
    tg_pass_record rec[32];
    int n = records(s, &q, rec, NULL);
    CHECK(tt_record_count(rec, n, "fuse_elementwise", "fused") == 2);
    CHECK(tt_record_count(rec, n, "fuse_elementwise", "ops") == 4);
    check_equal(s, &q, 1, 0, NULL, NULL);
    tg_session_free(s);
    tg_graph_free(g);
}

/* a read of a variable before an assign stays before it: r = w * 2 is not
 * moved into r + w, which reads the written w */
static void test_chain_around_assign(void)
{
    tg_graph *g = tg_graph_new("assign");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){5});
    tg_tensor *w0 = tt_rand(1, (int64_t[]){5}, -1, 1);
    tg_tensor *w = tg_variable(g, "w", tg_clone(w0));
    tg_graph_begin(g);
    tg_tensor *r = tg_mul_scalar(tg_exp(w), 2);
    tg_tensor *upd = tg_assign(w, tg_add(x, w));
    tg_tensor *y = tg_add(r, w); /* the new w */
    tg_graph_end();
    tg_tensor *vals[1] = {tt_rand(1, (int64_t[]){5}, -1, 1)};
    sig q = {1, 1, 1, &x, vals, &y, &upd};
    tg_session *s = tg_session_new(g);
    tg_pass_record rec[32];
    int n = records(s, &q, rec, NULL);
    /* mul joins the last add; exp reads w before the assign: it stays */
    CHECK(tt_record_count(rec, n, "fuse_elementwise", "ops") == 2);
    check_equal(s, &q, 3, 1, &w, &w0); /* w moves on: three runs each */
    tg_session_free(s);
    tg_graph_free(g);
}

/* the op itself: a program against the same ops run one by one (bitwise),
 * and programs that are not valid */
static void test_fused_op(void)
{
    const tg_op_def *op = tg_op_find("fused_elementwise");
    CHECK(op != NULL);
    tg_tensor *a = tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){70, 300}, -2, 2);
    tg_tensor *b = tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){300}, 0.5, 2);
    tg_tensor *in[2] = {a, b};
    tg_attr p = {.name = "program", .type = TG_ATTR_STRING,
                 .u.s = "div[true_div=1](%0, %1); clamp[a=-0.5, b=0.75]($0); "
                        "leaky_relu[a=0.125](%0); gt($1, %1); where($3, $2, $1)"};
    tg_tensor *y = tg_op_call(op, 2, in, &p, 1);
    tg_tensor *q = tg_div(a, b);
    tg_tensor *want = tg_where(tg_gt(tg_clamp(q, -0.5, 0.75), b), tg_leaky_relu(a, 0.125),
                               tg_clamp(q, -0.5, 0.75));
    CHECK(y && tt_same(y, want));
    static const struct {
        const char *prog, *msg;
    } bad[] = {
        {"bogus(%0)", "unknown op"},
        {"sum(%0)", "not an elementwise op"},
        {"add(%0, %2)", "no such input"},
        {"add(%0, $0)", "no such earlier result"},
        {"add(%0)", "wrong number of operands"},
        {"elu[a=x](%0)", "expected a number"},
        {"elu[beta=1](%0)", "unknown attribute"},
        {"elu[a=1, a=2](%0)", "repeated attribute"},
        {"relu(%0) junk", "unexpected text"},
        {"", "expected an op name"},
        {"relu(%0); add($0, %1); exp($0)", ""}, /* fine: an unread result */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        tg_attr pk = {.name = "program", .type = TG_ATTR_STRING, .u.s = bad[k].prog};
        if (!*bad[k].msg)
            CHECK(tg_op_call(op, 2, in, &pk, 1) != NULL);
        else
            CHECK_ERROR(tg_op_call(op, 2, in, &pk, 1), TG_ERR_ARG, bad[k].msg);
    }
    CHECK_ERROR(tg_op_call(op, 2, in, NULL, 0), TG_ERR_ARG, "program");
}

/* one program text, at one address, run on inputs of other dtypes, a 0-d
 * input, then rewritten in place: every call gives the unfused ops' dtype
 * and bits (result dtypes are remembered per input signature, programs
 * per text address: neither may answer for another signature or text),
 * and a shape that does not broadcast is still an error naming the node */
static void test_fused_signatures(void)
{
    const tg_op_def *op = tg_op_find("fused_elementwise");
    char text[64] = "mul(%0, %1); add($0, %0)";
    tg_attr p = {.name = "program", .type = TG_ATTR_STRING, .u.s = text};
    static const tg_dtype dts[][2] = {{TG_FLOAT32, TG_FLOAT32}, {TG_FLOAT64, TG_FLOAT64},
                                      {TG_FLOAT32, TG_FLOAT64}, {TG_INT32, TG_FLOAT32},
                                      {TG_FLOAT32, TG_FLOAT32}};
    for (int round = 0; round < 2; round++)
        for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++)
            for (int scalar = 0; scalar < 2; scalar++) {
                tg_tensor *a = tt_rand_dtype(dts[k][0], 2, (int64_t[]){5, 7}, -3, 3);
                tg_tensor *b = scalar ? tg_scalar(dts[k][1], 1.25)
                                      : tt_rand_dtype(dts[k][1], 1, (int64_t[]){7}, -3, 3);
                tg_tensor *in[2] = {a, b};
                tg_tensor *y = tg_op_call(op, 2, in, &p, 1);
                tg_tensor *want = tg_add(tg_mul(a, b), a);
                CHECK(y && want && tt_same(y, want));
            }
    tg_tensor *a = tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){5, 7}, -3, 3);
    tg_tensor *b = tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){7}, -3, 3);
    tg_tensor *in[2] = {a, b};
    CHECK(tt_same(tg_op_call(op, 2, in, &p, 1), tg_add(tg_mul(a, b), a)));
    strcpy(text, "sub(%0, %1); add($0, %0)"); /* the same address, another program */
    CHECK(tt_same(tg_op_call(op, 2, in, &p, 1), tg_add(tg_sub(a, b), a)));
    tg_tensor *bad[2] = {a, tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){6}, -3, 3)};
    CHECK_ERROR(tg_op_call(op, 2, bad, &p, 1), TG_ERR_SHAPE, "fused_elementwise");
}

/* ---- optimizer updates ------------------------------------------------------------ */
/* a small regression trained by tg_graph_sgd (opts) or by Adam written with
 * ops and assigns; per configuration a fresh graph from the same initial
 * values: level 0, level 2 serial, level 2 parallel. Losses of 3 steps and
 * every variable at the end bitwise equal; fused/assigns counted. */
enum { OPT_SGD, OPT_ADAM };

static tg_tensor *adam_step(tg_graph *g, tg_tensor *loss, int n, tg_tensor **params,
                            tg_tensor **updates)
{
    tg_tensor *grads[4];
    CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, n, params, grads));
    tg_tensor *t = tg_variable(g, "adam/t", tg_scalar(TG_FLOAT64, 0));
    tg_graph_begin(g);
    tg_tensor *t1 = tg_assign(t, tg_add_scalar(t, 1));
    const double b1 = 0.9, b2 = 0.999, lr = 0.01, eps = 1e-8;
    for (int i = 0; i < n; i++) {
        tg_tensor *p = params[i], *gr = grads[i];
        char name[64];
        snprintf(name, sizeof name, "adam/m%d", i);
        tg_tensor *m = tg_variable(g, name, tg_zeros(TG_FLOAT64, tg_ndim(p), tg_shape(p)));
        snprintf(name, sizeof name, "adam/v%d", i);
        tg_tensor *v = tg_variable(g, name, tg_zeros(TG_FLOAT64, tg_ndim(p), tg_shape(p)));
        tg_tensor *m1 = tg_assign(m, tg_add(tg_mul_scalar(m, b1), tg_mul_scalar(gr, 1 - b1)));
        tg_tensor *v1 = tg_assign(v, tg_add(tg_mul_scalar(v, b2),
                                            tg_mul_scalar(tg_mul(gr, gr), 1 - b2)));
        tg_tensor *bc1 = tg_neg(tg_add_scalar(tg_pow(tg_scalar(TG_FLOAT64, b1), t1), -1));
        tg_tensor *bc2 = tg_neg(tg_add_scalar(tg_pow(tg_scalar(TG_FLOAT64, b2), t1), -1));
        tg_tensor *den = tg_add_scalar(tg_sqrt(tg_div(v1, bc2)), eps);
        updates[i] = tg_assign(p, tg_sub(p, tg_mul_scalar(tg_div(tg_div(m1, bc1), den), lr)));
    }
    tg_graph_end();
    return t1;
}

static void train(int kind, const tg_sgd_opts *o, int config, tg_tensor **loss_out,
                  tg_tensor **state_out, int *fused, int *assigns)
{
    tg_tensor *w0 = tg_mul_scalar(tg_ones(TG_FLOAT64, 2, (int64_t[]){3, 4}), 0.25);
    tg_tensor *b0 = tg_mul_scalar(tg_ones(TG_FLOAT64, 1, (int64_t[]){3}), -0.5);
    tg_tensor *xv = tg_sin(tg_reshape(tg_arange(TG_FLOAT64, 0, 20, 1), 2, (int64_t[]){5, 4}));
    tg_tensor *tv = tg_cos(tg_reshape(tg_arange(TG_FLOAT64, 0, 15, 1), 2, (int64_t[]){5, 3}));
    tg_graph *g = tg_graph_new("train");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){5, 4});
    tg_tensor *t = tg_placeholder(g, "t", TG_FLOAT64, 2, (int64_t[]){5, 3});
    tg_tensor *params[2] = {tg_variable(g, "w", w0), tg_variable(g, "b", b0)};
    tg_graph_begin(g);
    tg_tensor *loss = tg_mse_loss(tg_tanh(tg_linear(x, params[0], params[1])), t,
                                  TG_REDUCTION_MEAN);
    tg_graph_end();
    tg_tensor *upd[3];
    int n_upd = 2;
    if (kind == OPT_SGD)
        CHECK_OK(tg_graph_sgd(loss, 2, params, o, NULL, upd));
    else
        upd[n_upd++] = adam_step(g, loss, 2, params, upd);
    tg_session *s = tg_session_new(g);
    tg_session_options so = tg_session_default_options();
    so.opt_level = config == 0 ? 0 : 2;
    CHECK_OK(tg_session_set_options(s, &so));
    CHECK_OK(tg_session_set_executor(s, config == 2 ? TG_EXECUTOR_PARALLEL
                                                    : TG_EXECUTOR_SERIAL));
    tg_tensor *feeds[2] = {x, t}, *vals[2] = {xv, tv};
    if (fused) {
        tg_pass_record rec[32];
        int n = 0;
        tg_graph_free(tg_session_optimized_graph(s, 2, feeds, NULL, 1, &loss, n_upd, upd, 32,
                                                 rec, &n));
        *fused = tt_record_count(rec, n, "fuse_updates", "fused");
        *assigns = tt_record_count(rec, n, "fuse_updates", "assigns");
    }
    for (int k = 0; k < 3; k++)
        CHECK_OK(tg_session_run(s, 2, feeds, vals, 1, &loss, &loss_out[k], n_upd, upd));
    static const char *const names[8] = {"w", "b", "w/momentum", "b/momentum",
                                         "adam/m0", "adam/v1", "adam/t", "adam/v0"};
    for (int i = 0; i < 8; i++) { /* the variables this optimizer has */
        tg_tensor *v = tg_graph_find(g, names[i]);
        state_out[i] = v ? tg_clone(tg_variable_value(v)) : NULL;
    }
    tg_clear_error();
    tg_session_free(s);
    tg_graph_free(g);
}

static void check_training(int kind, const tg_sgd_opts *o, int want_fused, int want_assigns)
{
    tg_tensor *loss[3][3], *state[3][8] = {{0}};
    int fused = -1, assigns = -1;
    for (int c = 0; c < 3; c++)
        train(kind, o, c, loss[c], state[c], c == 1 ? &fused : NULL, &assigns);
    if (fused != want_fused || assigns != want_assigns)
        tt_fail(__FILE__, __LINE__, "%s: fused %d nodes of %d assigns, expected %d of %d",
                kind == OPT_SGD ? "sgd" : "adam", fused, assigns, want_fused, want_assigns);
    for (int c = 1; c < 3; c++) {
        for (int k = 0; k < 3; k++)
            CHECK(tt_same(loss[c][k], loss[0][k]));
        for (int v = 0; v < 8; v++)
            if ((state[0][v] || state[c][v]) && !tt_same(state[c][v], state[0][v]))
                tt_fail(__FILE__, __LINE__, "variable %d differs (config %d)", v, c);
    }
}

static void test_update_fusion(void)
{
    tg_sgd_opts o = tg_sgd_defaults();
    o.lr = 0.1;
    check_training(OPT_SGD, &o, 2, 2); /* plain SGD: one assign per parameter */
    o.momentum = 0.9;
    check_training(OPT_SGD, &o, 2, 4); /* buffer and parameter in one node */
    o.nesterov = true;
    o.weight_decay = 0.01;
    check_training(OPT_SGD, &o, 2, 4);
    o.nesterov = false;
    o.dampening = 0.5; /* the first step is told by the step count: fused as well */
    check_training(OPT_SGD, &o, 2, 4);
    /* Adam: m, v and the parameter in one node per parameter; the step
     * counter's assign stays (its result is read by the bias corrections) */
    check_training(OPT_ADAM, NULL, 2, 6);
}

/* ---- epilogues -------------------------------------------------------------------- */
/* a two-layer MLP and a convolution with relu, forward and gradients:
 * gemm + bias + relu, conv2d + bias + relu, and the hidden layer's input
 * gradient with relu_grad's mask, each one node; bitwise equal to level 0
 * in both executors */
static void test_epilogues(void)
{
    for (int k = 0; k < 2; k++) {
        tg_dtype dt = k ? TG_FLOAT64 : TG_FLOAT32;
        tg_graph *g = tg_graph_new("epilogue");
        tg_tensor *x = tg_placeholder(g, "x", dt, 2, (int64_t[]){64, 30});
        tg_tensor *im = tg_placeholder(g, "im", dt, 4, (int64_t[]){4, 3, 12, 12});
        tg_tensor *w1 = tt_rand_dtype(dt, 2, (int64_t[]){40, 30}, -0.3, 0.3);
        tg_tensor *b1 = tt_rand_dtype(dt, 1, (int64_t[]){40}, -0.3, 0.3);
        tg_tensor *w2 = tt_rand_dtype(dt, 2, (int64_t[]){10, 40}, -0.3, 0.3);
        tg_tensor *cw = tt_rand_dtype(dt, 4, (int64_t[]){5, 3, 3, 3}, -0.3, 0.3);
        tg_tensor *cb = tt_rand_dtype(dt, 1, (int64_t[]){5}, -0.3, 0.3);
        tg_graph_begin(g);
        tg_tensor *h = tg_relu(tg_linear(x, w1, b1));
        tg_tensor *out = tg_linear(h, w2, NULL);
        tg_tensor *c = tg_relu(tg_conv2d(im, cw, cb, NULL));
        tg_tensor *loss = tg_add(tg_sum(tg_mul(out, out), 0, NULL, false),
                                 tg_sum(tg_mul(c, c), 0, NULL, false));
        tg_graph_end();
        tg_tensor *grads[2], *wrt[2] = {x, im};
        CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 2, wrt, grads));
        tg_tensor *feeds[2] = {x, im};
        tg_tensor *vals[2] = {tt_rand_dtype(dt, 2, (int64_t[]){64, 30}, -1, 1),
                              tt_rand_dtype(dt, 4, (int64_t[]){4, 3, 12, 12}, -1, 1)};
        tg_tensor *fetch[4] = {loss, grads[0], grads[1], h};
        sig q = {2, 3, 0, feeds, vals, fetch, NULL};
        tg_session *s = tg_session_new(g);
        tg_pass_record rec[32];
        char *dump = NULL;
        int n = records(s, &q, rec, &dump);
        /* linear + relu, conv2d + relu, the hidden gradient + relu_grad */
        CHECK(tt_record_count(rec, n, "fuse_epilogue", "fused") == 3);
        CHECK(dump && strstr(dump, "program=\"gemm[alpha=1, beta=1, trans_a=0, trans_b=1]"
                                   "(%0, %1, %2); relu($0)\"") &&
              strstr(dump, "relu_grad($0, %"));
        free(dump);
        check_equal(s, &q, 1, 0, NULL, NULL);
        q.n_fetches = 4; /* h fetched: linear + relu stays one node, h is its output */
        n = records(s, &q, rec, NULL);
        CHECK(tt_record_count(rec, n, "fuse_epilogue", "fused") == 3);
        check_equal(s, &q, 1, 0, NULL, NULL);
        tg_session_free(s);
        tg_graph_free(g);
    }
}

/* conv2d + hardswish and conv2d + clamp (relu6) as one node, the
 * convolution applying the activation as it writes, on a shape of each
 * forward path (pointwise, depthwise, few-channel strided, general):
 * bitwise equal to level 0 in both executors */
static void test_conv_act_epilogues(void)
{
    static const struct {
        int64_t x[4], w[4];
        tg_conv2d_opts o;
    } cases[] = {
        {{2, 8, 6, 7}, {12, 8, 1, 1}, {{1, 1}, {0, 0}, {1, 1}, 1}},
        {{2, 8, 9, 9}, {8, 1, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 8}},
        {{1, 3, 17, 16}, {8, 3, 3, 3}, {{2, 2}, {1, 1}, {1, 1}, 1}},
        {{2, 5, 7, 7}, {6, 5, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tg_graph *g = tg_graph_new("conv_act");
        tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, cases[i].x);
        tg_tensor *w = tt_rand_dtype(TG_FLOAT32, 4, cases[i].w, -0.5, 0.5);
        tg_tensor *w2 = tt_rand_dtype(TG_FLOAT32, 4, cases[i].w, -0.5, 0.5);
        tg_tensor *b = tt_rand_dtype(TG_FLOAT32, 1, cases[i].w, -0.5, 0.5);
        tg_graph_begin(g); /* two weights: one convolution would be shared */
        tg_tensor *hs = tg_hardswish(tg_conv2d(x, w, b, &cases[i].o));
        tg_tensor *r6 = tg_clamp(tg_conv2d(x, w2, b, &cases[i].o), 0, 6);
        tg_graph_end();
        tg_tensor *feeds[1] = {x}, *vals[1] = {tt_rand_dtype(TG_FLOAT32, 4, cases[i].x, -4, 4)};
        tg_tensor *fetch[2] = {hs, r6};
        sig q = {1, 2, 0, feeds, vals, fetch, NULL};
        tg_session *s = tg_session_new(g);
        tg_pass_record rec[32];
        char *dump = NULL;
        int n = records(s, &q, rec, &dump);
        CHECK(tt_record_count(rec, n, "fuse_epilogue", "fused") == 2);
        CHECK(dump && strstr(dump, "hardswish($0)\"") && strstr(dump, "clamp[a=0, b=6]($0)\""));
        free(dump);
        check_equal(s, &q, 1, 0, NULL, NULL);
        tg_session_free(s);
        tg_graph_free(g);
    }
}

/* ResNet's blocks: conv2d + bias, the shortcut added, relu: the dense
 * convolution adds and activates as it stores (kernels/cpu/conv_dense.h)
 * where it takes the layer, the other paths in a pass after; an identity
 * shortcut, a 1x1 projection's output as the shortcut (two products reach
 * one add; the 1x1 takes the pointwise path), the shortcut first, an add
 * of a broadcast row (the product, then the program) and a layer the
 * dense path does not take; forward and gradients, bitwise equal to level
 * 0 in both executors (also in Debug builds, without fused multiply-adds:
 * each layer must take the path it takes unfused) */
static void test_residual_epilogues(void)
{
    for (int k = 0; k < 2; k++) {
        tg_dtype dt = k ? TG_FLOAT64 : TG_FLOAT32;
        tg_graph *g = tg_graph_new("residual");
        tg_tensor *x = tg_placeholder(g, "x", dt, 4, (int64_t[]){2, 64, 8, 8});
        tg_tensor *w1 = tt_rand_dtype(dt, 4, (int64_t[]){32, 64, 3, 3}, -0.1, 0.1);
        tg_tensor *w2 = tt_rand_dtype(dt, 4, (int64_t[]){32, 32, 3, 3}, -0.1, 0.1);
        tg_tensor *wd = tt_rand_dtype(dt, 4, (int64_t[]){32, 64, 1, 1}, -0.1, 0.1);
        tg_tensor *ws = tt_rand_dtype(dt, 4, (int64_t[]){8, 32, 1, 1}, -0.1, 0.1);
        tg_tensor *b1 = tt_rand_dtype(dt, 1, (int64_t[]){32}, -0.3, 0.3);
        tg_tensor *b2 = tt_rand_dtype(dt, 1, (int64_t[]){32}, -0.3, 0.3);
        tg_tensor *row = tt_rand_dtype(dt, 3, (int64_t[]){32, 1, 1}, -0.3, 0.3);
        tg_conv2d_opts pad = {.stride = {1, 1}, .padding = {1, 1}, .dilation = {1, 1},
                              .groups = 1};
        tg_graph_begin(g);
        tg_tensor *h = tg_relu(tg_conv2d(x, w1, b1, &pad));
        tg_tensor *y1 = tg_relu(tg_add(tg_conv2d(h, w2, b2, &pad), h));
        tg_tensor *y2 = tg_relu(tg_add(tg_conv2d(y1, w2, NULL, &pad), tg_conv2d(x, wd, b1, NULL)));
        tg_tensor *y3 = tg_add(y2, tg_conv2d(y2, w2, b2, &pad)); /* no relu, shortcut first */
        tg_tensor *y4 = tg_relu(tg_add(tg_conv2d(y3, w2, b2, &pad), row));
        tg_tensor *y5 = tg_relu(tg_add(tg_conv2d(y4, ws, NULL, NULL),
                                       tg_slice(y4, 1, 0, 8, 1)));
        tg_tensor *loss = tg_add(tg_sum(tg_mul(y4, y4), 0, NULL, false),
                                 tg_sum(tg_mul(y5, y5), 0, NULL, false));
        tg_graph_end();
        tg_tensor *grad;
        CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 1, &x, &grad));
        tg_tensor *val = tt_rand_dtype(dt, 4, (int64_t[]){2, 64, 8, 8}, -1, 1);
        tg_tensor *fetch[4] = {loss, grad, y3, y5};
        sig q = {1, 4, 0, &x, &val, fetch, NULL};
        tg_session *s = tg_session_new(g);
        tg_pass_record rec[32];
        char *dump = NULL;
        int n = records(s, &q, rec, &dump);
        CHECK(tt_record_count(rec, n, "fuse_epilogue", "fused") >= 6);
        CHECK(dump && strstr(dump, "add($0, %") && strstr(dump, "relu($1)") &&
              strstr(dump, "add(%"));
        free(dump);
        check_equal(s, &q, 1, 0, NULL, NULL);
        tg_session_free(s);
        tg_graph_free(g);
    }
}

/* the op itself against its parts, and producers it refuses */
static void test_epilogue_op(void)
{
    const tg_op_def *op = tg_op_find("fused_epilogue");
    CHECK(op != NULL);
    tg_tensor *a = tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){70, 50}, -1, 1);
    tg_tensor *b = tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){40, 50}, -1, 1);
    tg_tensor *c = tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){40}, -1, 1);
    tg_tensor *in[3] = {a, b, c};
    tg_attr p = {.name = "program", .type = TG_ATTR_STRING,
                 .u.s = "gemm[alpha=0.5, beta=1, trans_b=1](%0, %1, %2); relu($0); "
                        "mul($1, %2)"};
    tg_tensor *want = tg_mul(tg_relu(tg_gemm(a, b, c, 0.5, 1, false, true)), c);
    tg_tensor *y = tg_op_call(op, 3, in, &p, 1);
    CHECK(y && tt_same(y, want));
    tg_attr bad = {.name = "program", .type = TG_ATTR_STRING, .u.s = "view[shape=[3500]](%0); "
                                                                  "relu($0)"};
    CHECK_ERROR(tg_op_call(op, 3, in, &bad, 1), TG_ERR_ARG, "not an op a producer may be");
    tg_attr alone = {.name = "program", .type = TG_ATTR_STRING,
                     .u.s = "gemm[trans_b=1](%0, %1)"};
    CHECK_ERROR(tg_op_call(op, 3, in, &alone, 1), TG_ERR_SHAPE, "at least one instruction");
}

int main(void)
{
    RUN(test_chain_shapes);
    RUN(test_chain_boundaries);
    RUN(test_chain_around_assign);
    RUN(test_fused_op);
    RUN(test_fused_signatures);
    RUN(test_update_fusion);
    RUN(test_epilogues);
    RUN(test_conv_act_epilogues);
    RUN(test_residual_epilogues);
    RUN(test_epilogue_op);
    return tt_finish();
}
