/* A convolution, its relu and the 2 x 2 max pooling after them as one node
 * (level 2). For
 *     y = conv2d(x, w, b);  r = relu(y);  p, off = max_pool2d_compact(r)
 * (or max_pool2d(r) whose indices nothing reads: inference) with 2 x 2
 * windows, stride 2, no padding, floor mode (LeNet's layers), when y and
 * r are read by nothing else, the three become
 *     p, off = conv2d_relu_pool(x, w, b)
 * whose batch-lane kernel pools while the outputs are still in registers
 * and transposes only the pooled quarter back to NCHW; the full-size
 * activation is never written or read again (ops/conv.c, kernels/cpu/
 * conv_pool.c: the bits of the three ops). It runs after pool_grad
 * (which leaves the backward reading p, not r) and pool_indices (which
 * made the compact pooling), before fuse_epilogue would take the relu. */
#include "ops/pool.h"
#include "passes/passes.h"

#include <stdlib.h>

extern const tg_op_def tg_op_conv2d, tg_op_max_pool2d, tg_op_max_pool2d_compact,
    tg_op_conv2d_relu_pool;

/* the window the fused kernel pools: 2 x 2, stride 2, no padding, floor */
static bool plain_2x2(const tg__pool_attrs *a)
{
    return a->kernel[0] == 2 && a->kernel[1] == 2 && a->stride[0] == 2 && a->stride[1] == 2 &&
           a->padding[0] == 0 && a->padding[1] == 0 && !a->ceil_mode;
}

typedef struct matcher {
    const tg_graph *g;
    const tg_op_def *relu;
    tg_uses u;
    tg_state st;
} matcher;

/* pool node id's relu and conv2d (ids), when the three may become one */
static bool match(const matcher *M, int id, int *relu, int *conv)
{
    const tg_graph *g = M->g;
    const tg_gnode *P = &g->nodes[id];
    /* training steps pool with offsets (pool_indices); inference with
     * indices nothing reads */
    bool unread = tg__is_op(P, &tg_op_max_pool2d) && M->u.readers[P->out[1]] == 0 &&
                  !M->u.fetched[P->out[1]];
    if ((!tg__is_op(P, &tg_op_max_pool2d_compact) && !unread) || !plain_2x2(P->attr) ||
        !tg__pass_rewritable(g, M->u.ctrl_in, id) || M->u.target[id])
        return false;
    int r = g->values[P->in[0]].node;
    const tg_gnode *R = &g->nodes[r];
    if (!tg__is_op(R, M->relu) || !tg__uses_private(&M->u, g, P->in[0]) ||
        !tg__pass_rewritable(g, M->u.ctrl_in, r))
        return false;
    int c = g->values[R->in[0]].node;
    const tg_gnode *C = &g->nodes[c];
    if (!tg__is_op(C, &tg_op_conv2d) || !tg__uses_private(&M->u, g, R->in[0]) ||
        !tg__pass_rewritable(g, M->u.ctrl_in, c) ||
        /* the convolution's reads move to the pool's place */
        !tg__state_same_versions(&M->st, C, c, id))
        return false;
    *relu = r;
    *conv = c;
    return true;
}

/* conv2d_relu_pool in place of the chain ending at pool node id */
static int emit(tg_rw *rw, int id, void *ctx)
{
    const int *plan = ctx;
    const tg_graph *g = rw->src;
    const tg_gnode *C = &g->nodes[plan[id]], *P = &g->nodes[id];
    int in[3];
    for (int i = 0; i < C->n_in; i++)
        in[i] = rw->vmap[C->in[i]];
    int m = tg__rw_op(rw, &tg_op_conv2d_relu_pool, P->name, C->attrs, C->n_attrs, C->n_in, in);
    if (m < 0)
        return -1;
    tg__rw_forward(rw, P->out[0], rw->dst->nodes[m].out[0]);
    if (P->op == &tg_op_max_pool2d_compact) /* max_pool2d's indices are unread */
        tg__rw_forward(rw, P->out[1], rw->dst->nodes[m].out[1]);
    return m;
}

tg_status tg__pass_fuse_conv_pool(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    matcher M = {.g = g, .relu = tg_op_find("relu")};
    int n_fused = 0;
    /* per node: TG_RW_KEEP, TG_RW_FOLDED into a later pool's node, else
     * the conv2d id of the pool's match */
    int *plan = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
    tg_status s = plan ? tg__uses_init(&M.u, c)
                       : tg__error(TG_ERR_NOMEM, "fuse_conv_pool: out of memory");
    bool have_uses = s == TG_OK;
    if (s == TG_OK)
        s = tg__state_init(&M.st, g);
    bool have_state = have_uses && s == TG_OK;
    for (int id = 0; s == TG_OK && id < g->n_nodes; id++)
        plan[id] = TG_RW_KEEP;
    for (int id = 0, r, cv; s == TG_OK && id < g->n_nodes; id++)
        if (match(&M, id, &r, &cv)) {
            plan[id] = cv;
            plan[r] = plan[cv] = TG_RW_FOLDED;
            n_fused++;
        }
    s = tg__rw_replace_chains(c, s, plan, n_fused, emit, plan);
    if (have_uses)
        tg__uses_free(&M.u);
    if (have_state)
        tg__state_free(&M.st);
    free(plan);
    return s;
}
