/* relu_grad moved across max-pooling's gradient (level 2). For
 * p, idx = max_pool2d(y) with y = relu(x), the backward
 *     relu_grad(max_pool2d_grad(dy, idx), y)
 * equals, bit for bit,
 *     max_pool2d_grad(relu_grad(dy, p), idx):
 * an input element gets gradient only from the windows whose maximum it
 * is, and there it equals p, so masking by y > 0 after the scatter and by
 * p > 0 before it keeps the same terms (and adds them in the same order);
 * elements no window picked get +0 both ways. The mask then runs on the
 * pooled tensor (a quarter of the size for 2x2 windows), and y is no
 * longer read by the backward pass: the activation (1.2 MB for LeNet's
 * first layer at batch 64) dies in the forward pass instead of living
 * until the end of the step. */
#include "passes/passes.h"

#include <stdlib.h>

static const tg_op_def *find(const char *name)
{
    return tg_op_find(name);
}

static const tg_gnode *producer(const tg_graph *g, int v)
{
    return &g->nodes[g->values[v].node];
}

/* the pattern at relu_grad node n of g (src): the max_pool2d_grad node
 * and the max_pool2d node, or false */
static bool match(const tg_graph *g, const int *readers, const tg_gnode *n,
                  const tg_gnode **grad, const tg_gnode **pool)
{
    const tg_op_def *relu = find("relu"), *rg = find("relu_grad"),
                    *mp = find("max_pool2d"), *mpg = find("max_pool2d_grad");
    if (!tg__is_op(n, rg))
        return false;
    const tg_gnode *G = producer(g, n->in[0]), *Y = producer(g, n->in[1]);
    if (!tg__is_op(G, mpg) || !tg__is_op(Y, relu) || readers[n->in[0]] != 1)
        return false;
    const tg_gnode *P = producer(g, G->in[1]);
    if (!tg__is_op(P, mp) || P->out[1] != G->in[1] || P->in[0] != n->in[1])
        return false;
    *grad = G;
    *pool = P;
    return true;
}

tg_status tg__pass_pool_grad(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    int *readers = calloc((size_t)g->n_values + 1, sizeof *readers);
    int *ctrl_in = tg__ctrl_in_counts(g);
    tg_rw r = {0};
    tg_status s = readers && ctrl_in ? tg__rw_begin(&r, g)
                                     : tg__error(TG_ERR_NOMEM, "pool_grad: out of memory");
    for (int id = 0; id < g->n_nodes; id++)
        for (int i = 0; readers && i < g->nodes[id].n_in; i++)
            readers[g->nodes[id].in[i]]++;
    int n_moved = 0;
    for (int id = 0; id < g->n_nodes && s == TG_OK; id++) {
        const tg_gnode *n = &g->nodes[id], *G, *P;
        if (!tg__pass_rewritable(g, ctrl_in, id) || !match(g, readers, n, &G, &P)) {
            if (tg__rw_copy(&r, id) < 0)
                s = tg_last_status();
            continue;
        }
        /* relu_grad(dy, p), then the scatter with the pooling's attributes */
        int in[2] = {r.vmap[G->in[0]], r.vmap[P->out[0]]};
        int m = tg__rw_op(&r, find("relu_grad"), n->name, NULL, 0, 2, in);
        int sc = -1;
        if (m >= 0) {
            int in2[2] = {r.dst->nodes[m].out[0], r.vmap[G->in[1]]};
            sc = tg__rw_op(&r, G->op, G->name, G->attrs, G->n_attrs, 2, in2);
        }
        if (sc < 0) {
            s = tg_last_status();
            break;
        }
        tg__rw_forward(&r, n->out[0], r.dst->nodes[sc].out[0]);
        n_moved++;
    }
    s = tg__rw_finish(&r, c, s, n_moved > 0);
    tg__pass_count(c, "moved", n_moved);
    free(readers);
    free(ctrl_in);
    return s;
}
