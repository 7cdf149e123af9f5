/* Dead code elimination: keeps the nodes the run needs — producers of
 * fetched values, targets, ops with effects (assigns, random draws) and
 * everything they depend on through data and control edges — and drops
 * the rest: pure nodes whose results nobody reads any more after other
 * passes replaced their readers, and sources left unused (constants that
 * were folded, placeholders whose readers went). */
#include "passes/passes.h"

#include <stdlib.h>

static void mark(bool *live, int *work, int *n_work, int id)
{
    if (id >= 0 && !live[id]) {
        live[id] = true;
        work[(*n_work)++] = id;
    }
}

tg_status tg__pass_dce(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    int n = g->n_nodes, n_work = 0, n_dead = 0;
    bool *live = calloc((size_t)n + 1, 1);
    int *work = malloc(((size_t)n + 1) * sizeof *work);
    if (!live || !work) {
        free(live);
        free(work);
        return tg__error(TG_ERR_NOMEM, "dce: out of memory");
    }
    for (int i = 0; i < c->n_fetches; i++)
        if (c->fetches[i] >= 0)
            mark(live, work, &n_work, g->values[c->fetches[i]].node);
    for (int i = 0; i < c->n_targets; i++)
        mark(live, work, &n_work, c->targets[i]);
    for (int id = 0; id < n; id++)
        if (g->nodes[id].kind == TG_GNODE_OP && !(g->nodes[id].op->flags & TG_OP_PURE))
            mark(live, work, &n_work, id);
    while (n_work > 0) {
        const tg_gnode *x = &g->nodes[work[--n_work]];
        for (int i = 0; i < x->n_in; i++)
            mark(live, work, &n_work, g->values[x->in[i]].node);
        for (int i = 0; i < x->n_ctrl; i++)
            mark(live, work, &n_work, x->ctrl[i]);
    }
    for (int id = 0; id < n; id++)
        n_dead += !live[id];
    tg_status s = TG_OK;
    if (n_dead > 0) {
        tg_rw r;
        s = tg__rw_begin(&r, g);
        for (int id = 0; id < n && s == TG_OK; id++)
            if (live[id] && tg__rw_copy(&r, id) < 0)
                s = tg_last_status();
        s = tg__rw_finish(&r, c, s, true);
        tg__pass_count(c, "removed", n_dead);
    }
    free(live);
    free(work);
    return s;
}
