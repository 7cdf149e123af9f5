/* Replaying a graph with the op functions (tg_graph_replay): the nodes
 * the fetches need run one by one as eager ops, so that with grad mode on
 * the results carry autograd history back to the fed tensors and the
 * variables. A session run gives values without history; this is what
 * higher-order gradients through a graph (tg.function's backward with
 * create_graph) are made of. Nodes built under no_grad replay under it. */
#include "graph/graph_impl.h"
#include "tg/autograd.h"

#include <stdlib.h>

static tg_status bind_feeds(tg_graph *g, int n, tg_tensor *const *ph, tg_tensor *const *vals,
                            tg_tensor **val)
{
    for (int i = 0; i < n; i++) {
        const tg_tensor *p = ph[i], *v = vals[i];
        if (!p || !v)
            return tg__error(TG_ERR_ARG, "tg_graph_replay: feed %d is NULL", i);
        if (p->graph != g || p->value < 0 ||
            g->nodes[g->values[p->value].node].kind != TG_GNODE_PLACEHOLDER)
            return tg__error(TG_ERR_ARG, "tg_graph_replay: feed %d is not a placeholder of "
                             "graph '%s'", i, g->name);
        if (tg_is_symbolic(v))
            return tg__error(TG_ERR_ARG, "tg_graph_replay: the value of feed %d is symbolic",
                             i);
        const tg_meta *m = &g->values[p->value].meta;
        bool fits = v->dtype == m->dtype && v->ndim == m->ndim;
        for (int d = 0; fits && d < m->ndim; d++)
            fits = m->shape[d] < 0 || m->shape[d] == v->shape[d];
        if (!fits) {
            char a[128], b[128];
            return tg__error(TG_ERR_SHAPE, "tg_graph_replay: feed %d is %s %s, the placeholder "
                             "'%s' is %s %s", i, tg_dtype_name(v->dtype),
                             tg_shape_str(v->ndim, v->shape, a, sizeof a),
                             g->nodes[g->values[p->value].node].name, tg_dtype_name(m->dtype),
                             tg_shape_str(m->ndim, m->shape, b, sizeof b));
        }
        tg_release(val[p->value]);
        val[p->value] = tg_retain((tg_tensor *)v);
    }
    return TG_OK;
}

tg_status tg__graph_replay_node(tg_graph *g, int id, tg_tensor **val)
{
    const tg_gnode *n = &g->nodes[id];
    bool bound = true;
    for (int o = 0; o < n->n_out; o++)
        bound &= val[n->out[o]] != NULL;
    if (bound)
        return TG_OK; /* fed */
    if (n->kind == TG_GNODE_PLACEHOLDER)
        return tg__error(TG_ERR_ARG, "tg_graph_replay: placeholder '%s' is needed but not "
                         "fed", n->name);
    if (n->kind != TG_GNODE_OP) { /* a constant, a variable: its tensor */
        val[n->out[0]] = tg_retain(n->tensor);
        return TG_OK;
    }
    if (n->op->flags & (TG_OP_SIDE_EFFECTS | TG_OP_RANDOM))
        return tg__error(TG_ERR_UNSUPPORTED, "tg_graph_replay: node '%s' (%s) %s; a replay "
                         "would do it again", n->name, n->op->name,
                         n->op->flags & TG_OP_RANDOM ? "draws random numbers" : "writes state");
    tg_tensor *in[TG_MAX_OP_INPUTS], *out[TG_MAX_OP_OUTPUTS];
    for (int i = 0; i < n->n_in; i++)
        if (!(in[i] = val[n->in[i]]))
            return tg__error(TG_ERR_INTERNAL, "graph '%s': node '%s' reads an unbound "
                             "value", g->name, n->name);
    if (n->no_grad)
        tg_no_grad_begin();
    tg_status s = tg_op_run(n->op, n->n_in, in, n->attrs, n->n_attrs, out);
    if (n->no_grad)
        tg_no_grad_end();
    for (int o = 0; s == TG_OK && o < n->n_out; o++) /* out[o]: the scope's */
        val[n->out[o]] = tg_retain(out[o]);
    return s;
}

static tg_status replay(tg_graph *g, int n_fetches, tg_tensor *const *fetches, tg_tensor **val)
{
    bool *need = calloc((size_t)g->n_nodes + 1, sizeof *need);
    if (!need)
        return tg__error(TG_ERR_NOMEM, "tg_graph_replay: out of memory");
    for (int i = 0; i < n_fetches; i++)
        need[g->values[fetches[i]->value].node] = true;
    for (int id = g->n_nodes - 1; id >= 0; id--)
        for (int j = 0; need[id] && j < g->nodes[id].n_in; j++)
            if (!val[g->nodes[id].in[j]])
                need[g->values[g->nodes[id].in[j]].node] = true;
    tg_status s = TG_OK;
    int old = tg__graph_suspend(); /* eager ops, even inside a graph scope */
    tg_scope_begin();
    for (int id = 0; id < g->n_nodes && s == TG_OK; id++)
        if (need[id])
            s = tg__graph_replay_node(g, id, val);
    tg_scope_end();
    tg__graph_resume(old);
    free(need);
    return s;
}

tg_status tg_graph_replay(tg_graph *g, int n_feeds, tg_tensor *const *placeholders,
                          tg_tensor *const *values, int n_fetches, tg_tensor *const *fetches,
                          tg_tensor **out)
{
    if (!g || (n_feeds > 0 && (!placeholders || !values)) || (n_fetches > 0 && (!fetches || !out)))
        return tg__error(TG_ERR_ARG, "tg_graph_replay: NULL argument");
    if (n_feeds < 0 || n_fetches < 0)
        return tg__error(TG_ERR_ARG, "tg_graph_replay: negative count");
    for (int i = 0; i < n_fetches; i++) {
        out[i] = NULL;
        if (!fetches[i] || fetches[i]->graph != g || fetches[i]->value < 0)
            return tg__error(TG_ERR_ARG, "tg_graph_replay: fetch %d is not a value of graph "
                             "'%s'", i, g->name);
    }
    tg_tensor **val = calloc((size_t)g->n_values + 1, sizeof *val);
    if (!val)
        return tg__error(TG_ERR_NOMEM, "tg_graph_replay: out of memory");
    tg_status s = bind_feeds(g, n_feeds, placeholders, values, val);
    if (s == TG_OK)
        s = replay(g, n_fetches, fetches, val);
    for (int i = 0; s == TG_OK && i < n_fetches; i++)
        out[i] = tg__publish(tg_retain(val[fetches[i]->value]));
    for (int v = 0; v < g->n_values; v++)
        tg_release(val[v]);
    free(val);
    return s;
}
