"""Advanced indexing (tensors, lists, bool masks inside an index), which
Tensor.__getitem__/__setitem__ hand over from C. Basic indices (ints,
slices, None, ...) stay views made in C; an advanced index gathers with
index_select (differentiable) and so copies, as in PyTorch."""
import numpy as np

from . import _C

Tensor = _C.Tensor


def _split_index(x, idx):
    """(basic prefix, the advanced index, the dim it applies to, rest)"""
    if not isinstance(idx, tuple):
        idx = (idx,)
    for i, e in enumerate(idx):
        if isinstance(e, (Tensor, list, np.ndarray, bool)):
            if any(isinstance(r, (Tensor, list, np.ndarray, bool)) for r in idx[i + 1:]):
                raise NotImplementedError("indexing with more than one tensor/list index "
                                          "is not supported (index one dim at a time)")
            prefix = idx[:i]
            if any(p is Ellipsis for p in idx[i + 1:]):
                raise NotImplementedError("an ellipsis after a tensor index is not supported")
            return prefix, e, idx[i + 1:]
    raise TypeError(f"invalid index of type {type(idx).__name__}")


def _dim_after(x, prefix):
    """the dim of x[prefix + (slice(None),)...] that the next index entry meets"""
    if any(p is Ellipsis for p in prefix):
        consumed = sum(1 for p in prefix if p is not None and p is not Ellipsis)
        return x.ndim  # the ellipsis takes every dim the rest does not use; caller checks
    return sum(1 for p in prefix if not isinstance(p, int) or isinstance(p, bool)) \
        if prefix else 0


def _as_index_tensor(e, size):
    if isinstance(e, bool):
        e = [e]
    if isinstance(e, Tensor):
        if e.dtype == _C.bool:
            return e
        if e.dtype.is_floating_point:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        a = e
    else:
        arr = np.asarray(e)
        if arr.dtype == np.bool_:
            return _C.from_numpy(np.require(arr, requirements='C')).clone()
        if arr.dtype.kind not in 'iu':
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        a = _C.from_numpy(np.require(arr.astype(np.int64), requirements='C'))
    host = np.asarray(a.detach())
    if host.size and (host.min() < -size or host.max() >= size):
        bad = host[(host < -size) | (host >= size)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for dimension with size {size}")
    if host.size and host.min() < 0:  # negative indices count from the end
        a = _C.from_numpy(np.where(host < 0, host + size, host).astype(np.int64))
    return a


def _mask_to_index(mask, x, dim):
    """a bool mask over dims dim.. of x as flat indices into those dims"""
    k = mask.ndim
    if tuple(x.shape[dim:dim + k]) != tuple(mask.shape):
        raise IndexError(f"The shape of the mask {list(mask.shape)} does not match the shape "
                         f"of the indexed tensor {list(x.shape[dim:dim + k])}")
    flat_idx = np.flatnonzero(np.asarray(mask.detach()).reshape(-1))
    return k, _C.from_numpy(flat_idx.astype(np.int64))


def _gather(x, dim, e):
    """x indexed at dim by one advanced index e (int tensor, list, or mask)"""
    if dim >= x.ndim and not (isinstance(e, Tensor) and e.dtype == _C.bool and e.ndim == 0):
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    idx = _as_index_tensor(e, x.shape[dim] if dim < x.ndim else 1)
    if idx.dtype == _C.bool:
        if idx.ndim == 0:  # x[True]: a new dim of size 1 (or 0)
            y = x.unsqueeze(dim)
            return y if bool(idx) else y[(slice(None),) * dim + (slice(0, 0),)]
        k, flat = _mask_to_index(idx, x, dim)
        merged = x.flatten(dim, dim + k - 1) if k > 1 else x
        return _C.index_select(merged, dim, flat)
    if idx.ndim == 1:
        return _C.index_select(x, dim, idx)
    out = _C.index_select(x, dim, idx.reshape(-1))
    shape = tuple(x.shape[:dim]) + tuple(idx.shape) + tuple(x.shape[dim + 1:])
    return out.reshape(shape)


def _getitem(x, idx):
    prefix, e, rest = _split_index(x, idx)
    if any(p is Ellipsis for p in prefix):
        n_rest = sum(1 for r in rest if r is not None)
        base = x[prefix + (slice(None),) * 0] if False else x
        used = sum(1 for p in prefix if p is not None and p is not Ellipsis)
        k = e.ndim if isinstance(e, Tensor) and e.dtype == _C.bool else 1
        prefix = tuple(p for p in prefix if p is not Ellipsis) + \
            (slice(None),) * (x.ndim - used - n_rest - k)
    y = x[prefix] if prefix else x
    dim = sum(1 for p in prefix if not (isinstance(p, int) and not isinstance(p, bool)))
    y = _gather(y, dim, e)
    if rest:
        y = y[(slice(None),) * (dim + 1) + tuple(rest)]
    return y


def _setitem(x, idx, value):
    """x[idx] = value for one advanced index: a mask writes with where, an
    integer index writes each selected slice (value broadcast to each)"""
    prefix, e, rest = _split_index(x, idx)
    if rest or any(p is Ellipsis for p in prefix):
        raise NotImplementedError("assignment with an index after a tensor index, or an "
                                  "ellipsis before it, is not supported")
    view = x[prefix] if prefix else x
    dim = sum(1 for p in prefix if not (isinstance(p, int) and not isinstance(p, bool)))
    idx = _as_index_tensor(e, view.shape[dim])
    if idx.dtype == _C.bool:
        mask = idx.reshape(tuple(idx.shape) + (1,) * (view.ndim - dim - idx.ndim))
        if dim:
            mask = mask.reshape((1,) * dim + tuple(mask.shape))
        if isinstance(value, Tensor) and value.ndim > 0 and value.numel() > 1:
            k = idx.ndim
            pos = np.flatnonzero(np.asarray(idx).reshape(-1))
            merged = view.flatten(dim, dim + k - 1) if k > 1 else view
            for j, p in enumerate(pos):
                merged[(slice(None),) * dim + (int(p),)] = value[j]
            return
        view.copy_(_C.where(mask, value, view))
        return
    flat = np.asarray(idx).reshape(-1)
    val = value if isinstance(value, Tensor) else None
    many = val is not None and val.ndim > view.ndim - 1 and val.shape[0] == len(flat) \
        and len(flat) > 1
    for j, p in enumerate(flat):
        sel = (slice(None),) * dim + (int(p),)
        view[sel] = val[j] if many else value
