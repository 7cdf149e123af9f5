/* Graphs placed over two devices, shared by the tests of partitioned runs
 * in one process (test_devices.c: "cpu:0", "cpu:1") and over processes
 * (test_master_worker.c: "/rank:0/cpu:0", "/rank:1/cpu:0"). A device
 * name NULL leaves those nodes unplaced (the unpartitioned reference). */
#ifndef TG_TESTS_DEVICE_GRAPHS_H
#define TG_TESTS_DEVICE_GRAPHS_H

#include "harness.h"
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline bool same_bits(const tg_tensor *a, const tg_tensor *b)
{
    if (!a || !b || tg_dtype_of(a) != tg_dtype_of(b) || tg_numel(a) != tg_numel(b))
        return false;
    return !memcmp(tg_data(a), tg_data(b), (size_t)tg_numel(a) * tg_dtype_size(tg_dtype_of(a)));
}

/* a text file whole (at most 1 MiB), NUL-terminated; NULL when unreadable */
static inline char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    if (buf)
        buf[fread(buf, 1, (1 << 20) - 1, f)] = 0;
    fclose(f);
    return buf;
}

static inline void scope_begin(const char *dev)
{
    if (dev)
        tg_device_scope_begin(dev);
}

static inline void scope_end(const char *dev)
{
    if (dev)
        tg_device_scope_end();
}

/* the MLP's weights: [32, 64], [32], [10, 32], [10] (scope-owned) */
static inline void mlp_weights(tg_generator *gen, tg_tensor **w)
{
    int64_t sh0[2] = {32, 64}, sh1[1] = {32}, sh2[2] = {10, 32}, sh3[1] = {10};
    w[0] = tg_rand_normal(gen, TG_FLOAT32, 2, sh0, 0, 0.2);
    w[1] = tg_rand_normal(gen, TG_FLOAT32, 1, sh1, 0, 0.2);
    w[2] = tg_rand_normal(gen, TG_FLOAT32, 2, sh2, 0, 0.2);
    w[3] = tg_rand_normal(gen, TG_FLOAT32, 1, sh3, 0, 0.2);
}

/* an MLP: layer 1 on dev0, layer 2 on dev1 */
static inline tg_tensor *mlp(tg_graph *g, tg_tensor *x, tg_tensor *const *w, const char *dev0,
                             const char *dev1)
{
    tg_graph_begin(g);
    scope_begin(dev0);
    tg_tensor *h = tg_relu(tg_linear(x, w[0], w[1]));
    scope_end(dev0);
    scope_begin(dev1);
    tg_tensor *y = tg_tanh(tg_linear(h, w[2], w[3]));
    scope_end(dev1);
    tg_graph_end();
    return y;
}

/* LeNet-5's training step (SGD with momentum): convolutions on dev0, the
 * classifier on dev1 */
typedef struct step_graph {
    tg_graph *g;
    tg_session *s;
    tg_tensor *x, *y, *loss, *updates[16], *vars[16];
    int n;
    tg_module *net;
    tg_optimizer *opt;
} step_graph;

static inline void lenet_step_graph(step_graph *sg, const char *dev0, const char *dev1)
{
    tg_generator *gen = tg_generator_new(42);
    sg->net = tg_lenet5(gen);
    tg_generator_free(gen);
    tg_named_tensor *names;
    sg->n = tg_module_parameters(sg->net, &names);
    tg_tensor *params[16];
    sg->g = tg_graph_new("lenet_step");
    for (int i = 0; i < sg->n; i++) {
        params[i] = names[i].tensor;
        const char *dev = i < 4 ? dev0 : dev1; /* each parameter where its layer runs */
        scope_begin(dev);
        sg->vars[i] = tg_variable_ref(sg->g, names[i].name, names[i].tensor);
        scope_end(dev);
    }
    tg_sgd_opts o = {.lr = 0.05, .momentum = 0.9};
    sg->opt = tg_optim_sgd(sg->n, params, &o);
    tg_named_tensors_free(names);
    int64_t B = 8;
    sg->x = tg_placeholder(sg->g, "x", TG_FLOAT32, 4, (int64_t[]){B, 1, 28, 28});
    sg->y = tg_placeholder(sg->g, "y", TG_INT64, 1, &B);
    tg_graph_begin(sg->g);
    tg_tensor *h = sg->x;
    for (int i = 0; i < tg_module_num_children(sg->net); i++) {
        const char *dev = i < 6 ? dev0 : dev1;
        scope_begin(dev);
        h = tg_module_forward(tg_module_child_at(sg->net, i), h);
        scope_end(dev);
    }
    sg->loss = tg_cross_entropy(h, sg->y, TG_REDUCTION_MEAN);
    tg_graph_end();
    CHECK_OK(tg_graph_optim(sg->opt, sg->loss, NULL, sg->updates));
    sg->s = tg_session_new(sg->g);
}

static inline void step_graph_free(step_graph *sg)
{
    tg_session_free(sg->s);
    tg_graph_free(sg->g);
    tg_optim_free(sg->opt);
    tg_module_free(sg->net);
}

/* a batch of 8 random images and labels */
static inline void lenet_batch(tg_generator *gen, tg_tensor **xv, tg_tensor **yv)
{
    *xv = tg_rand_normal(gen, TG_FLOAT32, 4, (int64_t[]){8, 1, 28, 28}, 0, 1);
    tg_tensor *y = tg_clamp(tg_mul_scalar(tg_rand_uniform(gen, TG_FLOAT32, 1, (int64_t[]){8},
                                                          0, 10), 1.0), 0, 9);
    *yv = tg_cast(y, TG_INT64);
}

static inline tg_status twice_plus(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = tg_add(tg_mul_scalar(in[0], 2.0), (tg_tensor *)user); /* a capture */
    return out[0] ? TG_OK : tg_last_status();
}

static inline tg_status halve(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_mul_scalar(in[0], 0.5);
    return out[0] ? TG_OK : tg_last_status();
}

static inline tg_status below_50(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_lt(tg_sum(in[0], 0, NULL, false), tg_scalar(TG_FLOAT64, 50));
    return out[0] ? TG_OK : tg_last_status();
}

/* control flow: x -> (d0) b = exp(-x) -> (d1) cond, while_loop capturing
 * b -> (d0) loss, and its gradient with respect to x through both */
static inline tg_graph *control_graph(const char *d0, const char *d1, tg_tensor **x,
                               tg_tensor **out)
{
    tg_graph *g = tg_graph_new("control");
    *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *y, *z;
    tg_graph_begin(g);
    scope_begin(d0);
    tg_tensor *b = tg_exp(tg_neg(*x));
    scope_end(d0);
    scope_begin(d1);
    tg_tensor *pred = tg_gt(tg_sum(*x, 0, NULL, false), tg_scalar(TG_FLOAT64, 0));
    CHECK_OK(tg_cond(pred, twice_plus, halve, b, 1, x, 1, &y));
    CHECK_OK(tg_while_loop(below_50, twice_plus, b, 1, &y, &z, NULL));
    scope_end(d1);
    scope_begin(d0);
    out[0] = tg_sum(tg_mul(z, z), 0, NULL, false);
    scope_end(d0);
    tg_graph_end();
    CHECK_OK(tg_graph_gradients(g, 1, out, NULL, 1, x, &out[1]));
    if (d0)
        tg_graph_set_device(out[1], d0);
    return g;
}


/* counters on both devices, values crossing both ways in one step, for
 * `steps` steps: the number of wrong values (1000: a run failed) */
static inline int pingpong_wrong(const char *d0, const char *d1, int steps)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("pingpong");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    scope_begin(d0);
    tg_tensor *c0 = tg_variable(g, "count0", tg_zeros(TG_FLOAT64, 1, (int64_t[]){3}));
    scope_begin(d1);
    tg_tensor *c1 = tg_variable(g, "count1", tg_zeros(TG_FLOAT64, 1, (int64_t[]){3}));
    scope_end(d1);
    tg_graph_begin(g);
    tg_tensor *a = tg_add(x, c0);                     /* d0 */
    scope_begin(d1);
    tg_tensor *b = tg_mul_scalar(tg_add(a, c1), 2.0); /* d0 -> d1 */
    scope_end(d1);
    tg_tensor *c = tg_sub(b, a);                      /* d1 -> d0 */
    scope_begin(d1);
    tg_tensor *d = tg_add(c, b);                      /* d0 -> d1 */
    tg_tensor *u1 = tg_assign(c1, tg_add_scalar(c1, 1.0));
    scope_end(d1);
    tg_tensor *u0 = tg_assign(c0, tg_add_scalar(c0, 1.0));
    scope_end(d0);
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    tg_tensor *fetch[2] = {d, c}, *targets[2] = {u0, u1};
    int wrong = 0;
    for (int step = 0; step < steps && !wrong; step++) {
        tg_tensor *r[2];
        tg_scope_begin();
        if (tg_session_run(s, 1, &x, &xv, 2, fetch, r, 2, targets) != TG_OK) {
            wrong = 1000;
            tg_scope_end();
            break;
        }
        for (int i = 0; i < 3; i++) { /* k = step: a = x + k, b = 2(a + k), c = b - a */
            double av = (i + 1) + step, bv = 2 * (av + step), cv = bv - av;
            wrong += ((const double *)tg_data(r[0]))[i] != cv + bv ||
                     ((const double *)tg_data(r[1]))[i] != cv;
        }
        tg_scope_end();
    }
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
    return wrong;
}

/* control_graph placed over d0, d1 against unplaced, on two inputs: the
 * outputs that differ in a bit; *on_d1 (if not NULL): nodes run on d1 */
static inline int control_flow_mismatches(const char *d0, const char *d1, int *on_d1)
{
    tg_scope_begin();
    tg_tensor *x1, *x2, *o1[2], *o2[2];
    tg_graph *g1 = control_graph(NULL, NULL, &x1, o1), *g2 = control_graph(d0, d1, &x2, o2);
    tg_session *s1 = tg_session_new(g1), *s2 = tg_session_new(g2);
    double in[2][3] = {{1, 2, 3}, {-1, -2, 0.5}};
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, in[k]), *r1[2], *r2[2];
        CHECK_OK(tg_session_run(s1, 1, &x1, &xv, 2, o1, r1, 0, NULL));
        CHECK_OK(tg_session_run(s2, 1, &x2, &xv, 2, o2, r2, 0, NULL));
        bad += !same_bits(r1[0], r2[0]) + !same_bits(r1[1], r2[1]);
    }
    int n = tg_graph_num_nodes(g2);
    tg_device *place = on_d1 ? malloc((size_t)n * sizeof *place) : NULL;
    if (place) {
        tg_device want;
        CHECK_OK(tg_device_parse(d1, &want));
        CHECK_OK(tg_session_placement(s2, 1, &x2, 2, o2, 0, NULL, n, place));
        *on_d1 = 0;
        for (int i = 0; i < n; i++)
            *on_d1 += tg_device_eq(place[i], want);
        free(place);
    }
    tg_session_free(s1);
    tg_session_free(s2);
    tg_graph_free(g1);
    tg_graph_free(g2);
    tg_scope_end();
    return bad;
}

#endif
