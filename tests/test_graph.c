/* Static graphs: building with the ordinary op functions, symbolic tensors
 * that refuse data access, names, the verifier (on hand-broken graphs),
 * text and DOT output, symbolic gradients against eager autograd, and
 * assign ops. */
#include "graph/graph_impl.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

/* ---- models shared by eager and graph runs --------------------------------- */
/* x [N, I], w [O, I], b [O] -> x @ w^T + b, from broadcasting ops */
static tg_tensor *bcast_linear(tg_tensor *x, tg_tensor *w, tg_tensor *b)
{
    int axis = 2;
    tg_tensor *p = tg_mul(tg_unsqueeze(x, 1), tg_unsqueeze(w, 0));
    return tg_add(tg_sum(p, 1, &axis, false), b);
}

static tg_tensor *mse(tg_tensor *y, tg_tensor *t)
{
    return tg_mse_loss(y, t, TG_REDUCTION_MEAN);
}

static tg_tensor *mlp_loss(tg_tensor *const *p) /* x w1 b1 w2 b2 t */
{
    tg_tensor *h = tg_tanh(tg_linear(p[0], p[1], p[2]));
    tg_tensor *y = tg_relu(tg_linear(h, p[3], p[4]));
    return mse(y, p[5]);
}

/* fan-out, a node used twice, shared inputs, views (transpose, reshape
 * of a transposed value, slice, expand) and several paths to each input */
static tg_tensor *branchy(tg_tensor *const *p) /* a [3,4], b [4] , c [4,3] */
{
    tg_tensor *a = p[0], *b = p[1], *c = p[2];
    tg_tensor *u = tg_mul(a, b);              /* [3,4] */
    tg_tensor *v = tg_exp(tg_mul_scalar(u, 0.3));
    tg_tensor *w = tg_add(v, v);              /* used twice */
    tg_tensor *ct = tg_transpose(c, 0, 1);    /* [3,4], non-contiguous */
    tg_tensor *r = tg_reshape(ct, 2, (int64_t[]){4, 3}); /* copies (eager) */
    tg_tensor *m = tg_mul(w, tg_sin(ct));     /* shares ct */
    tg_tensor *s = tg_slice(m, 1, 1, 4, 2);   /* [3,2] */
    tg_tensor *e = tg_expand(tg_sum(r, 1, (int[]){0}, true), 2, (int64_t[]){3, 3});
    tg_tensor *z = tg_add(tg_sum(s, 0, NULL, false), tg_sum(tg_mul(e, e), 0, NULL, false));
    return tg_add(z, tg_sum(tg_mul(u, tg_tanh(u)), 0, NULL, false));
}

/* a small CNN-style classifier: max pooling (a node with two outputs),
 * layer norm (three outputs), a linear layer and cross-entropy on int64
 * labels, which are fed but not differentiated */
static tg_tensor *classifier(tg_tensor *const *p) /* x [2,1,6,6] w [4,9] b [4] labels */
{
    tg_pool2d_opts po = {.kernel = {2, 2}};
    tg_tensor *h = tg_flatten(tg_max_pool2d(p[0], &po), 1, 3);    /* [2, 9] */
    h = tg_relu(tg_layer_norm(h, 1, NULL, NULL, 1e-5));
    tg_tensor *logits = bcast_linear(h, p[1], p[2]);
    return tg_cross_entropy(tg_softmax(logits, 1), p[3], TG_REDUCTION_MEAN);
}

/* LeNet-5 in miniature: conv, relu, max pool, conv, flatten, linear layers
 * (gemm), cross-entropy */
static tg_tensor *lenet(tg_tensor *const *p) /* x c1w c1b c2w c2b f1w f1b f2w f2b labels */
{
    tg_pool2d_opts po = {.kernel = {2, 2}};
    tg_conv2d_opts co = {.stride = {1, 1}, .padding = {1, 1}, .dilation = {1, 1}, .groups = 1};
    tg_tensor *h = tg_max_pool2d(tg_relu(tg_conv2d(p[0], p[1], p[2], &co)), &po);
    h = tg_max_pool2d(tg_relu(tg_conv2d(h, p[3], p[4], NULL)), &po);
    h = tg_relu(tg_linear(tg_flatten(h, 1, 3), p[5], p[6]));
    return tg_cross_entropy(tg_linear(h, p[7], p[8]), p[9], TG_REDUCTION_MEAN);
}

typedef tg_tensor *(*model_fn)(tg_tensor *const *p);

static void mlp_inputs(tg_tensor **p)
{
    p[0] = tt_rand(2, (int64_t[]){4, 3}, -1, 1);
    p[1] = tt_rand(2, (int64_t[]){5, 3}, -1, 1);
    p[2] = tt_rand(1, (int64_t[]){5}, -1, 1);
    p[3] = tt_rand(2, (int64_t[]){2, 5}, -1, 1);
    p[4] = tt_rand(1, (int64_t[]){2}, 0.2, 1);
    p[5] = tt_rand(2, (int64_t[]){4, 2}, -1, 1);
}

static void branchy_inputs(tg_tensor **p)
{
    p[0] = tt_rand(2, (int64_t[]){3, 4}, -1, 1);
    p[1] = tt_rand(1, (int64_t[]){4}, -1, 1);
    p[2] = tt_rand(2, (int64_t[]){4, 3}, -1, 1);
}


/* ---- building ---------------------------------------------------------------- */
static void test_build_symbolic(void)
{
    tg_graph *g = tg_graph_new("build");
    CHECK_OK(tg_graph_begin(g));
    CHECK(tg_graph_current() == g);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_tensor *y = tg_add(x, x);
    tg_tensor *z = tg_add(tg_tanh(y), tg_scalar(TG_FLOAT32, 2.0));
    CHECK_OK(tg_graph_end());
    CHECK(tg_graph_current() == NULL);
    CHECK(tg_is_symbolic(x) && tg_is_symbolic(y) && tg_is_symbolic(z));
    CHECK_SHAPE(z, 2, 3);
    CHECK(tg_dtype_of(z) == TG_FLOAT32);
    CHECK(strcmp(tg_graph_node_name(y), "add") == 0);
    CHECK(strcmp(tg_graph_node_name(z), "add_1") == 0);
    CHECK(tg_graph_num_nodes(g) == 5); /* x add tanh const add_1 */
    CHECK(tg_tensor_graph(z) == g);
    CHECK(!tg_requires_grad(z));
    CHECK_OK(tg_graph_verify(g));
    /* symbolic tensors hold no data: clear errors, no crash */
    CHECK_ERROR(tg_data(z), TG_ERR_ARG, "symbolic");
    tg_clear_error();
    CHECK(isnan(tg_item(tg_sum(z, 0, NULL, false))));
    CHECK(strstr(tg_last_error(), "symbolic") != NULL);
    CHECK(isnan(tg_get(z, (int64_t[]){0, 0})));
    double buf[6];
    CHECK_FAILS(tg_copy_to(z, TG_FLOAT64, buf), TG_ERR_ARG, "tg_session_run");
    CHECK_FAILS(tg_fill_(z, 1.0), TG_ERR_ARG, "symbolic");
    CHECK_FAILS(tg_add_(z, z, 1.0), TG_ERR_ARG, "symbolic");
    tg_tensor *c = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3});
    CHECK_FAILS(tg_copy_(c, z), TG_ERR_ARG, "symbolic");
    CHECK_FAILS(tg_add_(c, z, 1.0), TG_ERR_ARG, "symbolic");
    CHECK_FAILS(tg_set_requires_grad(z, true), TG_ERR_AUTOGRAD, "tg_graph_gradients");
    tg_tensor *zd = tg_detach(z); /* a stop_gradient node: test_stop_gradient */
    CHECK(zd && tg_is_symbolic(zd));
    const char *zname[1] = {"z"};
    CHECK_FAILS(tg_safetensors_save("/tmp/tg-never-written.safetensors", 1, zname, &z, 0,
                                    NULL), TG_ERR_ARG, "symbolic");
    tg_state_dict *sd = tg_state_dict_new();
    CHECK_FAILS(tg_state_dict_add(sd, "z", z), TG_ERR_ARG, "symbolic");
    tg_state_dict_free(sd);
    CHECK(!tg_shares_storage(y, z));
    CHECK(tg_version(z) == 0);
    char *s = tg_to_string(z);
    CHECK(s && strstr(s, "symbolic 'add_1'") && strstr(s, "graph 'build'") &&
          strstr(s, "[2, 3]") && strstr(s, "float32"));
    free(s);
    /* ops on symbolic tensors outside a scope go to their graph */
    int before = tg_graph_num_nodes(g);
    tg_tensor *w = tg_mul(z, x);
    CHECK(tg_is_symbolic(w) && tg_graph_num_nodes(g) == before + 1);
    CHECK_FAILS(tg_graph_end(), TG_ERR_ARG, "no graph scope");
    tg_graph_free(g); /* the symbolic tensors keep it alive until released */
    CHECK(strcmp(tg_graph_name(tg_tensor_graph(w)), "build") == 0);
}

/* ops that update state or draw random numbers become nodes: nothing
 * changes or is drawn at build time (tests/test_random_ops.c runs them) */
static void test_stateful_ops_in_graph(void)
{
    tg_graph *g = tg_graph_new("bn");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 4, (int64_t[]){4, 3, 1, 1});
    tg_tensor *rm = tg_zeros(TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *rv = tg_ones(TG_FLOAT64, 1, (int64_t[]){3});
    CHECK(tg_batch_norm(x, rm, rv, NULL, NULL, true, 0.1, 1e-5) != NULL);
    CHECK_TENSOR(rv, ((double[]){1, 1, 1}), 0);
    CHECK(tg_batch_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 1e-5) != NULL);
    CHECK(tg_batch_norm(x, rm, rv, NULL, NULL, false, 0.1, 1e-5) != NULL);
    tg_generator *gen = tg_generator_new(7);
    uint64_t before = tg_generator_next(gen);
    tg_generator_seed(gen, 7);
    CHECK(tg_dropout(x, 0.5, true, gen) != NULL);
    CHECK(tg_generator_next(gen) == before); /* nothing drawn yet */
    CHECK(tg_dropout(x, 0.5, false, gen) != NULL); /* eval: the identity */
    tg_generator_free(gen);
    tg_graph_free(g);
}

static void test_captures_and_sources(void)
{
    tg_graph *g = tg_graph_new("src");
    tg_tensor *k = tt_rand(1, (int64_t[]){3}, -1, 1);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    tg_graph_begin(g);
    tg_tensor *a = tg_mul(x, k);
    tg_tensor *b = tg_add(a, k); /* the same eager tensor: one constant */
    tg_graph_end();
    CHECK(b != NULL);
    int consts = 0;
    for (int i = 0; i < g->n_nodes; i++)
        consts += g->nodes[i].kind == TG_GNODE_CONSTANT;
    CHECK(consts == 1);
    CHECK(g->nodes[g->values[a->value].node].in[1] == g->nodes[g->values[b->value].node].in[1]);
    /* variables copy their initial value */
    tg_tensor *init = tt_rand(2, (int64_t[]){2, 2}, -1, 1);
    tg_tensor *v = tg_variable(g, "v", init);
    tg_tensor *live = tg_variable_value(v);
    CHECK(!tg_is_symbolic(live) && !tg_shares_storage(live, init));
    CHECK(tt_rel_diff(live, init, 1.0) == 0);
    CHECK_ERROR(tg_variable_value(x), TG_ERR_ARG, "not a variable");
    CHECK_ERROR(tg_variable_value(init), TG_ERR_ARG, "concrete");
    CHECK_ERROR(tg_variable(g, "w", v), TG_ERR_ARG, "symbolic");
    tg_tensor *c = tg_constant(g, "c", init);
    CHECK(c && strcmp(tg_graph_node_name(c), "c") == 0);
    /* names */
    CHECK_ERROR(tg_placeholder(g, "x", TG_FLOAT64, 0, NULL), TG_ERR_ARG,
                "already has a node named 'x'");
    CHECK_ERROR(tg_placeholder(g, "bad name", TG_FLOAT64, 0, NULL), TG_ERR_ARG,
                "invalid node name");
    CHECK_ERROR(tg_placeholder(g, "p", (tg_dtype)42, 0, NULL), TG_ERR_DTYPE, "dtype");
    CHECK_ERROR(tg_placeholder(g, "p", TG_FLOAT64, 1, (int64_t[]){-2}), TG_ERR_SHAPE, ">= 0");
    CHECK_OK(tg_graph_set_name(b, "out"));
    CHECK(strcmp(tg_graph_node_name(b), "out") == 0);
    CHECK_FAILS(tg_graph_set_name(a, "out"), TG_ERR_ARG, "already has");
    tg_tensor *f = tg_graph_find(g, "out");
    CHECK(f && tg_is_symbolic(f) && f->value == b->value);
    CHECK(tg_graph_find(g, "out:0") != NULL);
    CHECK_ERROR(tg_graph_find(g, "nope"), TG_ERR_ARG, "no node named 'nope'");
    CHECK_ERROR(tg_graph_find(g, "out:1"), TG_ERR_INDEX, "has 1 output");
    CHECK_ERROR(tg_graph_find(g, "out:x"), TG_ERR_ARG, "bad value name");
    CHECK_OK(tg_graph_verify(g));
    /* values of two graphs do not mix */
    tg_graph *h = tg_graph_new("other");
    tg_tensor *y = tg_placeholder(h, "y", TG_FLOAT64, 1, (int64_t[]){3});
    CHECK_ERROR(tg_add(x, y), TG_ERR_ARG, "graph 'other'");
    tg_graph_begin(h);
    CHECK_ERROR(tg_mul(x, y), TG_ERR_ARG, "the graph being built is 'other'");
    tg_graph_end();
    tg_graph_free(h);
    tg_graph_free(g);
}

static void test_control_deps(void)
{
    tg_graph *g = tg_graph_new("ctrl");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 0, NULL);
    tg_tensor *a = tg_exp(x), *b = tg_sin(x), *c = tg_add(a, b);
    CHECK_OK(tg_graph_add_control_dep(a, b));
    CHECK_FAILS(tg_graph_add_control_dep(b, c), TG_ERR_ARG, "cycle");
    CHECK_FAILS(tg_graph_add_control_dep(a, a), TG_ERR_ARG, "cycle");
    CHECK_FAILS(tg_graph_add_control_dep(a, NULL), TG_ERR_ARG, "symbolic");
    CHECK_OK(tg_graph_verify(g));
    tg_graph_free(g);
}

/* ---- the verifier on hand-broken graphs --------------------------------------- */
static tg_graph *small_graph(void)
{
    tg_graph *g = tg_graph_new("v");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){2, 3});
    tg_tensor *y = tg_sum(tg_tanh(x), 1, (int[]){1}, false);
    (void)y;
    return g;
}

static void test_verifier(void)
{
    tg_graph *g = small_graph();
    CHECK_OK(tg_graph_verify(g));
    tg_gnode *tanh_node = &g->nodes[1], *sum_node = &g->nodes[2];

    int saved = tanh_node->in[0];
    tanh_node->in[0] = 99;
    CHECK_FAILS(tg_graph_verify(g), TG_ERR_INTERNAL, "node 'tanh' (tanh): input 0 refers to value 99");
    tanh_node->in[0] = saved;

    g->values[sum_node->out[0]].meta.shape[0] = 7; /* stored shape lies */
    CHECK_FAILS(tg_graph_verify(g), TG_ERR_INTERNAL, "node 'sum' (sum): output 0 is stored as float64[7]");
    g->values[sum_node->out[0]].meta.shape[0] = 2;

    g->values[sum_node->out[0]].meta.dtype = TG_FLOAT32;
    CHECK_FAILS(tg_graph_verify(g), TG_ERR_INTERNAL, "infers float64[2]");
    g->values[sum_node->out[0]].meta.dtype = TG_FLOAT64;

    tanh_node->n_in = 0; /* arity */
    CHECK_FAILS(tg_graph_verify(g), TG_ERR_INTERNAL, "node 'tanh' (tanh): has 0 inputs");
    tanh_node->n_in = 1;

    /* a cycle through a control edge added behind the builder's back */
    tg__graph_add_ctrl(g, 1, 2, false);
    CHECK_FAILS(tg_graph_verify(g), TG_ERR_INTERNAL, "cycle");
    tanh_node->n_ctrl = 0;

    tg__graph_add_ctrl(g, 1, 42, false);
    CHECK_FAILS(tg_graph_verify(g), TG_ERR_INTERNAL, "control dependency 0 refers to node 42");
    tanh_node->n_ctrl = 0;

    sum_node->kind = TG_GNODE_PLACEHOLDER; /* a source with inputs */
    CHECK_FAILS(tg_graph_verify(g), TG_ERR_INTERNAL, "node 'sum' (placeholder): a source");
    sum_node->kind = TG_GNODE_OP;

    g->values[sum_node->out[0]].index = 3;
    CHECK_FAILS(tg_graph_verify(g), TG_ERR_INTERNAL, "does not name this node");
    g->values[sum_node->out[0]].index = 0;

    /* attributes that no longer pass the op's inference */
    int64_t *axes = (int64_t *)sum_node->attrs[0].u.ints.v;
    axes[0] = 5;
    CHECK_FAILS(tg_graph_verify(g), TG_ERR_INTERNAL, "node 'sum' (sum): its inputs no longer pass");
    axes[0] = 1;

    char *old = sum_node->name;
    sum_node->name = "tanh"; /* duplicate name */
    CHECK_FAILS(tg_graph_verify(g), TG_ERR_INTERNAL, "'tanh' is not unique");
    sum_node->name = old;
    CHECK_OK(tg_graph_verify(g));
    CHECK_FAILS(tg_graph_verify(NULL), TG_ERR_ARG, "NULL");
    tg_graph_free(g);
}

/* ---- text and DOT --------------------------------------------------------------- */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    return s;
}

static void test_dump_and_dot(void)
{
    tg_graph *g = tg_graph_new("mlp");
    tg_tensor *p[6];
    mlp_inputs(p);
    tg_tensor *q[6];
    q[0] = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){4, 3});
    for (int i = 1; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "%s%d", i % 2 ? "w" : "b", (i + 1) / 2);
        q[i] = tg_variable(g, name, p[i]);
    }
    q[5] = tg_placeholder(g, "target", TG_FLOAT64, 2, (int64_t[]){4, 2});
    tg_tensor *loss = mlp_loss(q);
    tg_graph_add_control_dep(loss, q[1]);
    CHECK_OK(tg_graph_set_name(loss, "loss"));

    char path[] = "/tmp/tg_graph_dump_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CHECK_OK(tg_graph_dump(g, f));
    fclose(f);
    char *text = read_file(path);
    CHECK(text && strstr(text, "graph mlp ("));
    CHECK(text && strstr(text, "%x = placeholder() : float64[4, 3]"));
    CHECK(text && strstr(text, "%gemm = gemm(%x, %w1, %b1) {alpha=1, beta=1, trans_a=0, "
                               "trans_b=1} : float64[4, 5]"));
    CHECK(text && strstr(text, "%tanh = tanh(%gemm) : float64[4, 5]"));
    CHECK(text && strstr(text, "%loss = div(%sum, %const) {true_div=1} : float64[]"));
    CHECK(text && strstr(text, "after ^w1"));
    free(text);

    CHECK_OK(tg_graph_to_dot(g, path));
    char *dot = read_file(path);
    CHECK(dot && strstr(dot, "digraph \"mlp\""));
    CHECK(dot && strstr(dot, "label=\"x\\nfloat64[4, 3]\""));
    CHECK(dot && strstr(dot, "shape=invhouse")); /* placeholders */
    CHECK(dot && strstr(dot, "shape=cylinder")); /* variables */
    CHECK(dot && strstr(dot, "label=\"w1\\nfloat64[5, 3]\""));
    CHECK(dot && strstr(dot, "label=\"tanh\"]"));
    CHECK(dot && strstr(dot, "label=\"relu\"]"));
    CHECK(dot && strstr(dot, "label=\"loss\\ndiv\\ntrue_div=1\"]"));
    CHECK(dot && strstr(dot, "label=\"gemm\\nalpha=1, beta=1, trans_a=0, trans_b=1\"]"));
    CHECK(dot && strstr(dot, "[label=\"float64[4, 5]\"]"));
    CHECK(dot && strstr(dot, "style=dashed"));
    free(dot);
    remove(path);
    CHECK_FAILS(tg_graph_to_dot(g, "/nonexistent-dir/x.dot"), TG_ERR_IO, "cannot write");
    CHECK_FAILS(tg_graph_dump(NULL, stdout), TG_ERR_ARG, "NULL");
    tg_graph_free(g);
}

/* ---- symbolic gradients vs eager ----------------------------------------------------- */
/* builds model in a graph with placeholders for p, appends its gradients
 * with respect to the first n_diff, runs them in a session and compares
 * with eager tg_autograd_grad */
static void compare_gradients(model_fn model, int n, int n_diff, tg_tensor **p)
{
    tg_tensor *loss = model(p);
    tg_tensor *eager[16];
    CHECK_OK(tg_autograd_grad(1, &loss, NULL, n_diff, p, eager, false, false));

    tg_graph *g = tg_graph_new("grad");
    tg_tensor *q[16], *dq[16];
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        q[i] = tg_placeholder(g, name, tg_dtype_of(p[i]), tg_ndim(p[i]), tg_shape(p[i]));
    }
    tg_graph_begin(g);
    tg_tensor *sloss = model(q);
    tg_graph_end();
    int forward_nodes = tg_graph_num_nodes(g);
    CHECK_OK(tg_graph_gradients(g, 1, &sloss, NULL, n_diff, q, dq));
    CHECK(tg_graph_num_nodes(g) > forward_nodes);
    CHECK_OK(tg_graph_verify(g));
    tg_session *s = tg_session_new(g);
    tg_tensor *fetch[17], *res[17];
    fetch[0] = sloss;
    for (int i = 0; i < n_diff; i++)
        fetch[i + 1] = dq[i];
    CHECK_OK(tg_session_run(s, n, q, p, n_diff + 1, fetch, res, 0, NULL));
    CHECK(tt_rel_diff(res[0], loss, 1.0) == 0); /* the same kernels in the same order */
    for (int i = 0; i < n_diff; i++) {
        double d = tt_rel_diff(res[i + 1], eager[i], 1.0);
        if (!(d <= 1e-9))
            tt_fail(__FILE__, __LINE__, "gradient %d differs from eager by %g", i, d);
        tt_checks++;
        tg_release(eager[i]);
    }
    tg_session_free(s);
    tg_graph_free(g);
}

static void test_gradients_mlp(void)
{
    tg_tensor *p[6];
    mlp_inputs(p);
    compare_gradients(mlp_loss, 6, 5, p);
}

static void test_gradients_branching(void)
{
    tg_tensor *p[3];
    branchy_inputs(p);
    compare_gradients(branchy, 3, 3, p);
}

static void test_gradients_lenet(void)
{
    tg_tensor *p[10];
    p[0] = tt_rand(4, (int64_t[]){2, 1, 12, 12}, -1, 1);
    p[1] = tt_rand(4, (int64_t[]){3, 1, 3, 3}, -0.5, 0.5);
    p[2] = tt_rand(1, (int64_t[]){3}, -0.1, 0.1);
    p[3] = tt_rand(4, (int64_t[]){4, 3, 3, 3}, -0.5, 0.5);
    p[4] = tt_rand(1, (int64_t[]){4}, -0.1, 0.1);
    p[5] = tt_rand(2, (int64_t[]){6, 16}, -0.5, 0.5);
    p[6] = tt_rand(1, (int64_t[]){6}, -0.1, 0.1);
    p[7] = tt_rand(2, (int64_t[]){3, 6}, -0.5, 0.5);
    p[8] = tt_rand(1, (int64_t[]){3}, -0.1, 0.1);
    p[9] = tt_tensor(TG_INT64, 1, (int64_t[]){2}, (double[]){2, 0});
    compare_gradients(lenet, 10, 9, p);
}

/* one value gets several gradient contributions per node (concat of x,
 * x * w and x), over a chain long enough that the node array grows while
 * the pass adds them up: the pass once kept a pointer into the array
 * across those additions and read freed memory (issue 10) */
static int chain_length;

static tg_tensor *many_contributions(tg_tensor *const *p) /* x [3,4], w [3,4] */
{
    tg_tensor *h = p[0];
    for (int k = 0; k < chain_length; k++) {
        tg_tensor *parts[3] = {h, tg_mul(h, p[1]), h};
        tg_tensor *c = tg_concat(3, parts, 1);
        h = tg_add(tg_slice(c, 1, 2, 6, 1), tg_tanh(h));
    }
    tg_tensor *both[2] = {h, p[0]};
    return tg_sum(tg_mul(tg_concat(2, both, 0), tg_concat(2, both, 0)), 0, NULL, false);
}

static void test_gradients_many_contributions(void)
{
    /* lengths 1..24 put the array's growth at every point of the pass */
    for (chain_length = 1; chain_length <= 24; chain_length++) {
        tg_scope_begin();
        tg_tensor *p[2] = {tt_rand(2, (int64_t[]){3, 4}, -1, 1),
                           tt_rand(2, (int64_t[]){3, 4}, -1, 1)};
        compare_gradients(many_contributions, 2, 2, p);
        tg_scope_end();
    }
}

static void test_gradients_nn_ops(void)
{
    tg_tensor *p[4];
    p[0] = tt_rand(4, (int64_t[]){2, 1, 6, 6}, -1, 1);
    p[1] = tt_rand(2, (int64_t[]){4, 9}, -1, 1);
    p[2] = tt_rand(1, (int64_t[]){4}, -1, 1);
    p[3] = tt_tensor(TG_INT64, 1, (int64_t[]){2}, (double[]){3, 1});
    compare_gradients(classifier, 4, 3, p);
}

/* tg_graph_cut_values: the forward values a backward part reads, which a
 * backward run can be fed instead of computing the forward again */
static void test_cut_values(void)
{
    tg_graph *g = tg_graph_new("cut");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *w = tg_variable(g, "w", tt_tensor(TG_FLOAT64, 1, (int64_t[]){3},
                                                 (double[]){1, 2, 3}));
    tg_tensor *wv = tg_reshape(w, 1, (int64_t[]){3}); /* a view of a variable */
    tg_tensor *h = tg_tanh(tg_mul(x, wv));
    tg_tensor *l = tg_sum(h, 0, NULL, false);
    int split = tg_graph_num_nodes(g), n = -1;
    tg_tensor *dx, **cut = NULL;
    CHECK_OK(tg_graph_gradients(g, 1, &l, NULL, 1, &x, &dx));
    CHECK_OK(tg_graph_cut_values(g, split, &n, &cut));
    CHECK(n >= 1);
    for (int i = 0; i < n; i++) /* neither sources nor views of them */
        CHECK(tg_is_symbolic(cut[i]) && strcmp(tg_graph_node_name(cut[i]), "x") != 0 &&
              strcmp(tg_graph_node_name(cut[i]), "w") != 0 &&
              strcmp(tg_graph_node_name(cut[i]), tg_graph_node_name(wv)) != 0);
    /* the forward run hands the cut over; a backward run fed it gives the
     * gradient a run from scratch gives */
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0.5, -1, 0.25});
    tg_tensor *vals[8], *feeds[8], *ref;
    CHECK(n < 7);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, n, cut, vals, 0, NULL));
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &dx, &ref, 0, NULL));
    feeds[0] = x;
    for (int i = 0; i < n; i++)
        feeds[i + 1] = cut[i];
    tg_tensor *fed_vals[8] = {xv}, *got;
    for (int i = 0; i < n; i++)
        fed_vals[i + 1] = vals[i];
    tg_session_stats before, after;
    tg_session_get_stats(s, &before);
    CHECK_OK(tg_session_run(s, n + 1, feeds, fed_vals, 1, &dx, &got, 0, NULL));
    tg_session_get_stats(s, &after);
    double expect[3];
    const double *rd = tg_data(ref);
    for (int i = 0; i < 3; i++)
        expect[i] = rd[i];
    CHECK_TENSOR(got, expect, 0);
    /* fed the cut, the run computes no forward op (mul, tanh, sum) */
    CHECK(after.nodes_last_run < before.nodes_last_run);
    free(cut); /* the tensors are the test scope's */
    tg_session_free(s);
    CHECK_FAILS(tg_graph_cut_values(g, -1, &n, &cut), TG_ERR_ARG, "split -1");
    CHECK_FAILS(tg_graph_cut_values(g, tg_graph_num_nodes(g) + 1, &n, &cut), TG_ERR_ARG,
                "is not a node id");
    tg_graph_free(g);
}

static void test_gradients_misc(void)
{
    tg_graph *g = tg_graph_new("gm");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *u = tg_placeholder(g, "u", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *k = tg_placeholder(g, "k", TG_INT64, 1, (int64_t[]){3});
    tg_tensor *y = tg_mul(x, x);
    tg_tensor *l = tg_sum(y, 0, NULL, false);
    tg_tensor *d[2];
    /* u does not influence l: NULL, as eager grad */
    tg_tensor *xs[2] = {x, u};
    CHECK_OK(tg_graph_gradients(g, 1, &l, NULL, 2, xs, d));
    CHECK(d[0] && tg_is_symbolic(d[0]) && d[1] == NULL);
    /* with respect to an intermediate, and with an explicit seed */
    tg_tensor *seed = tg_full(TG_FLOAT64, 1, (int64_t[]){3}, 2.0);
    tg_tensor *dy;
    CHECK_OK(tg_graph_gradients(g, 1, &y, &seed, 1, &y, &dy));
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    tg_tensor *r[2];
    tg_tensor *fetch[2] = {d[0], dy};
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 2, fetch, r, 0, NULL));
    CHECK_TENSOR(r[0], ((double[]){2, 4, 6}), 0);
    CHECK_TENSOR(r[1], ((double[]){2, 2, 2}), 0);
    tg_session_free(s);
    /* errors */
    CHECK_FAILS(tg_graph_gradients(g, 1, &y, NULL, 1, &x, d), TG_ERR_AUTOGRAD,
                "one-element output");
    CHECK_FAILS(tg_graph_gradients(g, 1, &k, NULL, 1, &x, d), TG_ERR_DTYPE,
                "floating-point");
    tg_tensor *bad = tg_ones(TG_FLOAT64, 1, (int64_t[]){2});
    CHECK_FAILS(tg_graph_gradients(g, 1, &y, &bad, 1, &x, d), TG_ERR_SHAPE,
                "grad_ys[0] has shape [2]");
    tg_tensor *eager = tg_ones(TG_FLOAT64, 1, (int64_t[]){3});
    CHECK_FAILS(tg_graph_gradients(g, 1, &l, NULL, 1, &eager, d), TG_ERR_ARG,
                "does not use");
    tg_graph *h = tg_graph_new("h");
    tg_tensor *z = tg_placeholder(h, "z", TG_FLOAT64, 0, NULL);
    CHECK_FAILS(tg_graph_gradients(g, 1, &l, NULL, 1, &z, d), TG_ERR_ARG,
                "belongs to graph 'h'");
    CHECK_FAILS(tg_graph_gradients(g, 0, &l, NULL, 1, &x, d), TG_ERR_ARG, "at least");
    tg_graph_free(h);
    tg_graph_free(g);
}

/* gradients with respect to eager tensors the graph captured */
static void test_gradients_captured(void)
{
    tg_tensor *w = tt_rand(1, (int64_t[]){3}, -1, 1);
    tg_tensor *x = tt_rand(1, (int64_t[]){3}, -1, 1);
    tg_graph *g = tg_graph_new("cap");
    tg_graph_begin(g);
    tg_tensor *l = tg_sum(tg_mul(tg_exp(w), x), 0, NULL, false);
    tg_graph_end();
    tg_tensor *dw;
    CHECK_OK(tg_graph_gradients(g, 1, &l, NULL, 1, &w, &dw));
    tg_session *s = tg_session_new(g);
    tg_tensor *r;
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 1, &dw, &r, 0, NULL));
    tg_tensor *ref = tg_mul(tg_exp(w), x);
    CHECK(tt_rel_diff(r, ref, 1.0) <= 1e-15);
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- assign ------------------------------------------------------------------------------ */
static void test_assign_eager(void)
{
    tg_tensor *v = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    tg_set_requires_grad(v, false);
    tg_tensor *d = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){10, 20, 30});
    uint64_t ver = tg_version(v);
    tg_tensor *r = tg_assign_sub(v, d, 0.1);
    CHECK(r && tg_shares_storage(r, v) && tg_version(v) == ver + 1);
    CHECK_TENSOR(v, ((double[]){0, 0, 0}), 1e-15);
    CHECK(tg_assign(v, tg_scalar(TG_FLOAT64, 5)) != NULL);
    CHECK_TENSOR(v, ((double[]){5, 5, 5}), 0);
    CHECK_ERROR(tg_assign(v, tg_ones(TG_FLOAT64, 1, (int64_t[]){2})), TG_ERR_SHAPE,
                "cannot be broadcast");
    tg_tensor *leaf = tt_rand(1, (int64_t[]){3}, 0, 1);
    CHECK_ERROR(tg_assign(leaf, d), TG_ERR_AUTOGRAD, "requires grad");
    CHECK(tg_op_find("assign") && tg_op_find("assign_sub"));
}

static void test_assign_graph_errors(void)
{
    tg_graph *g = tg_graph_new("ag");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *e = tg_ones(TG_FLOAT64, 1, (int64_t[]){3});
    CHECK_ERROR(tg_assign(x, x), TG_ERR_ARG, "target must be a variable");
    CHECK_ERROR(tg_assign(e, x), TG_ERR_ARG, "got a concrete tensor");
    tg_graph_begin(g);
    CHECK_ERROR(tg_assign(e, e), TG_ERR_ARG, "got a concrete tensor");
    tg_graph_end();
    tg_graph_free(g);
}

/* tg_detach of a graph's value: the same value, no gradient through it.
 * l = sum(x^2 + detach(x^2) * x): dl/dx = 2x + x^2 (not 2x + 3x^2) */
static void test_stop_gradient(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("stop");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *sq = tg_mul(x, x), *d = tg_detach(sq);
    CHECK(d && tg_is_symbolic(d));
    tg_tensor *l = tg_sum(tg_add(sq, tg_mul(d, x)), 0, NULL, false), *dx = NULL;
    CHECK_OK(tg_graph_gradients(g, 1, &l, NULL, 1, &x, &dx));
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, -2, 3});
    for (int level = 0; level <= 2; level++) {
        tg_session_options o = tg_session_default_options();
        o.opt_level = level;
        tg_session_set_options(s, &o);
        tg_tensor *out[2] = {0};
        CHECK_OK(tg_session_run(s, 1, &x, &xv, 2, (tg_tensor *[]){l, dx}, out, 0, NULL));
        CHECK_TENSOR(out[0], ((double[]){1 + 4 + 9 + 1 - 8 + 27}), 0);
        CHECK_TENSOR(out[1], ((double[]){2 + 1, -4 + 4, 6 + 9}), 0);
    }
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* tg_graph_replay: the fetches as eager ops, with a history back to the
 * fed leaves and the variables; no_grad nodes stay cut; the errors */
static void test_replay(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("replay");
    tg_tensor *wv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){0.5, -2});
    tg_set_requires_grad(wv, true);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){2});
    tg_tensor *w = tg_variable_ref(g, "w", wv);
    tg_tensor *y = tg_sum(tg_mul(tg_mul(x, x), w), 0, NULL, false); /* sum(x^2 w) */
    tg_no_grad_begin();
    tg_tensor *cut = tg_mul(x, w); /* built under no_grad */
    tg_no_grad_end();
    tg_tensor *z = tg_sum(tg_mul(cut, x), 0, NULL, false); /* d/dx: x w only */
    tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){3, 1});
    tg_set_requires_grad(xv, true);
    tg_tensor *out[2] = {0};
    CHECK_OK(tg_graph_replay(g, 1, &x, &xv, 2, (tg_tensor *[]){y, z}, out));
    CHECK_TENSOR(out[0], ((double[]){4.5 - 2}), 0);
    CHECK(out[0] && tg_requires_grad(out[0]) && !tg_is_symbolic(out[0]));
    tg_tensor *d[2] = {0};
    CHECK_OK(tg_autograd_grad(1, &out[0], NULL, 2, (tg_tensor *[]){xv, wv}, d, false, false));
    CHECK_TENSOR(d[0], ((double[]){3, -4}), 0); /* 2 x w */
    CHECK_TENSOR(d[1], ((double[]){9, 1}), 0);  /* x^2 */
    tg_tensor *dz = NULL;
    CHECK_OK(tg_autograd_grad(1, &out[1], NULL, 1, &xv, &dz, false, false));
    CHECK_TENSOR(dz, ((double[]){1.5, -2}), 0); /* x w: no gradient through `cut` */
    tg_release(d[0]);
    tg_release(d[1]);
    tg_release(dz);
    /* the errors, outputs left NULL */
    tg_tensor *o1 = NULL, *bad = tt_tensor(TG_FLOAT32, 1, (int64_t[]){1}, (double[]){1});
    CHECK_FAILS(tg_graph_replay(g, 0, NULL, NULL, 1, &y, &o1), TG_ERR_ARG, "not fed");
    CHECK(o1 == NULL);
    CHECK_FAILS(tg_graph_replay(g, 1, &x, &bad, 1, &y, &o1), TG_ERR_SHAPE, "float32");
    CHECK_FAILS(tg_graph_replay(g, 1, &w, &xv, 1, &y, &o1), TG_ERR_ARG, "placeholder");
    CHECK_FAILS(tg_graph_replay(g, 1, &x, &xv, 1, &xv, &o1), TG_ERR_ARG, "not a value");
    CHECK_FAILS(tg_graph_replay(g, -1, NULL, NULL, 1, &y, &o1), TG_ERR_ARG, "negative");
    tg_generator *gen = tg_generator_new(1);
    tg_tensor *r = tg_dropout(x, 0.5, true, gen);
    CHECK_FAILS(tg_graph_replay(g, 1, &x, &xv, 1, &r, &o1), TG_ERR_UNSUPPORTED, "random");
    tg_generator_free(gen);
    tg_graph_free(g);
    tg_scope_end();
}

int main(void)
{
    RUN(test_build_symbolic);
    RUN(test_stop_gradient);
    RUN(test_replay);
    RUN(test_captures_and_sources);
    RUN(test_stateful_ops_in_graph);
    RUN(test_control_deps);
    RUN(test_verifier);
    RUN(test_dump_and_dot);
    RUN(test_gradients_mlp);
    RUN(test_gradients_branching);
    RUN(test_gradients_many_contributions);
    RUN(test_gradients_nn_ops);
    RUN(test_gradients_lenet);
    RUN(test_gradients_misc);
    RUN(test_cut_values);
    RUN(test_gradients_captured);
    RUN(test_assign_eager);
    RUN(test_assign_graph_errors);
    return tt_finish();
}
