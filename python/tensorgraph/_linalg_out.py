"""out= of tensorgraph.linalg's functions, as torch.linalg's (PyTorch
1.13): the function runs, then its result is written into `out` (a
tensor, or a tuple or list of them for the functions returning several),
which is returned (a tuple result as a named tuple `linalg_<name>_out` of
the given tensors). A tensor of another shape is resized, with PyTorch's
warning unless it was empty. What PyTorch checks is checked with its
words, which vary by function: the type of `out` (TypeError), a recording
autograd ("functions with out=... arguments don't support automatic
differentiation", named after PyTorch's kernel), and the dtype (most
kernels want the result's dtype exactly; some cast when the cast is safe).
The functions PyTorch composes in Python (norm, matrix_norm, cond,
tensorinv, tensorsolve) instead record the write when an input requires
grad, and refuse an `out` that is a leaf requiring grad."""
import functools
import inspect
import warnings

from . import _C
from ._ops_shape import torch_type_name
from ._out_arg import c10_name, resize_for
from .return_types import _return_type

# kinds of dtype checks (PyTorch's messages differ by kernel)
EXACT = 'exact'          # the result's dtype exactly (TORCH_CHECK in resize_output's callers)
CAST = 'cast'            # any dtype the result casts to safely (elementwise style)

# name: (the kernel PyTorch's autograd error names, or None: composed, the
# write is recorded; dtype check (kind, or (kind, prefix)); outputs)
SPECS = {
    'inv': ('linalg_inv_ex', EXACT, 1),
    'det': ('_linalg_det', EXACT, 1),
    'solve': ('_linalg_solve_ex', EXACT, 1),
    'cholesky': ('linalg_cholesky_ex', EXACT, 1),
    'vector_norm': ('linalg_vector_norm', EXACT, 1),
    'matrix_norm': (None, ('norm', 'linalg.matrix_norm'), 1),
    'norm': (None, ('norm', 'linalg.norm'), 1),
    'pinv': ('linalg_pinv', ('castable', 'linalg.pinv'), 1),
    'matrix_power': ('mm', ('castable_exact', 'matrix_power'), 1),
    'matrix_rank': ('sum', ('castable', 'torch.linalg.matrix_rank'), 1),
    'cond': (None, ('castable', 'linalg.cond'), 1),
    'svdvals': ('_linalg_svd', EXACT, 1),
    'eigvalsh': ('_linalg_eigh', EXACT, 1),
    'cross': ('linalg_cross', EXACT, 1),
    'vecdot': ('sum', ('vecdot', 'linalg.vecdot'), 1),
    'multi_dot': ('mm', ('multi_dot', 'multi_dot()'), 1),
    'matmul': ('mm', EXACT, 1),
    'solve_triangular': ('linalg_solve_triangular', ('scalar_type', ''), 1),
    'tensorinv': (None, ('castable', 'tensorinv'), 1),
    'tensorsolve': (None, ('castable', 'tensorsolve'), 1),
    'householder_product': ('linalg_householder_product',
                            ('castable', 'torch.linalg.householder_product'), 1),
    'lu_solve': ('linalg_lu_solve', EXACT, 1),
    'qr': ('linalg_qr', EXACT, 2),
    'svd': ('_linalg_svd', EXACT, 3),
    'eigh': ('_linalg_eigh', EXACT, 2),
    'slogdet': ('_linalg_slogdet', EXACT, 2),
    'cholesky_ex': ('linalg_cholesky_ex', EXACT, 2),
    'inv_ex': ('linalg_inv_ex', EXACT, 2),
    'solve_ex': ('_linalg_solve_ex', EXACT, 2),
    'lu_factor': ('linalg_lu_factor_ex', EXACT, 2),
    'lu_factor_ex': ('linalg_lu_factor_ex', EXACT, 3),
    'lu': ('linalg_lu', EXACT, 3),
    'lstsq': ('linalg_lstsq', CAST, 4),
}


def _check_dtype(check, res, out):
    kind, prefix = (check, '') if isinstance(check, str) else check
    rt, ot = res.dtype, out.dtype
    if kind == CAST or kind in ('castable', 'castable_exact'):
        from ._ops_misc import can_cast
        if not can_cast(rt, ot):
            if kind == CAST:
                raise RuntimeError(f"result type {torch_type_name(rt)} can't be cast to the "
                                   f"desired output type {torch_type_name(ot)}")
            raise RuntimeError(f"{prefix}: Expected result to be safely castable from "
                               f"{torch_type_name(rt)} dtype, but got result with dtype "
                               f"{torch_type_name(ot)}")
        if kind != 'castable_exact':
            return
    if rt == ot:
        return
    if kind in (EXACT, 'castable_exact'):
        raise RuntimeError(f"Expected out tensor to have dtype {c10_name(rt)}, but got "
                           f"{c10_name(ot)} instead")
    if kind == 'norm':
        raise RuntimeError(f"{prefix} expected out tensor dtype {torch_type_name(rt)} but got: "
                           f"{torch_type_name(ot)}")
    if kind == 'vecdot':
        raise RuntimeError(f"{prefix}: Expected out of dtype{torch_type_name(rt)} but found "
                           f"{torch_type_name(ot)}")
    if kind == 'multi_dot':
        raise RuntimeError(f"{prefix}: expected out tensor to have dtype {c10_name(rt)} but got "
                           f"{c10_name(ot)}")
    raise RuntimeError(f"expected scalar type {torch_type_name(rt)} but found "
                       f"{torch_type_name(ot)}")


def _outs(name, out, n, argpos):
    """out as a list of n tensors, with PyTorch's argument parser's errors
    (name: the function's, as PyTorch's parser names it)"""
    if n == 1:
        if not isinstance(out, _C.Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                            f"{type(out).__name__}")
        return [out]
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")
    for i, o in enumerate(out):
        if not isinstance(o, _C.Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {argpos}, but got "
                            f"{type(o).__name__}")
    return list(out)


def with_out(fn, name, spec=None, torch_name=None):
    """fn (a tensorgraph.linalg function) taking PyTorch's out=; spec and
    torch_name (default: SPECS[name], linalg_<name>) for others (the
    legacy torch.qr, torch.svd, torch.triangular_solve)"""
    kernel, check, n = spec or SPECS[name]
    torch_name = torch_name or f'linalg_{name}'
    params = list(inspect.signature(fn).parameters)
    argpos = params.index('out') if 'out' in params else len(params)
    out_type = []  # the named tuple, made at the first call

    @functools.wraps(fn)
    def f(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        outs = _outs(torch_name, out, n, argpos)
        res = fn(*args, **kwargs)
        results = [res] if n == 1 else list(res)
        grad = _C.is_grad_enabled()
        if kernel is not None:
            if grad and (any(r.requires_grad for r in results) or
                         any(o.requires_grad for o in outs)):
                raise RuntimeError(f"{kernel}(): functions with out=... arguments don't support "
                                   f"automatic differentiation, but one of the arguments "
                                   f"requires grad.")
        elif grad and any(o.requires_grad and o.is_leaf for o in outs):
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        for r, o in zip(results, outs):
            _check_dtype(check, r, o)
        for r, o in zip(results, outs):
            resize_for(o, r, keep_history=kernel is None, stacklevel=3)
            o.copy_(r)
        if n == 1:
            return outs[0]
        if not out_type:
            fields = getattr(res, '_fields', None) or [f'out{i}' for i in range(n)]
            out_type.append(_return_type(f'{torch_name}_out', list(fields)))
        return out_type[0](*outs)
    return f
