/* Dynamic to static: an eager CNN (forward and loss) traced into a graph
 * runs in a session with the eager results, in every executor and memory
 * configuration; what tracing freezes (branches on values) and what fails
 * (reading symbolic data); tg_variable_ref; and training steps built with
 * tg_graph_sgd against tg_optim_sgd, momentum, Nesterov, weight decay,
 * dampening and learning-rate schedules included. */
#include "harness.h"
#include "runtime/runtime_impl.h"

#include <stdlib.h>
#include <string.h>


/* ---- a small CNN, written with the eager API ---------------------------------------- */
enum { N = 4, NP = 6 };

typedef struct cnn {
    tg_tensor *p[NP]; /* conv1 w, b; conv2 w, b; fc w, b */
} cnn;

static tg_status cnn_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    const cnn *m = user;
    tg_conv2d_opts pad1 = {.stride = {1, 1}, .padding = {1, 1}, .dilation = {1, 1}, .groups = 1};
    tg_pool2d_opts pool = {.kernel = {2, 2}};
    tg_tensor *h = tg_max_pool2d(tg_relu(tg_conv2d(in[0], m->p[0], m->p[1], &pad1)), &pool);
    h = tg_max_pool2d(tg_relu(tg_conv2d(h, m->p[2], m->p[3], NULL)), &pool); /* [N, 8, 2, 2] */
    out[0] = tg_linear(tg_flatten(h, 1, 3), m->p[4], m->p[5]);                /* logits */
    out[1] = tg_cross_entropy(out[0], in[1], TG_REDUCTION_MEAN);
    return out[1] ? TG_OK : tg_last_status();
}

static void cnn_init(cnn *m, tg_dtype dt)
{
    const int64_t shapes[NP][4] = {{4, 1, 3, 3}, {4}, {8, 4, 3, 3}, {8}, {10, 32}, {10}};
    const int nd[NP] = {4, 1, 4, 1, 2, 1};
    for (int i = 0; i < NP; i++)
        m->p[i] = tg_cast(tg_detach(tt_rand(nd[i], shapes[i], -0.5, 0.5)), dt);
}

static tg_tensor *cnn_batch(tg_dtype dt, tg_tensor **labels, int seed)
{
    int64_t lab[N];
    for (int i = 0; i < N; i++)
        lab[i] = (i * 7 + seed * 3) % 10;
    tg_tensor *l = tg_empty(TG_INT64, 1, (int64_t[]){N});
    memcpy(tg_data(l), lab, sizeof lab);
    *labels = l;
    return tg_cast(tg_detach(tt_rand(4, (int64_t[]){N, 1, 12, 12}, -1, 1)), dt);
}

static void test_trace_cnn(void)
{
    cnn m;
    cnn_init(&m, TG_FLOAT64);
    for (int i = 0; i < NP; i++)
        tg_set_requires_grad(m.p[i], true);
    tg_tensor *labels, *x = cnn_batch(TG_FLOAT64, &labels, 0);
    /* eager */
    tg_tensor *ein[2] = {x, labels}, *eout[2], *egrad[NP];
    CHECK_OK(cnn_fn(&m, ein, eout));
    CHECK_OK(tg_autograd_grad(1, &eout[1], NULL, NP, m.p, egrad, false, false));
    /* traced once; parameters captured by reference as constants */
    tg_graph *g = tg_graph_new("cnn");
    tg_tensor *in[2], *out[2], *dp[NP];
    const char *names[2] = {"images", NULL};
    CHECK_OK(tg_graph_trace(g, cnn_fn, &m, 2, ein, names, in, 2, out));
    CHECK(tg_is_symbolic(in[0]) && tg_is_symbolic(out[1]));
    CHECK(!strcmp(tg_graph_node_name(in[0]), "images"));
    CHECK(!strcmp(tg_graph_node_name(in[1]), "input_1"));
    CHECK_SHAPE(out[0], N, 10);
    CHECK_OK(tg_graph_gradients(g, 1, &out[1], NULL, NP, m.p, dp));
    CHECK_OK(tg_graph_verify(g));
    tg_session *s = tg_session_new(g);
    tg_tensor *fetch[2 + NP] = {out[0], out[1]};
    for (int i = 0; i < NP; i++)
        fetch[2 + i] = dp[i];
    for (int c = 0; c < 4; c++) {
        CHECK_OK(tg_session_set_memory_plan(s, c % 2 == 1));
        CHECK_OK(tg_session_set_executor(s, c < 2 ? TG_EXECUTOR_SERIAL : TG_EXECUTOR_PARALLEL));
        tg_tensor *r[2 + NP];
        CHECK_OK(tg_session_run(s, 2, in, ein, 2 + NP, fetch, r, 0, NULL));
        CHECK(tt_same(r[0], eout[0]) && tt_same(r[1], eout[1])); /* the eager kernels, bitwise */
        for (int i = 0; i < NP; i++)
            CHECK(tt_rel_diff(r[2 + i], egrad[i], 1.0) <= 1e-12);
    }
    for (int i = 0; i < NP; i++)
        tg_release(egrad[i]); /* tg_autograd_grad's results belong to no scope */
    /* another batch through the same graph */
    tg_tensor *labels2, *x2 = cnn_batch(TG_FLOAT64, &labels2, 1);
    tg_tensor *ein2[2] = {x2, labels2}, *eout2[2], *r2[2];
    CHECK_OK(cnn_fn(&m, ein2, eout2));
    CHECK_OK(tg_session_run(s, 2, in, ein2, 2, out, r2, 0, NULL));
    CHECK(tt_same(r2[0], eout2[0]) && tt_same(r2[1], eout2[1]));
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- what tracing cannot capture ----------------------------------------------------------- */
static tg_tensor *flag, *scale;

/* a branch on a value: taken at trace time, frozen into the graph */
static tg_status branchy(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    tg_tensor *y = tg_item(flag) > 0 ? tg_relu(in[0]) : tg_neg(in[0]);
    out[0] = tg_mul(y, scale); /* data: captured by reference */
    return TG_OK;
}

/* reading a symbolic tensor's data */
static tg_status reads_data(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    tg_tensor *m = tg_max(in[0], 0, NULL, false);
    double v = tg_item(m); /* symbolic: fails */
    if (tg_last_status() != TG_OK)
        return tg_last_status();
    out[0] = v > 0 ? tg_exp(in[0]) : in[0];
    return TG_OK;
}

static tg_status returns_null(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    (void)in;
    out[0] = NULL;
    return TG_OK;
}

static tg_status returns_concrete(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)in;
    out[0] = user;
    return TG_OK;
}

static tg_status returns_input(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = in[0];
    out[1] = tg_sin(in[0]);
    return TG_OK;
}

static void test_trace_limits(void)
{
    flag = tg_scalar(TG_FLOAT64, 1.0);
    scale = tg_scalar(TG_FLOAT64, 2.0);
    tg_tensor *x = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){-1, 0.5, 2});
    tg_graph *g = tg_graph_new("limits");
    tg_tensor *in, *out;
    CHECK_OK(tg_graph_trace(g, branchy, NULL, 1, &x, NULL, &in, 1, &out));
    tg_session *s = tg_session_new(g);
    tg_tensor *r;
    CHECK_OK(tg_fill_(flag, -1.0)); /* eager now takes the other branch */
    CHECK_OK(tg_fill_(scale, 3.0)); /* and the graph sees the new scale */
    CHECK_OK(tg_session_run(s, 1, &in, &x, 1, &out, &r, 0, NULL));
    CHECK_TENSOR(r, ((double[]){0, 1.5, 6}), 0); /* relu, frozen; scale 3 */
    tg_tensor *e;
    CHECK_OK(branchy(NULL, &x, &e));
    CHECK_TENSOR(e, ((double[]){3, -1.5, -6}), 0);
    tg_session_free(s);
    /* reading data of a symbolic tensor fails the trace */
    tg_tensor *ins[2] = {NULL, NULL}, *outs[2] = {x, x};
    CHECK_FAILS(tg_graph_trace(g, reads_data, NULL, 1, &x, NULL, ins, 1, outs),
                TG_ERR_ARG, "tg_graph_trace: tg_item: the tensor is symbolic");
    CHECK(ins[0] == NULL && outs[0] == NULL);
    CHECK_FAILS(tg_graph_trace(g, returns_null, NULL, 1, &x, NULL, ins, 1, outs),
                TG_ERR_ARG, "left output 0 NULL");
    CHECK_FAILS(tg_graph_trace(g, returns_concrete, x, 1, &x, NULL, ins, 1, outs),
                TG_ERR_ARG, "output 0 is a concrete tensor");
    CHECK_FAILS(tg_graph_trace(g, NULL, NULL, 1, &x, NULL, ins, 1, outs), TG_ERR_ARG,
                "NULL graph or function");
    CHECK_FAILS(tg_graph_trace(g, returns_null, NULL, 1, (tg_tensor *[]){NULL}, NULL, ins,
                               1, outs), TG_ERR_ARG, "example 0 is NULL");
    /* an output that is an input: both are references of their own */
    tg_scope_begin();
    CHECK_OK(tg_graph_trace(g, returns_input, NULL, 1, &x, NULL, ins, 2, outs));
    CHECK(outs[0] == ins[0]);
    tg_scope_end(); /* releases three references, no double free */
    CHECK_OK(tg_graph_verify(g));
    tg_graph_free(g);
}

/* ---- tg_variable_ref ------------------------------------------------------------------------ */
static void test_variable_ref(void)
{
    tg_tensor *w = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    tg_set_requires_grad(w, true); /* a parameter: assigns still update it */
    tg_graph *g = tg_graph_new("ref");
    tg_tensor *vw = tg_variable_ref(g, "w", w);
    CHECK(vw && tg_is_symbolic(vw));
    tg_graph_begin(g);
    tg_tensor *y = tg_mul_scalar(w, 2); /* w itself: means the variable */
    tg_tensor *upd = tg_assign_sub(w, tg_ones(TG_FLOAT64, 1, (int64_t[]){3}), 0.5);
    tg_graph_end();
    CHECK(upd != NULL);
    tg_session *s = tg_session_new(g);
    tg_tensor *r;
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 1, &y, &r, 1, &upd));
    CHECK_TENSOR(r, ((double[]){2, 4, 6}), 0);
    CHECK_TENSOR(w, ((double[]){0.5, 1.5, 2.5}), 0); /* updated in place */
    CHECK(tg_requires_grad(w));
    CHECK_OK(tg_session_set_executor(s, TG_EXECUTOR_PARALLEL));
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 1, &y, &r, 1, &upd));
    CHECK_TENSOR(r, ((double[]){1, 3, 5}), 0);
    CHECK_TENSOR(w, ((double[]){0, 1, 2}), 0);
    /* errors */
    tg_tensor *c = tg_ones(TG_FLOAT64, 1, (int64_t[]){2});
    tg_graph_begin(g);
    tg_tensor *uses_c = tg_exp(c); /* captured as a constant */
    tg_graph_end();
    CHECK(uses_c != NULL);
    CHECK_ERROR(tg_variable_ref(g, "c", c), TG_ERR_ARG, "already uses this tensor as node");
    CHECK_ERROR(tg_variable_ref(g, "w2", vw), TG_ERR_ARG, "symbolic");
    CHECK_ERROR(tg_variable_ref(NULL, "w3", w), TG_ERR_ARG, "graph is NULL");
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- training steps: tg_graph_sgd against tg_optim_sgd ----------------------------------------- */
typedef struct sgd_case {
    const char *name;
    tg_sgd_opts o;
    int lr_mode; /* 0: fixed; 1: a placeholder fed per step; 2: a variable */
} sgd_case;

/* eager and graph training of the CNN from the same parameters, steps
 * with the same batches; the parameters must stay together */
static void run_sgd_case(const sgd_case *sc, tg_executor_kind exec)
{
    const int steps = 4;
    cnn eager, graph;
    cnn_init(&eager, TG_FLOAT64);
    for (int i = 0; i < NP; i++) {
        graph.p[i] = tg_clone(eager.p[i]);
        tg_set_requires_grad(eager.p[i], true);
    }
    tg_optimizer *opt = tg_optim_sgd(NP, eager.p, &sc->o);
    CHECK(opt != NULL);
    /* the graph: parameters as variables by reference, forward traced */
    tg_graph *g = tg_graph_new("train");
    tg_tensor *vars[NP];
    for (int i = 0; i < NP; i++) {
        vars[i] = tg_variable_ref(g, NULL, graph.p[i]);
        CHECK(vars[i] != NULL);
    }
    tg_tensor *labels, *x = cnn_batch(TG_FLOAT64, &labels, 0);
    tg_tensor *ex[2] = {x, labels}, *in[2], *out[2], *upd[NP], *lr = NULL;
    CHECK_OK(tg_graph_trace(g, cnn_fn, &graph, 2, ex, NULL, in, 2, out));
    if (sc->lr_mode == 1)
        lr = tg_placeholder(g, "lr", TG_FLOAT64, 0, NULL);
    else if (sc->lr_mode == 2)
        lr = tg_variable(g, "lr", tg_scalar(TG_FLOAT64, sc->o.lr));
    /* parameters given as the concrete tensors (mapped to the variables) */
    CHECK_OK(tg_graph_sgd(out[1], NP, graph.p, &sc->o, lr, upd));
    CHECK_OK(tg_graph_verify(g));
    tg_session *s = tg_session_new(g);
    CHECK_OK(tg_session_set_executor(s, exec));
    double worst = 0;
    for (int k = 0; k < steps; k++) {
        tg_scope_begin();
        double lr_k = sc->o.lr * (sc->lr_mode ? 1.0 / (1 + k) : 1.0); /* a schedule */
        tg_tensor *lab, *xb = cnn_batch(TG_FLOAT64, &lab, k);
        /* eager step */
        tg_tensor *ein[2] = {xb, lab}, *eout[2];
        CHECK_OK(cnn_fn(&eager, ein, eout));
        tg_optim_zero_grad(opt);
        CHECK_OK(tg_backward(eout[1], NULL, false));
        CHECK_OK(tg_optim_set_lr(opt, lr_k));
        CHECK_OK(tg_optim_step(opt));
        /* graph step */
        tg_tensor *feeds[3] = {in[0], in[1], lr}, *fv[3] = {xb, lab, tg_scalar(TG_FLOAT64, lr_k)};
        if (sc->lr_mode == 2)
            CHECK_OK(tg_fill_(tg_variable_value(lr), lr_k));
        tg_tensor *loss;
        CHECK_OK(tg_session_run(s, sc->lr_mode == 1 ? 3 : 2, feeds, fv, 1, &out[1], &loss,
                                NP, upd));
        CHECK(tt_rel_diff(loss, eout[1], 1.0) <= 1e-12); /* the loss before the update */
        for (int i = 0; i < NP; i++)
            worst = fmax(worst, tt_rel_diff(graph.p[i], eager.p[i], 1.0));
        tg_scope_end();
    }
    if (!(worst <= 1e-11))
        printf("  %s (%s): parameters differ by %g\n", sc->name,
               exec == TG_EXECUTOR_PARALLEL ? "parallel" : "serial", worst);
    CHECK(worst <= 1e-11);
    tg_session_free(s);
    tg_graph_free(g);
    tg_optim_free(opt);
}

static void test_sgd_builder(void)
{
    sgd_case cases[] = {
        {"momentum", {.lr = 0.1, .momentum = 0.9}, 0},
        {"plain", {.lr = 0.05}, 0},
        {"nesterov + weight decay", {.lr = 0.1, .momentum = 0.8, .weight_decay = 1e-2,
                                     .nesterov = true}, 0},
        {"dampening", {.lr = 0.1, .momentum = 0.9, .dampening = 0.3}, 0},
        {"maximize", {.lr = 0.01, .momentum = 0.5, .maximize = true}, 0},
        {"lr placeholder", {.lr = 0.1, .momentum = 0.9}, 1},
        {"lr variable", {.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-3}, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_sgd_case(&cases[i], TG_EXECUTOR_SERIAL);
        run_sgd_case(&cases[i], TG_EXECUTOR_PARALLEL);
    }
}

/* float32: the update itself is the eager kernel's arithmetic, so with
 * the same gradients (a linear model's are exact to compute twice) the
 * parameters are bitwise the same */
static void test_sgd_float32_bitwise(void)
{
    tg_tensor *w = tg_cast(tg_detach(tt_rand(2, (int64_t[]){3, 5}, -1, 1)), TG_FLOAT32);
    tg_tensor *we = tg_clone(w);
    tg_set_requires_grad(we, true);
    tg_tensor *x = tg_cast(tg_detach(tt_rand(2, (int64_t[]){4, 5}, -1, 1)), TG_FLOAT32);
    tg_sgd_opts o = {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .dampening = 0.1};
    tg_optimizer *opt = tg_optim_sgd(1, &we, &o);
    tg_graph *g = tg_graph_new("f32");
    tg_variable_ref(g, "w", w);
    tg_graph_begin(g);
    tg_tensor *loss = tg_sum(tg_matmul(x, tg_transpose(w, 0, 1)), 0, NULL, false);
    tg_graph_end();
    tg_tensor *upd;
    CHECK_OK(tg_graph_sgd(loss, 1, &w, &o, NULL, &upd));
    tg_session *s = tg_session_new(g);
    for (int k = 0; k < 5; k++) {
        tg_tensor *el = tg_sum(tg_matmul(x, tg_transpose(we, 0, 1)), 0, NULL, false);
        tg_optim_zero_grad(opt);
        CHECK_OK(tg_backward(el, NULL, false));
        CHECK_OK(tg_optim_step(opt));
        CHECK_OK(tg_session_run(s, 0, NULL, NULL, 0, NULL, NULL, 1, &upd));
        CHECK(tt_same(w, we));
    }
    tg_session_free(s);
    tg_graph_free(g);
    tg_optim_free(opt);
}

/* ---- a tg_nn module trained as a graph ------------------------------------------------------
 * tg_lenet5 twice from one seed: one trained eagerly with tg_optim_sgd,
 * the other with its parameters made variables by reference, the forward
 * built by the module itself inside a graph scope, tg_graph_sgd and one
 * parallel session run per step; the parameters stay together */
static void test_lenet_module_graph_training(void)
{
    enum { BATCH = 8, STEPS = 3 };
    tg_generator *ge = tg_generator_new(7), *gg = tg_generator_new(7);
    tg_module *eager = tg_lenet5(ge), *net = tg_lenet5(gg);
    tg_named_tensor *pe, *pg;
    int n = tg_module_parameters(eager, &pe);
    CHECK(n == 10 && tg_module_parameters(net, &pg) == n);
    tg_tensor *ep[10], *gp[10];
    for (int i = 0; i < n; i++) {
        ep[i] = pe[i].tensor;
        gp[i] = pg[i].tensor;
    }
    tg_sgd_opts o = {.lr = 0.05, .momentum = 0.9};
    tg_optimizer *opt = tg_optim_sgd(n, ep, &o);
    tg_graph *g = tg_graph_new("lenet_train");
    for (int i = 0; i < n; i++)
        CHECK(tg_variable_ref(g, pg[i].name, gp[i]) != NULL);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, (int64_t[]){BATCH, 1, 28, 28});
    tg_tensor *y = tg_placeholder(g, "y", TG_INT64, 1, (int64_t[]){BATCH});
    tg_graph_begin(g);
    tg_tensor *loss = tg_cross_entropy(tg_module_forward(net, x), y, TG_REDUCTION_MEAN);
    tg_graph_end();
    tg_tensor *upd[10];
    CHECK_OK(tg_graph_sgd(loss, n, gp, &o, NULL, upd));
    tg_session *s = tg_session_new(g);
    CHECK_OK(tg_session_set_executor(s, TG_EXECUTOR_PARALLEL));
    tg_tensor *feeds[2] = {x, y};
    tg_generator *data = tg_generator_new(3);
    for (int k = 0; k < STEPS; k++) {
        tg_scope_begin();
        tg_tensor *xb = tg_rand_uniform(data, TG_FLOAT32, 4, (int64_t[]){BATCH, 1, 28, 28}, 0, 1);
        tg_tensor *yb = tg_empty(TG_INT64, 1, (int64_t[]){BATCH});
        for (int i = 0; i < BATCH; i++)
            ((int64_t *)tg_data(yb))[i] = (i * 3 + k) % 10;
        tg_tensor *el = tg_cross_entropy(tg_module_forward(eager, xb), yb, TG_REDUCTION_MEAN);
        tg_optim_zero_grad(opt);
        CHECK_OK(tg_backward(el, NULL, false));
        CHECK_OK(tg_optim_step(opt));
        tg_tensor *batch[2] = {xb, yb}, *gl;
        CHECK_OK(tg_session_run(s, 2, feeds, batch, 1, &loss, &gl, n, upd));
        CHECK(tt_rel_diff(gl, el, 1.0) <= 1e-5);
        tg_scope_end();
    }
    double worst = 0;
    for (int i = 0; i < n; i++)
        worst = fmax(worst, tt_rel_diff(gp[i], ep[i], 1.0));
    CHECK(worst <= 1e-5);
    tg_session_free(s);
    tg_graph_free(g);
    tg_optim_free(opt);
    tg_named_tensors_free(pe);
    tg_named_tensors_free(pg);
    tg_module_free(eager);
    tg_module_free(net);
    tg_generator_free(ge);
    tg_generator_free(gg);
    tg_generator_free(data);
}

static void test_sgd_errors(void)
{
    tg_graph *g = tg_graph_new("errs");
    tg_tensor *v = tg_variable(g, "v", tg_ones(TG_FLOAT64, 1, (int64_t[]){2}));
    tg_tensor *iv = tg_variable(g, "iv", tg_ones(TG_INT64, 1, (int64_t[]){2}));
    tg_tensor *c = tg_ones(TG_FLOAT64, 1, (int64_t[]){2});
    tg_graph_begin(g);
    tg_tensor *loss = tg_sum(tg_mul(v, c), 0, NULL, false);
    tg_tensor *vec = tg_mul(v, c);
    tg_graph_end();
    tg_tensor *u[2];
    tg_sgd_opts o = {.lr = 0.1};
    CHECK_FAILS(tg_graph_sgd(c, 1, &v, &o, NULL, u), TG_ERR_ARG, "expected a symbolic loss");
    CHECK_FAILS(tg_graph_sgd(loss, 1, &c, &o, NULL, u), TG_ERR_ARG, "('const') is a constant, not a variable");
    CHECK_FAILS(tg_graph_sgd(loss, 1, &iv, &o, NULL, u), TG_ERR_DTYPE, "expected float32");
    CHECK_FAILS(tg_graph_sgd(loss, 2, (tg_tensor *[]){v, v}, &o, NULL, u), TG_ERR_ARG,
                "are the same variable 'v'");
    CHECK_FAILS(tg_graph_sgd(loss, 1, &v, &(tg_sgd_opts){.lr = -1}, NULL, u), TG_ERR_ARG,
                "invalid learning rate");
    CHECK_FAILS(tg_graph_sgd(loss, 1, &v, &(tg_sgd_opts){.lr = 1, .nesterov = true}, NULL, u),
                TG_ERR_ARG, "nesterov");
    CHECK_FAILS(tg_graph_sgd(loss, 1, &v, &o, vec, u), TG_ERR_ARG, "lr must be a 0-d");
    CHECK_FAILS(tg_graph_sgd(vec, 1, &v, &o, NULL, u), TG_ERR_AUTOGRAD, "one-element output");
    CHECK(u[0] == NULL);
    /* a parameter the loss does not use: its update is the variable */
    tg_tensor *w = tg_variable(g, "w", tg_ones(TG_FLOAT64, 1, (int64_t[]){2}));
    CHECK_OK(tg_graph_sgd(loss, 2, (tg_tensor *[]){v, w}, &o, NULL, u));
    CHECK(!strcmp(tg_graph_node_name(u[1]), "w"));
    tg_session *s = tg_session_new(g);
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 0, NULL, NULL, 2, u));
    CHECK_TENSOR(tg_variable_value(v), ((double[]){0.9, 0.9}), 1e-15);
    CHECK_TENSOR(tg_variable_value(w), ((double[]){1, 1}), 0);
    tg_session_free(s);
    tg_graph_free(g);
}

int main(void)
{
    RUN(test_trace_cnn);
    RUN(test_trace_limits);
    RUN(test_variable_ref);
    RUN(test_sgd_builder);
    RUN(test_sgd_float32_bitwise);
    RUN(test_lenet_module_graph_training);
    RUN(test_sgd_errors);
    return tt_finish();
}
