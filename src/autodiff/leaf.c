/* Leaves and gradients: requires_grad, the accumulated grad, detach. */
#include "autodiff/node.h"
#include "tg/graph.h"

tg_status tg_set_requires_grad(tg_tensor *t, bool requires_grad)
{
    if (!t)
        return tg__error(TG_ERR_ARG, "tg_set_requires_grad: tensor is NULL");
    if (t->graph)
        return tg__error(TG_ERR_AUTOGRAD,
                         "tg_set_requires_grad: the tensor is symbolic; graphs "
                         "are differentiated with tg_graph_gradients");
    if (t->grad_fn)
        return tg__error(TG_ERR_AUTOGRAD,
                         "tg_set_requires_grad: only leaves can be changed; this "
                         "tensor was produced by '%s' (use tg_detach first)",
                         t->grad_fn->name);
    if (requires_grad && t->inference && !tg_inference_mode())
        return tg__error(TG_ERR_AUTOGRAD, "Setting requires_grad=True on inference tensor "
                         "outside InferenceMode is not allowed.");
    if (requires_grad && !tg_dtype_is_float(t->dtype))
        return tg__error(TG_ERR_DTYPE,
                         "tg_set_requires_grad: only floating-point tensors can "
                         "require grad, this one is %s", tg_dtype_name(t->dtype));
    t->requires_grad = requires_grad;
    return TG_OK;
}

bool tg_requires_grad(const tg_tensor *t) { return t && t->requires_grad; }
bool tg_is_leaf(const tg_tensor *t) { return t && !t->grad_fn; }
tg_tensor *tg_grad(const tg_tensor *t) { return t ? t->grad : NULL; }

void tg_zero_grad(tg_tensor *t)
{
    if (!t)
        return;
    tg_release(t->grad);
    t->grad = NULL;
}

tg_status tg_set_grad(tg_tensor *t, tg_tensor *grad)
{
    if (!t)
        return tg__error(TG_ERR_ARG, "tg_set_grad: tensor is NULL");
    if (grad) {
        if (t->graph || grad->graph)
            return tg__error(TG_ERR_AUTOGRAD, "tg_set_grad: symbolic tensors have no grad");
        if (grad->dtype != t->dtype)
            return tg__error(TG_ERR_DTYPE, "tg_set_grad: assigned grad has data of a "
                             "different type (%s, the tensor is %s)",
                             tg_dtype_name(grad->dtype), tg_dtype_name(t->dtype));
        bool same = grad->ndim == t->ndim;
        for (int i = 0; same && i < t->ndim; i++)
            same = grad->shape[i] == t->shape[i];
        if (!same)
            return tg__error(TG_ERR_SHAPE, "tg_set_grad: assigned grad has data of a "
                             "different size");
        tg_retain(grad);
    }
    /* grad itself, not a copy (as PyTorch's `x.grad = g`): later
     * accumulation writes into it */
    tg_release(t->grad);
    t->grad = grad;
    return TG_OK;
}

const char *tg_grad_fn_name(const tg_tensor *t)
{
    return t && t->grad_fn ? t->grad_fn->name : NULL;
}

tg_status tg_set_grad_fn_name(tg_tensor *t, const char *name)
{
    if (!t || !name)
        return tg__error(TG_ERR_ARG, "tg_set_grad_fn_name: NULL argument");
    if (!*name)
        return tg__error(TG_ERR_ARG, "tg_set_grad_fn_name: empty name");
    tg_node *n = t->grad_fn;
    if (n && n->refcount == 1) /* t's alone: no other output, no later op holds it */
        n->name = name;
    return TG_OK;
}

extern const tg_op_def tg_op_stop_gradient;

tg_tensor *tg_detach(tg_tensor *t)
{
    if (t && tg_is_symbolic(t)) /* a graph's value: a node gradients stop at */
        return tg_op_call(&tg_op_stop_gradient, 1, &t, NULL, 0);
    if (!t || !tg__check_concrete("tg_detach", t))
        return NULL;
    return tg__publish(tg__alias(t, t->ndim, t->shape, t->strides, t->offset));
}
