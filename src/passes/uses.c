/* Who uses what, for the fusion passes: readers per value (data edges),
 * fetched values, target nodes, control edges in. A node may be folded
 * into another only when nothing else sees the value it made. */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

void tg__uses_free(tg_uses *u)
{
    free(u->readers);
    free(u->fetched);
    free(u->target);
    free(u->ctrl_in);
    memset(u, 0, sizeof *u);
}

tg_status tg__uses_init(tg_uses *u, const tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    memset(u, 0, sizeof *u);
    u->readers = calloc((size_t)g->n_values + 1, sizeof *u->readers);
    u->fetched = calloc((size_t)g->n_values + 1, sizeof *u->fetched);
    u->target = calloc((size_t)g->n_nodes + 1, sizeof *u->target);
    u->ctrl_in = tg__ctrl_in_counts(g);
    if (!u->readers || !u->fetched || !u->target || !u->ctrl_in) {
        tg__uses_free(u);
        return tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
    }
    for (int id = 0; id < g->n_nodes; id++)
        for (int i = 0; i < g->nodes[id].n_in; i++)
            u->readers[g->nodes[id].in[i]]++;
    for (int i = 0; i < c->n_fetches; i++)
        if (c->fetches[i] >= 0)
            u->fetched[c->fetches[i]] = true;
    for (int i = 0; i < c->n_targets; i++)
        if (c->targets[i] >= 0)
            u->target[c->targets[i]] = true;
    return TG_OK;
}

bool tg__uses_private(const tg_uses *u, const tg_graph *g, int v)
{
    return u->readers[v] == 1 && !u->fetched[v] && !u->target[g->values[v].node];
}
