/* Symbolic forward-mode autodiff (Jacobian-vector products): the tangent
 * nodes are appended to the graph by running each op's JVP rule
 * (each op definition's `jvp`) on symbolic tensors inside a graph scope. Node
 * ids are a topological order, so visiting them from the first up sees
 * every value's producer before its consumers: a value's tangent is
 * complete when it is used. Only nodes on a path from an x to a y run. */
#include "autodiff/jvp.h"
#include "autodiff/vjp.h"
#include "graph/graph_impl.h"

#include <stdlib.h>
#include <string.h>

/* the pass's mark: the value leads to a y; its tensor: the value's
 * tangent (symbolic), NULL for zero */
typedef tg_gpass fwd;

/* a value is needed when it is a y or an input of a node with a needed
 * output; ids are topological, so one sweep from the last node down */
static void mark_needed(fwd *p, int n_ys, const int *y_ids)
{
    const tg_graph *g = p->g;
    for (int i = 0; i < n_ys; i++)
        p->mark[y_ids[i]] = true;
    for (int id = p->n_nodes - 1; id >= 0; id--) {
        const tg_gnode *n = &g->nodes[id];
        bool any = false;
        for (int o = 0; o < n->n_out; o++)
            any |= p->mark[n->out[o]];
        for (int i = 0; any && i < n->n_in; i++)
            p->mark[n->in[i]] = true;
    }
}



/* symbolic tensors for all the node's inputs and outputs, and their
 * metadata (a JVP rule may use any of them) */
static tg_status prepare(fwd *p, const tg_gop *n, tg_tensor **in, tg_tensor **out,
                         tg_meta *in_meta, tg_meta *out_meta)
{
    tg_graph *g = p->g;
    for (int i = 0; i < n->n_in; i++) {
        in_meta[i] = g->values[n->in[i]].meta;
        if (!(in[i] = tg__graph_symbolic(g, n->in[i])))
            return tg_last_status();
    }
    for (int o = 0; o < n->n_out; o++) {
        out_meta[o] = g->values[n->out[o]].meta;
        if (!(out[o] = tg__graph_symbolic(g, n->out[o])))
            return tg_last_status();
    }
    return TG_OK;
}

/* runs node id's JVP rule and adds its output tangents up. The rule and
 * the sums append nodes, so the node is read through a copy (tg_gop),
 * never through a pointer into g->nodes. */
static tg_status visit(fwd *p, int id)
{
    tg_gop n;
    if (!tg__gpass_op(p->g, id, &n) || n.op->nondiff)
        return TG_OK;
    bool has_dx = false, needed = false;
    for (int i = 0; i < n.n_in; i++)
        has_dx |= p->val[n.in[i]] != NULL;
    for (int o = 0; o < n.n_out; o++)
        needed |= p->mark[n.out[o]];
    if (!has_dx || !needed) /* not on a path from an x to a y */
        return TG_OK;
    tg_tensor *in[TG_MAX_OP_INPUTS] = {0}, *out[TG_MAX_OP_OUTPUTS] = {0};
    tg_tensor *dx[TG_MAX_OP_INPUTS], *dy[TG_MAX_OP_OUTPUTS] = {0};
    tg_meta in_meta[TG_MAX_OP_INPUTS], out_meta[TG_MAX_OP_OUTPUTS];
    tg_status s = prepare(p, &n, in, out, in_meta, out_meta);
    for (int i = 0; i < n.n_in; i++)
        dx[i] = p->val[n.in[i]];
    tg_jvp_ctx c = {
        .op = n.op, .name = n.name, .n_in = n.n_in, .n_out = n.n_out,
        .in = in, .out = out, .in_meta = in_meta, .out_meta = out_meta,
        .attr = n.attr, .attrs = n.attrs, .n_attrs = n.n_attrs,
    };
    if (s == TG_OK)
        s = tg__jvp_run(&c, dx, dy);
    for (int o = 0; o < n.n_out; o++) {
        if (!dy[o])
            continue;
        if (s == TG_OK)
            s = tg__gpass_accumulate(p, n.out[o], dy[o]); /* consumes dy[o] */
        else
            tg_release(dy[o]);
    }
    for (int i = 0; i < n.n_in; i++)
        tg_release(in[i]);
    for (int o = 0; o < n.n_out; o++)
        tg_release(out[o]);
    return s;
}

static tg_status check_x(const tg_graph *g, int j, int v, tg_tensor *const *tangents)
{
    const tg_tensor *t = tangents ? tangents[j] : NULL;
    char name[300];
    tg__value_name(g, v, name, sizeof name);
    if (t && t->graph && t->graph != g)
        return tg__error(TG_ERR_ARG, "tg_graph_jvp: tangents[%d] belongs to graph "
                         "'%s', not to '%s'", j, t->graph->name, g->name);
    return tg__jvp_check_tangent("tg_graph_jvp", j, t, &g->values[v].meta, name);
}

/* the ys' tangents: what the pass computed, or zeros of the y's shape
 * and dtype (a y that does not depend on the xs) */
static tg_status results(fwd *p, int n_ys, const int *y_ids, tg_tensor **out)
{
    for (int i = 0; i < n_ys; i++) {
        int v = y_ids[i];
        const tg_meta m = p->g->values[v].meta; /* a copy: zeros may append */
        out[i] = p->val[v] ? tg_retain(p->val[v])
                           : tg__gpass_symbolic(p->g, tg_zeros(m.dtype, m.ndim, m.shape));
        if (!out[i])
            return tg_last_status();
    }
    return TG_OK;
}

typedef struct jvp_args {
    int n_xs, n_ys;
    tg_tensor *const *tangents;
} jvp_args;

static tg_status check_x_arg(const tg_graph *g, int j, int v, void *user)
{
    return check_x(g, j, v, ((const jvp_args *)user)->tangents);
}

static tg_status run(fwd *p, const int *x_ids, const int *y_ids, tg_tensor **out, void *user)
{
    const jvp_args *a = user;
    mark_needed(p, a->n_ys, y_ids);
    tg_status s = TG_OK;
    for (int j = 0; j < a->n_xs && s == TG_OK; j++)
        if (a->tangents && a->tangents[j])
            s = tg__gpass_accumulate(p, x_ids[j], tg_retain(a->tangents[j]));
    for (int id = 0; id < p->n_nodes && s == TG_OK; id++)
        s = visit(p, id);
    return s == TG_OK ? results(p, a->n_ys, y_ids, out) : s;
}

tg_status tg_graph_jvp(tg_graph *g, int n_xs, tg_tensor *const *xs,
                       tg_tensor *const *tangents, int n_ys, tg_tensor *const *ys,
                       tg_tensor **out_tangents)
{
    if (!g || n_ys < 1 || n_xs < 1 || !ys || !xs || !out_tangents)
        return tg__error(TG_ERR_ARG, "tg_graph_jvp: need a graph, at least one x and "
                         "one y, and an out_tangents array");
    jvp_args a = {n_xs, n_ys, tangents};
    tg_gpass_spec sp = {"tg_graph_jvp", n_xs, xs, "an x", n_ys, ys, "a y",
                        check_x_arg, run, &a};
    return tg__graph_pass(g, &sp, n_ys, out_tangents);
}
