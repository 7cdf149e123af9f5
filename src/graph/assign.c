/* State updates as ops: assign (var = value) and assign_sub (var -= alpha
 * * value, an SGD step), so that a training step can be made of graph
 * nodes. Their output aliases the variable, as TensorFlow's ref outputs
 * do, so they are view ops whose make_view first writes in place. In
 * eager mode they update any tensor in place, like tg_copy_/tg_add_. */
#include "graph/graph_impl.h"
#include "graph/hook.h"
#include "tg/autograd.h"

#include <stdio.h>
#include <string.h>

extern const tg_op_def tg_op_assign;

static tg_status assign_infer(tg_op_ctx *c)
{
    const tg_tensor *var = c->in[0], *val = c->in[1];
    int nd;
    int64_t shape[TG_MAX_DIMS];
    tg_status s = tg_broadcast_shapes(c->op->name, var->ndim, var->shape,
                                      val->ndim, val->shape, &nd, shape);
    if (s == TG_OK && !tg__shape_eq(nd, shape, var->ndim, var->shape)) {
        char a[160], b[160];
        return tg__error(TG_ERR_SHAPE, "%s: value of shape %s does not broadcast "
                         "to the variable's shape %s", c->op->name,
                         tg_shape_str(val->ndim, val->shape, a, sizeof a),
                         tg_shape_str(var->ndim, var->shape, b, sizeof b));
    }
    if (s != TG_OK)
        return s;
    if (var->dtype == TG_BOOL && c->op != &tg_op_assign)
        return tg__error(TG_ERR_DTYPE, "%s: bool variables are not supported",
                         c->op->name);
    return tg_infer_set(c, 0, var->dtype, var->ndim, var->shape);
}

static tg_status alias_var(tg_op_ctx *c)
{
    const tg_tensor *v = c->in[0];
    c->out[0] = tg__alias(v, v->ndim, v->shape, v->strides, v->offset);
    return c->out[0] ? TG_OK : TG_ERR_NOMEM;
}

/* an update, not a function to differentiate through: never recorded, and
 * refused on a tensor that requires grad while grad mode is on (sessions
 * run with grad mode off) */
static tg_status check_target(const tg_op_ctx *c)
{
    if (c->in[0]->requires_grad && tg_grad_enabled())
        return tg__error(TG_ERR_AUTOGRAD, "%s: in-place update of a tensor that requires "
                         "grad; do it inside tg_no_grad_begin/end (as for parameter "
                         "updates)", c->op->name);
    return TG_OK;
}

static tg_status assign_write(tg_op_ctx *c)
{
    if (check_target(c) != TG_OK)
        return tg_last_status();
    tg_no_grad_begin();
    tg_status s = tg_copy_(c->in[0], c->in[1]);
    tg_no_grad_end();
    return s == TG_OK ? alias_var(c) : s;
}

typedef struct assign_sub_attrs {
    double alpha;
} assign_sub_attrs;
static const tg_attr_spec assign_sub_specs[] = {
    TG_SPEC_FLOAT(assign_sub_attrs, alpha, 1.0), {0}};

static tg_status assign_sub_write(tg_op_ctx *c)
{
    const assign_sub_attrs *a = c->attr;
    if (check_target(c) != TG_OK)
        return tg_last_status();
    tg_no_grad_begin();
    tg_status s = tg_add_(c->in[0], c->in[1], -a->alpha);
    tg_no_grad_end();
    return s == TG_OK ? alias_var(c) : s;
}

static const tg_arg_spec assign_inputs[] = {{"var", TG_DTS_ANY}, {"value", TG_DTS_ANY}, {0}};
static const tg_arg_spec assign_outputs[] = {{"ref", TG_DTS_ANY}, {0}};

/* nondiff: an update is not a function to differentiate through */
const tg_op_def tg_op_assign = {
    .name = "assign", .n_in = 2, .n_out = 1,
    .inputs = assign_inputs, .outputs = assign_outputs,
    .flags = TG_OP_SIDE_EFFECTS | TG_OP_VIEW, .nondiff = true,
    .infer = assign_infer, .make_view = assign_write};
const tg_op_def tg_op_assign_sub = {
    .name = "assign_sub", .n_in = 2, .n_out = 1,
    .inputs = assign_inputs, .outputs = assign_outputs,
    .attrs = {assign_sub_specs, sizeof(assign_sub_attrs)},
    .flags = TG_OP_SIDE_EFFECTS | TG_OP_VIEW, .nondiff = true,
    .infer = assign_infer, .make_view = assign_sub_write};

const tg_op_def *const tg_ops_graph[] = {&tg_op_assign, &tg_op_assign_sub, NULL};

static tg_tensor *assign_call(const tg_op_def *op, tg_tensor *var,
                              tg_tensor *value, const tg_attr *attrs, int n)
{
    tg_tensor *in[2] = {var, value};
    if (!var || !value)
        return tg__error_is_set() ? NULL
                                  : tg__error_null(TG_ERR_ARG, "%s: NULL input", op->name);
    bool graph_mode = tg__graph_intercepts(2, in);
    tg_tensor *ref = NULL; /* var is a tensor tg_variable_ref made a variable */
    tg_graph *cur = tg_graph_current();
    if (graph_mode && !var->graph && (cur || value->graph)) {
        tg_graph *g = cur ? cur : value->graph;
        int v = tg__hmap_get(&g->captured, var);
        if (v >= 0 && g->nodes[g->values[v].node].kind == TG_GNODE_VARIABLE) {
            if (!(ref = tg__graph_symbolic(g, v)))
                return NULL;
            in[0] = var = ref;
        }
    }
    if (graph_mode) { /* in a graph only variables hold state */
        const tg_graph *g = var->graph;
        if (!g || g->nodes[g->values[var->value].node].kind != TG_GNODE_VARIABLE) {
            tg_release(ref);
            return tg__error_null(TG_ERR_ARG,
                                  "%s: in graph mode the target must be a variable "
                                  "(tg_variable), got %s%s%s", op->name,
                                  g ? "node '" : "a concrete tensor",
                                  g ? tg_graph_node_name(var) : "", g ? "'" : "");
        }
    }
    tg_tensor *y = tg_op_call(op, 2, in, attrs, n);
    if (y && graph_mode && tg__graph_order_assign(var, y) != TG_OK)
        y = NULL; /* y stays in the caller's scope */
    tg_release(ref);
    return y;
}

tg_tensor *tg_assign(tg_tensor *var, tg_tensor *value)
{
    return assign_call(&tg_op_assign, var, value, NULL, 0);
}

tg_tensor *tg_assign_sub(tg_tensor *var, tg_tensor *value, double alpha)
{
    tg_attr a = TG_AF("alpha", alpha);
    return assign_call(&tg_op_assign_sub, var, value, &a, 1);
}

/* ---- state that ops update (batch-norm running statistics) ---------------------- */
tg_status tg__graph_state_variable(tg_graph *g, tg_tensor *t, const char *base,
                                   const char *fn)
{
    int v = tg__hmap_get(&g->captured, t);
    if (v >= 0) {
        const tg_gnode *n = &g->nodes[g->values[v].node];
        return n->kind == TG_GNODE_VARIABLE
                   ? TG_OK
                   : tg__error(TG_ERR_ARG, "%s: graph '%s' already uses the %s as the "
                               "constant '%s'; make it a variable (tg_variable_ref) before "
                               "using it", fn, g->name, base, n->name);
    }
    char name[128];
    snprintf(name, sizeof name, "%s", base);
    for (int k = 1; tg__hmap_get(&g->names, name) >= 0; k++)
        snprintf(name, sizeof name, "%s_%d", base, k);
    tg_scope_begin(); /* the graph keeps the node; the handle is dropped */
    tg_status s = tg_variable_ref(g, name, t) ? TG_OK : tg_last_status();
    tg_scope_end();
    return s;
}

tg_tensor *tg__graph_after_updates(tg_tensor *y, int n, tg_tensor *const *updates)
{
    if (!y)
        return NULL;
    tg_tensor *z = tg__expand_as(y, y); /* a view: free at run time */
    for (int i = 0; z && i < n; i++)
        if (tg_graph_add_control_dep(z, updates[i]) != TG_OK)
            z = NULL;
    return z;
}
