/* Graph scaling benchmark (JSON lines): for chains and random DAGs of N
 * elementwise nodes, and for N/2 layers h = tanh(h * w_i) trained by SGD
 * with momentum (N/2 variables: gradients and update nodes), the time to
 * build the graph, append its symbolic gradients (and updates), plan and
 * run it once (and run it again, the plan cached), in graph mode; and in
 * eager mode the forward with the tape and backward (and the optimizer
 * step). Every phase should grow linearly (or N log N) with N.
 * usage: bench_graph_scaling [chain|random_dag|sgd_layers] [graph|eager] [sizes...]
 *        (default: both shapes, both modes, 1000 10000 100000 nodes) */
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "timing.h"

#define WIDTH 16 /* elements per value: the overhead is what is measured */

/* a small deterministic generator for the DAG's edges */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* N nodes over x: a chain h = h + x, or a DAG where node i combines node
 * i-1 with a random earlier node (add, sub or mul: every node reaches the
 * end); returns sum(last) */
static tg_tensor *forward(tg_tensor *x, int n, bool dag)
{
    tg_tensor **v = malloc((size_t)(n + 1) * sizeof *v);
    if (!v)
        return NULL;
    v[0] = x;
    uint64_t seed = 88172645463325252ull;
    for (int i = 1; i <= n; i++) {
        if (!dag) {
            v[i] = tg_add(v[i - 1], x);
            continue;
        }
        tg_tensor *other = v[next_rand(&seed) % (uint64_t)i];
        switch (next_rand(&seed) % 3) {
        case 0: v[i] = tg_add(v[i - 1], other); break;
        case 1: v[i] = tg_sub(v[i - 1], other); break;
        default: v[i] = tg_mul(v[i - 1], tg_tanh(other)); break;
        }
    }
    tg_tensor *y = tg_sum(v[n], 0, NULL, false);
    free(v);
    return y;
}

typedef struct timing {
    double build, grad, plan_run, run;
} timing;

static const char *const shapes[] = {"chain", "random_dag", "sgd_layers"};

/* N/2 layers h = tanh(h * w_i) over the variables (or leaves) w */
static tg_tensor *layers(tg_tensor *x, int n_layers, tg_tensor *const *w)
{
    tg_tensor *h = x;
    for (int i = 0; i < n_layers; i++)
        h = tg_tanh(tg_mul(h, w[i]));
    return tg_sum(h, 0, NULL, false);
}

static tg_tensor **make_weights(tg_graph *g, int n)
{
    tg_tensor **w = malloc((size_t)(n + 1) * sizeof *w);
    char name[32];
    for (int i = 0; w && i < n; i++) {
        tg_tensor *init = tg_full(TG_FLOAT32, 1, (int64_t[]){WIDTH}, 1.0);
        if (g) {
            snprintf(name, sizeof name, "w%d", i);
            w[i] = tg_variable(g, name, init);
        } else {
            w[i] = init;
            tg_set_requires_grad(init, true);
        }
    }
    return w;
}

static int graph_layers(int n, timing *t)
{
    int nl = n / 2;
    tg_scope_begin();
    double t0 = now_ms();
    tg_graph *g = tg_graph_new("layers");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){WIDTH});
    tg_tensor **w = make_weights(g, nl), **up = malloc((size_t)(nl + 1) * sizeof *up);
    tg_tensor *y = NULL;
    if (w && up && tg_graph_begin(g) == TG_OK) {
        y = layers(x, nl, w);
        tg_graph_end();
    }
    double t1 = now_ms();
    tg_sgd_opts o = tg_sgd_defaults();
    o.lr = 1e-3;
    o.momentum = 0.9;
    tg_status s = y ? tg_graph_sgd(y, nl, w, &o, NULL, up) : TG_ERR_ARG;
    double t2 = now_ms();
    tg_session *sess = s == TG_OK ? tg_session_new(g) : NULL;
    tg_tensor *in = tg_full(TG_FLOAT32, 1, (int64_t[]){WIDTH}, 0.5), *out;
    s = sess ? tg_session_run(sess, 1, &x, &in, 1, &y, &out, nl, up) : TG_ERR_ARG;
    double t3 = now_ms();
    if (s == TG_OK)
        s = tg_session_run(sess, 1, &x, &in, 1, &y, &out, nl, up);
    double t4 = now_ms();
    tg_session_free(sess);
    tg_graph_free(g);
    tg_scope_end();
    free(w);
    free(up);
    *t = (timing){t1 - t0, t2 - t1, t3 - t2, t4 - t3};
    return s == TG_OK ? 0 : 1;
}

static int eager_layers(int n, timing *t)
{
    int nl = n / 2;
    tg_tensor **w = make_weights(NULL, nl);
    tg_sgd_opts o = tg_sgd_defaults();
    o.lr = 1e-3;
    o.momentum = 0.9;
    tg_optimizer *opt = w ? tg_optim_sgd(nl, w, &o) : NULL;
    tg_scope_begin();
    tg_tensor *x = tg_full(TG_FLOAT32, 1, (int64_t[]){WIDTH}, 0.5);
    double t0 = now_ms();
    tg_tensor *y = opt ? layers(x, nl, w) : NULL;
    double t1 = now_ms();
    tg_status s = y ? tg_backward(y, NULL, false) : TG_ERR_ARG;
    if (s == TG_OK)
        s = tg_optim_step(opt);
    double t2 = now_ms();
    tg_scope_end();
    tg_optim_free(opt);
    for (int i = 0; w && i < nl; i++)
        tg_release(w[i]);
    free(w);
    *t = (timing){t1 - t0, t2 - t1, 0, 0};
    return s == TG_OK ? 0 : 1;
}

static int graph_mode(int n, bool dag, timing *t)
{
    tg_scope_begin();
    double t0 = now_ms();
    tg_graph *g = tg_graph_new("scaling");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){WIDTH});
    tg_tensor *y = NULL, *dx = NULL;
    if (tg_graph_begin(g) == TG_OK) {
        y = forward(x, n, dag);
        tg_graph_end();
    }
    double t1 = now_ms();
    tg_status s = y ? tg_graph_gradients(g, 1, &y, NULL, 1, &x, &dx) : TG_ERR_ARG;
    double t2 = now_ms();
    tg_session *sess = s == TG_OK ? tg_session_new(g) : NULL;
    tg_tensor *in = tg_full(TG_FLOAT32, 1, (int64_t[]){WIDTH}, 0.001);
    tg_tensor *fetch[2] = {y, dx}, *out[2];
    s = sess ? tg_session_run(sess, 1, &x, &in, 2, fetch, out, 0, NULL) : TG_ERR_ARG;
    double t3 = now_ms();
    if (s == TG_OK)
        s = tg_session_run(sess, 1, &x, &in, 2, fetch, out, 0, NULL);
    double t4 = now_ms();
    tg_session_free(sess);
    tg_graph_free(g);
    tg_scope_end();
    *t = (timing){t1 - t0, t2 - t1, t3 - t2, t4 - t3};
    return s == TG_OK ? 0 : 1;
}

static int eager_mode(int n, bool dag, timing *t)
{
    tg_scope_begin();
    tg_tensor *x = tg_full(TG_FLOAT32, 1, (int64_t[]){WIDTH}, 0.001);
    tg_set_requires_grad(x, true);
    double t0 = now_ms();
    tg_tensor *y = forward(x, n, dag);
    double t1 = now_ms();
    tg_status s = y ? tg_backward(y, NULL, false) : TG_ERR_ARG;
    double t2 = now_ms();
    tg_scope_end();
    *t = (timing){t1 - t0, t2 - t1, 0, 0};
    return s == TG_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    int sizes[16] = {1000, 10000, 100000}, n_sizes = 0;
    const char *only_shape = NULL, *only_mode = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "chain") || !strcmp(argv[i], "random_dag") ||
            !strcmp(argv[i], "sgd_layers"))
            only_shape = argv[i];
        else if (!strcmp(argv[i], "graph") || !strcmp(argv[i], "eager"))
            only_mode = argv[i];
        else if (n_sizes < 16)
            sizes[n_sizes++] = atoi(argv[i]);
    }
    if (n_sizes == 0)
        n_sizes = 3;
    tg_set_num_threads(1);
    for (int shape = 0; shape < 3; shape++) {
        if (only_shape && strcmp(only_shape, shapes[shape]))
            continue;
        for (int mode = 0; mode < 2; mode++) {
            if (only_mode && strcmp(only_mode, mode ? "eager" : "graph"))
                continue;
            for (int k = 0; k < n_sizes; k++) {
                timing t;
                bool dag = shape == 1, graph = mode == 0;
                int r = shape == 2 ? (graph ? graph_layers : eager_layers)(sizes[k], &t)
                                   : (graph ? graph_mode : eager_mode)(sizes[k], dag, &t);
                if (r) {
                    fprintf(stderr, "bench_graph_scaling: %s\n", tg_last_error());
                    return 1;
                }
                printf("{\"bench\":\"graph_scaling\",\"shape\":\"%s\",\"mode\":\"%s\","
                       "\"nodes\":%d,\"build_ms\":%.1f,\"gradients_ms\":%.1f,"
                       "\"plan_and_run_ms\":%.1f,\"run_ms\":%.1f,\"total_ms\":%.1f}\n",
                       shapes[shape], graph ? "graph" : "eager", sizes[k],
                       t.build, t.grad, t.plan_run, t.run,
                       t.build + t.grad + t.plan_run);
                fflush(stdout);
            }
        }
    }
    return 0;
}
