/* Random graphs, symbolic gradients against eager ones (issue 10): each
 * trial draws a small program over float64 parameters of broadcastable
 * shapes — values used many times (fan-out), concatenations of a value
 * with itself, views, a multi-output op (layer_norm), parameters used
 * only through their shape — and a set of outputs that may repeat, be
 * parameters themselves or feed other outputs. The program runs eagerly
 * (tg_autograd_grad) and as a graph (tg_graph_gradients, a session with
 * a random executor and memory-plan setting), and the gradients of
 * sum_i <y_i, r_i> must agree. The pass appends many nodes while it adds
 * gradient contributions up, so under ASan with grow-by-one arrays
 * (scripts/sanitize.sh) any pointer kept into the graph's arrays across
 * an append is reported. */
#include "harness.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { MAX_PARAMS = 5, MAX_STEPS = 40, MAX_VALUES = MAX_PARAMS + MAX_STEPS, MAX_YS = 5 };

typedef enum op_kind {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_TANH, OP_SIGMOID, OP_SIN, OP_EXP_TANH,
    OP_CONCAT_SLICE, OP_SUM_AXIS, OP_MATMUL, OP_LAYER_NORM, OP_SHAPE_ONLY,
    OP_TRANSPOSE_RESHAPE, OP_WHERE, OP_MAXIMUM, OP_SPLIT_SWAP, OP_MEAN, OP_POW,
    N_OPS
} op_kind;

typedef struct step {
    op_kind op;
    int a, b, c; /* value indices (params first, then earlier steps) */
    int k;       /* an axis or offset */
} step;

typedef struct program {
    int n_params, n_steps, n_ys;
    int pshape[MAX_PARAMS]; /* index into shapes[] */
    step steps[MAX_STEPS];
    int ys[MAX_YS];
} program;

/* broadcastable with each other: every result is one of them */
static const struct { int ndim; int64_t dims[2]; } shapes[] = {
    {2, {3, 4}}, {1, {4}}, {2, {3, 1}}, {0, {0}}, {2, {1, 4}},
};
#define N_SHAPES ((int)(sizeof shapes / sizeof shapes[0]))

static uint64_t rng_state;
static int rnd(int n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((rng_state >> 33) % (uint64_t)n);
}

/* an input: a parameter 40% of the time, else any earlier value */
static int pick(int n_values, int n_params)
{
    return rnd(10) < 4 ? rnd(n_params) : rnd(n_values);
}

static void draw(program *p, uint64_t seed)
{
    rng_state = seed;
    p->n_params = 1 + rnd(MAX_PARAMS);
    for (int i = 0; i < p->n_params; i++)
        p->pshape[i] = rnd(N_SHAPES);
    p->n_steps = 3 + rnd(MAX_STEPS - 2);
    for (int s = 0; s < p->n_steps; s++) {
        int nv = p->n_params + s;
        p->steps[s] = (step){(op_kind)rnd(N_OPS), pick(nv, p->n_params),
                             pick(nv, p->n_params), pick(nv, p->n_params), rnd(9)};
    }
    p->n_ys = 1 + rnd(MAX_YS);
    int nv = p->n_params + p->n_steps;
    for (int i = 0; i < p->n_ys; i++) { /* repeats and parameters too */
        if (i > 0 && rnd(3) == 0)
            p->ys[i] = p->ys[rnd(i)];
        else if (rnd(5) == 0)
            p->ys[i] = rnd(p->n_params);
        else /* mostly late values, which depend on more */
            p->ys[i] = nv - 1 - rnd((p->n_steps + 1) / 2);
    }
}

static tg_tensor *full(tg_tensor *x) /* broadcast to [3, 4] */
{
    return tg_expand(x, 2, (const int64_t[]){3, 4});
}

static tg_tensor *apply(const step *st, tg_tensor *const *v)
{
    tg_tensor *a = v[st->a], *b = v[st->b], *c = v[st->c];
    switch (st->op) {
    case OP_ADD: return tg_add(a, b);
    case OP_SUB: return tg_sub(a, b);
    case OP_MUL: return tg_mul(a, b);
    case OP_DIV: return tg_div(a, tg_add_scalar(tg_mul(b, b), 1.0));
    case OP_TANH: return tg_tanh(a);
    case OP_SIGMOID: return tg_sigmoid(a);
    case OP_SIN: return tg_sin(a);
    case OP_EXP_TANH: return tg_exp(tg_tanh(a));
    case OP_CONCAT_SLICE: { /* a used twice in one node, and b * a */
        tg_tensor *e = full(a), *parts[3] = {e, tg_mul(e, b), e};
        return tg_slice(tg_concat(3, parts, 1), 1, st->k, st->k + 4, 1);
    }
    case OP_SUM_AXIS: return tg_sum(full(a), 1, (const int[]){st->k % 2}, true);
    case OP_MATMUL:
        return tg_mul_scalar(tg_matmul(tg_matmul(full(a), tg_transpose(full(b), 0, 1)),
                                       full(c)), 0.1);
    case OP_LAYER_NORM: /* three outputs, one of them used */
        return tg_layer_norm(full(a), 1, tg_reshape(tg_slice(full(b), 0, 0, 1, 1), 1,
                                                    (const int64_t[]){4}),
                             st->k % 2 ? NULL : tg_reshape(tg_slice(full(c), 0, 1, 2, 1), 1,
                                                          (const int64_t[]){4}), 1e-5);
    case OP_SHAPE_ONLY: /* b only through its shape */
        return tg_add(a, tg_full_like(b, 0.5));
    case OP_TRANSPOSE_RESHAPE:
        return tg_reshape(tg_transpose(full(a), 0, 1), 2, (const int64_t[]){3, 4});
    case OP_WHERE: return tg_where(tg_gt(a, b), a, tg_mul(b, c));
    case OP_MAXIMUM: return tg_maximum(a, b);
    case OP_SPLIT_SWAP: { /* views of one value, put back in another order */
        tg_tensor *parts[2];
        if (tg_split(full(a), 1, 2, (const int64_t[]){1, 3}, parts) != TG_OK)
            return NULL;
        tg_tensor *swapped[2] = {parts[1], parts[0]};
        return tg_concat(2, swapped, 1); /* the parts belong to the scope */
    }
    case OP_MEAN: return tg_mean(a, 0, NULL, false);
    case OP_POW: return tg_pow(tg_add_scalar(tg_sigmoid(a), 0.5), tg_tanh(b));
    case N_OPS: break;
    }
    return NULL;
}

/* runs the program on the parameters v[0..n_params); fills v */
static bool run(const program *p, tg_tensor **v)
{
    for (int s = 0; s < p->n_steps; s++)
        if (!(v[p->n_params + s] = apply(&p->steps[s], v)))
            return false;
    return true;
}

/* which inputs of a step its result depends on through data (not only
 * through their shape): bit 0 a, bit 1 b, bit 2 c */
static int data_inputs(const step *st)
{
    switch (st->op) {
    case OP_TANH: case OP_SIGMOID: case OP_SIN: case OP_EXP_TANH: case OP_SUM_AXIS:
    case OP_SHAPE_ONLY: case OP_TRANSPOSE_RESHAPE: case OP_SPLIT_SWAP: case OP_MEAN:
        return 1;
    case OP_MATMUL: case OP_WHERE: return 7;
    case OP_LAYER_NORM: return st->k % 2 ? 3 : 7;
    default: return 3;
    }
}

/* reach[v]: value v depends on parameter i (bit i) through data */
static void reachability(const program *p, unsigned *reach)
{
    for (int i = 0; i < p->n_params; i++)
        reach[i] = 1u << i;
    for (int s = 0; s < p->n_steps; s++) {
        const step *st = &p->steps[s];
        int m = data_inputs(st);
        reach[p->n_params + s] = (m & 1 ? reach[st->a] : 0) | (m & 2 ? reach[st->b] : 0) |
                                 (m & 4 ? reach[st->c] : 0);
    }
}

static tg_tensor *param_value(const program *p, int i, tg_generator *gen)
{
    int k = p->pshape[i];
    return tg_rand_uniform(gen, TG_FLOAT64, shapes[k].ndim, shapes[k].dims, -1, 1);
}

typedef struct trial_result {
    int compared, unused;
} trial_result;

static void trial(uint64_t seed, trial_result *res)
{
    program p;
    draw(&p, seed);
    tg_generator *gen = tg_generator_new(seed);
    tg_tensor *params[MAX_PARAMS], *v[MAX_VALUES], *ys[MAX_YS], *r[MAX_YS];
    for (int i = 0; i < p.n_params; i++) {
        params[i] = v[i] = param_value(&p, i, gen);
        tg_set_requires_grad(params[i], true);
    }
    if (!run(&p, v)) {
        tt_fail(__FILE__, __LINE__, "seed %llu: eager program failed: %s",
                (unsigned long long)seed, tg_last_error());
        tg_generator_free(gen);
        return;
    }
    for (int i = 0; i < p.n_ys; i++) {
        ys[i] = v[p.ys[i]];
        r[i] = tg_rand_uniform(gen, TG_FLOAT64, tg_ndim(ys[i]), tg_shape(ys[i]), -1, 1);
    }
    tg_tensor *eager[MAX_PARAMS];
    CHECK_OK(tg_autograd_grad(p.n_ys, ys, r, p.n_params, params, eager, false, false));

    /* the same program as a graph: parameters as placeholders or variables */
    tg_graph *g = tg_graph_new("random");
    tg_tensor *q[MAX_PARAMS], *w[MAX_VALUES], *sy[MAX_YS], *dq[MAX_PARAMS];
    tg_tensor *feeds[MAX_PARAMS], *feed_values[MAX_PARAMS];
    int n_feeds = 0;
    for (int i = 0; i < p.n_params; i++) {
        int k = p.pshape[i];
        if (rnd(2)) {
            q[i] = tg_variable(g, NULL, params[i]);
        } else {
            q[i] = tg_placeholder(g, NULL, TG_FLOAT64, shapes[k].ndim, shapes[k].dims);
            feeds[n_feeds] = q[i];
            feed_values[n_feeds++] = params[i];
        }
        w[i] = q[i];
    }
    tg_graph_begin(g);
    bool built = run(&p, w);
    tg_graph_end();
    CHECK(built);
    for (int i = 0; built && i < p.n_ys; i++)
        sy[i] = w[p.ys[i]];
    tg_status st = built ? tg_graph_gradients(g, p.n_ys, sy, r, p.n_params, q, dq)
                         : TG_ERR_ARG;
    CHECK_OK(st);
    CHECK_OK(tg_graph_verify(g));
    tg_tensor *fetch[MAX_PARAMS], *got[MAX_PARAMS];
    int slot[MAX_PARAMS], n_fetch = 0;
    for (int i = 0; st == TG_OK && i < p.n_params; i++) {
        slot[i] = dq[i] ? n_fetch : -1;
        if (dq[i])
            fetch[n_fetch++] = dq[i];
    }
    tg_session *s = tg_session_new(g);
    tg_session_set_executor(s, rnd(2) ? TG_EXECUTOR_PARALLEL : TG_EXECUTOR_SERIAL);
    tg_session_set_memory_plan(s, rnd(4) != 0);
    if (st == TG_OK && n_fetch)
        CHECK_OK(st = tg_session_run(s, n_feeds, feeds, feed_values, n_fetch, fetch, got, 0,
                                     NULL));
    unsigned reach[MAX_VALUES], wanted = 0;
    reachability(&p, reach);
    for (int i = 0; i < p.n_ys; i++)
        wanted |= reach[p.ys[i]];
    for (int i = 0; i < p.n_params; i++) {
        tt_checks++;
        if (!eager[i] != !((wanted >> i) & 1))
            tt_fail(__FILE__, __LINE__, "seed %llu: parameter %d %s the outputs but has %s "
                    "eager gradient", (unsigned long long)seed, i,
                    (wanted >> i) & 1 ? "reaches" : "does not reach", eager[i] ? "an" : "no");
    }
    for (int i = 0; st == TG_OK && i < p.n_params; i++) {
        tt_checks++;
        /* a parameter the outputs do not depend on has no gradient in
         * either mode (NULL, as in PyTorch's allow_unused) */
        if (!eager[i] || slot[i] < 0) {
            if (eager[i] || slot[i] >= 0)
                tt_fail(__FILE__, __LINE__, "seed %llu: parameter %d has a gradient in "
                        "%s mode only", (unsigned long long)seed, i,
                        eager[i] ? "eager" : "graph");
            res->unused++;
            continue;
        }
        double d = tt_rel_diff(got[slot[i]], eager[i], 1.0);
        if (!(d <= 1e-10))
            tt_fail(__FILE__, __LINE__, "seed %llu: gradient of parameter %d differs from "
                    "eager by %g", (unsigned long long)seed, i, d);
        res->compared++;
    }
    for (int i = 0; i < p.n_params; i++)
        tg_release(eager[i]);
    tg_session_free(s);
    tg_graph_free(g);
    tg_generator_free(gen);
}

static void test_random_graphs(void)
{
    trial_result res = {0, 0};
    for (uint64_t seed = 1; seed <= 300; seed++) {
        tg_scope_begin();
        trial(seed, &res);
        tg_scope_end();
    }
    printf("  300 programs: %d gradients compared, %d parameters without one\n",
           res.compared, res.unused);
    CHECK(res.compared > 500);
    CHECK(res.unused > 10); /* the shape-only uses happen */
}

int main(void)
{
    RUN(test_random_graphs);
    return tt_finish();
}
