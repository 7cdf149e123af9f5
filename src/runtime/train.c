/* Training-step builders for graphs: SGD with momentum (PyTorch's rule,
 * the one tg_optim_sgd runs eagerly) made of gradient and assign nodes,
 * so that one session run is one training step. Each update is written
 * with the same float operations, in the same order and dtype, as the
 * eager kernel (src/optim/sgd.c): given the same gradients the parameters
 * get the same bits. */
#include "runtime/runtime_impl.h"
#include "tg/ops.h"

#include <stdio.h>
#include <stdlib.h>

static tg_status check_opts(const tg_sgd_opts *h)
{
    if (!(h->lr >= 0))
        return tg__error(TG_ERR_ARG, "tg_graph_sgd: invalid learning rate %g (must be "
                         ">= 0)", h->lr);
    if (!(h->momentum >= 0))
        return tg__error(TG_ERR_ARG, "tg_graph_sgd: invalid momentum %g (must be >= 0)",
                         h->momentum);
    if (!(h->weight_decay >= 0))
        return tg__error(TG_ERR_ARG, "tg_graph_sgd: invalid weight_decay %g (must be "
                         ">= 0)", h->weight_decay);
    if (!(h->dampening == h->dampening))
        return tg__error(TG_ERR_ARG, "tg_graph_sgd: dampening is NaN");
    if (h->nesterov && (h->momentum <= 0 || h->dampening != 0))
        return tg__error(TG_ERR_ARG, "tg_graph_sgd: nesterov momentum requires a "
                         "momentum > 0 and zero dampening (momentum %g, dampening %g)",
                         h->momentum, h->dampening);
    return TG_OK;
}

/* the value ids of the parameters: distinct floating-point variables of g
 * (first[v]: 1 + the first parameter that is value v, to name duplicates) */
static tg_status param_ids(const tg_graph *g, int n, tg_tensor *const *params, int *ids)
{
    int *first = calloc((size_t)g->n_values + 1, sizeof *first);
    if (!first)
        return tg__error(TG_ERR_NOMEM, "tg_graph_sgd: out of memory");
    tg_status s = TG_OK;
    for (int i = 0; i < n && s == TG_OK; i++) {
        ids[i] = tg__graph_value_of(g, params[i], "tg_graph_sgd", "a parameter");
        if (ids[i] < 0) {
            s = tg_last_status();
            break;
        }
        const tg_gnode *node = &g->nodes[g->values[ids[i]].node];
        if (node->kind != TG_GNODE_VARIABLE)
            s = tg__error(TG_ERR_ARG, "tg_graph_sgd: parameter %d ('%s') is a %s, not "
                          "a variable (tg_variable, tg_variable_ref)", i, node->name,
                          tg__gnode_op_name(node));
        else if (!tg_dtype_is_float(g->values[ids[i]].meta.dtype))
            s = tg__error(TG_ERR_DTYPE, "tg_graph_sgd: parameter %d ('%s') is %s, "
                          "expected float32 or float64", i, node->name,
                          tg_dtype_name(g->values[ids[i]].meta.dtype));
        else if (first[ids[i]])
            s = tg__error(TG_ERR_ARG, "tg_graph_sgd: parameters %d and %d are the "
                          "same variable '%s'", first[ids[i]] - 1, i, node->name);
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

typedef struct sgd_build {
    tg_graph *g;
    tg_sgd_opts h;
    tg_tensor *lr;    /* symbolic 0-d, or NULL */
    tg_tensor *first; /* dampening only: 1 on the first step, then 1 - dampening */
} sgd_build;

/* The momentum buffer of p: the variable "<p>/momentum" when the caller
 * made one of p's dtype and shape (tg_variable_ref: graphs built for
 * several batch sizes then share one buffer), else a new one of zeros. */
static tg_tensor *momentum_buffer(sgd_build *b, tg_tensor *p)
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

/* the update of parameter p (symbolic) with gradient d; NULL on failure */
static tg_tensor *sgd_update(sgd_build *b, tg_tensor *p, tg_tensor *d)
{
    const tg_sgd_opts *h = &b->h;
    if (h->maximize)
        d = tg_neg(d);
    if (h->weight_decay != 0)
        d = tg_add(d, tg_mul_scalar(p, h->weight_decay));
    tg_tensor *step = d;
    if (h->momentum != 0) {
        tg_tensor *buf = momentum_buffer(b, p);
        /* on the first step buf is 0 and `first` 1: momentum * 0 + g is g */
        tg_tensor *nb = tg_add(tg_mul_scalar(buf, h->momentum),
                               b->first ? tg_mul(d, b->first) : d);
        tg_tensor *buf_new = tg_assign(buf, nb);
        step = h->nesterov ? tg_add(d, tg_mul_scalar(buf_new, h->momentum)) : buf_new;
    }
    tg_tensor *scaled = b->lr ? tg_mul(step, tg_neg(b->lr)) : tg_mul_scalar(step, -h->lr);
    return tg_assign(p, tg_add(p, scaled));
}

static tg_status build(sgd_build *b, tg_tensor *loss, int n, const int *ids,
                       tg_tensor **updates)
{
    tg_graph *g = b->g;
    tg_tensor **xs = malloc((size_t)n * 2 * sizeof *xs);
    if (!xs)
        return tg__error(TG_ERR_NOMEM, "tg_graph_sgd: out of memory");
    tg_tensor **grads = xs + n;
    tg_status s = TG_OK;
    for (int i = 0; i < n && s == TG_OK; i++)
        if (!(xs[i] = tg__publish(tg__graph_symbolic(g, ids[i]))))
            s = tg_last_status();
    if (s == TG_OK)
        s = tg_graph_gradients(g, 1, &loss, NULL, n, xs, grads);
    if (s == TG_OK && b->h.momentum != 0 && b->h.dampening != 0 &&
        !(b->first = named_variable(g, "sgd/first", tg_scalar(TG_FLOAT64, 1.0))))
        s = tg_last_status();
    for (int i = 0; i < n && s == TG_OK; i++) {
        updates[i] = grads[i] ? sgd_update(b, xs[i], grads[i]) : xs[i];
        if (!updates[i])
            s = tg_last_status();
    }
    if (s == TG_OK && b->first) { /* after every reader of it; every update waits */
        tg_tensor *next = tg_assign(b->first, tg_scalar(TG_FLOAT64, 1.0 - b->h.dampening));
        if (!next)
            s = tg_last_status();
        /* next depends on no update (it reads `first` and a constant), so
         * these edges make no cycle: no search of the graph per edge */
        int after = next ? g->values[next->value].node : -1;
        for (int i = 0; i < n && s == TG_OK; i++)
            if (grads[i] && tg__graph_add_ctrl(g, g->values[updates[i]->value].node, after,
                                               false) != TG_OK)
                s = tg__error(TG_ERR_NOMEM, "tg_graph_sgd: out of memory");
        g->epoch++; /* existing nodes changed: cached plans are stale */
    }
    free(xs);
    return s;
}

tg_status tg_graph_sgd(tg_tensor *loss, int n, tg_tensor *const *params,
                       const tg_sgd_opts *opts, tg_tensor *lr, tg_tensor **updates)
{
    if (!loss || !loss->graph || n < 1 || !params || !updates)
        return tg__error(TG_ERR_ARG, "tg_graph_sgd: expected a symbolic loss, n >= 1 "
                         "parameters and an updates array");
    for (int i = 0; i < n; i++)
        updates[i] = NULL;
    sgd_build b = {loss->graph, opts ? *opts : tg_sgd_defaults(), NULL, NULL};
    tg_status s = check_opts(&b.h);
    if (s == TG_OK && lr && (lr->graph != b.g || lr->ndim != 0 || !tg_dtype_is_float(lr->dtype)))
        s = tg__error(TG_ERR_ARG, "tg_graph_sgd: lr must be a 0-d floating-point value "
                      "of graph '%s'", b.g->name);
    b.lr = lr;
    int *ids = malloc((size_t)n * sizeof *ids);
    if (s == TG_OK && !ids)
        s = tg__error(TG_ERR_NOMEM, "tg_graph_sgd: out of memory");
    if (s == TG_OK)
        s = param_ids(b.g, n, params, ids);
    if (s != TG_OK) {
        free(ids);
        return s;
    }
    tg_scope_begin(); /* intermediates go; the updates are kept */
    if ((s = tg_graph_begin(b.g)) == TG_OK) {
        s = build(&b, loss, n, ids, updates);
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
    return s;
}
