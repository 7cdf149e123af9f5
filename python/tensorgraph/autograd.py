"""tensorgraph.autograd: grad (with create_graph), Function, gradcheck, and
functional (vjp, jvp, jacobian, hessian, vhp, hvp: autograd_functional.py)."""
from . import _C
from ._creation import ones_like as _ones_like, tensor as _tensor
from ._grad_mode import no_grad, enable_grad, set_grad_enabled  # noqa: F401

Tensor = _C.Tensor


def _seq(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False, is_grads_batched=False):
    """d(sum(outputs * grad_outputs)) / d inputs, without touching .grad.
    With create_graph the results can be differentiated again."""
    if is_grads_batched:
        return _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused)
    outputs, inputs = _seq(outputs), _seq(inputs)
    if not inputs:
        raise ValueError("grad requires non-empty inputs.")
    if grad_outputs is not None:
        grad_outputs = _seq(grad_outputs)
        _check_grad_shapes(outputs, grad_outputs)
    else:
        for o in outputs:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
    for i, o in enumerate(outputs):
        if not o.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
    if not all(x.requires_grad for x in inputs):
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    retain = create_graph if retain_graph is None else retain_graph
    res = _C._grad(outputs, inputs, grad_outputs, bool(retain), bool(create_graph))
    from ._tensor_extra import apply_input_hooks
    res = apply_input_hooks(inputs, res)
    if not allow_unused and any(r is None for r in res):
        raise RuntimeError("One of the differentiated Tensors appears to not have been used "
                           "in the graph. Set allow_unused=True if this is the desired "
                           "behavior.")
    return tuple(res)


def _check_grad_shapes(outputs, grads):
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if isinstance(g, Tensor) and g.shape != o.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} "
                               f"and output[{i}] has a shape of {o.shape}.")


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """grad(is_grads_batched=True): the first dim of each grad_output holds
    a batch of them; one gradient per batch entry, stacked (a loop where
    PyTorch vmaps)"""
    gos = _seq(grad_outputs)
    n = gos[0].shape[0] if gos and gos[0].ndim else None
    if n is None or any(g.ndim == 0 or g.shape[0] != n for g in gos):
        raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of "
                           "each grad_output as the batch dimension: every grad_output needs "
                           "one, of the same size.")
    rows = [grad(outputs, inputs, [g[b] for g in gos], True if b < n - 1 else retain_graph,
                 create_graph, allow_unused=allow_unused) for b in range(n)]
    return tuple(None if col[0] is None else _C.stack(col) for col in zip(*rows))


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             inputs=None):
    """Accumulates into the leaves' .grad the gradients of all tensors, in
    one pass (grad_tensors: one per tensor, None for one-element ones)."""
    tensors = _seq(tensors)
    if inputs is not None:
        return backward_into(tensors, grad_tensors, inputs, retain_graph, create_graph)
    if grad_tensors is not None:
        grad_tensors = tuple(g if g is None or isinstance(g, Tensor) else
                             _tensor(g, dtype=t.dtype)
                             for g, t in zip(_seq(grad_tensors), tensors))
    retain = create_graph if retain_graph is None else retain_graph
    from ._tensor_extra import _with_leaf_hooks
    _with_leaf_hooks(lambda: _C._backward(tensors, grad_tensors, bool(retain),
                                          bool(create_graph)))


def backward_into(tensors, grad_tensors, inputs, retain_graph, create_graph):
    """backward(..., inputs=...): only inputs' .grad accumulate (leaves or
    not), as PyTorch's; the gradients are autograd.grad's"""
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _seq(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    filled = []
    for t, g in zip(tensors, grads):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = _ones_like(t)
        elif not isinstance(g, Tensor):
            g = _tensor(g, dtype=t.dtype)
        filled.append(g)
    res = grad(tensors, inputs, filled, retain_graph, create_graph, allow_unused=True)
    for x, g in zip(inputs, res):
        if g is None:
            continue
        if not create_graph:
            g = g.detach()
        x.grad = g if x.grad is None else x.grad + g


from ._autograd_function import Function, FunctionCtx, once_differentiable  # noqa: E402,F401
from . import _autograd_function as function  # noqa: E402  (tg.autograd.function)


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Compares backward with central finite differences (float64 inputs)."""
    import numpy as np
    inputs = _seq(inputs)
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    out = fn(*inputs)
    flat_out = out.reshape(-1)
    for k, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        xa = x.detach().numpy()
        numeric = np.zeros((flat_out.numel(), x.numel()))
        flat = xa.reshape(-1)
        for j in range(x.numel()):
            old = flat[j]
            flat[j] = old + eps
            with no_grad():
                plus = fn(*inputs).detach().numpy().reshape(-1).astype(np.float64)
            flat[j] = old - eps
            with no_grad():
                minus = fn(*inputs).detach().numpy().reshape(-1).astype(np.float64)
            flat[j] = old
            numeric[:, j] = (plus - minus) / (2 * eps)
        analytic = np.zeros_like(numeric)
        for i in range(flat_out.numel()):
            out = fn(*inputs).reshape(-1)
            g, = grad(out[i], x, retain_graph=False, allow_unused=True)
            if g is not None:
                analytic[i] = g.detach().numpy().reshape(-1)
        if not np.allclose(analytic, numeric, rtol=rtol, atol=atol):
            if raise_exception:
                raise RuntimeError(f"gradcheck: Jacobian mismatch for input {k}:\n"
                                   f"numerical {numeric}\nanalytical {analytic}")
            return False
    return True


from . import autograd_functional as functional  # noqa: E402  (vjp, jvp, jacobian, hessian, ...)
from ._autograd_extra import (Variable, detect_anomaly,  # noqa: E402,F401
                              gradgradcheck, set_detect_anomaly)
from . import autograd_forward_ad as forward_ad  # noqa: E402  (dual tensors)
from . import autograd_profiler as profiler  # noqa: E402  (the legacy profiler API)

# `import tensorgraph.autograd.forward_ad as fwAD`, as PyTorch's spelling
import sys as _sys  # noqa: E402
_sys.modules[__name__ + '.forward_ad'] = forward_ad
_sys.modules[__name__ + '.profiler'] = profiler
_sys.modules.setdefault(__name__ + '.functional', functional)
_sys.modules.setdefault(__name__ + '.function', function)
