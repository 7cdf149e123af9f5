/* The first step of every optimised plan: a copy of the part of the
 * user's graph that the run needs (the pruned nodes), in which every fed
 * value is a placeholder of the fed tensor's dtype and shape, and, when a
 * fed shape differs from the declared one (unknown dims), every op's
 * inference is run again so that all shapes are concrete. Passes then
 * rewrite the copy; the user's graph never changes. */
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool meta_eq(const tg_meta *a, const tg_meta *b)
{
    return a->dtype == b->dtype && tg__shape_eq(a->ndim, a->shape, b->ndim, b->shape);
}

/* fed values become placeholders (before the nodes, as sources are) */
static tg_status add_feeds(tg_rw *r, const tg_passes_in *in)
{
    const tg_graph *g = in->g;
    for (int i = 0; i < in->n_feeds; i++) {
        int v = in->feeds[i];
        const tg_gnode *n = &g->nodes[g->values[v].node];
        char base[300];
        if (n->n_out == 1)
            snprintf(base, sizeof base, "%s", n->name);
        else
            snprintf(base, sizeof base, "%s.%d", n->name, g->values[v].index);
        int dv;
        if (n->kind == TG_GNODE_PLACEHOLDER) {
            int id = tg__graph_add_node(r->dst, TG_GNODE_PLACEHOLDER, n->name, NULL, 0, 1);
            dv = id < 0 ? -1 : tg__graph_add_value(r->dst, id, 0, &in->feed_meta[v]);
        } else {
            strncat(base, "/fed", sizeof base - strlen(base) - 1);
            dv = tg__rw_placeholder(r, base, &in->feed_meta[v]);
        }
        if (dv < 0)
            return tg_last_status();
        r->vmap[v] = dv;
        r->reinfer |= !meta_eq(&in->feed_meta[v], &g->values[v].meta);
    }
    return TG_OK;
}

tg_status tg__passes_specialise(const tg_passes_in *in, tg_pass_ctx *c)
{
    const tg_graph *g = in->g;
    tg_rw r;
    tg_status s = tg__rw_begin(&r, g);
    if (s == TG_OK)
        s = add_feeds(&r, in);
    c->shapes_changed = r.reinfer;
    for (int id = 0; id < g->n_nodes && s == TG_OK; id++) {
        const tg_gnode *n = &g->nodes[id];
        if (!in->needed[id] || n->kind == TG_GNODE_PLACEHOLDER)
            continue; /* fed placeholders were made above */
        bool all_fed = n->n_out > 0;
        for (int o = 0; o < n->n_out; o++)
            all_fed &= in->fed[n->out[o]];
        if (all_fed)
            continue;
        int keep[TG_MAX_OP_OUTPUTS];
        for (int o = 0; o < n->n_out; o++)
            keep[o] = r.vmap[n->out[o]];
        if (tg__rw_copy(&r, id) < 0)
            s = tg_last_status();
        for (int o = 0; o < n->n_out && s == TG_OK; o++)
            if (keep[o] >= 0) /* an output fed: readers get the feed */
                r.vmap[n->out[o]] = keep[o];
    }
    if (s != TG_OK) {
        if (r.dst)
            tg__rw_abort(&r);
        return s;
    }
    /* c's lists hold in->g's ids until the commit maps them */
    for (int i = 0; i < c->n_feeds; i++)
        c->feeds[i] = in->feeds[i];
    for (int i = 0; i < c->n_fetches; i++)
        c->fetches[i] = in->fetches[i];
    for (int i = 0; i < c->n_targets; i++)
        c->targets[i] = in->targets[i];
    return tg__rw_commit(&r, c);
}
