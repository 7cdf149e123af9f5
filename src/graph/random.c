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
 *   rand_uniform(shape, state; a, b, dtype, like) -> U(a, b) draws
 *   rand_normal(shape, state; a, b, dtype, like) -> N(a, b^2) draws
 *   (the draws of tg_rand_uniform / tg_rand_normal; shape: int64 1-D, the
 *   dims as values, which may be known only when the graph runs, as
 *   full_by's; like = 1: any tensor, read for its shape only, so that the
 *   draws take its dims wherever they are known)
 *
 * tg__graph_random_state(g, gen) gives the value standing for gen's state
 * in g, making it a variable of g ("<generator>" names) on first use. */
#include "graph/graph_impl.h"

#include "ops/op.h"

#include <stdio.h>
#include <string.h>

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

/* ---- uniform and normal draws of a shape given as values ------------------------- */
typedef struct draw_attrs {
    double a, b; /* uniform: low, high; normal: mean, std */
    int64_t dtype;
    bool like;
} draw_attrs;
static const tg_attr_spec draw_specs[] = {
    TG_SPEC_FLOAT(draw_attrs, a, 0), TG_SPEC_FLOAT(draw_attrs, b, 1),
    TG_SPEC_INT(draw_attrs, dtype, TG_FLOAT32, TG_RANGE(0, TG_NUM_DTYPES - 1)),
    TG_SPEC_BOOL(draw_attrs, like, false), {0}};
static const tg_arg_spec draw_in[] = {{"shape", TG_DTS_ANY | TG_ARG_NO_GRAD},
                                      {"state", TG_DT(TG_INT64) | TG_ARG_NO_GRAD}, {0}};
static const tg_arg_spec draw_out[] = {{"y", TG_DTS_FLOAT}, {0}};

static tg_status draw_infer(tg_op_ctx *c)
{
    const draw_attrs *a = c->attr;
    if (!tg_dtype_is_float((tg_dtype)a->dtype))
        return tg__error(TG_ERR_DTYPE, "%s: expected float32 or float64, got %s",
                         c->op->name, tg_dtype_name((tg_dtype)a->dtype));
    if (check_state(c->op->name, c->in[1]) != TG_OK)
        return tg_last_status();
    const tg_tensor *x = c->in[0];
    if (a->like)
        return tg_infer_set(c, 0, (tg_dtype)a->dtype, x->ndim, x->shape);
    if (x->dtype != TG_INT64)
        return tg__error(TG_ERR_DTYPE, "%s: the shape must be int64, got %s", c->op->name,
                         tg_dtype_name(x->dtype));
    return tg__infer_by_shape(c, x, &(tg_ints){0}, (tg_dtype)a->dtype);
}

static tg_status draw_kernel(tg_op_ctx *c, bool normal)
{
    const draw_attrs *a = c->attr;
    tg_tensor *s = c->in[1], *y = c->out[0];
    if (!tg_is_contiguous(s) || !tg_is_contiguous(y))
        return tg__error(TG_ERR_INTERNAL, "%s: the state or the output is not contiguous",
                         c->op->name);
    (normal ? tg__normal_fill : tg__uniform_fill)((uint64_t *)tg__base(s), y->dtype,
                                                  tg__base(y), y->numel, a->a, a->b);
    s->storage->version++; /* written in place */
    return TG_OK;
}
static tg_status uniform_kernel(tg_op_ctx *c) { return draw_kernel(c, false); }
static tg_status normal_kernel(tg_op_ctx *c) { return draw_kernel(c, true); }

const tg_op_def tg_op_rand_uniform = {
    .name = "rand_uniform", .n_in = 2, .n_out = 1, .inputs = draw_in, .outputs = draw_out,
    .attrs = {draw_specs, sizeof(draw_attrs)}, .flags = TG_OP_RANDOM, .nondiff = true,
    .infer = draw_infer, .kernel = {[TG_CPU] = uniform_kernel}};
const tg_op_def tg_op_rand_normal = {
    .name = "rand_normal", .n_in = 2, .n_out = 1, .inputs = draw_in, .outputs = draw_out,
    .attrs = {draw_specs, sizeof(draw_attrs)}, .flags = TG_OP_RANDOM, .nondiff = true,
    .infer = draw_infer, .kernel = {[TG_CPU] = normal_kernel}};

extern const tg_op_def tg_op_shape_of;

/* x where shape is shape_of(x) in a graph, else NULL: the draws then take
 * x's dims, known when a plan is made for them, instead of values known
 * only when the graph runs (which a consumer checked against a known size
 * could not accept at build) */
static tg_tensor *shape_source(const tg_tensor *shape)
{
    tg_graph *g = shape->graph;
    if (!g || shape->value < 0)
        return NULL;
    const tg_gnode *n = &g->nodes[g->values[shape->value].node];
    if (n->kind != TG_GNODE_OP || n->op != &tg_op_shape_of)
        return NULL;
    return tg__graph_symbolic(g, n->in[0]); /* owned by the caller */
}

static tg_tensor *draw(const tg_op_def *op, const char *fn, tg_generator *gen,
                       tg_tensor *shape, bool like, tg_dtype dt, double a, double b)
{
    tg_graph *g = tg_graph_current();
    if (!g)
        g = shape->graph;
    if (g && tg__graph_random_state(g, gen, fn) < 0)
        return NULL;
    tg_tensor *in[2] = {shape, tg__generator_state(gen)};
    tg_attr at[4] = {TG_AF("a", a), TG_AF("b", b), TG_AI("dtype", (int64_t)dt),
                     TG_AI("like", like)};
    return tg_op_call(op, 2, in, at, 4);
}

static tg_tensor *draw_by(const tg_op_def *op, const char *fn, tg_generator *gen,
                          tg_tensor *shape, tg_dtype dt, double a, double b)
{
    if (!gen || !shape)
        return tg__error_null(TG_ERR_ARG, "%s: %s is NULL", fn, gen ? "shape" : "generator");
    if (shape->dtype != TG_INT64)
        return tg__error_null(TG_ERR_DTYPE, "%s: the shape must be int64, got %s", fn,
                              tg_dtype_name(shape->dtype));
    tg_tensor *x = shape_source(shape);
    tg_tensor *y = draw(op, fn, gen, x ? x : shape, x != NULL, dt, a, b);
    tg_release(x);
    return y;
}

tg_tensor *tg_rand_uniform_by(tg_generator *gen, tg_tensor *shape, tg_dtype dt, double lo,
                              double hi)
{
    return draw_by(&tg_op_rand_uniform, "tg_rand_uniform_by", gen, shape, dt, lo, hi);
}

tg_tensor *tg_rand_normal_by(tg_generator *gen, tg_tensor *shape, tg_dtype dt, double mean,
                             double std)
{
    return draw_by(&tg_op_rand_normal, "tg_rand_normal_by", gen, shape, dt, mean, std);
}

tg_tensor *tg__rand_like(tg_tensor *x, tg_generator *gen, tg_dtype dt, bool normal, double a,
                         double b)
{
    if (!x || !gen)
        return tg__error_null(TG_ERR_ARG, "rand_like: %s is NULL", x ? "generator" : "x");
    return draw(normal ? &tg_op_rand_normal : &tg_op_rand_uniform,
                normal ? "rand_normal" : "rand_uniform", gen, x, true, dt, a, b);
}

const tg_op_def *const tg_ops_random[] = {&tg_op_bernoulli, &tg_op_rand_uniform,
                                          &tg_op_rand_normal, NULL};
