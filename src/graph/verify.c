/* The graph verifier: structural checks (edges exist, arities match the
 * op definitions, values point back at their producers, names are unique,
 * no cycles) and semantic ones (each op's inference, re-run on the stored
 * input metadata, gives the stored output dtypes and shapes). Passes and
 * hand edits run it; every error names the node. */
#include "graph/graph_impl.h"

#include <stdlib.h>
#include <string.h>

#define NODE_FMT "graph '%s': node '%s' (%s): "
#define NODE_ARGS(g, n) (g)->name, (n)->name, tg__gnode_op_name(n)

static tg_status check_edges(const tg_graph *g, int id)
{
    const tg_gnode *n = &g->nodes[id];
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] < 0 || n->in[i] >= g->n_values)
            return tg__error(TG_ERR_INTERNAL, NODE_FMT "input %d refers to value "
                             "%d, which does not exist (the graph has %d values)",
                             NODE_ARGS(g, n), i, n->in[i], g->n_values);
    for (int i = n->n_in; i < tg__gnode_n_preds(n); i++) {
        int p = tg__gnode_pred(g, n, i);
        if (p < 0 || p >= g->n_nodes || p == id)
            return tg__error(TG_ERR_INTERNAL, NODE_FMT "%s %d refers to node %d, "
                             "which does not exist or is itself", NODE_ARGS(g, n),
                             i - n->n_in < n->n_ctrl ? "control dependency"
                                                     : "ordering edge",
                             i - n->n_in < n->n_ctrl ? i - n->n_in
                                                     : i - n->n_in - n->n_ctrl, p);
    }
    for (int o = 0; o < n->n_out; o++) {
        int v = n->out[o];
        if (v < 0 || v >= g->n_values || g->values[v].node != id ||
            g->values[v].index != o)
            return tg__error(TG_ERR_INTERNAL, NODE_FMT "output %d (value %d) does "
                             "not name this node as its producer",
                             NODE_ARGS(g, n), o, v);
    }
    return TG_OK;
}

static tg_status check_arity(const tg_graph *g, const tg_gnode *n)
{
    if (n->kind != TG_GNODE_OP) {
        if (n->n_in != 0 || n->n_out != 1)
            return tg__error(TG_ERR_INTERNAL, NODE_FMT "a source node must have no "
                             "inputs and one output, it has %d and %d",
                             NODE_ARGS(g, n), n->n_in, n->n_out);
        if (n->kind != TG_GNODE_PLACEHOLDER && !n->tensor)
            return tg__error(TG_ERR_INTERNAL, NODE_FMT "holds no tensor",
                             NODE_ARGS(g, n));
        return TG_OK;
    }
    if (!n->op)
        return tg__error(TG_ERR_INTERNAL, "graph '%s': node '%s' has no op",
                         g->name, n->name);
    int n_out = tg_op_n_out(n->op, n->attrs, n->n_attrs);
    if ((n->op->n_in >= 0 && n->n_in != n->op->n_in) || n->n_out != n_out)
        return tg__error(TG_ERR_INTERNAL, NODE_FMT "has %d inputs and %d outputs, "
                         "the op takes %d and gives %d", NODE_ARGS(g, n), n->n_in,
                         n->n_out, n->op->n_in, n_out);
    return TG_OK;
}

static bool meta_eq(const tg_meta *a, const tg_meta *b)
{
    return a->dtype == b->dtype && tg__shape_eq(a->ndim, a->shape, b->ndim, b->shape);
}

static void meta_str(const tg_meta *m, char *buf, size_t len)
{
    char s[160];
    snprintf(buf, len, "%s%s", tg_dtype_name(m->dtype),
             tg_shape_str(m->ndim, m->shape, s, sizeof s));
}

/* a source's tensor must match its value's stored metadata */
static tg_status check_source(const tg_graph *g, const tg_gnode *n)
{
    if (!n->tensor)
        return TG_OK;
    tg_meta m;
    tg_meta_of(n->tensor, &m);
    const tg_meta *want = &g->values[n->out[0]].meta;
    if (meta_eq(&m, want))
        return TG_OK;
    char a[200], b[200];
    meta_str(&m, a, sizeof a);
    meta_str(want, b, sizeof b);
    return tg__error(TG_ERR_INTERNAL, NODE_FMT "holds a %s tensor, its value says %s",
                     NODE_ARGS(g, n), a, b);
}

bool tg__node_inputs_unknown(const tg_graph *g, const tg_gnode *n)
{
    for (int i = 0; i < n->n_in; i++) {
        const tg_meta *m = &g->values[n->in[i]].meta;
        if (tg__shape_has_unknown(m->ndim, m->shape))
            return true;
    }
    return false;
}

/* re-runs the op's inference on metadata-only inputs. One that fails on
 * inputs with dims known only when the graph runs (probed unknown dims
 * met by fed sizes: passes keep the node's metas from its build, see
 * passes/rewrite.c) is checked by the executor when the graph runs. */
static tg_status check_infer(const tg_graph *g, const tg_gnode *n)
{
    tg_op_ctx c;
    tg_status s = TG_OK;
    tg_status inferred = tg__graph_infer_node(g, n, &c);
    if (inferred != TG_OK && tg__node_inputs_unknown(g, n)) {
        tg_clear_error();
        return TG_OK;
    }
    if (inferred != TG_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        s = tg__error(TG_ERR_INTERNAL, NODE_FMT "its inputs no longer pass the op's "
                      "inference: %s", NODE_ARGS(g, n), msg);
    }
    for (int o = 0; o < n->n_out && s == TG_OK; o++) {
        const tg_meta *have = &g->values[n->out[o]].meta;
        if (meta_eq(&c.out_meta[o], have))
            continue;
        char a[200], b[200];
        meta_str(have, a, sizeof a);
        meta_str(&c.out_meta[o], b, sizeof b);
        s = tg__error(TG_ERR_INTERNAL, NODE_FMT "output %d is stored as %s but the "
                      "op infers %s", NODE_ARGS(g, n), o, a, b);
    }
    return s;
}

static tg_status check_names(const tg_graph *g)
{
    for (int id = 0; id < g->n_nodes; id++) {
        const char *name = g->nodes[id].name;
        int found = name ? tg__hmap_get(&g->names, name) : -1;
        if (found != id)
            return tg__error(TG_ERR_INTERNAL, "graph '%s': node %d '%s' is %s",
                             g->name, id, name ? name : "(null)",
                             found < 0 ? "missing from the name table"
                                       : "not unique");
    }
    return TG_OK;
}

/* Kahn's algorithm over data and control edges; a leftover node is on or
 * behind a cycle */
static tg_status check_acyclic(const tg_graph *g)
{
    int n = g->n_nodes;
    int *deps = calloc((size_t)n + 1, sizeof *deps);
    int *ready = malloc(((size_t)n + 1) * sizeof *ready);
    /* consumers lists in CSR form: count, prefix-sum, fill */
    int *start = calloc((size_t)n + 2, sizeof *start);
    int n_edges = 0;
    for (int id = 0; id < n; id++)
        n_edges += tg__gnode_n_preds(&g->nodes[id]);
    int *succ = malloc(((size_t)n_edges + 1) * sizeof *succ);
    tg_status s = TG_OK;
    if (!deps || !ready || !start || !succ) {
        s = tg__error(TG_ERR_NOMEM, "tg_graph_verify: out of memory");
        goto done;
    }
    for (int id = 0; id < n; id++) {
        const tg_gnode *x = &g->nodes[id];
        for (int i = 0; i < tg__gnode_n_preds(x); i++) {
            int p = tg__gnode_pred(g, x, i);
            start[p + 2]++;
            deps[id]++;
        }
    }
    for (int i = 0; i < n; i++)
        start[i + 2] += start[i + 1];
    for (int id = 0; id < n; id++) {
        const tg_gnode *x = &g->nodes[id];
        for (int i = 0; i < tg__gnode_n_preds(x); i++) {
            int p = tg__gnode_pred(g, x, i);
            succ[start[p + 1]++] = id;
        }
    }
    int n_ready = 0, done = 0;
    for (int id = 0; id < n; id++)
        if (deps[id] == 0)
            ready[n_ready++] = id;
    while (n_ready > 0) {
        int id = ready[--n_ready];
        done++;
        for (int k = start[id]; k < start[id + 1]; k++)
            if (--deps[succ[k]] == 0)
                ready[n_ready++] = succ[k];
    }
    if (done < n) {
        int id = 0;
        while (deps[id] == 0)
            id++;
        s = tg__error(TG_ERR_INTERNAL, NODE_FMT "is on or after a cycle (%d of %d "
                      "nodes cannot be ordered)", NODE_ARGS(g, &g->nodes[id]),
                      n - done, n);
    }
done:
    free(deps);
    free(ready);
    free(start);
    free(succ);
    return s;
}

/* the bodies a control node holds (graph attributes) are graphs with
 * placeholders for inputs and values for results; each is verified too */
static tg_status check_bodies(const tg_graph *g, const tg_gnode *n)
{
    for (int i = 0; i < n->n_attrs; i++) {
        const tg_graph *b = n->attrs[i].type == TG_ATTR_GRAPH ? n->attrs[i].u.g : NULL;
        if (n->attrs[i].type != TG_ATTR_GRAPH)
            continue;
        if (!b || !b->fn)
            return tg__error(TG_ERR_INTERNAL, NODE_FMT "attribute '%s' is not a body "
                             "graph", NODE_ARGS(g, n), n->attrs[i].name);
        const tg_fgraph *f = b->fn;
        for (int k = 0; k < f->n_params + f->n_caps; k++)
            if (f->inputs[k] < 0 || f->inputs[k] >= b->n_values ||
                b->nodes[b->values[f->inputs[k]].node].kind != TG_GNODE_PLACEHOLDER)
                return tg__error(TG_ERR_INTERNAL, NODE_FMT "input %d of body '%s' is not "
                                 "a placeholder", NODE_ARGS(g, n), k, b->name);
        for (int k = 0; k < f->n_results; k++)
            if (f->results[k] < 0 || f->results[k] >= b->n_values)
                return tg__error(TG_ERR_INTERNAL, NODE_FMT "result %d of body '%s' is not "
                                 "a value", NODE_ARGS(g, n), k, b->name);
        if (tg_graph_verify(b) != TG_OK) {
            char msg[700];
            snprintf(msg, sizeof msg, "%s", tg_last_error());
            return tg__error(TG_ERR_INTERNAL, NODE_FMT "body '%s': %s", NODE_ARGS(g, n),
                             b->name, msg);
        }
    }
    return TG_OK;
}

tg_status tg_graph_verify(const tg_graph *g)
{
    if (!g)
        return tg__error(TG_ERR_ARG, "tg_graph_verify: graph is NULL");
    tg_status s = check_names(g);
    for (int id = 0; id < g->n_nodes && s == TG_OK; id++) {
        const tg_gnode *n = &g->nodes[id];
        if ((s = check_arity(g, n)) == TG_OK)
            s = check_edges(g, id);
    }
    for (int v = 0; v < g->n_values && s == TG_OK; v++) {
        const tg_gvalue *x = &g->values[v];
        if (x->node < 0 || x->node >= g->n_nodes || x->index < 0 ||
            x->index >= g->nodes[x->node].n_out || g->nodes[x->node].out[x->index] != v)
            s = tg__error(TG_ERR_INTERNAL, "graph '%s': value %d names node %d "
                          "output %d as its producer, which does not produce it",
                          g->name, v, x->node, x->index);
    }
    if (s == TG_OK)
        s = check_acyclic(g);
    for (int id = 0; id < g->n_nodes && s == TG_OK; id++) {
        const tg_gnode *n = &g->nodes[id];
        s = n->kind == TG_GNODE_OP ? check_infer(g, n) : check_source(g, n);
        if (s == TG_OK && n->kind == TG_GNODE_OP)
            s = check_bodies(g, n);
    }
    return s;
}
