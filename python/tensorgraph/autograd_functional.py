"""tg.autograd.functional: torch.autograd.functional's vjp, jvp,
jacobian, hessian, vhp and hvp over reverse mode (autograd.grad): jvp by
the double-vjp trick (the vjp is linear in its cotangent u, so the
gradient of <vjp(u), v> with respect to u is J v), jacobians row by row.
Inputs and v are a tensor or a tuple of tensors, outputs likewise, as
PyTorch's."""
from . import _C
from ._creation import zeros, zeros_like
from ._grad_mode import enable_grad

__all__ = ['vjp', 'jvp', 'jacobian', 'hessian', 'vhp', 'hvp']


def _tuple(x):
    return (x,) if isinstance(x, _C.Tensor) else tuple(x)


def _like(seq, was_tensor):
    return seq[0] if was_tensor else tuple(seq)


def _prepare(inputs):
    """inputs detached and requiring grad (graphs start here)"""
    return tuple(x.detach().requires_grad_(True) for x in _tuple(inputs))


def _grad(outputs, inputs, grad_outputs, create_graph, strict=None):
    """autograd.grad with None turned into zeros (an output that does not
    depend on an input gives 0, as PyTorch's functional API does); strict:
    PyTorch's message for an input not reached instead, {} its index"""
    from .autograd import grad
    outs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    res = grad([o for o, _ in outs], list(inputs), [g for _, g in outs], retain_graph=True,
               create_graph=create_graph, allow_unused=True) if outs else (None,) * len(inputs)
    for i, r in enumerate(res):
        if r is None and strict:
            raise RuntimeError(strict.format(i))
    return tuple(zeros_like(x) if r is None else r for x, r in zip(inputs, res))


_INDEPENDENT = ("The output of the user-provided function is independent of input {}. This "
                "is not allowed in strict mode.")


def _check_outputs(outs, strict):
    """strict mode: every output must depend on the inputs differentiably"""
    for i, o in enumerate(outs if strict else ()):
        if not o.requires_grad:
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")


def _check_v(v, ref, ref_is_tuple):
    """PyTorch's checks of v against the tensors it multiplies"""
    v = _tuple(v)
    if len(v) != len(ref):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(ref)} but got "
                           f"{len(v)}." if ref_is_tuple else
                           "The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, ref)):
        if a.shape != b.shape:
            raise RuntimeError(f"{f'Entry {i} in ' if ref_is_tuple else ''}v has invalid size: "
                               f"should be {b.shape} but got {a.shape}.")
    return v


def _call(func, inputs):
    """func on inputs prepared for differentiation: (single input?, inputs,
    outputs as a tuple, single output?)"""
    xs = _prepare(inputs)
    out = func(*xs)
    return isinstance(inputs, _C.Tensor), xs, _tuple(out), isinstance(out, _C.Tensor)


def _default_v(v, ref, ref_is_tuple, what):
    """v, or a 1 when ref is one single-element tensor (PyTorch's rule)"""
    if v is None:
        if len(ref) != 1 or ref[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if {what} a single Tensor "
                               f"with a single element.")
        return (zeros_like(ref[0]) + 1,)
    return _check_v(v, ref, ref_is_tuple)


def _results(values, single, create_graph):
    values = [t if create_graph else t.detach() for t in values]
    return _like(values, single)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the outputs and the vector-Jacobian product"""
    with enable_grad():
        single, xs, outs, out_single = _call(func, inputs)
        _check_outputs(outs, strict)
        v = _default_v(v, outs, not out_single, "the user-provided function returns")
        g = _grad(outs, xs, v, create_graph, strict and _INDEPENDENT)
    return _results(outs, out_single, create_graph), _results(g, single, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the outputs and the Jacobian-vector product"""
    with enable_grad():
        single, xs, outs, out_single = _call(func, inputs)
        _check_outputs(outs, strict)
        v = _default_v(v, xs, not single, "the input to the user-provided function is")
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        g = _grad(outs, xs, us, True)  # u^T J, linear in u
        jv = _grad(g, us, v, create_graph)
    return _results(outs, out_single, create_graph), _results(jv, out_single, create_graph)


def _check_strategy(strategy, vectorize, create_graph):
    """PyTorch 1.13's checks of jacobian's strategy"""
    assert strategy in ('forward-mode', 'reverse-mode'), (
        'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
        'function has more outputs than inputs, "forward-mode" tends to be more performant. '
        'Otherwise, prefer to use "reverse-mode".')
    if strategy == 'forward-mode':
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError(
                'Computing Jacobian using forward-AD or forward-over-reverse Hessian is'
                'only implemented for `vectorize=True`.')


def _jacobian_forward(func, inputs):
    """the Jacobian a column at a time with dual tensors (forward mode):
    one pass of func per input element, its tangent the element's basis
    vector; the layout is reverse mode's"""
    from . import autograd_forward_ad as fwAD
    from . import stack
    single = isinstance(inputs, _C.Tensor)
    xs = (inputs,) if single else tuple(inputs)
    cols, outs, out_single = [[] for _ in xs], None, None
    with fwAD.dual_level():
        for j, x in enumerate(xs):
            for e in range(x.numel()):
                basis = zeros(x.numel(), dtype=x.dtype)
                basis[e] = 1
                duals = [fwAD.make_dual(x, basis.reshape(x.shape)) if k == j else xk
                         for k, xk in enumerate(xs)]
                res = func(*duals)
                out_single = isinstance(res, _C.Tensor)
                outs = (res,) if out_single else tuple(res)
                cols[j].append([fwAD.unpack_dual(o).tangent for o in outs])
        if outs is None:  # inputs without elements
            res = func(*xs)
            out_single = isinstance(res, _C.Tensor)
            outs = (res,) if out_single else tuple(res)
        rows = []
        for i, o in enumerate(outs):
            jac = []
            for j, x in enumerate(xs):
                per = [c[i] if c[i] is not None else zeros(*o.shape, dtype=o.dtype)
                       for c in cols[j]]
                jac.append(stack(per, -1).reshape(*o.shape, *x.shape).detach() if per
                           else zeros(*o.shape, *x.shape, dtype=x.dtype))
            rows.append(jac)
    return single, out_single, rows


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy='reverse-mode'):
    """d out_i / d in_j shaped out_i.shape + in_j.shape: a tensor for one
    input and one output, tuples (of tuples) otherwise. strategy
    'forward-mode' (with vectorize=True, as PyTorch asks) builds it a
    column at a time with dual tensors (tg.autograd.forward_ad)"""
    _check_strategy(strategy, vectorize, create_graph)
    if strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    if strategy == 'forward-mode':
        single, out_single, rows = _jacobian_forward(func, inputs)
        return _shape_jacobian(rows, single, out_single)
    with enable_grad():
        single, xs, outs, out_single = _call(func, inputs)
        _check_outputs(outs, strict)
        rows = []
        for k, o in enumerate(outs):
            flat = o.reshape(-1)
            per_input = [[] for _ in xs]
            for i in range(flat.numel()):
                g = _grad((flat[i],), xs, (zeros_like(flat[i]) + 1,), create_graph,
                          strict and f"Output {k} of the user-provided function is independent "
                          "of input {}. This is not allowed in strict mode.")
                for j, gj in enumerate(g):
                    per_input[j].append(gj if create_graph else gj.detach())
            from . import stack
            jac = []
            for j, x in enumerate(xs):
                if per_input[j]:
                    jac.append(stack(per_input[j], 0).reshape(*o.shape, *x.shape))
                else:
                    jac.append(zeros(*o.shape, *x.shape, dtype=x.dtype))
            rows.append(jac)
    return _shape_jacobian(rows, single, out_single)


def _shape_jacobian(rows, single, out_single):
    """rows[i][j] = d out_i / d in_j, nested as PyTorch returns it"""
    if out_single and single:
        return rows[0][0]
    if out_single:
        return tuple(rows[0])
    if single:
        return tuple(r[0] for r in rows)
    return tuple(tuple(r) for r in rows)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy='reverse-mode'):
    """the Jacobian of the gradient of a scalar function"""
    single = isinstance(inputs, _C.Tensor)

    def gradient(*xs):
        out = func(*xs)
        _check_scalar(out, 'hessian')
        g = _grad((out.reshape(()),), xs, (zeros_like(out.reshape(())) + 1,), True)
        return g[0] if single else g
    if outer_jacobian_strategy == 'forward-mode':  # forward over reverse
        _check_strategy('forward-mode', vectorize, create_graph)
        with enable_grad():  # the duals' gradients: the primals require grad
            leaves = (inputs.detach().requires_grad_() if single
                      else tuple(x.detach().requires_grad_() for x in inputs))
            return jacobian(gradient, leaves, vectorize=True, strategy='forward-mode')
    return jacobian(gradient, inputs, create_graph=create_graph)


def _check_scalar(out, what):
    if not isinstance(out, _C.Tensor):
        raise RuntimeError(f"The function given to {what} should return a single Tensor")
    if out.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {what} should "
                           "contain a single element")


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function"""
    return _vhp(func, inputs, v, create_graph, strict, 'vhp')


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the Hessian is symmetric, so v^T H transposed"""
    return _vhp(func, inputs, v, create_graph, strict, 'hvp')


def _vhp(func, inputs, v, create_graph, strict, what):
    with enable_grad():
        single, xs = isinstance(inputs, _C.Tensor), _prepare(inputs)
        v = _default_v(v, xs, not single, "the input to the user-provided function is")
        out = func(*xs)
        _check_scalar(out, what)
        outs = (out,)
        _check_outputs(outs, strict)
        out = out.reshape(())
        g = _grad((out,), xs, (zeros_like(out) + 1,), True, strict and _INDEPENDENT)
        r = _grad(g, xs, v, create_graph, strict and (
            "The jacobian of the user-provided function is independent of input {}. This is "
            "not allowed in strict mode."))
    return _results((outs[0],), True, create_graph), _results(r, single, create_graph)
