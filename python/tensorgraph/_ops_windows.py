"""Composed index-driven functions with PyTorch's names and gradients:
Tensor.unfold (sliding windows along a dim as a new last dim: a strided
view, or in a traced graph one index_select), masked_scatter (a source's elements in order at a mask's
true positions, by one gather), split_with_sizes, and unique_consecutive
(computed on the host with numpy: eager only), slice_scatter /
select_scatter / diagonal_scatter (a clone with the view assigned, so
gradients reach both), combinations, and mode (host numpy)."""
import builtins
import math

import numpy as np

from . import _C
from ._creation import arange, tensor, zeros
from ._ops_stats import _memory_bytes

__all__ = ['masked_scatter', 'split_with_sizes', 'unique_consecutive', 'slice_scatter',
           'select_scatter', 'diagonal_scatter', 'combinations', 'mode']


def unfold(input, dimension, size, step):
    """the windows input[..., i * step : i * step + size, ...] along
    `dimension`, stacked there, each window's elements in a new last dim"""
    nd = max(input.ndim, 1)
    if not -nd <= dimension < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {dimension})")
    d = dimension % nd
    x = input.reshape(1) if input.ndim == 0 else input
    n = x.shape[d]
    if size < 0 or size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (n - size) // step + 1
    if not x.is_symbolic:  # a view, as PyTorch's: writes to it reach input
        shape = list(x.shape[:d]) + [count] + list(x.shape[d + 1:]) + [size]
        strides = list(x.stride())
        strides = strides[:d] + [strides[d] * step] + strides[d + 1:] + [strides[d]]
        out = _C._as_strided(x, shape, strides, 0)
        out = out.reshape(size) if input.ndim == 0 else out
        return _C._set_grad_fn_name(out, 'UnfoldBackward0')
    # a graph being traced has no strides: the windows gathered
    idx = (arange(count) * step).reshape(count, 1) + arange(size).reshape(1, size)
    win = _C.index_select(x, d, idx.reshape(-1))
    shape = list(x.shape[:d]) + [count, size] + list(x.shape[d + 1:])
    out = win.reshape(*shape).movedim(d + 1, -1)
    return out.reshape(size) if input.ndim == 0 else out


def masked_scatter(input, mask, source):
    """input with its positions where mask (broadcast to input) is true
    replaced by source's first elements, in order"""
    if mask.dtype != _C.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype}")
    m = mask.expand(tuple(input.shape)) if tuple(mask.shape) != tuple(input.shape) else mask
    flat = m.reshape(-1)
    need = int(flat.sum().item()) if not flat.is_symbolic else None
    if need is not None and need > source.numel():
        raise RuntimeError(f"masked_scatter: expected source to have at least {need} "
                           f"elements, got {source.numel()}")
    # each true position takes source element (its rank among the true ones)
    pos = (_C.cumsum(flat.long(), 0) - 1).clamp(0, max(source.numel() - 1, 0))
    src = source.reshape(-1)
    if src.numel() == 0:  # nothing taken (no true position): one stand-in to index
        src = _C.cat([src, zeros(1, dtype=src.dtype)], 0)
    taken = _C.index_select(src, 0, pos).reshape(tuple(input.shape))  # 0-d too
    return _C.where(m, taken.to(input.dtype), input)


def split_with_sizes(input, split_sizes, dim=0):
    """split into pieces of the given sizes, which must add up to the dim"""
    n = input.shape[dim]
    if sum(split_sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                           f"(input tensor's size at dimension {dim}), but got split_sizes="
                           f"{list(split_sizes)}")
    return input.split(list(split_sizes), dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """the values with consecutive repeats collapsed (over the flattened
    input, or whole slices along dim), with the inverse map and counts"""
    if input.is_symbolic:
        raise RuntimeError("unique_consecutive: not available inside tg.function (computed "
                           "on the host)")
    a = input.detach().numpy()
    if dim is None:
        flat = a.reshape(-1)
        change = np.ones(flat.shape[0], dtype=bool)
        if flat.shape[0] > 1:
            change[1:] = flat[1:] != flat[:-1]
        values = tensor(np.array(flat[change], order='C'), dtype=input.dtype)
        inverse_shape = a.shape
    else:
        d = dim % a.ndim
        moved = np.moveaxis(a, d, 0).reshape(a.shape[d], -1)
        change = np.ones(moved.shape[0], dtype=bool)
        if moved.shape[0] > 1:
            change[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        values = tensor(np.array(np.compress(change, a, axis=d), order='C'), dtype=input.dtype)
        inverse_shape = (a.shape[d],)
    group = np.cumsum(change) - 1
    out = [values]
    if return_inverse:
        out.append(tensor(np.array(group.reshape(inverse_shape), dtype=np.int64)))
    if return_counts:
        out.append(tensor(np.array(np.bincount(group, minlength=int(change.sum())),
                                   dtype=np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[..., start:end:step, ...] (along dim) replaced by src"""
    out = input.clone()
    idx = [slice(None)] * input.ndim
    idx[dim] = slice(start, end, step)
    out[tuple(idx)] = src
    return out


def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src"""
    out = input.clone()
    idx = [slice(None)] * input.ndim
    idx[dim] = index
    out[tuple(idx)] = src
    return out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with its diagonal (offset, dim1, dim2) replaced by src"""
    out = input.clone()
    n1, n2 = input.shape[dim1], input.shape[dim2]
    count = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    rows = arange(count) + max(0, -offset)
    cols = arange(count) + max(0, offset)
    moved = out.movedim((dim1, dim2), (0, 1))
    src = src.to(input.dtype)  # copied in, as PyTorch's copy_: any dtype
    moved[rows, cols] = src.movedim(-1, 0) if src.ndim else src
    return out


def combinations(input, r=2, with_replacement=False):
    """the r-combinations of a 1-D tensor's elements, one per row, in
    itertools' order"""
    import itertools
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    n = input.shape[0]
    rows = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    if rows * (64 + 8 * r) > _memory_bytes():  # the index tuples listed on the host
        raise RuntimeError(f"combinations: {rows} rows of {r} would not fit in memory")
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = list(pick(range(input.shape[0]), r))
    if r == 0:
        return input.new_zeros((0,))
    if not idx:  # no r-subsets: empty, still a function of input (PyTorch's stack)
        return input.narrow(0, 0, 0).unsqueeze(1).expand(0, r).clone()
    flat = tensor([i for c in idx for i in c])
    return _C.index_select(input, 0, flat).reshape(len(idx), r)


def mode(input, dim=-1, keepdim=False):
    """the most frequent value along dim (the smallest among ties) and the
    index of its last occurrence, as PyTorch (host numpy: eager only)"""
    from .return_types import mode as _mode_type
    if input.is_symbolic:
        raise RuntimeError("mode: not available inside tg.function (computed on the host)")
    n = builtins.max(input.ndim, 1)  # a 0-d tensor has dims 0 and -1, as PyTorch's
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    if input.ndim == 0:
        return _mode_type(input.clone(), tensor(0))
    dim %= input.ndim
    if input.shape[dim] == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    a = np.moveaxis(input.detach().numpy(), dim, -1)
    flat = a.reshape(-1, a.shape[-1]) if a.ndim else a.reshape(1, 1)
    vals, idxs = [], []
    for row in flat:
        uniq, counts = np.unique(row, return_counts=True)
        v = uniq[np.argmax(counts)]  # np.unique sorts: the first maximum is the smallest
        vals.append(v)
        idxs.append(int(np.nonzero((row == v) | (np.isnan(row) & np.isnan(v)))[0][-1])
                    if a.dtype.kind == 'f' else int(np.nonzero(row == v)[0][-1]))
    shape = a.shape[:-1]
    v = tensor(np.array(vals, dtype=a.dtype).reshape(shape), dtype=input.dtype)
    i = tensor(np.array(idxs, dtype=np.int64).reshape(shape))
    if keepdim and input.ndim:
        v, i = v.unsqueeze(dim), i.unsqueeze(dim)
    if input.requires_grad:  # the gradient goes to the returned position
        from ._ops import select_along
        v = select_along(input, i, dim, keepdim)
    return _mode_type(v, i)
