/* What passes must respect about state and the user's edges: which nodes
 * write variables (assigns, fused updates, random ops) and which version of a
 * variable a read sees; which nodes may be replaced at all; and small
 * facts about constants that several passes read. */
#include "passes/passes.h"
#include "ops/fused.h"

#include <stdlib.h>
#include <string.h>

extern const tg_op_def tg_op_assign, tg_op_assign_sub, tg_op_fused_update;

bool tg__node_writes_input(const tg_gnode *n, int i)
{
    if (n->kind != TG_GNODE_OP)
        return false;
    if (n->op == &tg_op_assign || n->op == &tg_op_assign_sub)
        return i == 0;
    if (n->op == &tg_op_fused_update) /* its first results.n inputs */
        return n->attr && i < ((const tg_fused_attrs *)n->attr)->results.n;
    /* a random op advances its generator's state (a variable) */
    return i >= 0 && i == tg_op_state_input(n->op, n->n_in);
}

int tg__variable_behind(const tg_graph *g, int v)
{
    for (;;) {
        const tg_gnode *n = &g->nodes[g->values[v].node];
        if (n->kind == TG_GNODE_VARIABLE)
            return g->values[v].node;
        if (n->kind != TG_GNODE_OP || !n->op->make_view || n->n_in == 0)
            return -1;
        v = n->in[0];
    }
}

void tg__state_free(tg_state *s)
{
    free(s->var_of);
    free(s->writers);
    free(s->wstart);
    memset(s, 0, sizeof *s);
}

tg_status tg__state_init(tg_state *s, const tg_graph *g)
{
    int nn = g->n_nodes, nv = g->n_values, n_writes = 0;
    memset(s, 0, sizeof *s);
    s->g = g;
    s->var_of = malloc(((size_t)nv + 1) * sizeof(int));
    s->wstart = calloc((size_t)nn + 2, sizeof(int));
    if (!s->var_of || !s->wstart) {
        tg__state_free(s);
        return tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
    }
    /* values are numbered in creation order: a view's input comes first */
    for (int v = 0; v < nv; v++) {
        const tg_gnode *n = &g->nodes[g->values[v].node];
        s->var_of[v] = n->kind == TG_GNODE_VARIABLE ? g->values[v].node
                       : n->kind == TG_GNODE_OP && n->op->make_view && n->n_in > 0
                           ? s->var_of[n->in[0]]
                           : -1;
    }
    for (int id = 0; id < nn; id++) {
        const tg_gnode *n = &g->nodes[id];
        for (int i = 0; n->kind == TG_GNODE_OP && i < n->n_in; i++)
            if (tg__node_writes_input(n, i) && s->var_of[n->in[i]] >= 0) {
                s->wstart[s->var_of[n->in[i]] + 2]++;
                n_writes++;
            }
    }
    for (int k = 0; k < nn; k++)
        s->wstart[k + 2] += s->wstart[k + 1];
    if (!(s->writers = malloc(((size_t)n_writes + 1) * sizeof(int)))) {
        tg__state_free(s);
        return tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
    }
    for (int id = 0; id < nn; id++) {
        const tg_gnode *n = &g->nodes[id];
        for (int i = 0; n->kind == TG_GNODE_OP && i < n->n_in; i++)
            if (tg__node_writes_input(n, i) && s->var_of[n->in[i]] >= 0)
                s->writers[s->wstart[s->var_of[n->in[i]] + 1]++] = id;
    }
    /* only variables that something writes count as state */
    for (int v = 0; v < nv; v++)
        if (s->var_of[v] >= 0 && s->wstart[s->var_of[v]] == s->wstart[s->var_of[v] + 1])
            s->var_of[v] = -1;
    return TG_OK;
}

int tg__state_version(const tg_state *s, int v, int at)
{
    int var = s->var_of[v];
    if (var < 0)
        return -1;
    int k = 0;
    for (int e = s->wstart[var]; e < s->wstart[var + 1] && s->writers[e] < at; e++)
        k++;
    return k;
}

bool tg__state_same_versions(const tg_state *st, const tg_gnode *p, int pid, int at)
{
    for (int i = 0; i < p->n_in; i++)
        if (st->var_of[p->in[i]] >= 0 &&
            tg__state_version(st, p->in[i], pid) != tg__state_version(st, p->in[i], at))
            return false;
    return true;
}

int *tg__ctrl_in_counts(const tg_graph *g)
{
    int *c = calloc((size_t)g->n_nodes + 1, sizeof *c);
    if (!c) {
        tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
        return NULL;
    }
    for (int id = 0; id < g->n_nodes; id++)
        for (int i = 0; i < g->nodes[id].n_ctrl; i++)
            c[g->nodes[id].ctrl[i]]++;
    return c;
}

bool tg__pass_rewritable(const tg_graph *g, const int *ctrl_in, int id)
{
    const tg_gnode *n = &g->nodes[id];
    return n->kind == TG_GNODE_OP && (n->op->flags & TG_OP_PURE) && n->n_ctrl == 0 &&
           ctrl_in[id] == 0;
}

tg_tensor *tg__const_tensor(const tg_graph *g, int v)
{
    const tg_gnode *n = &g->nodes[g->values[v].node];
    return n->kind == TG_GNODE_CONSTANT ? n->tensor : NULL;
}

bool tg__tensor_all_equal(const tg_tensor *t, double x)
{
    if (!t || t->numel == 0)
        return false;
    for (int64_t i = 0; i < t->numel; i++) {
        double y = tg__load(t->dtype, tg__elem_ptr(t, i));
        if (!(y == x))
            return false;
    }
    return true;
}
