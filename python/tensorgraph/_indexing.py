"""Advanced indexing (tensors, lists, arrays, bool masks inside an index)
and assignments that autograd records, which Tensor.__getitem__ /
__setitem__ hand over from C. Basic indices (ints, slices, None, ...)
stay views made in C.

PyTorch's rules: ints, slices and None apply first (ints are basic
indices, unlike numpy); a k-dim bool mask stands for k integer indices
(its nonzero positions); all integer indices broadcast to one shape B.
When their dims are adjacent, B replaces them in place; otherwise B
comes first. The result is one index_select over the indexed dims merged
into one (differentiable, a copy)."""
import warnings

import numpy as np

from . import _C
from ._ops_shape import torch_type_name

Tensor = _C.Tensor


def _kind(e):
    """'basic', 'mask' (bool array/tensor, a Python bool) or 'index'"""
    if e is None or e is Ellipsis or isinstance(e, slice):
        return 'basic'
    if isinstance(e, bool):
        return 'mask'
    if isinstance(e, (int, np.integer)):
        return 'basic'
    if isinstance(e, Tensor):
        if e.dtype == _C.bool:
            return 'mask'
        if e.dtype != _C.int64 and e.ndim:  # 1.13 refuses int32 tensors (not numpy int32 arrays)
            raise IndexError("tensors used as indices must be long, byte or bool tensors")
        return 'index'
    try:
        a = np.asarray(e)
    except Exception:
        a = None
    if a is not None and a.dtype.kind in 'USa':  # PyTorch tries to make a tensor of it
        raise TypeError(f"a string cannot index a tensor (got {e!r}): use integers, slices, "
                        "None, ..., or integer/bool tensors")
    if a is None or a.dtype == object:
        raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long "
                         f"or byte Variables are valid indices (got {type(e).__name__})")
    if a.dtype == np.bool_:
        return 'mask'
    if a.dtype.kind not in 'iu' and (a.size or a.dtype.kind != 'f'):  # [] is an index
        raise IndexError("tensors used as indices must be long, byte or bool tensors")
    return 'index'


def _host(e):
    """an index entry as a numpy array (shares a tensor's memory)"""
    if isinstance(e, Tensor):
        if e.is_symbolic:
            raise RuntimeError("indexing with a tensor computed inside tg.function: graphs "
                               "take x[mask] (one bool mask over the leading dims), "
                               "x[positions] (one 1-D integer tensor) and nonzero, "
                               "masked_select, index_select; other tensor indices are "
                               "read on the host, eagerly only")
        return np.asarray(e.detach())
    return np.asarray(e)


def _graph_mask_select(x, idx):
    """x[mask] in a graph (x or the mask symbolic): the rows of x flattened
    over the mask's dims, picked by nonzero, whose count the graph knows
    when it runs; x[positions] for one 1-D integer tensor; None for other
    indices"""
    if isinstance(idx, tuple):
        if len(idx) != 1:
            return None
        idx = idx[0]
    if not (isinstance(idx, Tensor) and idx.ndim >= 1 and (idx.is_symbolic or x.is_symbolic)):
        return None
    if idx.dtype in (_C.int64, _C.int32) and idx.ndim == 1 and x.ndim >= 1:
        # x[positions] along dim 0, negative ones counted from the end
        # (index_select checks the bounds when the graph runs)
        pos = _C.where(idx < 0, idx + x.shape[0], idx) if x.shape[0] >= 0 else idx
        return _C.index_select(x, 0, pos)
    if idx.dtype != _C.bool:
        return None
    k = idx.ndim
    if k > x.ndim or tuple(idx.shape) != tuple(x.shape[:k]):
        raise IndexError(f"The shape of the mask {list(idx.shape)} at index 0 does not match "
                         f"the shape of the indexed tensor {list(x.shape[:k])}")
    rows = x.reshape(-1, *x.shape[k:])
    pick = _C._nonzero(idx.reshape(-1)).reshape(-1)
    return _C.index_select(rows, 0, pick)


def _consumed(e, kind):
    if kind == 'basic':
        return 0 if e is None or e is Ellipsis else 1
    if kind == 'mask':
        return 0 if isinstance(e, bool) else _host(e).ndim
    return 1


def _byte_as_mask(e):
    """a uint8 tensor or array in an index is a mask (PyTorch's deprecated
    form, with its warning)"""
    if isinstance(e, Tensor) and e.dtype == _C.uint8:
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                      "torch.bool instead.", UserWarning, stacklevel=4)
        return e != 0
    if isinstance(e, np.ndarray) and e.dtype == np.uint8:
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                      "torch.bool instead.", UserWarning, stacklevel=4)
        return e != 0
    return e


def _list_as_tuple(idx):
    """PyTorch 1.13's legacy reading of a list index: one shorter than 32
    holding a sequence, tensor, slice, None or ... is a tuple of indices
    (x[[[0, 1], [2, 0]]] is x[[0, 1], [2, 0]])"""
    return len(idx) < 32 and any(
        isinstance(e, (Tensor, list, tuple, slice, np.ndarray)) or e is None or e is Ellipsis
        for e in idx)


def _parse(x, idx):
    """(basic index for a view, [(dim of that view, numpy index array)])"""
    if isinstance(idx, list) and _list_as_tuple(idx):
        idx = tuple(idx)
    if not isinstance(idx, tuple):
        idx = (idx,)
    idx = tuple(_byte_as_mask(e) for e in idx)
    kinds = [_kind(e) for e in idx]
    used = sum(_consumed(e, k) for e, k in zip(idx, kinds))
    if sum(1 for e in idx if e is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if used > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    basic, adv, d = [], [], 0
    for e, k in zip(idx, kinds):
        if e is Ellipsis:
            basic.extend([slice(None)] * (x.ndim - used))
            d += x.ndim - used
        elif k == 'basic':
            basic.append(e)
            d += not isinstance(e, (int, np.integer))
        elif k == 'index':
            basic.append(slice(None))
            adv.append((d, _host(e).astype(np.int64, copy=False)))
            d += 1
        elif isinstance(e, bool) or _host(e).ndim == 0:  # x[True]: a new dim, kept or not
            basic.append(None)
            adv.append((d, np.zeros(1 if bool(_host(e)) else 0, np.int64)))
            d += 1
        else:
            mask = _host(e)
            basic.extend([slice(None)] * mask.ndim)
            adv.append((d, mask))  # expanded once the view's shape is known
            d += mask.ndim
    return tuple(basic), adv


def _expand_masks(view, adv):
    """bool masks into one integer index per dim they cover; bounds checked,
    negative indices counted from the end"""
    out = []
    for d, a in adv:
        if a.dtype == np.bool_:
            have = tuple(view.shape[d:d + a.ndim])
            if have != a.shape:
                raise IndexError(f"The shape of the mask {list(a.shape)} at index {d} does "
                                 f"not match the shape of the indexed tensor {list(have)}")
            out.extend(zip(range(d, d + a.ndim), np.nonzero(a)))
            continue
        n = view.shape[d]
        if a.size and (a.min() < -n or a.max() >= n):
            bad = a[(a < -n) | (a >= n)].flat[0]
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
        out.append((d, np.where(a < 0, a + n, a) if a.size and a.min() < 0 else a))
    return out


def _long(a):
    return _C.from_numpy(np.ascontiguousarray(a, dtype=np.int64))


def _select(view, adv):
    """view indexed by integer arrays at their dims, PyTorch's placement"""
    dims = [d for d, _ in adv]
    try:
        arrays = np.broadcast_arrays(*[a for _, a in adv])
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(a.shape)) for _, a in adv)) \
            from None
    bshape = tuple(arrays[0].shape)
    others = [i for i in range(view.ndim) if i not in dims]
    oshape = tuple(view.shape[i] for i in others)
    if len(dims) == 1:  # one index: index_select at its dim, nothing moves
        d = dims[0]
        out = _C.index_select(view, d, _long(arrays[0].reshape(-1)))
        return out.reshape(oshape[:d] + bshape + oshape[d:])
    sizes = tuple(view.shape[d] for d in dims)
    flat = np.ravel_multi_index(arrays, sizes) if arrays[0].size else np.zeros(0, np.int64)
    perm = dims + others
    merged = view.permute(perm) if perm != list(range(view.ndim)) else view
    merged = merged.reshape((int(np.prod(sizes)),) + oshape)
    out = _C.index_select(merged, 0, _long(flat.reshape(-1))).reshape(bshape + oshape)
    if dims != list(range(dims[0], dims[0] + len(dims))) or dims[0] == 0:
        return out  # not adjacent: the broadcast dims come first
    nb, first = len(bshape), dims[0]
    order = [nb + i for i in range(first)] + list(range(nb)) + \
        [nb + i for i in range(first, len(others))]
    return out.permute(order)


def _getitem(x, idx):
    picked = _graph_mask_select(x, idx)
    if picked is not None:
        return _C._set_grad_fn_name(picked, 'IndexBackward0')
    basic, adv = _parse(x, idx)
    view = x[basic]
    if not adv:
        return view
    # a copy (PyTorch's index): no view of the gathered temporary
    return _C._untrack_view(_C._set_grad_fn_name(_select(view, _expand_masks(view, adv)),
                                                 'IndexBackward0'))


def check_index_put_dtypes(x, value, entries):
    """PyTorch's index_put refuses a value tensor of another dtype when the
    index has tensors (lists, arrays) in it; a bare bool or uint8 mask with
    a one-element value is its masked_fill, which converts"""
    tensors = [e for e in entries if isinstance(e, (Tensor, list, tuple, np.ndarray))]
    if not tensors:
        return
    if len(tensors) == 1 and isinstance(tensors[0], (Tensor, np.ndarray)) and \
            str(tensors[0].dtype).split('.')[-1] in ('bool', 'uint8') and value.numel() == 1:
        return
    raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                       f"{torch_type_name(x.dtype)} for the destination and "
                       f"{torch_type_name(value.dtype)} for the source.")


def _setitem(x, idx, value):
    """x[idx] = value for any index, as one recorded in-place update of x:
    basic indices write the view x[idx] (autograd's view history gives x
    the write); the others find the positions that idx selects (indexing
    a tensor of positions), and value, broadcast to the selection, is
    written there by one scatter over the flattened x, then copied into x. Of repeated positions the last write
    wins (scatter writes in order), and gradients are PyTorch's
    index_put's: x's is zero at the written positions, value's element
    takes the gradient of the position it was written to, repeated or not
    (scatter's rule: a gather). Autograd records it when it watches x or
    value (then x is cloned first, as in-place ops do)."""
    from ._creation import tensor
    entries = idx if isinstance(idx, tuple) else (idx,)
    basic = all(e is None or e is Ellipsis or isinstance(e, slice) or
                (isinstance(e, int) and not isinstance(e, bool)) for e in entries)
    if _C.is_grad_enabled() and x.requires_grad and x.is_leaf:  # PyTorch's refusal
        raise RuntimeError(f"a {'view of a ' if basic else ''}leaf Variable that requires grad "
                           f"is being used in an in-place operation.")
    if basic:  # a write through the view x[idx], whose base's node is CopySlices
        view = x[idx]
        shape = tuple(view.shape)
    else:
        n = x.numel()
        positions = _C.from_numpy(np.arange(n, dtype=np.int64).reshape(tuple(x.shape)))
        sel = np.asarray(positions[idx])
        shape = sel.shape
    if not isinstance(value, Tensor):
        value = tensor(value, dtype=x.dtype)
    given = value
    try:
        value = value.expand(shape)
    except RuntimeError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} "
                           f"cannot be broadcast to indexing result of shape "
                           f"{list(shape)}") from None
    if value.dtype != x.dtype:  # checked after the shape, as PyTorch
        check_index_put_dtypes(x, given, entries)
        value = value.to(x.dtype)
    if basic:
        view.copy_(value)
        return
    recording = _C.is_grad_enabled() and (x.requires_grad or value.requires_grad)
    prev = _C._set_grad_enabled(recording)
    try:
        flat = (x.clone() if recording else x).reshape(n)
        written = _C._scatter(flat, 0, _long(sel.reshape(-1)), value.reshape(sel.size))
        x.copy_(written.reshape(tuple(x.shape)))
    finally:
        _C._set_grad_enabled(prev)
    _C._name_inplace(x, 'IndexPutBackward0')  # PyTorch's node for index_put
