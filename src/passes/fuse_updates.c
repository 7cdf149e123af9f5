/* Optimizer update fusion (level 2): the chains of elementwise ops that
 * feed assign nodes (SGD with momentum from tg_graph_sgd, Adam or any
 * update written with ops and tg_assign) become one fused_update node per
 * group of assigns that read each other's results, i.e. one per
 * parameter: momentum SGD's
 *     buf = assign(buf, buf * m + g);  p = assign(p, p + buf * -lr)
 * is one node that reads buf, p, g and the constants once and writes buf
 * and p in place, block by block, with the ops' own kernels (bitwise the
 * same as unfused). A read of an assign's result inside the group is the
 * computed value itself (still in cache), never a reload.
 *
 * The node takes the place of the group's last assign. A group is fused
 * only when that move changes no version of any variable a node sees:
 * no node outside the group reads or writes a variable the group writes
 * between the group's first and last node; reads of such a variable
 * inside the group come before the group writes it and read the whole
 * variable at the same index (the writes land after each block is
 * computed); every other variable read keeps its version; and the assign
 * results are read by nothing outside the group (targets may name them). */
#include "ops/fused.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const tg_op_def tg_op_assign, tg_op_fused_update;

#define PROGRAM_BYTES 8192

typedef struct fu {
    const tg_graph *g;
    tg_uses u;
    tg_state st;
    int *owner;  /* per node: the candidate assign whose tree (or itself) it is in, -1 */
    int *parent; /* union-find over candidate assigns */
    int *group;  /* per node: its group's representative (after union), -1 */
    int *first, *last; /* per representative */
    bool *bad;   /* per representative */
    int *lo;     /* per candidate: tree members come after this node */
    int *inside; /* per assign: readers of its result inside its group (scratch) */
} fu;

static int find(int *parent, int a)
{
    while (parent[a] != a)
        a = parent[a] = parent[parent[a]];
    return a;
}

static bool same_meta(const tg_meta *a, const tg_meta *b)
{
    return a->dtype == b->dtype && tg__shape_eq(a->ndim, a->shape, b->ndim, b->shape);
}

static const tg_gnode *producer(const tg_graph *g, int v) { return &g->nodes[g->values[v].node]; }

static bool is_candidate(const fu *F, int id)
{
    const tg_graph *g = F->g;
    const tg_gnode *n = &g->nodes[id];
    if (n->kind != TG_GNODE_OP || n->op != &tg_op_assign || n->n_ctrl || F->u.ctrl_in[id])
        return false;
    const tg_gnode *var = producer(g, n->in[0]);
    const tg_meta *vm = &g->values[n->in[0]].meta, *xm = &g->values[n->in[1]].meta;
    int root = g->values[n->in[1]].node;
    return var->kind == TG_GNODE_VARIABLE && !F->u.fetched[n->in[0]] && same_meta(vm, xm) &&
           !F->u.fetched[n->out[0]] && tg__uses_private(&F->u, g, n->in[1]) &&
           tg__pass_rewritable(g, F->u.ctrl_in, root) &&
           tg__fused_op_ok(g->nodes[root].op, g->nodes[root].attrs, g->nodes[root].n_attrs);
}

/* a tree member: an elementwise op with a private value of the variable's shape */
static bool member_ok(const fu *F, int a, int v, const tg_meta *shape)
{
    const tg_graph *g = F->g;
    int p = g->values[v].node;
    const tg_meta *m = &g->values[v].meta;
    return F->owner[p] < 0 && p > F->lo[a] && tg__pass_rewritable(g, F->u.ctrl_in, p) &&
           tg__fused_op_ok(g->nodes[p].op, g->nodes[p].attrs, g->nodes[p].n_attrs) &&
           tg__uses_private(&F->u, g, v) &&
           tg__shape_eq(m->ndim, m->shape, shape->ndim, shape->shape);
}

/* the tree of candidate a (owner marks), and links to candidates it reads */
static tg_status collect(fu *F, int a, int *stack, int *n_ops)
{
    const tg_graph *g = F->g;
    const tg_meta *shape = &g->values[g->nodes[a].in[0]].meta;
    int sp = 0;
    F->owner[a] = a;
    int root = g->values[g->nodes[a].in[1]].node;
    F->owner[root] = a;
    stack[sp++] = root;
    while (sp > 0) {
        const tg_gnode *n = &g->nodes[stack[--sp]];
        if (++*n_ops > TG_FUSED_MAX_INSTRS)
            return TG_ERR_ARG; /* too large: left unfused */
        for (int i = 0; i < n->n_in; i++) {
            int v = n->in[i], p = g->values[v].node;
            if (F->owner[p] >= 0 && F->owner[p] == p && p != a) /* another candidate */
                F->parent[find(F->parent, p)] = find(F->parent, a);
            else if (member_ok(F, a, v, shape)) {
                F->owner[p] = a;
                stack[sp++] = p;
            }
        }
    }
    return TG_OK;
}

/* writers of variable node var before `at`, not counting group gr */
static int version_outside(const fu *F, int var, int at, int gr)
{
    int k = 0;
    for (int e = F->st.wstart[var]; e < F->st.wstart[var + 1] && F->st.writers[e] < at; e++)
        k += F->group[F->st.writers[e]] != gr;
    return k;
}

/* the group writing variable node var: its assign, or -1 */
static int group_writer(const fu *F, int var, int gr)
{
    for (int e = F->st.wstart[var]; e < F->st.wstart[var + 1]; e++)
        if (F->group[F->st.writers[e]] == gr)
            return F->st.writers[e];
    return -1;
}

static bool member_reads_ok(const fu *F, int id, int gr)
{
    const tg_graph *g = F->g;
    const tg_gnode *n = &g->nodes[id];
    if (n->op == &tg_op_assign) /* its variable, and its tree's root */
        return true;
    for (int i = 0; i < n->n_in; i++) {
        int v = n->in[i], p = g->values[v].node, var = F->st.var_of[v];
        if (F->group[p] == gr)
            continue; /* a member's value, or a group assign's result */
        if (var < 0)
            continue;
        int w = group_writer(F, var, gr);
        if (w >= 0 && (p != var || w < id))
            return false; /* through a view, or after the group's write */
        if (version_outside(F, var, id, gr) != version_outside(F, var, F->last[gr], gr))
            return false;
    }
    return true;
}

/* a group is fused only when moving its work to its last node changes no
 * version any node sees (see the top of the file) */
static bool group_ok(const fu *F, int gr)
{
    const tg_graph *g = F->g;
    int n_vars = 0;
    const tg_meta *shape = NULL;
    for (int id = F->first[gr]; id <= F->last[gr]; id++) /* reads of the assigns' results */
        for (int i = 0; F->group[id] == gr && i < g->nodes[id].n_in; i++) {
            int p = g->values[g->nodes[id].in[i]].node;
            if (F->group[p] == gr && g->nodes[p].op == &tg_op_assign)
                F->inside[p]++;
        }
    for (int id = F->first[gr]; id <= F->last[gr]; id++) {
        const tg_gnode *n = &g->nodes[id];
        if (F->group[id] == gr) {
            if (n->op == &tg_op_assign) {
                const tg_meta *m = &g->values[n->in[0]].meta;
                if (shape && !tg__shape_eq(m->ndim, m->shape, shape->ndim, shape->shape))
                    return false;
                shape = m;
                if (++n_vars > TG_FUSED_MAX_RESULTS)
                    return false;
                int var = g->values[n->in[0]].node, writers = 0; /* once per group */
                for (int e = F->st.wstart[var]; e < F->st.wstart[var + 1]; e++)
                    writers += F->group[F->st.writers[e]] == gr;
                if (writers != 1)
                    return false;
                /* its result is read inside the group only */
                if (F->inside[id] != F->u.readers[n->out[0]])
                    return false;
            }
            if (!member_reads_ok(F, id, gr))
                return false;
            continue;
        }
        /* outside the group, between its nodes: no read or write of a
         * variable the group writes */
        for (int i = 0; i < n->n_in; i++) {
            int var = F->st.var_of[n->in[i]];
            if (var >= 0 && group_writer(F, var, gr) >= 0)
                return false;
        }
    }
    return true;
}

/* the fused node of group gr: the variables it writes are its first
 * inputs; results[k] the instruction written over variable k. Its dst id,
 * -1 on failure or -2 when it does not fit */
static int emit(tg_rw *r, const fu *F, int gr, char *prog)
{
    const tg_graph *g = F->g;
    int instr[TG_FUSED_MAX_INSTRS], n_instr = 0;
    int64_t results[TG_FUSED_MAX_RESULTS];
    int n_res = 0;
    tg_fprog P;
    tg__fprog_init(&P, prog, PROGRAM_BYTES);
    for (int id = F->first[gr]; id <= F->last[gr]; id++) /* the variables first */
        if (F->group[id] == gr && g->nodes[id].op == &tg_op_assign)
            tg__fprog_leaf(&P, g->nodes[id].in[0]);
    for (int id = F->first[gr]; id <= F->last[gr]; id++) {
        const tg_gnode *n = &g->nodes[id];
        if (F->group[id] != gr)
            continue;
        if (n->op == &tg_op_assign) {
            int root = g->values[n->in[1]].node;
            int k = 0;
            while (instr[k] != root)
                k++;
            results[n_res++] = k;
            continue;
        }
        int args[TG_FUSED_MAX_ARGS];
        for (int i = 0; i < n->n_in; i++) {
            int v = n->in[i], p = g->values[v].node;
            if (F->group[p] == gr) { /* a member's instruction, or an assign's value */
                int src = g->nodes[p].op == &tg_op_assign ? g->values[g->nodes[p].in[1]].node : p;
                int k = 0;
                while (instr[k] != src)
                    k++;
                args[i] = -1 - k;
            } else if ((args[i] = tg__fprog_leaf(&P, v)) < 0) {
                return -2;
            }
        }
        if (!tg__fprog_add(&P, n, args))
            return -2;
        instr[n_instr++] = id;
    }
    tg_attr res = TG_AINTS("results", results, n_res);
    return tg__fprog_emit(r, &P, &tg_op_fused_update, g->nodes[F->last[gr]].name, &res, 1);
}

static void fu_free(fu *F)
{
    tg__uses_free(&F->u);
    tg__state_free(&F->st);
    free(F->owner);
    free(F->bad);
    free(F->lo);
}

tg_status tg__pass_fuse_updates(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    int nn = g->n_nodes;
    fu F = {.g = g};
    tg_status s = tg__uses_init(&F.u, c);
    if (s == TG_OK)
        s = tg__state_init(&F.st, g);
    F.owner = malloc(((size_t)nn + 1) * 6 * sizeof(int));
    F.bad = calloc((size_t)nn + 1, sizeof *F.bad);
    F.lo = calloc(((size_t)nn + 1) * 2, sizeof *F.lo);
    char *prog = malloc(PROGRAM_BYTES);
    if (s == TG_OK && (!F.owner || !F.bad || !F.lo || !prog))
        s = tg__error(TG_ERR_NOMEM, "fuse_updates: out of memory");
    if (s != TG_OK) {
        fu_free(&F);
        free(prog);
        return s;
    }
    F.parent = F.owner + (nn + 1);
    F.group = F.owner + 2 * (nn + 1);
    F.first = F.owner + 3 * (nn + 1);
    F.last = F.owner + 4 * (nn + 1);
    int *stack = F.owner + 5 * (nn + 1);
    for (int id = 0; id < nn; id++) {
        F.owner[id] = F.group[id] = -1;
        F.parent[id] = id;
        F.first[id] = nn;
        F.last[id] = -1;
    }
    F.inside = F.lo + (nn + 1);
    /* Trees stay after the last node before them that reads state and
     * cannot join a tree (a backward GEMM reading a weight, an assign):
     * a tree reaching back past it would put that read inside the group's
     * range and the group would be refused (and the check would get long) */
    for (int id = 0, last = -1; id < nn; id++) {
        const tg_gnode *n = &g->nodes[id];
        F.lo[id] = last;
        bool reads_state = false;
        for (int i = 0; i < n->n_in; i++)
            reads_state |= F.st.var_of[n->in[i]] >= 0;
        bool joinable = n->kind == TG_GNODE_OP && n->n_out == 1 &&
                        tg__pass_rewritable(g, F.u.ctrl_in, id) &&
                        tg__fused_op_ok(n->op, n->attrs, n->n_attrs) &&
                        tg__uses_private(&F.u, g, n->out[0]);
        if (reads_state && !joinable)
            last = id;
    }
    for (int id = 0; id < nn; id++) /* candidates mark themselves first */
        if (is_candidate(&F, id))
            F.owner[id] = id;
    for (int id = nn - 1; id >= 0; id--) {
        if (F.owner[id] != id)
            continue;
        int n_ops = 0;
        if (collect(&F, id, stack, &n_ops) != TG_OK)
            F.bad[id] = true;
    }
    for (int id = 0; id < nn; id++) {
        if (F.owner[id] < 0)
            continue;
        int gr = find(F.parent, F.owner[id]);
        F.group[id] = gr;
        F.first[gr] = id < F.first[gr] ? id : F.first[gr];
        F.last[gr] = id > F.last[gr] ? id : F.last[gr];
        F.bad[gr] |= F.bad[F.owner[id]];
    }
    for (int id = 0; id < nn; id++) /* decided per group, once */
        if (F.group[id] == id && !F.bad[id] && !group_ok(&F, id))
            F.bad[id] = true;
    tg_rw r = {0};
    s = tg__rw_begin(&r, g);
    int n_fused = 0, n_assigns = 0;
    for (int id = 0; id < nn && s == TG_OK; id++) {
        int gr = F.group[id];
        if (gr < 0 || F.bad[gr]) {
            if (tg__rw_copy(&r, id) < 0)
                s = tg_last_status();
            continue;
        }
        if (g->nodes[id].op == &tg_op_assign)
            n_assigns++;
        if (id != F.last[gr])
            continue; /* in the group's node */
        int f = emit(&r, &F, gr, prog);
        if (f < 0) {
            s = f == -2 ? tg__error(TG_ERR_INTERNAL, "fuse_updates: group of '%s' too large",
                                    g->nodes[id].name)
                        : tg_last_status();
            break;
        }
        for (int k = F.first[gr]; k <= F.last[gr]; k++)
            if (F.group[k] == gr && g->nodes[k].op == &tg_op_assign)
                tg__rw_forward(&r, g->nodes[k].out[0], r.dst->nodes[f].out[0]);
        n_fused++;
    }
    s = tg__rw_finish(&r, c, s, n_fused > 0);
    tg__pass_count(c, "fused", n_fused);
    tg__pass_count(c, "assigns", n_assigns);
    fu_free(&F);
    free(prog);
    return s;
}
