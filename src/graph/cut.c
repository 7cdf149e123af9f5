/* Cutting a graph in two at a node id: the values the later part reads
 * from the earlier one. A traced function's backward pass is appended to
 * its forward graph; a run of the forward hands these values out with its
 * results, and the backward run is fed them instead of computing the
 * forward part again (which would cost a second forward per training step
 * and redraw its random ops). */
#include "graph/graph_impl.h"

#include <stdlib.h>

/* does value v cost nothing to recompute: a source (placeholder, variable,
 * constant), or a view of one (an alias, no kernel runs)? */
static bool free_to_recompute(const tg_graph *g, int v)
{
    for (;;) {
        const tg_gnode *n = &g->nodes[g->values[v].node];
        if (n->kind != TG_GNODE_OP)
            return true;
        if (!n->op->make_view || n->n_in < 1)
            return false;
        v = n->in[0];
    }
}

tg_status tg_graph_cut_values(tg_graph *g, int split, int *n_out, tg_tensor ***out)
{
    if (!g || !n_out || !out)
        return tg__error(TG_ERR_ARG, "tg_graph_cut_values: %s is NULL",
                         !g ? "graph" : "an output pointer");
    *n_out = 0;
    *out = NULL;
    if (split < 0 || split > g->n_nodes)
        return tg__error(TG_ERR_ARG, "tg_graph_cut_values: split %d is not a node id of "
                         "graph '%s' (0..%d)", split, g->name, g->n_nodes);
    bool *cut = calloc((size_t)g->n_values + 1, 1);
    if (!cut)
        return tg__error(TG_ERR_NOMEM, "tg_graph_cut_values: out of memory");
    int n = 0;
    for (int id = split; id < g->n_nodes; id++) {
        const tg_gnode *x = &g->nodes[id];
        for (int i = 0; x->kind == TG_GNODE_OP && i < x->n_in; i++) {
            int v = x->in[i];
            if (!cut[v] && g->values[v].node < split && !free_to_recompute(g, v)) {
                cut[v] = true;
                n++;
            }
        }
    }
    tg_tensor **t = calloc((size_t)n + 1, sizeof *t);
    tg_status s = t ? TG_OK : tg__error(TG_ERR_NOMEM, "tg_graph_cut_values: out of memory");
    int k = 0;
    for (int v = 0; s == TG_OK && v < g->n_values; v++) {
        if (!cut[v])
            continue;
        if (!(t[k] = tg__publish(tg__graph_symbolic(g, v))))
            s = tg_last_status();
        else
            k++;
    }
    free(cut);
    if (s != TG_OK) {
        for (int i = 0; i < k; i++)
            tg_release(t[i]);
        free(t);
        return s;
    }
    *n_out = n;
    *out = t;
    return TG_OK;
}
