/* Symbolic reverse-mode autodiff (TensorFlow's tf.gradients): the backward
 * pass is appended to the graph by running each op's gradient rule, the
 * same rule eager autograd runs (autodiff/vjp.c), on symbolic tensors
 * inside a graph scope. Node ids are a topological order of the data
 * edges, so visiting them from the last down sees every value's consumers
 * before its producer: its gradient sum is complete when it is used. */
#include "autodiff/vjp.h"
#include "graph/graph_impl.h"

#include <stdlib.h>
#include <string.h>

static bool saves(uint32_t mask, int i)
{
    return mask == TG_SAVE_ALL || (i < 32 && ((mask >> i) & 1u));
}

/* the pass's mark: the value leads to an x through float values; its
 * tensor: the gradient accumulated so far for the value */
typedef tg_gpass pass;

/* a value matters when it is an x, or an op that has gradients made it
 * from a value that matters; only floating-point values carry gradients */
static void mark_relevant(pass *p, int n_xs, const int *x_ids)
{
    const tg_graph *g = p->g;
    for (int j = 0; j < n_xs; j++)
        p->mark[x_ids[j]] = tg_dtype_is_float(g->values[x_ids[j]].meta.dtype);
    for (int id = 0; id < p->n_nodes; id++) {
        const tg_gnode *n = &g->nodes[id];
        if (n->kind != TG_GNODE_OP || n->op->nondiff || n->no_grad)
            continue;
        bool any = false;
        for (int i = 0; i < n->n_in; i++)
            any |= p->mark[n->in[i]];
        for (int o = 0; any && o < n->n_out; o++)
            if (tg_dtype_is_float(g->values[n->out[o]].meta.dtype))
                p->mark[n->out[o]] = true;
    }
}



/* symbolic tensors for the inputs and outputs the rule saves (as eager
 * mode saves them), their metadata, and which inputs need gradients */
static tg_status prepare(pass *p, const tg_gop *n, tg_tensor **in,
                         tg_tensor **out, tg_meta *in_meta, tg_meta *out_meta,
                         bool *needs)
{
    tg_graph *g = p->g;
    for (int i = 0; i < n->n_in; i++) {
        in_meta[i] = g->values[n->in[i]].meta;
        needs[i] = p->mark[n->in[i]];
        /* with unknown dims a rule reads shapes from its inputs (cheap:
         * symbolic tensors), so it gets them all */
        bool unknown = tg__shape_has_unknown(in_meta[i].ndim, in_meta[i].shape);
        if ((saves(n->op->save_inputs, i) || unknown) &&
            !(in[i] = tg__graph_symbolic(g, n->in[i])))
            return tg_last_status();
    }
    for (int o = 0; o < n->n_out; o++) {
        out_meta[o] = g->values[n->out[o]].meta;
        if ((saves(n->op->save_outputs, o) ||
             tg__shape_has_unknown(out_meta[o].ndim, out_meta[o].shape)) &&
            !(out[o] = tg__graph_symbolic(g, n->out[o])))
            return tg_last_status();
    }
    return TG_OK;
}

/* runs node id's rule and adds its input gradients up. The rule and the
 * sums append nodes, so the node is read through a copy (tg_gop), never
 * through a pointer into g->nodes. */
static tg_status visit(pass *p, int id)
{
    tg_gop n;
    if (!tg__gpass_op(p->g, id, &n) || n.op->nondiff || n.no_grad)
        return TG_OK;
    bool has_dy = false, has_x = false;
    for (int o = 0; o < n.n_out; o++)
        has_dy |= p->val[n.out[o]] != NULL;
    for (int i = 0; i < n.n_in; i++)
        has_x |= p->mark[n.in[i]];
    if (!has_dy || !has_x) /* not on a path from an x to a y */
        return TG_OK;
    tg_tensor *in[TG_MAX_OP_INPUTS] = {0}, *out[TG_MAX_OP_OUTPUTS] = {0};
    tg_tensor *dy[TG_MAX_OP_OUTPUTS], *dx[TG_MAX_OP_INPUTS] = {0};
    tg_meta in_meta[TG_MAX_OP_INPUTS], out_meta[TG_MAX_OP_OUTPUTS];
    bool needs[TG_MAX_OP_INPUTS];
    tg_status s = prepare(p, &n, in, out, in_meta, out_meta, needs);
    for (int o = 0; o < n.n_out; o++)
        dy[o] = p->val[n.out[o]];
    tg_vjp v = {
        .op = n.op, .name = n.name, .n_in = n.n_in, .n_out = n.n_out,
        .in = in, .out = out, .in_meta = in_meta, .out_meta = out_meta,
        .needs_grad = needs, .attr = n.attr, .attrs = n.attrs, .n_attrs = n.n_attrs,
    };
    if (s == TG_OK)
        s = tg__vjp_run(&v, dy, dx);
    for (int i = 0; i < n.n_in; i++) {
        if (!dx[i])
            continue;
        if (s == TG_OK)
            s = tg__gpass_accumulate(p, n.in[i], dx[i]); /* consumes dx[i] */
        else
            tg_release(dx[i]);
    }
    for (int i = 0; i < n.n_in; i++)
        tg_release(in[i]);
    for (int o = 0; o < n.n_out; o++)
        tg_release(out[o]);
    return s;
}

static tg_status seed(pass *p, int n_ys, const int *y_ids, tg_tensor *const *ys,
                      tg_tensor *const *grad_ys)
{
    for (int i = 0; i < n_ys; i++) {
        /* a copy: making the seed may append values (and move the array) */
        const tg_meta m = p->g->values[y_ids[i]].meta;
        tg_tensor *s0 = grad_ys && grad_ys[i] ? tg_retain(grad_ys[i])
                                              : tg_ones_like(ys[i]);
        if (!s0)
            return tg_last_status();
        if (s0->dtype != m.dtype) {
            tg_tensor *c = tg_cast(s0, m.dtype);
            tg_release(s0);
            if (!(s0 = c))
                return tg_last_status();
        }
        tg_status s = tg__gpass_accumulate(p, y_ids[i], s0);
        if (s != TG_OK)
            return s;
    }
    return TG_OK;
}

static tg_status check_y(const tg_graph *g, int i, int v, tg_tensor *const *grad_ys)
{
    const tg_meta *m = &g->values[v].meta;
    char a[160], b[160];
    if (!tg_dtype_is_float(m->dtype))
        return tg__error(TG_ERR_DTYPE, "tg_graph_gradients: ys[%d] ('%s') is %s; only "
                         "floating-point values have gradients", i,
                         g->nodes[g->values[v].node].name, tg_dtype_name(m->dtype));
    const tg_tensor *gy = grad_ys ? grad_ys[i] : NULL;
    if (!gy && tg__shape_numel(m->ndim, m->shape) != 1)
        return tg__error(TG_ERR_AUTOGRAD, "tg_graph_gradients: ys[%d] has shape %s; a "
                         "gradient can be implicitly created only for a one-element "
                         "output: pass grad_ys", i, tg_shape_str(m->ndim, m->shape, a, sizeof a));
    if (gy && !tg__shape_agree(gy->ndim, gy->shape, m->ndim, m->shape))
        return tg__error(TG_ERR_SHAPE, "tg_graph_gradients: grad_ys[%d] has shape %s, "
                         "ys[%d] has shape %s", i, tg_shape_str(gy->ndim, gy->shape, a, sizeof a),
                         i, tg_shape_str(m->ndim, m->shape, b, sizeof b));
    if (gy && gy->graph && gy->graph != g)
        return tg__error(TG_ERR_ARG, "tg_graph_gradients: grad_ys[%d] belongs to graph "
                         "'%s', not to '%s'", i, gy->graph->name, g->name);
    return TG_OK;
}

typedef struct grad_args {
    int n_ys, n_xs;
    tg_tensor *const *ys, *const *grad_ys;
} grad_args;

static tg_status check_y_arg(const tg_graph *g, int i, int v, void *user)
{
    return check_y(g, i, v, ((const grad_args *)user)->grad_ys);
}

static tg_status run(pass *p, const int *y_ids, const int *x_ids, tg_tensor **dxs, void *user)
{
    const grad_args *a = user;
    mark_relevant(p, a->n_xs, x_ids);
    tg_status s = seed(p, a->n_ys, y_ids, a->ys, a->grad_ys);
    for (int id = p->n_nodes - 1; id >= 0 && s == TG_OK; id--)
        s = visit(p, id);
    for (int j = 0; j < a->n_xs && s == TG_OK; j++)
        dxs[j] = tg_retain(p->val[x_ids[j]]);
    return s;
}

tg_status tg_graph_gradients(tg_graph *g, int n_ys, tg_tensor *const *ys,
                             tg_tensor *const *grad_ys, int n_xs,
                             tg_tensor *const *xs, tg_tensor **dxs)
{
    if (!g || n_ys < 1 || n_xs < 1 || !ys || !xs || !dxs)
        return tg__error(TG_ERR_ARG, "tg_graph_gradients: need a graph, at least "
                         "one y and one x, and a dxs array");
    grad_args a = {n_ys, n_xs, ys, grad_ys};
    tg_gpass_spec sp = {"tg_graph_gradients", n_ys, ys, "a y", n_xs, xs, "an x",
                        check_y_arg, run, &a};
    bool was = tg__graph_mark_backward(true); /* for pictures: these nodes are the backward */
    tg_status s = tg__graph_pass(g, &sp, n_xs, dxs);
    tg__graph_mark_backward(was);
    return s;
}
