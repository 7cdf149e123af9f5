/* Compact max-pooling indices (level 2). max_pool2d's argmax indices are
 * int64 positions in the input plane: for 2x2 windows twice the bytes of
 * the pooled values, and in a training step they live from the forward
 * pass to the pooling's gradient near the end of the backward (LeNet's
 * first layer: 602 KB at batch 64, at the step's memory peak). When
 * nothing but max_pool2d_grad reads them (not fetched, not the user's
 * edges), the pair becomes
 *     y, off = max_pool2d_compact(x);  dx = max_pool2d_compact_grad(dy, off)
 * with one byte per window (the argmax's place in its window;
 * ops/pool_compact.c): bitwise the same y and dx, from the same kernels.
 * Windows over 256 elements keep int64 indices. The backward does not
 * recompute the argmax from x instead: x (the activation, four times the
 * pooled size) would then live until the gradient, which pool_grad just
 * spared. */
#include "passes/passes.h"
#include "ops/pool.h"

#include <stdlib.h>

extern const tg_op_def tg_op_max_pool2d, tg_op_max_pool2d_grad, tg_op_max_pool2d_compact,
    tg_op_max_pool2d_compact_grad;

/* per value of g: the indices of a max_pool2d that may become offsets */
static bool *find_candidates(const tg_graph *g, const tg_uses *u)
{
    bool *ok = calloc((size_t)g->n_values + 1, 1);
    if (!ok)
        return NULL;
    for (int id = 0; id < g->n_nodes; id++) {
        const tg_gnode *n = &g->nodes[id];
        if (!tg__is_op(n, &tg_op_max_pool2d) || !tg__pass_rewritable(g, u->ctrl_in, id) ||
            u->target[id] || u->fetched[n->out[1]] || u->readers[n->out[1]] == 0)
            continue;
        const tg__pool_attrs *a = n->attr;
        ok[n->out[1]] = a->kernel[0] * a->kernel[1] <= 256;
    }
    /* every reader must be a rewritable max_pool2d_grad (the indices are
     * its input 1; its input 0 is floating point) */
    for (int id = 0; id < g->n_nodes; id++) {
        const tg_gnode *n = &g->nodes[id];
        bool grad = tg__is_op(n, &tg_op_max_pool2d_grad) &&
                    tg__pass_rewritable(g, u->ctrl_in, id) && !u->target[id];
        for (int i = 0; i < n->n_in; i++)
            if (ok[n->in[i]] && !(grad && i == 1))
                ok[n->in[i]] = false;
    }
    return ok;
}

/* the replacement of node id, or -1 with nothing to do (ok: candidates) */
static int replace(tg_rw *r, const tg_graph *g, const bool *ok, int id)
{
    const tg_gnode *n = &g->nodes[id];
    tg_attr a[6];
    if (tg__is_op(n, &tg_op_max_pool2d) && ok[n->out[1]]) {
        int in = r->vmap[n->in[0]];
        int m = tg__rw_op(r, &tg_op_max_pool2d_compact, n->name, a,
                          tg__pool_attr_list(n->attr, false, false, a), 1, &in);
        if (m >= 0) {
            tg__rw_forward(r, n->out[0], r->dst->nodes[m].out[0]);
            tg__rw_forward(r, n->out[1], r->dst->nodes[m].out[1]);
        }
        return m;
    }
    if (tg__is_op(n, &tg_op_max_pool2d_grad) && ok[n->in[1]]) {
        /* the pooling's window and this gradient's input size */
        tg__pool_attrs pa = *(const tg__pool_attrs *)g->nodes[g->values[n->in[1]].node].attr;
        const tg__pool_attrs *ga = n->attr;
        pa.input_size[0] = ga->input_size[0];
        pa.input_size[1] = ga->input_size[1];
        int in[2] = {r->vmap[n->in[0]], r->vmap[n->in[1]]};
        int m = tg__rw_op(r, &tg_op_max_pool2d_compact_grad, n->name, a,
                          tg__pool_attr_list(&pa, false, true, a), 2, in);
        if (m >= 0)
            tg__rw_forward(r, n->out[0], r->dst->nodes[m].out[0]);
        return m;
    }
    return -2;
}

tg_status tg__pass_pool_indices(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    tg_uses u;
    tg_status s = tg__uses_init(&u, c);
    if (s != TG_OK)
        return s;
    bool *ok = find_candidates(g, &u);
    int n_pools = 0;
    for (int v = 0; ok && v < g->n_values; v++)
        n_pools += ok[v];
    tg_rw r = {0};
    if (!ok)
        s = tg__error(TG_ERR_NOMEM, "pool_indices: out of memory");
    else if (n_pools > 0)
        s = tg__rw_begin(&r, g);
    for (int id = 0; id < g->n_nodes && s == TG_OK && n_pools > 0; id++) {
        int m = replace(&r, g, ok, id);
        if (m == -2)
            m = tg__rw_copy(&r, id);
        if (m < 0)
            s = tg_last_status();
    }
    s = tg__rw_finish(&r, c, s, n_pools > 0);
    tg__pass_count(c, "compacted", s == TG_OK ? n_pools : 0);
    free(ok);
    tg__uses_free(&u);
    return s;
}
