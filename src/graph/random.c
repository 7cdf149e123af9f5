/* Random ops as graph nodes. A random op (TG_OP_RANDOM) takes the state of
 * a generator as its last input: the int64 [4] tensor a tg_generator keeps
 * its xoshiro256** words in (core/generator.c), which the graph holds as a
 * variable by reference. The kernel draws from that state and advances it
 * in place, so:
 *  - every run draws new numbers (the node is never folded, merged or
 *    dropped: passes treat random ops like assigns, see passes/state.c);
 *  - a graph run advances the very generator eager code draws from: the
 *    same seed and the same sequence of draws give eager's numbers;
 *  - two random nodes on one generator draw in creation order, also in
 *    the parallel executor (the builder orders writers of a variable after
 *    its earlier readers and writers, as it does for assigns).
 *
 *   bernoulli(x, state; p) -> bool of x's shape, true with probability p
 *   (x is read for its shape only, which may have unknown dims)
 *
 * tg__graph_random_state(g, gen) gives the value standing for gen's state
 * in g, making it a variable of g ("<generator>" names) on first use. */
#include "graph/graph_impl.h"

#include <stdio.h>

typedef struct bern_attrs {
    double p;
} bern_attrs;
static const tg_attr_spec bern_specs[] = {TG_SPEC_FLOAT(bern_attrs, p, 0.5), {0}};
static const tg_arg_spec bern_in[] = {{"x", TG_DTS_ANY | TG_ARG_NO_GRAD},
                                      {"state", TG_DT(TG_INT64) | TG_ARG_NO_GRAD}, {0}};
static const tg_arg_spec bern_out[] = {{"mask", TG_DTS_BOOL}, {0}};

static tg_status check_state(const char *op, const tg_tensor *s)
{
    if (s->dtype != TG_INT64 || s->ndim != 1 || s->shape[0] != 4)
        return tg__error(TG_ERR_ARG, "%s: the last input must be a generator's state "
                         "(int64 [4])", op);
    return TG_OK;
}

static tg_status bern_infer(tg_op_ctx *c)
{
    const bern_attrs *a = c->attr;
    if (!(a->p >= 0 && a->p <= 1))
        return tg__error(TG_ERR_ARG, "bernoulli: p must be in [0, 1], got %g", a->p);
    if (check_state("bernoulli", c->in[1]) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, TG_BOOL, c->in[0]->ndim, c->in[0]->shape);
}

static tg_status bern_kernel(tg_op_ctx *c)
{
    tg_tensor *s = c->in[1], *m = c->out[0];
    if (!tg_is_contiguous(s))
        return tg__error(TG_ERR_INTERNAL, "bernoulli: the generator state is not "
                         "contiguous");
    tg__bernoulli_fill((uint64_t *)tg__base(s), (uint8_t *)tg__base(m), m->numel,
                       ((const bern_attrs *)c->attr)->p);
    s->storage->version++; /* written in place */
    return TG_OK;
}

const tg_op_def tg_op_bernoulli = {
    .name = "bernoulli", .n_in = 2, .n_out = 1, .inputs = bern_in, .outputs = bern_out,
    .attrs = {bern_specs, sizeof(bern_attrs)}, .flags = TG_OP_RANDOM, .nondiff = true,
    .infer = bern_infer, .kernel = {[TG_CPU] = bern_kernel}};

int tg__graph_random_state(tg_graph *g, tg_generator *gen, const char *fn)
{
    tg_tensor *state = tg__generator_state(gen);
    if (!state) {
        tg__error(TG_ERR_ARG, "%s: generator is NULL", fn);
        return -1;
    }
    int v = tg__hmap_get(&g->captured, state);
    if (v >= 0)
        return v;
    char name[64] = "generator";
    for (int k = 1; tg__hmap_get(&g->names, name) >= 0; k++)
        snprintf(name, sizeof name, "generator_%d", k);
    tg_scope_begin(); /* the graph keeps the node; the handle is dropped */
    tg_tensor *var = tg_variable_ref(g, name, state);
    v = var ? var->value : -1;
    tg_scope_end();
    return v;
}

tg_tensor *tg__graph_bernoulli_like(tg_tensor *x, tg_generator *gen, double p)
{
    tg_graph *g = tg_graph_current();
    if (!g)
        g = x->graph;
    if (!g || tg__graph_random_state(g, gen, "bernoulli") < 0)
        return g ? NULL : tg__error_null(TG_ERR_ARG, "bernoulli: no graph");
    tg_tensor *in[2] = {x, tg__generator_state(gen)};
    tg_attr a = TG_AF("p", p);
    return tg_op_call(&tg_op_bernoulli, 2, in, &a, 1);
}

const tg_op_def *const tg_ops_random[] = {&tg_op_bernoulli, NULL};
