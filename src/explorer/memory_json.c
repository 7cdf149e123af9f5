/* The memory plan as the explorer draws it: every value placed in the
 * plan's arena is a rectangle, its offset and size on one axis, its
 * lifetime (the step that produces it to the last step that reads it or
 * a view of it) on the other. The lifetimes are the ones memplan.c plans
 * with, recomputed here from the plan's order: the plan keeps offsets,
 * not lives. */
#include "explorer/explorer.h"

#include <stdlib.h>

static int64_t aligned_bytes(const tg_meta *m)
{
    int64_t n = 1;
    for (int d = 0; d < m->ndim; d++) {
        if (m->shape[d] < 0)
            return -1; /* an unknown dim: no size to draw */
        n *= m->shape[d];
    }
    n *= (int64_t)tg_dtype_size(m->dtype);
    return (n + TG_ALIGN - 1) / TG_ALIGN * TG_ALIGN;
}

/* last[v]: the last step reading v directly or through views of it */
static void lifetimes(const tg_plan *p, const tg_graph *g, const int *step_of_node, int *last)
{
    for (int v = 0; v < g->n_values; v++)
        last[v] = step_of_node[g->values[v].node];
    for (int k = 0; k < p->n_steps; k++) {
        const tg_gnode *n = &g->nodes[p->steps[k]];
        for (int i = 0; i < n->n_in; i++)
            if (last[n->in[i]] < k)
                last[n->in[i]] = k;
    }
    /* a view keeps what it aliases alive: backwards, so chains of views pass it on */
    for (int k = p->n_steps - 1; k >= 0; k--) {
        const tg_gnode *n = &g->nodes[p->steps[k]];
        if (n->kind != TG_GNODE_OP || !n->op->make_view || n->n_in < 1 || n->n_out < 1)
            continue;
        if (p->mem.kind[n->out[0]] == TG_MEM_VIEW && last[n->in[0]] < last[n->out[0]])
            last[n->in[0]] = last[n->out[0]];
    }
}

void tg__explorer_memory(tg_strbuf *b, const tg_plan *p, const int *step_of_node)
{
    const tg_graph *g = p->g;
    const tg_memory_stats *st = &p->mem.stats;
    tg__strbuf_printf(b, "{\"enabled\":%s,\"steps\":%d,\"naive\":%lld,\"planned\":%lld,"
                         "\"arena\":%lld,\"own\":%lld,\"values\":%d,\"reused\":%d,"
                         "\"in_place\":%d,\"buffers\":[",
                      p->mem.enabled ? "true" : "false", p->n_steps,
                      (long long)st->naive_bytes, (long long)st->planned_bytes,
                      (long long)st->arena_bytes, (long long)st->own_bytes, st->n_values,
                      st->n_reused, st->n_inplace);
    int *last = malloc(((size_t)g->n_values + 1) * sizeof *last);
    if (!last) {
        b->failed = true;
        return;
    }
    lifetimes(p, g, step_of_node, last);
    bool first = true;
    for (int v = 0; p->mem.enabled && v < g->n_values; v++) {
        int64_t bytes = aligned_bytes(&g->values[v].meta);
        if (p->mem.kind[v] != TG_MEM_ARENA || bytes < 0)
            continue;
        const tg_gvalue *x = &g->values[v];
        /* [producer node, output, offset, bytes, first step, last step, in place] */
        tg__strbuf_printf(b, "%s[%d,%d,%lld,%lld,%d,%d,%d]", first ? "" : ",", x->node,
                          x->index, (long long)p->mem.offset[v], (long long)bytes,
                          step_of_node[x->node], last[v], p->mem.inplace_of[v] >= 0);
        first = false;
    }
    tg__strbuf_puts(b, "]}");
    free(last);
}
