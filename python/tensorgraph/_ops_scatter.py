"""Reductions into positions: scatter_reduce (sum, prod, mean, amax, amin,
with or without self), index_reduce, put / put_, take with negative
indices, take_along_dim with PyTorch's broadcasting and gather's
sparse_grad keyword.

scatter_reduce works as scatter_add does (_ops_shape): a one-hot
comparison of index with every position of dim (index.shape + [n]),
src placed where it hits and the reduction's identity elsewhere, then
reduced along dim. Composed of differentiable ops, so the gradients are
the ones of sum / prod / amax (ties share) / mean, as PyTorch's."""
import builtins

import numpy as np

from . import _C
from ._creation import arange, tensor
from ._ops_shape import (_check_scatter, _dim, _src_part, check_index_bounds, movedim,
                         slice_index, torch_type_name)

__all__ = ['scatter_reduce', 'index_reduce', 'put', 'take', 'take_along_dim', 'gather']

Tensor = _C.Tensor
_REDUCES = ('sum', 'prod', 'mean', 'amax', 'amin')


def _identity(reduce, dtype):
    """the value that leaves a reduction unchanged (positions not hit)"""
    if reduce in ('sum', 'mean'):
        return 0
    if reduce == 'prod':
        return 1
    if dtype.is_floating_point:
        return -np.inf if reduce == 'amax' else np.inf
    if dtype == _C.bool:
        return reduce == 'amin'
    info = np.iinfo({_C.int64: np.int64, _C.int32: np.int32, _C.uint8: np.uint8}[dtype])
    return int(info.min) if reduce == 'amax' else int(info.max)


def _to_input_shape(t, input, dim, fill):
    """t (index's shape with dim of input's size) padded with fill to input's shape"""
    pads = []
    for d in range(input.ndim):
        pads += [0, input.shape[d] - t.shape[d]]
    if builtins.any(pads):
        t = _C._pad(t, pads, fill)
    return t


def _reduce_hits(hit, s, reduce, dim):
    """src (s) reduced per position: along dim of the one-hot [.., n] layout"""
    fill = tensor(_identity(reduce, s.dtype), dtype=s.dtype)
    placed = _C.where(hit, s.unsqueeze(-1), fill)
    op = {'sum': _C.sum, 'mean': _C.sum, 'prod': _C.prod, 'amax': _C.amax,
          'amin': _C.amin}[reduce]
    return movedim(op(placed, dim, False), -1, dim)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """input with src[i][j] reduced into position [index[i][j]][j] (dim 0)
    by sum, prod, mean, amax or amin; include_self=False leaves input's
    own value out where anything lands (and keeps it elsewhere)"""
    if reduce not in _REDUCES:
        raise RuntimeError(f"scatter_reduce(): reduce argument must be either sum, prod, mean, "
                           f"amax or amin, got {reduce!r}")
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' must be Tensor, not "
                        f"{type(src).__name__}")
    dim = _dim(dim, input.ndim)
    _check_scatter('scatter_reduce', input, dim, index, src)
    n = input.shape[dim]
    check_index_bounds(index, n, dim)
    s = _src_part(src, index).to(input.dtype)
    pos = arange(n).reshape(*([1] * index.ndim), n)
    hit = index.to(_C.int64).unsqueeze(-1) == pos            # index.shape + [n]
    got = _to_input_shape(_reduce_hits(hit, s, reduce, dim), input, dim,
                          1 if reduce == 'prod' else 0)
    count = _to_input_shape(movedim(_C.sum(_C._cast(hit, _C.int64), dim), -1, dim),
                            input, dim, 0)
    if reduce == 'mean':
        total = got + input if include_self else got
        n_in = count + 1 if include_self else _C.clamp(count, 1, None)
        n_in = n_in.to(input.dtype)
        mean = total / n_in if input.dtype.is_floating_point else _C.floor_divide(total, n_in)
        return _C.where(count > 0, mean, input) if not include_self else mean
    if include_self:
        if reduce == 'sum':
            return input + got
        if reduce == 'prod':
            return input * got
        # ties between self and src share the gradient, as PyTorch's
        both = _C.stack([input, _C.where(count > 0, got, input)], 0)
        return (_C.amax if reduce == 'amax' else _C.amin)(both, 0, False)
    return _C.where(count > 0, got, input)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """source's slices along dim reduced (prod, mean, amax, amin) into
    input's slices at index"""
    if reduce not in ('prod', 'mean', 'amax', 'amin'):
        raise RuntimeError(f"index_reduce(): reduce argument must be either prod, mean, amax "
                           f"or amin, got {reduce!r}")
    dim, idx = slice_index('index_reduce_', input, dim, index, source)
    return scatter_reduce(input, dim, idx, source, reduce, include_self=include_self)


def _flat_index(index, numel, name):
    """index into the flattened tensor, negative ones counted from the end"""
    if index.dtype != _C.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{torch_type_name(index.dtype)}")
    flat = index.reshape(-1).to(_C.int64)
    if flat.numel() and not index.is_symbolic:
        lo, hi = int(_C.amin(flat).item()), int(_C.amax(flat).item())
        for v in (lo, hi):
            if v < -numel or v >= numel:
                raise IndexError(f"{name}(): out of range: tried to access index {v} on a "
                                 f"tensor of {numel} elements.")
    return _C.where(flat < 0, flat + numel, flat)


def take(input, index):
    """input's elements at index (into the flattened input; negative from the end)"""
    idx = _flat_index(index, input.numel(), 'take')
    return _C._untrack_view(_C._set_grad_fn_name(  # a copy, as PyTorch's
        _C.index_select(input.reshape(-1), 0, idx).reshape(tuple(index.shape)), 'TakeBackward0'))


def put(input, index, source, accumulate=False):
    """a copy of input with source's elements written (accumulate: added)
    at index into the flattened input"""
    if source.numel() != index.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    idx = _flat_index(index, input.numel(), 'put_')
    flat, src = input.reshape(-1), source.reshape(-1).to(input.dtype)
    if accumulate:
        from ._ops_shape import scatter_add
        out = scatter_add(flat, 0, idx, src)
    else:
        out = _C._scatter(flat, 0, idx, src)
    return out.reshape(tuple(input.shape))


def take_along_dim(input, indices, dim=None):
    """input's values at indices along dim, the other dims broadcast
    between the two (dim None: take on the flattened input)"""
    if indices.dtype != _C.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{torch_type_name(indices.dtype)}")
    if dim is None:  # PyTorch: input.view(-1).gather(0, indices.view(-1)), flat
        flat, n = indices.reshape(-1), input.numel()
        bad = flat[(flat < 0) | (flat >= n)]
        if bad.numel():  # gather's RuntimeError, not take's IndexError; no negative index
            raise RuntimeError(f"index {bad[0].item()} is out of bounds for dimension 0 with "
                               f"size {n}")
        return take(input, flat)
    dim = _dim(dim, input.ndim)
    if indices.ndim != input.ndim:
        raise RuntimeError(f"take_along_dim(): input and indices should have the same number "
                           f"of dimensions, but got {input.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    from ._ops_shape import broadcast_shapes
    a = list(input.shape)
    b = list(indices.shape)
    a[dim] = b[dim] = 1
    shape = list(broadcast_shapes(tuple(a), tuple(b)))
    shape_in, shape_i = list(shape), list(shape)
    shape_in[dim], shape_i[dim] = input.shape[dim], indices.shape[dim]
    return _C.gather(input.expand(*shape_in), dim, indices.expand(*shape_i))


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """input's values at index along dim (sparse_grad is accepted and
    ignored: the gradient is dense)"""
    if isinstance(index, Tensor) and index.dtype != _C.int64:
        raise RuntimeError("gather(): Expected dtype int64 for index")
    if out is not None:
        return _C.gather(input, dim, index, out=out)
    return _C.gather(input, dim, index)
