/* Epilogue fusion (level 2): a product (gemm, matmul, conv2d, the input
 * gradients of convolution) whose output only feeds a chain of
 * elementwise ops of the same dtype and shape becomes one fused_epilogue
 * node: the product's kernel writes the output, then the chain runs over
 * it in place, block by block, right after (ops/fused.c). Forward:
 * gemm (its bias is the c input) + relu, conv2d (bias included) + relu;
 * backward: the input gradient of a layer followed by relu_grad's mask
 * (relu_grad(dy @ W, y)) is one node. The product's own kernel and the
 * chain's own kernels run: results are bitwise the same.
 *
 * The node takes the place of the chain's last op; the product and the
 * chain must see the same version of every variable there (the weights
 * of a training step are written only after the backward pass). */
#include "ops/fused.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const tg_op_def tg_op_fused_epilogue;

#define MAX_CHAIN 15
#define PROGRAM_BYTES 4096

static bool is_product(const tg_gnode *n)
{
    static const char *const names[] = {"gemm", "matmul", "conv2d", "conv2d_grad_input",
                                        "conv_transpose2d", NULL};
    if (n->kind != TG_GNODE_OP || n->n_out != 1 || n->n_in > TG_FUSED_MAX_ARGS)
        return false;
    for (int i = 0; names[i]; i++)
        if (n->op == tg_op_find(names[i])) {
            for (int a = 0; a < n->n_attrs; a++)
                if (n->attrs[a].type != TG_ATTR_INT && n->attrs[a].type != TG_ATTR_FLOAT &&
                    n->attrs[a].type != TG_ATTR_INTS)
                    return false;
            return true;
        }
    return false;
}

typedef struct ep {
    const tg_graph *g;
    tg_uses u;
    tg_state st;
    int *reader; /* per value: a node reading it (the only one when private) */
    int *end;    /* per product: the chain's last node, or -1 */
    bool *taken; /* per node: in a chain */
    int *chain;  /* scratch: the chain of one product */
} ep;

/* the chain after product p (ids into E->chain), its length, or 0 */
static int chain_of(ep *E, int p)
{
    const tg_graph *g = E->g;
    const tg_meta *m = &g->values[g->nodes[p].out[0]].meta;
    int n = 0, v = g->nodes[p].out[0];
    while (n < MAX_CHAIN && tg__uses_private(&E->u, g, v)) {
        int r = E->reader[v];
        const tg_gnode *rn = &g->nodes[r];
        const tg_meta *rm = rn->n_out == 1 ? &g->values[rn->out[0]].meta : NULL;
        if (E->taken[r] || !tg__pass_rewritable(g, E->u.ctrl_in, r) ||
            !tg__fused_op_ok(rn->op, rn->attrs, rn->n_attrs) || !rm ||
            rm->dtype != m->dtype || !tg__shape_eq(rm->ndim, rm->shape, m->ndim, m->shape))
            break;
        E->chain[n++] = r;
        v = rn->out[0];
    }
    if (n == 0)
        return 0;
    int at = E->chain[n - 1];
    if (!tg__state_same_versions(&E->st, &g->nodes[p], p, at))
        return 0;
    for (int k = 0; k < n; k++)
        if (!tg__state_same_versions(&E->st, &g->nodes[E->chain[k]], E->chain[k], at))
            return 0;
    return n;
}

/* the fused node: the product's instruction, then the chain's over its
 * result; its dst id, -1 on failure or -2 when it does not fit */
static int emit(tg_rw *r, const ep *E, int p, int n_chain, const int *chain, char *prog)
{
    const tg_graph *g = E->g;
    int args[TG_FUSED_MAX_ARGS];
    tg_fprog P;
    tg__fprog_init(&P, prog, PROGRAM_BYTES);
    const tg_gnode *prod = &g->nodes[p];
    for (int i = 0; i < prod->n_in; i++)
        if ((args[i] = tg__fprog_leaf(&P, prod->in[i])) < 0)
            return -2;
    if (!tg__fprog_add(&P, prod, args))
        return -2;
    int prev = prod->out[0];
    for (int k = 0; k < n_chain; k++) {
        const tg_gnode *n = &g->nodes[chain[k]];
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] == prev) /* the previous instruction's result */
                args[i] = -1 - k;
            else if ((args[i] = tg__fprog_leaf(&P, n->in[i])) < 0)
                return -2;
        if (!tg__fprog_add(&P, n, args))
            return -2;
        prev = n->out[0];
    }
    return tg__fprog_emit(r, &P, &tg_op_fused_epilogue, g->nodes[chain[n_chain - 1]].name, NULL,
                          0);
}

tg_status tg__pass_fuse_epilogue(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    int nn = g->n_nodes;
    ep E = {.g = g};
    tg_status s = tg__uses_init(&E.u, c);
    if (s == TG_OK)
        s = tg__state_init(&E.st, g);
    E.reader = malloc(((size_t)g->n_values + 1) * sizeof *E.reader);
    E.end = malloc(((size_t)nn + 1) * sizeof *E.end);
    E.taken = calloc((size_t)nn + 1, sizeof *E.taken);
    E.chain = malloc(((size_t)nn + 1) * (MAX_CHAIN + 1) * sizeof *E.chain);
    char *prog = malloc(PROGRAM_BYTES);
    if (s == TG_OK && (!E.reader || !E.end || !E.taken || !E.chain || !prog))
        s = tg__error(TG_ERR_NOMEM, "fuse_epilogue: out of memory");
    int *chains = E.chain; /* per product: MAX_CHAIN + 1 slots */
    for (int id = 0; s == TG_OK && id < nn; id++) {
        E.end[id] = -1;
        for (int i = 0; i < g->nodes[id].n_in; i++)
            E.reader[g->nodes[id].in[i]] = id;
    }
    int n_fused = 0, n_ops = 0;
    for (int id = 0; s == TG_OK && id < nn; id++) {
        if (!is_product(&g->nodes[id]) || !tg__pass_rewritable(g, E.u.ctrl_in, id))
            continue;
        E.chain = chains + (size_t)id * (MAX_CHAIN + 1);
        int n = chain_of(&E, id);
        if (n == 0)
            continue;
        E.chain[MAX_CHAIN] = n;
        for (int k = 0; k < n; k++)
            E.taken[E.chain[k]] = true;
        E.taken[id] = true;
        E.end[id] = E.chain[n - 1];
    }
    int *product_at = E.reader; /* reused: per chain end, its product */
    for (int id = 0; s == TG_OK && id < nn; id++)
        product_at[id] = -1;
    for (int id = 0; s == TG_OK && id < nn; id++)
        if (E.end[id] >= 0)
            product_at[E.end[id]] = id;
    tg_rw r = {0};
    if (s == TG_OK)
        s = tg__rw_begin(&r, g);
    for (int id = 0; s == TG_OK && id < nn; id++) {
        int p = product_at[id];
        if (p < 0 && E.taken[id])
            continue; /* a product or chain member: in its chain's node */
        if (p < 0) {
            if (tg__rw_copy(&r, id) < 0)
                s = tg_last_status();
            continue;
        }
        const int *ch = chains + (size_t)p * (MAX_CHAIN + 1);
        int f = emit(&r, &E, p, ch[MAX_CHAIN], ch, prog);
        if (f < 0) {
            s = f == -2 ? tg__error(TG_ERR_INTERNAL, "fuse_epilogue: chain of '%s' too large",
                                    g->nodes[p].name)
                        : tg_last_status();
            break;
        }
        tg__rw_forward(&r, g->nodes[id].out[0], r.dst->nodes[f].out[0]);
        n_fused++;
        n_ops += ch[MAX_CHAIN];
    }
    s = tg__rw_finish(&r, c, s, n_fused > 0);
    tg__pass_count(c, "fused", n_fused);
    tg__pass_count(c, "ops", n_ops);
    tg__uses_free(&E.u);
    tg__state_free(&E.st);
    free(E.reader);
    free(E.end);
    free(E.taken);
    free(chains);
    free(prog);
    return s;
}
