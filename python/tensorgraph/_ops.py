"""The op table's functions under PyTorch's names (tg.add, tg.sum, ...),
plus the few whose Python signature needs a little logic on top."""
import builtins

from . import _C
from ._argcheck import need_tensor as _need_tensor

__all__ = []
for _name, _sig, _is_method in _C._op_table():
    if not _name.startswith('_'):
        globals()[_name] = getattr(_C, _name)
        __all__.append(_name)


def _watched(input):
    return input.requires_grad and _C.is_grad_enabled()


def even_grad(input, result):
    """result (a full reduction that picked one value of input: max, min,
    median) with PyTorch's gradient: spread evenly over the elements equal
    to it (over the NaNs when it is NaN). The forward value stays result
    exactly: the mean of the tied elements only lends its gradient."""
    from ._creation import zeros
    r = result.detach()
    hit = _C.eq(input, r)
    if input.dtype.is_floating_point:
        hit = _C.logical_or(hit, _C.logical_and(_C.ne(input, input), _C.ne(r, r)))
    count = _C.sum(_C._cast(hit, input.dtype))
    mean = _C.sum(_C.where(hit, input, zeros((), dtype=input.dtype))) / count
    exact = r + (mean - mean.detach())
    return _C.where(_C.isfinite(r), exact, mean)


def select_along(input, indices, dim, keepdim):
    """input's values at indices (argmax-style, dim reduced) with the
    gradient going to those positions alone, as PyTorch's max(dim)"""
    if input.ndim == 0:
        return input * 1
    v = _C.gather(input, dim, indices if keepdim else indices.unsqueeze(dim))
    return v if keepdim else v.squeeze(dim)


def _numpy_names(dim, keepdim, axis, keepdims):
    """dim and keepdim, given by PyTorch's numpy-compatible names axis and
    keepdims when those are set"""
    if axis is not None and dim is not None:
        raise TypeError("got multiple values for argument 'dim' (dim and axis)")
    return (dim if axis is None else axis), (keepdim if keepdims is None else keepdims)


def _max_min(amax, arg, pair, name):
    node = name.capitalize() + 'Backward'
    def f(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
        dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        if isinstance(dim, _C.Tensor):  # torch.max(a, b): elementwise
            return pair(input, dim)
        if dim is None and input.numel() == 0:  # PyTorch's refusals of nothing to reduce
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               f"input.numel() == 0. Specify the reduction dim with the 'dim' "
                               f"argument.")
        if dim is not None and input.ndim and isinstance(dim, int) and \
                -input.ndim <= dim < input.ndim and input.shape[dim] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {dim % input.ndim} to have "
                             f"non-zero size.")
        if dim is None:  # PyTorch's nodes: MaxBackward1 for all, MaxBackward0 along dim
            r = amax(input)
            return _C._set_grad_fn_name(even_grad(input, r), node + '1') if _watched(input) else r
        from . import return_types
        ValuesIndices = getattr(return_types, name)
        # PyTorch's argmax of bools: the first True (False) as 1 (0)
        idx = arg(_C._cast(input, _C.uint8) if input.dtype == _C.bool else input, dim, keepdim)
        if _watched(input):
            v = _C._untrack_view(select_along(input, idx, dim, keepdim))
            return ValuesIndices(_C._set_grad_fn_name(v, node + '0'), idx)
        return ValuesIndices(amax(input, dim, keepdim), idx)
    return f


max = _max_min(_C.amax, _C.argmax, _C.maximum, 'max')  # noqa: A001
min = _max_min(_C.amin, _C.argmin, _C.minimum, 'min')  # noqa: A001
max.__name__, min.__name__ = 'max', 'min'


def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive parts along dim (differentiable slices), as
    PyTorch's multi-output views (tg_mark_multi_output_view)."""
    n = tensor.shape[dim]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s < 0 or (s == 0 and n != 0):
            raise RuntimeError(f"split: split_size must be positive (0 only for a dimension of "
                               f"size 0), but got {s} for dimension {dim} of size {n}")
        # an empty dim is one empty part, as PyTorch's
        sizes = [0] if n == 0 else [s] * (n // s) + ([n % s] if n % s else [])
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f"split_sizes={sizes}")
    parts, start = [], 0
    for s in sizes:
        parts.append(tensor.narrow(dim, start, s))
        start += s
    # PyTorch's multi-output views: no in-place writes while autograd records
    fn = 'split' if isinstance(split_size_or_sections, int) else 'split_with_sizes'
    return _C._mark_multi_output(tuple(parts), fn)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk: chunks must be greater than 0, got {chunks}")
    n = input.shape[dim]
    if n == 0:  # PyTorch: chunks empty pieces
        return split(input, [0] * chunks, dim)
    size = -(-n // chunks)
    return split(input, size, dim)


def einsum(*args):
    """torch.einsum(equation, *operands) (or one list of operands), or
    the sublist form einsum(op1, sublist1, op2, sublist2, ..., [out]):
    subscripts 0-25 are 'A'-'Z', 26-51 'a'-'z', Ellipsis '...'"""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one "
                         "operand, or at least one operand and its subscripts list")
    if isinstance(args[0], _C.Tensor):
        equation = ','.join(_sublist(s) for s in args[1::2])
        if len(args) % 2 == 1:  # an output sublist last
            equation += '->' + _sublist(args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
        return _C._einsum(equation, list(operands))
    equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _C._einsum(equation, list(operands))


def _sublist(subscripts):
    # PyTorch's own comparisons and chr(): any subscript with __index__
    # counts, also a one-element integer or bool tensor (the rows a tensor
    # given as a sublist iterates into: einsum(t, u)); more elements fail
    # in the comparison, as there
    def letter(n):
        if n is Ellipsis:
            return '...'
        if n >= 0 and n < 26:
            return chr(ord('A') + n)
        if n >= 26 and n < 52:
            return chr(ord('a') + n - 26)
        raise ValueError("einsum(): subscript in subscript list is not within the valid "
                         "range [0, 52)")
    return ''.join(letter(n) for n in subscripts)


def numel(input):
    return input.numel()


def is_tensor(obj):
    return isinstance(obj, _C.Tensor)


def is_floating_point(input):
    return input.dtype.is_floating_point


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """isclose everywhere (its checks: one dtype, shapes that broadcast), as PyTorch's"""
    from ._ops_math import isclose
    return bool(isclose(input.detach(), other.detach(), rtol, atol, equal_nan).all())


def equal(input, other):
    """True when input and other have the same shape and elements (NaN
    equals nothing), as torch.equal; values of different dtypes compare
    after promotion"""
    for name, t in (('input', input), ('other', other)):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"equal(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    return input.shape == other.shape and bool((input == other).all())


def _spread(op):
    """var/std: PyTorch's var(input, unbiased) form (a bool where dim
    goes) next to var(input, dim, unbiased, keepdim, *, correction)"""
    def f(input, dim=None, unbiased=True, keepdim=False, *, correction=None, out=None,
          axis=None, keepdims=None):
        dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        if isinstance(dim, bool):
            dim, unbiased = None, dim
        r = op(input, dim, unbiased, keepdim, correction=correction)
        if out is None:
            return r
        from ._out_arg import write_out
        return write_out(op.__name__, out, r)
    f.__name__ = op.__name__
    return f


var, std = _spread(_C.var), _spread(_C.std)


def _cast_first(op):
    """softmax / log_softmax(input, dim, dtype=None): dtype casts the input"""
    def f(input, dim, dtype=None):
        return op(input if dtype is None else input.to(dtype), dim)
    f.__name__ = op.__name__
    return f


softmax, log_softmax = _cast_first(_C.softmax), _cast_first(_C.log_softmax)


def cat(tensors, dim=0, *, out=None, axis=None):
    """the C op; PyTorch's legacy rule first: 1-D empty tensors (torch.tensor([]))
    next to tensors of more dims are skipped (their dtype still promotes);
    out= written as every op's (_out_arg.py); axis is PyTorch's numpy name
    for dim"""
    if axis is not None:
        dim = axis
    if out is not None:
        from ._out_arg import write_out
        return write_out('cat', out, cat(tensors, dim))
    if isinstance(tensors, _C.Tensor):
        raise TypeError("cat(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        "not Tensor")
    ts = list(tensors)
    if not builtins.all(isinstance(t, _C.Tensor) for t in ts):
        return _C.cat(ts, dim)  # the C op names what is wrong
    if builtins.any(t.ndim > 1 for t in ts) and builtins.any(t.shape == (0,) for t in ts):
        dt = ts[0].dtype
        for t in ts[1:]:
            dt = _C.promote_types(dt, t.dtype)
        kept = [t for t in ts if t.shape != (0,)]
        return _C.cat(kept, dim).to(dt)
    return _C.cat(ts, dim)


concat = concatenate = cat


def bmm(input, mat2):
    """batched [b, n, m] @ [b, m, p], no broadcasting (PyTorch's checks)"""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch{1 if input.ndim != 3 else 2} must be a 3D tensor")
    want = [input.shape[0], input.shape[2]]
    if list(mat2.shape[:2]) != want:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"{want} but got: {list(mat2.shape[:2])}.")
    return _C.bmm(input, mat2)


def _reduce_bool(op):
    def f(input, dim=None, keepdim=False, *, axis=None, keepdims=None, **kw):
        dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
        if input.dtype in (_C.bool, _C.uint8):  # PyTorch sums bools as int64
            input = _C._cast(input, _C.int64)
        return op(input, dim, keepdim, **kw)
    f.__name__ = op.__name__
    return f


sum = _reduce_bool(_C.sum)  # noqa: A001
_prod = _reduce_bool(_C.prod)


def prod(input, dim=None, keepdim=False, **kw):
    """PyTorch's prod takes one int dim (not a list), so an integer 0-d
    tensor serves as one (its __index__), as there"""
    if isinstance(dim, _C.Tensor) and dim.ndim == 0 and not dim.dtype.is_floating_point:
        dim = int(dim)
    return _prod(input, dim, keepdim, **kw)


# counts, so that an empty reduction gives PyTorch's answers (all: True,
# any: False) where a min or max would have nothing to reduce
def _int_dim(dim):
    """PyTorch's `int dim` takes an integer (not bool) 0-d tensor"""
    if isinstance(dim, _C.Tensor) and dim.ndim == 0 and not dim.dtype.is_floating_point and \
            dim.dtype != _C.bool:
        return int(dim)
    return dim


def all(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    _need_tensor("all", "input", 1, input)  # a list != 0 is a Python bool
    dim, keepdim = _numpy_names(_int_dim(dim), keepdim, axis, keepdims)
    return sum(input == 0, dim, keepdim) == 0


def any(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    _need_tensor("any", "input", 1, input)  # a list != 0 is a Python bool
    dim, keepdim = _numpy_names(_int_dim(dim), keepdim, axis, keepdims)
    return sum(input != 0, dim, keepdim) != 0


def topk(input, k, dim=-1, largest=True, sorted=True):
    """(values, indices) of the k largest (smallest) along dim; ties keep
    the lower index first"""
    from .return_types import topk as _topk
    if input.dtype == _C.bool and input.ndim == 0:
        # PyTorch takes a 0-d bool (itself: no comparison); not bools with dims
        v, i = _C._topk(_C._cast(input, _C.uint8), k, dim, largest, sorted)
        return _topk(_C._cast(v, _C.bool), i)
    return _topk(*_C._topk(input, k, dim, largest, sorted))


def sort(input, dim=-1, descending=False, stable=False):  # noqa: A001
    """(values, indices) along dim; always stable (equal values keep their order)"""
    from .return_types import sort as _sort
    if input.dtype == _C.bool:  # sorted as 0/1
        v, i = _C._sort(_C._cast(input, _C.uint8), dim, descending)
        return _sort(_C._cast(v, _C.bool), i)
    v, i = _C._sort(input, dim, descending)
    return _sort(_C._set_grad_fn_name(v, 'SortBackward0'), i)


def argsort(input, dim=-1, descending=False, stable=False):
    if input.dtype == _C.bool:
        input = _C._cast(input, _C.uint8)
    return _C._argsort(input, dim, descending)


def norm(input, p='fro', dim=None, keepdim=False, dtype=None):
    """torch.norm / Tensor.norm: vector norms of any p over dim (all
    elements when None), 'fro' (the 2-norm), 'nuc' (a matrix norm over the
    last two dims or the two dims given). Over no elements every norm is
    0, as PyTorch's legacy norm gives (linalg's refuses negative and
    infinite p there)."""
    from .linalg import matrix_norm, vector_norm
    if isinstance(p, _C.Tensor):  # a one-element tensor is a number here, as in PyTorch
        p = p.item()
    if p == 'nuc':
        if dim is None and input.ndim != 2:
            raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with "
                               f"{input.ndim} dimension{'s' if input.ndim != 1 else ''} instead.")
        dims = (-2, -1) if dim is None else tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
        if len(dims) != 2:
            raise RuntimeError("nuclear norm requires a 'dim' argument of size 2")
        return matrix_norm(input, 'nuc', dims, keepdim, dtype=dtype)
    dims = builtins.range(input.ndim) if dim is None else \
        dim if isinstance(dim, (list, tuple)) else [dim]
    if input.numel() == 0 and builtins.any(input.shape[d] == 0 for d in dims) and p != 0:
        p = 2  # every norm of no elements is 0 (and so is its gradient; p 0's is None)
    return _C._set_grad_fn_name(vector_norm(input, 2 if p in ('fro', None) else p, dim, keepdim,
                                            dtype=dtype), 'NormBackward1')


__all__ += ['cat', 'concat', 'concatenate', 'bmm', 'softmax', 'log_softmax', 'var', 'std', 'topk', 'sort', 'argsort', 'norm', 'einsum', 'sum', 'prod', 'all', 'any', 'max', 'min', 'split', 'chunk', 'numel', 'is_tensor', 'is_floating_point',
            'allclose', 'equal']
