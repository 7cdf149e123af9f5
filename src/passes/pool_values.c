/* Max pooling without unread indices (level 2). A max_pool2d whose int64
 * indices nothing reads (inference: no gradient, not fetched) becomes
 *     y = max_pool2d_values(x)
 * which neither computes nor stores them (kernels/cpu/pool_max_values.c:
 * the same bits, row by row instead of window by window; ResNet-18's
 * pooling after the stem 1.1 -> ~0.1 ms at batch 1). It runs after
 * fuse_conv_pool, which folds LeNet's 2 x 2 poolings into their
 * convolutions first. */
#include "passes/passes.h"
#include "ops/pool.h"

extern const tg_op_def tg_op_max_pool2d, tg_op_max_pool2d_values;

/* node id is a max_pool2d that may lose its indices */
static bool unread(const tg_graph *g, const tg_uses *u, int id)
{
    const tg_gnode *n = &g->nodes[id];
    return tg__is_op(n, &tg_op_max_pool2d) && tg__pass_rewritable(g, u->ctrl_in, id) &&
           !u->target[id] && !u->fetched[n->out[1]] && u->readers[n->out[1]] == 0;
}

tg_status tg__pass_pool_values(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    tg_uses u;
    tg_status s = tg__uses_init(&u, c);
    if (s != TG_OK)
        return s;
    int n_pools = 0;
    for (int id = 0; id < g->n_nodes; id++)
        n_pools += unread(g, &u, id);
    tg_rw r = {0};
    if (n_pools > 0)
        s = tg__rw_begin(&r, g);
    for (int id = 0; id < g->n_nodes && s == TG_OK && n_pools > 0; id++) {
        const tg_gnode *n = &g->nodes[id];
        int m;
        if (unread(g, &u, id)) {
            tg_attr a[6];
            int in = r.vmap[n->in[0]];
            m = tg__rw_op(&r, &tg_op_max_pool2d_values, n->name, a,
                          tg__pool_attr_list(n->attr, false, false, a), 1, &in);
            if (m >= 0)
                tg__rw_forward(&r, n->out[0], r.dst->nodes[m].out[0]);
        } else
            m = tg__rw_copy(&r, id);
        if (m < 0)
            s = tg_last_status();
    }
    s = tg__rw_finish(&r, c, s, n_pools > 0);
    tg__pass_count(c, "values_only", s == TG_OK ? n_pools : 0);
    tg__uses_free(&u);
    return s;
}
