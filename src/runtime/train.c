/* Training-step builders for graphs: the gradients and an optimizer's
 * update made of op and assign nodes, so that one session run is one
 * training step. The update is the algorithm's own (its graph form in
 * src/optim, written with the same formula as its fused loop, formula.h):
 * given the same gradients the parameters get the same bits as eager
 * steps. tg_graph_optim updates a tg_optimizer's own state; tg_graph_sgd
 * keeps SGD's momentum in variables of the graph. */
#include "optim/optim_impl.h"
#include "runtime/runtime_impl.h"
#include "tg/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the value ids of the parameters: distinct floating-point variables of g
 * (first[v]: 1 + the first parameter that is value v, to name duplicates) */
static tg_status param_ids(const tg_graph *g, const char *fn, int n, tg_tensor *const *params,
                           tg_tensor *const *given, int *ids)
{
    int *first = calloc((size_t)g->n_values + 1, sizeof *first);
    if (!first)
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", fn);
    tg_status s = TG_OK;
    for (int i = 0; i < n && s == TG_OK; i++) {
        if (given && !given[i]) { /* not updated: need not be in the graph */
            ids[i] = -1;
            continue;
        }
        ids[i] = tg__graph_value_of(g, params[i], fn, "a parameter");
        if (ids[i] < 0) {
            s = tg_last_status();
            break;
        }
        const tg_gnode *node = &g->nodes[g->values[ids[i]].node];
        if (node->kind != TG_GNODE_VARIABLE)
            s = tg__error(TG_ERR_ARG, "%s: parameter %d ('%s') is a %s, not a variable "
                          "(tg_variable, tg_variable_ref)", fn, i, node->name,
                          tg__gnode_op_name(node));
        else if (!tg_dtype_is_float(g->values[ids[i]].meta.dtype))
            s = tg__error(TG_ERR_DTYPE, "%s: parameter %d ('%s') is %s, expected float32 or "
                          "float64", fn, i, node->name,
                          tg_dtype_name(g->values[ids[i]].meta.dtype));
        else if (first[ids[i]])
            s = tg__error(TG_ERR_ARG, "%s: parameters %d and %d are the same variable '%s'",
                          fn, first[ids[i]] - 1, i, node->name);
        else
            first[ids[i]] = i + 1;
    }
    free(first);
    return s;
}

/* a new variable holding init, named base (or base_1, ...) */
static tg_tensor *named_variable(tg_graph *g, const char *base, tg_tensor *init)
{
    char name[320];
    snprintf(name, sizeof name, "%s", base);
    for (int k = 1; tg__hmap_get(&g->names, name) >= 0; k++)
        snprintf(name, sizeof name, "%s_%d", base, k);
    return tg_variable(g, name, init);
}

/* the symbolic variable of concrete t in g, made (named base) unless g
 * has it; NULL with an error */
static tg_tensor *state_variable(tg_graph *g, tg_tensor *t, const char *base, const char *fn)
{
    if (!t || tg__graph_state_variable(g, t, base, fn) != TG_OK)
        return NULL;
    return tg__publish(tg__graph_symbolic(g, tg__hmap_get(&g->captured, t)));
}

/* one build: the algorithm, its options and where its state lives */
typedef struct build {
    tg_graph *g;
    const char *fn;
    const tg__optim_algo *algo;
    const void *opts;
    int n;
    tg_tensor **xs, **grads; /* symbolic parameters and their gradients */
    tg_tensor **slots;       /* n * TG_OPTIM_MAX_SLOTS state variables, NULL unused */
    tg_tensor **k;           /* n * TG_OPTIM_MAX_SCALARS: each parameter's scalars */
    tg_tensor *step;         /* int64 [n] variable of update counts, or NULL */
    tg_tensor *inc;          /* int64 [n] constant: 1 for the parameters updated */
    tg_tensor *counted;      /* the assign of step + inc */
    tg_tensor *lr;           /* float64 0-d */
    tg_tensor *scalars[2][TG_OPTIM_MAX_SCALARS]; /* per dtype: float32, float64 */
} build;

/* parameter i's per-step scalars: element i of the [n] ones (of its dtype) */
static tg_status param_scalars(build *b, int i, tg_tensor *stepf)
{
    if (!b->xs[i])
        return TG_OK; /* given no gradient: not updated */
    tg_dtype dt = b->xs[i]->dtype;
    tg_tensor **all = b->scalars[dt == TG_FLOAT64], **k = &b->k[i * TG_OPTIM_MAX_SCALARS];
    tg_status s = TG_OK;
    if (!all[0] && b->algo->n_scalars > 0)
        s = b->algo->graph_scalars(b->opts, b->lr, stepf, dt, all);
    for (int j = 0; j < b->algo->n_scalars && s == TG_OK; j++) {
        if (!all[j]) { /* not needed (SGD's first step without momentum) */
            k[j] = NULL;
            continue;
        }
        /* element i as [1], which broadcasts like a scalar; 0-d for a 0-d parameter */
        k[j] = all[j]->ndim == 0 ? all[j] : tg_slice(all[j], 0, i, i + 1, 1);
        if (k[j] && all[j]->ndim && b->xs[i]->ndim == 0)
            k[j] = tg_reshape(k[j], 0, NULL);
        if (!k[j])
            s = tg_last_status();
    }
    return s;
}

/* The step counts go up by one (the scalars read the assign's result, so
 * it runs before them) and the per-step scalars, made before the
 * gradients: with the smaller ids, a serial plan computes them early
 * (they are tiny), and each update can run as soon as its gradient is
 * there, which then dies (src/runtime/plan.c, order()). Which parameters
 * get a gradient is not known yet: inc counts all; fix_counts corrects it. */
static tg_status make_scalars(build *b)
{
    tg_tensor *stepf = NULL;
    if (b->step) {
        b->inc = tg__publish(tg__alloc(TG_INT64, 1, (int64_t[]){b->n}));
        for (int i = 0; b->inc && i < b->n; i++)
            ((int64_t *)tg__base(b->inc))[i] = 1;
        b->counted = tg_assign(b->step, tg_add(b->step, b->inc));
        if (!(stepf = tg_cast(b->counted, TG_FLOAT64)))
            return tg_last_status();
    }
    tg_status s = TG_OK;
    for (int i = 0; i < b->n && s == TG_OK; i++)
        s = param_scalars(b, i, stepf);
    return s;
}

/* a parameter without a gradient is not updated and keeps its count:
 * written into the captured constant itself (by reference, and no plan
 * has read it yet) */
static void fix_counts(build *b)
{
    for (int i = 0; b->inc && i < b->n; i++)
        ((int64_t *)tg__base(b->inc))[i] = b->grads[i] != NULL;
}

/* do the updates need node `node` (through data and control edges)?
 * Node ids are a topological order: one sweep down from the updates. */
static bool updates_need(const tg_graph *g, int n, tg_tensor *const *updates, int node)
{
    bool *need = calloc((size_t)g->n_nodes, sizeof *need);
    if (!need)
        return false; /* the caller then adds an edge: never wrong */
    int top = node;
    for (int i = 0; i < n; i++) {
        if (!updates[i])
            continue; /* a parameter given no gradient (tg_graph_optim_apply) */
        int u = g->values[updates[i]->value].node;
        need[u] = true;
        top = u > top ? u : top;
    }
    for (int id = top; id > node; id--) {
        if (!need[id])
            continue;
        for (int k = 0; k < g->nodes[id].n_in; k++)
            need[g->values[g->nodes[id].in[k]].node] = true;
        for (int k = 0; k < g->nodes[id].n_ctrl; k++)
            need[g->nodes[id].ctrl[k]] = true;
    }
    bool r = need[node];
    free(need);
    return r;
}

static tg_status build_updates(build *b, tg_tensor **updates)
{
    tg_graph *g = b->g;
    int n = b->n, last = -1;
    tg_status s = TG_OK;
    for (int i = 0; i < n && s == TG_OK; i++) {
        updates[i] = b->xs[i];
        if (!b->grads[i])
            continue; /* the loss does not depend on it */
        tg__optim_gparam c = {.opts = b->opts, .dt = b->xs[i]->dtype, .p = b->xs[i],
                              .g = b->grads[i]};
        memcpy(c.s, &b->slots[i * TG_OPTIM_MAX_SLOTS], sizeof c.s);
        memcpy(c.k, &b->k[i * TG_OPTIM_MAX_SCALARS], sizeof c.k);
        if (!(updates[i] = b->algo->graph_update(&c)))
            s = tg_last_status();
        /* a state assign the parameter's does not read runs first */
        if (s == TG_OK && c.extra)
            s = tg_graph_add_control_dep(updates[i], c.extra);
        last = i;
    }
    fix_counts(b);
    /* an update that does not read the step numbers (Adadelta, RMSprop,
     * SGD without momentum) still counts its steps: one update runs the
     * count first */
    if (s == TG_OK && b->counted && last >= 0 &&
        !updates_need(g, n, updates, g->values[b->counted->value].node))
        s = tg_graph_add_control_dep(updates[last], b->counted);
    return s;
}

/* checks, step counts and scalars, gradients and updates. make_state
 * makes the state variables inside the graph scope: first the step
 * counts (b->step; slots false), then, after the gradients, the buffers
 * (b->slots): only parameters with a gradient get them, as eager steps
 * create them */
typedef tg_status (*make_state_fn)(build *b, void *ctx, bool slots);
/* the graph of the given gradients (the first one there is), else the
 * one being built; NULL with an error if none or if they disagree */
static tg_graph *graph_of_grads(const build *b, tg_tensor *const *grads)
{
    tg_graph *g = NULL;
    for (int i = 0; i < b->n; i++) {
        if (!grads[i])
            continue;
        if (!grads[i]->graph || (g && grads[i]->graph != g))
            return tg__error_null(TG_ERR_ARG, "%s: gradient %d is not a value of the graph "
                                  "of the others", b->fn, i);
        g = grads[i]->graph;
    }
    if (!g && !(g = tg_graph_current()))
        return tg__error_null(TG_ERR_ARG, "%s: no gradient is given and no graph is being "
                              "built", b->fn);
    return g;
}

/* given gradients: each of its parameter's dtype and shape */
static tg_status take_grads(build *b, tg_tensor *const *grads)
{
    for (int i = 0; i < b->n; i++) {
        tg_tensor *d = grads[i], *x = b->xs[i];
        if (d && d->graph != b->g)
            return tg__error(TG_ERR_ARG, "%s: gradient %d is not a value of graph '%s'", b->fn,
                             i, b->g->name);
        if (d && (d->dtype != x->dtype || !tg__shape_eq(d->ndim, d->shape, x->ndim, x->shape)))
            return tg__error(TG_ERR_SHAPE, "%s: gradient %d (%s, %d dims) does not have the "
                             "dtype and shape of its parameter '%s' (%s, %d dims)", b->fn, i,
                             tg_dtype_name(d->dtype), d->ndim, tg_graph_node_name(x),
                             tg_dtype_name(x->dtype), x->ndim);
        b->grads[i] = d;
    }
    return TG_OK;
}

/* the update from a loss (its gradients built here) or from given
 * gradients (loss NULL) */
static tg_status run_build(build *b, tg_tensor *loss, tg_tensor *const *given,
                           tg_tensor *const *params, tg_tensor *lr, make_state_fn make_state,
                           void *ctx, tg_tensor **updates)
{
    if ((given ? false : !loss || !loss->graph) || b->n < 1 || !params || !updates)
        return tg__error(TG_ERR_ARG, "%s: expected a symbolic loss, n >= 1 parameters and an "
                         "updates array", b->fn);
    for (int i = 0; i < b->n; i++)
        updates[i] = NULL;
    b->g = given ? graph_of_grads(b, given) : loss->graph;
    if (!b->g)
        return tg_last_status();
    if (!b->algo->graph_update)
        return tg__error(TG_ERR_UNSUPPORTED, "%s: the %s optimizer has no graph form", b->fn,
                         b->algo->name);
    if (b->algo->validate(b->opts) != TG_OK) {
        char why[256]; /* the message buffer is about to be rewritten */
        snprintf(why, sizeof why, "%s", tg_last_error());
        return tg__error(TG_ERR_ARG, "%s: %s", b->fn, why);
    }
    if (lr && (lr->graph != b->g || lr->ndim != 0 || !tg_dtype_is_float(lr->dtype)))
        return tg__error(TG_ERR_ARG, "%s: lr must be a 0-d floating-point value of graph '%s'",
                         b->fn, b->g->name);
    int n = b->n;
    int *ids = malloc((size_t)n * sizeof *ids);
    tg_tensor **mem = calloc((size_t)n * (2 + TG_OPTIM_MAX_SLOTS + TG_OPTIM_MAX_SCALARS),
                             sizeof *mem);
    tg_status s = ids && mem ? param_ids(b->g, b->fn, n, params, given, ids)
                             : tg__error(TG_ERR_NOMEM, "%s: out of memory", b->fn);
    tg_scope_begin(); /* intermediates go; the updates are kept */
    if (s == TG_OK) {
        b->xs = mem;
        b->grads = mem + n;
        b->slots = mem + 2 * n;
        b->k = b->slots + n * TG_OPTIM_MAX_SLOTS;
        for (int i = 0; i < n && s == TG_OK; i++)
            if (ids[i] >= 0 && !(b->xs[i] = tg__publish(tg__graph_symbolic(b->g, ids[i]))))
                s = tg_last_status();
    }
    if (s == TG_OK && (s = tg_graph_begin(b->g)) == TG_OK) {
        /* the learning rate in double, as the loops compute their scalars */
        b->lr = !lr ? tg_scalar(TG_FLOAT64, *(const double *)b->opts) /* lr comes first */
                : lr->dtype == TG_FLOAT64 ? lr : tg_cast(lr, TG_FLOAT64);
        s = b->lr ? make_state(b, ctx, false) : tg_last_status();
        if (s == TG_OK)
            s = make_scalars(b);
        if (s == TG_OK)
            s = given ? take_grads(b, given)
                      : tg_graph_gradients(b->g, 1, &loss, NULL, n, b->xs, b->grads);
        if (s == TG_OK)
            s = make_state(b, ctx, true);
        if (s == TG_OK)
            s = build_updates(b, updates);
        tg_graph_end();
    }
    for (int i = 0; i < n; i++)
        if (s == TG_OK)
            tg_retain(updates[i]);
        else
            updates[i] = NULL;
    tg_scope_end();
    for (int i = 0; i < n && s == TG_OK; i++)
        tg__publish(updates[i]);
    free(ids);
    free(mem);
    return s;
}

/* ---- tg_graph_optim: a tg_optimizer's state ------------------------------------- */

static tg_status optimizer_state(build *b, void *ctx, bool slots)
{
    tg_optimizer *o = ctx;
    char name[320];
    if (!slots) {
        snprintf(name, sizeof name, "%s/step", o->algo->name);
        b->step = state_variable(b->g, o->step_t, name, b->fn);
        return b->step ? TG_OK : tg_last_status();
    }
    for (int i = 0; i < o->n; i++) {
        for (int k = 0; k < o->algo->n_slots && b->grads[i]; k++) {
            if (!o->algo->slot_used(&o->opts, k))
                continue;
            snprintf(name, sizeof name, "%s/%s", tg_graph_node_name(b->xs[i]),
                     o->algo->slot_names[k]);
            tg_tensor *v = state_variable(b->g, tg__optim_state(o, i, k), name, b->fn);
            if (!(b->slots[i * TG_OPTIM_MAX_SLOTS + k] = v))
                return tg_last_status();
        }
    }
    return TG_OK;
}

tg_status tg_graph_optim(tg_optimizer *opt, tg_tensor *loss, tg_tensor *lr, tg_tensor **updates)
{
    if (!opt)
        return tg__error(TG_ERR_ARG, "tg_graph_optim: the optimizer is NULL");
    build b = {.fn = "tg_graph_optim", .algo = opt->algo, .opts = &opt->opts, .n = opt->n};
    return run_build(&b, loss, NULL, opt->params, lr, optimizer_state, opt, updates);
}

tg_status tg_graph_optim_apply(tg_optimizer *opt, tg_tensor *const *grads, tg_tensor *lr,
                               tg_tensor **updates)
{
    if (!opt || !grads)
        return tg__error(TG_ERR_ARG, "tg_graph_optim_apply: the optimizer or the gradients "
                         "are NULL");
    build b = {.fn = "tg_graph_optim_apply", .algo = opt->algo, .opts = &opt->opts, .n = opt->n};
    return run_build(&b, NULL, grads, opt->params, lr, optimizer_state, opt, updates);
}

/* ---- tg_graph_sgd: momentum buffers as variables of the graph ------------------- */

/* The momentum buffer of p: the variable "<p>/momentum" when the caller
 * made one of p's dtype and shape (tg_variable_ref: graphs built for
 * several batch sizes then share one buffer), else a new one of zeros. */
static tg_tensor *momentum_buffer(build *b, tg_tensor *p)
{
    char base[300];
    snprintf(base, sizeof base, "%s/momentum", tg_graph_node_name(p));
    int node = tg__hmap_get(&b->g->names, base);
    if (node >= 0 && b->g->nodes[node].kind == TG_GNODE_VARIABLE) {
        tg_tensor *buf = tg_graph_find(b->g, base);
        if (buf && buf->dtype == p->dtype &&
            tg__shape_eq(buf->ndim, buf->shape, p->ndim, p->shape))
            return buf;
        return tg__error_null(TG_ERR_ARG, "tg_graph_sgd: variable '%s' is not a momentum "
                              "buffer for '%s' (dtype or shape differ)", base,
                              tg_graph_node_name(p));
    }
    return named_variable(b->g, base, tg_zeros(tg_dtype_of(p), tg_ndim(p), tg_shape(p)));
}

static tg_status sgd_state(build *b, void *ctx, bool slots)
{
    const tg_sgd_opts *h = ctx;
    if (h->momentum == 0)
        return TG_OK; /* no state: no first step to tell */
    if (!slots) {
        b->step = named_variable(b->g, "sgd/step", tg_zeros(TG_INT64, 1, (int64_t[]){b->n}));
        return b->step ? TG_OK : tg_last_status();
    }
    for (int i = 0; i < b->n; i++)
        if (b->grads[i] && !(b->slots[i * TG_OPTIM_MAX_SLOTS] = momentum_buffer(b, b->xs[i])))
            return tg_last_status();
    return TG_OK;
}

tg_status tg_graph_sgd(tg_tensor *loss, int n, tg_tensor *const *params,
                       const tg_sgd_opts *opts, tg_tensor *lr, tg_tensor **updates)
{
    tg_sgd_opts h = opts ? *opts : tg_sgd_defaults();
    build b = {.fn = "tg_graph_sgd", .algo = &tg__optim_sgd, .opts = &h, .n = n};
    return run_build(&b, loss, NULL, params, lr, sgd_state, &h, updates);
}
