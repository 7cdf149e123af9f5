/* Elementwise chain fusion (level 2): a maximal tree of elementwise ops
 * whose intermediate values have one reader each (and are not fetched or
 * targets) becomes one fused_elementwise node whose program (ops/fused.h)
 * runs the tree over cache-sized blocks, with the ops' own kernels, so
 * the intermediates never reach memory. Leaves may broadcast; the
 * intermediates have the tree's output shape (a smaller one would be
 * computed once per output element). Every element gets the same
 * operations in the same dtype as unfused: results are bitwise equal.
 *
 * Regions are grown from consumers to producers (ids downwards). A node
 * joins its consumer's region only if moving its work to the region's
 * root keeps every read of a variable on the same side of every write. */
#include "ops/fused.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const tg_op_def tg_op_fused_elementwise;

/* ops per fused node: leaves stay within the op's input limit */
#define MAX_REGION 16
#define PROGRAM_BYTES 4096

/* a value with a dim known only when the graph runs (a length nonzero or
 * expand_by decides): the region's shapes cannot be compared, nor a fused
 * node's inference probed against fed sizes */
static bool unknown_value(const tg_graph *g, int v)
{
    const tg_meta *m = &g->values[v].meta;
    return tg__shape_has_unknown(m->ndim, m->shape);
}

static bool fusable(const tg_graph *g, const tg_uses *u, int id)
{
    const tg_gnode *n = &g->nodes[id];
    for (int i = 0; i < n->n_in; i++)
        if (unknown_value(g, n->in[i]))
            return false;
    for (int o = 0; o < n->n_out; o++)
        if (unknown_value(g, n->out[o]))
            return false;
    return tg__pass_rewritable(g, u->ctrl_in, id) && n->op != &tg_op_fused_elementwise &&
           tg__fused_op_ok(n->op, n->attrs, n->n_attrs);
}

typedef struct regions {
    int *root;  /* per node: its region's root, or -1 */
    int *count; /* per root: ops in the region */
    int *next;  /* per node: the next member of its region (ascending ids), -1 */
    int *head;  /* per root: the first member */
} regions;

static void grow(const tg_graph *g, const tg_uses *u, const tg_state *st, regions *R)
{
    for (int id = g->n_nodes - 1; id >= 0; id--) {
        if (!fusable(g, u, id))
            continue;
        if (R->root[id] < 0) {
            R->root[id] = id;
            R->count[id] = 1;
        }
        int root = R->root[id];
        const tg_meta *out = &g->values[g->nodes[root].out[0]].meta;
        const tg_gnode *n = &g->nodes[id];
        for (int i = 0; i < n->n_in && R->count[root] < MAX_REGION; i++) {
            int v = n->in[i], p = g->values[v].node;
            const tg_meta *m = &g->values[v].meta;
            if (R->root[p] >= 0 || !fusable(g, u, p) || !tg__uses_private(u, g, v) ||
                !tg__shape_eq(m->ndim, m->shape, out->ndim, out->shape) ||
                !tg__state_same_versions(st, &g->nodes[p], p, root))
                continue;
            R->root[p] = root;
            R->count[root]++;
        }
    }
    for (int id = g->n_nodes - 1; id >= 0; id--) /* member lists, ascending */
        if (R->root[id] >= 0) {
            int root = R->root[id];
            R->next[id] = R->head[root];
            R->head[root] = id;
        }
}

/* the fused node for the region of root: program and leaves; returns
 * its dst node id, -1 on failure or -2 when it does not fit */
static int emit(tg_rw *r, const regions *R, int root, char *prog)
{
    const tg_graph *g = r->src;
    tg_fprog P;
    tg__fprog_init(&P, prog, PROGRAM_BYTES);
    for (int m = R->head[root]; m >= 0; m = R->next[m]) {
        const tg_gnode *n = &g->nodes[m];
        int args[TG_FUSED_MAX_ARGS];
        for (int i = 0; i < n->n_in; i++) {
            int v = n->in[i], p = g->values[v].node;
            if (R->root[p] == root && p != m) { /* a member: its instruction */
                int kp = 0;
                for (int q = R->head[root]; q != p; q = R->next[q])
                    kp++;
                args[i] = -1 - kp;
            } else if ((args[i] = tg__fprog_leaf(&P, v)) < 0) {
                return -2;
            }
        }
        if (!tg__fprog_add(&P, n, args))
            return -2;
    }
    return tg__fprog_emit(r, &P, &tg_op_fused_elementwise, g->nodes[root].name, NULL, 0);
}

tg_status tg__pass_fuse_elementwise(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    int nn = g->n_nodes;
    tg_uses u;
    tg_state st = {0};
    regions R = {0};
    char *prog = malloc(PROGRAM_BYTES);
    tg_status s = tg__uses_init(&u, c);
    if (s != TG_OK) {
        free(prog);
        return s;
    }
    s = tg__state_init(&st, g);
    int *mem = malloc(((size_t)nn + 1) * 4 * sizeof *mem);
    if (s == TG_OK && (!mem || !prog))
        s = tg__error(TG_ERR_NOMEM, "fuse_elementwise: out of memory");
    if (s == TG_OK) {
        R = (regions){mem, mem + nn + 1, mem + 2 * (nn + 1), mem + 3 * (nn + 1)};
        for (int i = 0; i <= nn; i++)
            R.root[i] = R.next[i] = R.head[i] = -1, R.count[i] = 0;
        grow(g, &u, &st, &R);
    }
    tg_rw r = {0};
    if (s == TG_OK)
        s = tg__rw_begin(&r, g);
    int n_fused = 0, n_ops = 0;
    for (int id = 0; id < nn && s == TG_OK; id++) {
        int root = R.root[id];
        if (root >= 0 && root != id)
            continue; /* a member: its work is in the root's node */
        if (root != id || R.count[id] < 2) {
            if (tg__rw_copy(&r, id) < 0)
                s = tg_last_status();
            continue;
        }
        int f = emit(&r, &R, id, prog);
        if (f < 0) {
            s = f == -2 ? tg__error(TG_ERR_INTERNAL, "fuse_elementwise: region of '%s' "
                                    "too large", g->nodes[id].name)
                        : tg_last_status();
            break;
        }
        tg__rw_forward(&r, g->nodes[id].out[0], r.dst->nodes[f].out[0]);
        n_fused++;
        n_ops += R.count[id];
    }
    s = tg__rw_finish(&r, c, s, n_fused > 0);
    tg__pass_count(c, "fused", n_fused);
    tg__pass_count(c, "ops", n_ops);
    tg__uses_free(&u);
    tg__state_free(&st);
    free(mem);
    free(prog);
    return s;
}
