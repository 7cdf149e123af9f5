/* Running one node's gradient rule: check that the tensors it saved were
 * not modified in place, unpack them, and call the op's rule through
 * vjp.c (shared with symbolic autodiff), or a custom function's backward,
 * in a scope of its own so that everything but the input gradients is
 * freed at once. */
#include "autodiff/node.h"
#include "autodiff/vjp.h"

#include <stdio.h>

static tg_status check_version(const tg_node *n, const tg_tensor *t,
                               uint64_t saved, const char *what, int i)
{
    if (!t || t->storage->version == saved)
        return TG_OK;
    /* the tensor as PyTorch's message describes it: dtype, shape and what
     * made it (a saved output: this node; an input: its grad_fn now) */
    char shape[160], made[96] = "";
    const tg_node *by = what[0] == 'o' ? n : t->grad_fn;
    int index = what[0] == 'o' ? i : t->out_index;
    if (by) {
        char name[64];
        tg__node_display_name(by, name, sizeof name);
        snprintf(made, sizeof made, ", output %d of %s", index, name);
    }
    return tg__error(TG_ERR_AUTOGRAD,
                     "backward: %s %d of '%s', saved for its gradient, was "
                     "modified by an in-place operation (it is at version "
                     "%llu, expected %llu). Clone it before modifying it, or "
                     "modify it after backward. The tensor: %s %s%s.",
                     what, i, n->name, (unsigned long long)t->storage->version,
                     (unsigned long long)saved, tg_dtype_name(t->dtype),
                     tg_shape_str(t->ndim, t->shape, shape, sizeof shape), made);
}

/* every tensor the node saved must still be at the version it was saved at */
tg_status tg__check_saved(const tg_node *n)
{
    tg_status s = n->fn_ctx ? tg__function_check_saved(n->fn_ctx) : TG_OK;
    for (int i = 0; i < n->n_in && s == TG_OK; i++)
        s = check_version(n, n->saved_in[i], n->ver_in[i], "input", i);
    for (int o = 0; o < n->n_out && s == TG_OK; o++)
        s = check_version(n, n->saved_out[o], n->ver_out[o], "output", o);
    return s;
}

/* a saved output re-attached to this node, so that create_graph sees it
 * as a function of the inputs (the alias itself has no grad_fn); the
 * caller owns the reference */
static tg_tensor *unpack_output(tg_node *n, int o, bool create_graph)
{
    tg_tensor *s = n->saved_out[o];
    tg_tensor *t = tg__alias_whole(s);
    if (t && create_graph && tg_dtype_is_float(t->dtype)) {
        t->requires_grad = true;
        t->grad_fn = n;
        t->out_index = o;
        n->refcount++;
    }
    return t;
}

/* an op's rule, through the VJP code symbolic autodiff shares (vjp.c) */
static tg_status run_op_rule(tg_node *n, tg_tensor **dy, tg_tensor **dx,
                             const bool *needs, bool create_graph)
{
    tg_tensor *out[TG_MAX_OP_OUTPUTS] = {0};
    tg_status s = TG_OK;
    for (int o = 0; o < n->n_out && s == TG_OK; o++)
        if (n->saved_out[o] && !(out[o] = unpack_output(n, o, create_graph)))
            s = tg_last_status();
    tg_vjp v = {
        .op = n->op, .name = n->name, .n_in = n->n_in, .n_out = n->n_out,
        .in = n->saved_in, .out = out, .in_meta = n->in_meta,
        .out_meta = n->out_meta, .needs_grad = needs, .attr = n->attr,
        .attrs = n->attrs, .n_attrs = n->n_attrs,
    };
    if (s == TG_OK)
        s = tg__vjp_run(&v, dy, dx);
    for (int o = 0; o < n->n_out; o++)
        tg_release(out[o]);
    return s;
}

/* a custom function's backward, in a scope of its own */
static tg_status run_function(tg_node *n, tg_tensor **dy, tg_tensor **dx,
                              const bool *needs)
{
    tg_status s = TG_OK;
    tg_scope_begin();
    const tg_meta *m = &n->out_meta[0];
    tg_tensor *dy0 = dy[0] ? dy[0] : tg_zeros(m->dtype, m->ndim, m->shape);
    s = dy0 ? tg__function_backward(n, dy0, dx) : tg_last_status();
    for (int i = 0; i < n->n_in; i++) {
        if (s == TG_OK && dx[i] && needs[i])
            tg_retain(dx[i]); /* survives the scope: the engine owns it */
        else
            dx[i] = NULL;
    }
    tg_scope_end();
    return s;
}

/* no output of the node got a gradient (a custom function's backward
 * gave None for every path here): as PyTorch's formulas, a built-in rule
 * then gives none either, so that leaves below keep grad None rather
 * than getting zeros (a custom function's backward is still called, with
 * zeros, as PyTorch materializes them) */
static bool no_gradient(tg_tensor *const *dy, int n_out)
{
    for (int o = 0; o < n_out; o++)
        if (dy[o])
            return false;
    return true;
}

tg_status tg__run_rule(tg_node *n, tg_tensor **dy, tg_tensor **dx,
                       const bool *needs, bool create_graph)
{
    for (int i = 0; i < n->n_in; i++)
        dx[i] = NULL;
    if (n->released)
        return tg__error(TG_ERR_AUTOGRAD,
                         "backward: saved tensors of '%s' were already freed; "
                         "use retain_graph=true", n->name);
    tg_status s = tg__check_saved(n);
    if (s != TG_OK)
        return s;
    if (!n->fn && no_gradient(dy, n->n_out))
        return TG_OK;
    return n->fn ? run_function(n, dy, dx, needs)
                 : run_op_rule(n, dy, dx, needs, create_graph);
}
