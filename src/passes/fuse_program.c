/* What the fusion passes share when they turn a group of nodes into one
 * fused node: the program's text, built instruction by instruction, and
 * its leaves (the values it reads from outside, the node's inputs, in
 * the order of first use); then the node itself. Each pass only decides
 * which nodes form a group and how their operands refer to each other. */
#include "ops/fused.h"
#include "passes/passes.h"

#include <stdio.h>
#include <string.h>

void tg__fprog_init(tg_fprog *p, char *buf, size_t cap)
{
    p->text = buf;
    p->len = 0;
    p->cap = cap;
    p->n_instr = 0;
    p->n_leaves = 0;
    p->backward = false;
    buf[0] = 0;
}

int tg__fprog_leaf(tg_fprog *p, int v)
{
    for (int l = 0; l < p->n_leaves; l++)
        if (p->leaves[l] == v)
            return l;
    if (p->n_leaves == TG_MAX_OP_INPUTS)
        return -1;
    p->leaves[p->n_leaves] = v;
    return p->n_leaves++;
}

bool tg__fprog_add(tg_fprog *p, const tg_gnode *n, const int *args)
{
    if (p->n_instr) {
        if (p->len + 3 > p->cap)
            return false;
        memcpy(p->text + p->len, "; ", 3);
        p->len += 2;
    }
    if (!tg__fused_format(p->text, p->cap, &p->len, n->op, n->attrs, n->n_attrs, n->n_in, args))
        return false;
    p->n_instr++;
    p->backward |= n->backward;
    return true;
}

int tg__fprog_emit(tg_rw *r, const tg_fprog *p, const tg_op_def *op, const char *base,
                   const tg_attr *extra, int n_extra)
{
    int in[TG_MAX_OP_INPUTS];
    for (int l = 0; l < p->n_leaves; l++)
        in[l] = r->vmap[p->leaves[l]];
    tg_attr a[4] = {{.name = "program", .type = TG_ATTR_STRING, .u.s = p->text}};
    for (int i = 0; i < n_extra && i < 3; i++)
        a[1 + i] = extra[i];
    /* named after the node it replaces (unique already: no search for a
     * free suffix) */
    char name[320];
    snprintf(name, sizeof name, "%s/fused", base);
    int id = tg__rw_op(r, op, name, a, 1 + n_extra, p->n_leaves, in);
    if (id >= 0)
        r->dst->nodes[id].backward = p->backward;
    return id;
}
