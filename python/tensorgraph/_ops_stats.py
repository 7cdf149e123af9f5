"""Order statistics and friends, composed from sort / gather / comparisons
(so gradients flow where PyTorch has them: to the selected or
interpolated elements): median, nanmedian, kthvalue, quantile,
nanquantile; isin, searchsorted, histc, histogram, renorm, tensor_split, dist,
cov, corrcoef, pdist. NaNs sort last (as in PyTorch), which the nan-aware forms use."""
import builtins
import math
import os

import numpy as np

from . import _C
from ._creation import arange, tensor, zeros
from ._ops_math import _float

Tensor = _C.Tensor

__all__ = ['median', 'nanmedian', 'kthvalue', 'quantile', 'nanquantile', 'isin', 'histogram',
           'renorm',
           'searchsorted', 'histc', 'tensor_split', 'dist', 'cov', 'corrcoef', 'pdist']


def _sorted_last(input, dim):
    """input sorted along dim, moved last: (values, indices, moved-back fn)"""
    if input.ndim == 0:
        input = input.reshape(1)
        dim = 0
    d = dim % input.ndim
    x = input.movedim(d, -1)
    s = _C._sort(x, -1, False)
    return s[0], s[1], d


def _pick(values, indices, pos, d, keepdim, ndim0):
    """gathers sorted position pos ([..., 1] int64) and puts dim d back"""
    v = _C.gather(values, -1, pos)
    i = _C.gather(indices, -1, pos)
    if ndim0:
        return v.reshape(()), i.reshape(())
    v, i = v.movedim(-1, d), i.movedim(-1, d)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return v, i


def _median(input, dim, keepdim, nan_aware):
    if dim is None:
        if input.numel() == 0:
            if input.dtype.is_floating_point:  # PyTorch's NaN
                return _C.sum(input, None, False) * math.nan
            raise IndexError("median() input tensor cannot be empty")
        v, i, d = _sorted_last(input.reshape(-1), 0)
    else:
        if input.ndim and input.shape[dim] == 0:
            raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
        v, i, d = _sorted_last(input, dim)
    n = v.shape[-1]
    if input.dtype.is_floating_point:
        isnan = v != v
        if nan_aware:  # the lower median of the non-NaN values; all NaN: a NaN
            m = n - _C.sum(isnan.to(_C.int64), -1, True)
            pos = _C.floor_divide(_C.clamp(m - 1, 0, None), 2)
        else:  # a row with a NaN has median NaN: the first NaN (sorted last)
            first = n - _C.sum(isnan.to(_C.int64), -1, True)
            pos = _C.where(first < n, first, zeros((), dtype=_C.int64) + (n - 1) // 2)
    else:
        pos = zeros(v.shape[:-1] + (1,), dtype=_C.int64) + (n - 1) // 2
    vals, idx = _pick(v, i, pos, d, keepdim, input.ndim == 0)
    if dim is None:  # PyTorch spreads the gradient over the tied elements
        from ._ops import even_grad
        return even_grad(input, vals.reshape(())) if input.requires_grad else vals.reshape(())
    from . import return_types
    return (return_types.nanmedian if nan_aware else return_types.median)(vals, idx)


def median(input, dim=None, keepdim=False):
    """no dim: the lower of the two middle values of all elements (NaN if
    any is NaN); with dim: (values, indices) along it"""
    return _median(input, dim, keepdim, False)


def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaNs (NaN only where every value is NaN)"""
    return _median(input, dim, keepdim, True)


def kthvalue(input, k, dim=-1, keepdim=False):
    """(values, indices) of the k-th smallest element (k from 1) along dim"""
    if input.dtype == _C.bool:
        raise RuntimeError("\"kthvalue_cpu\" not implemented for 'Bool'")
    n = input.shape[dim] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    from .return_types import kthvalue as _kt
    if input.is_symbolic:  # a trace: the k-th of the stable sort (ties may differ)
        v, i, d = _sorted_last(input, dim)
        pos = zeros(v.shape[:-1] + (1,), dtype=_C.int64) + (k - 1)
        return _kt(*_pick(v, i, pos, d, keepdim, input.ndim == 0))
    # PyTorch's element among ties (its quickselect's), the value gathered
    # from it so that the gradient goes there too
    from ._kth_select import kth_indices
    x = input.reshape(1) if input.ndim == 0 else input
    d = dim % x.ndim
    moved = x.movedim(d, -1)
    rows = moved.detach().numpy().reshape(-1, moved.shape[-1])
    pos = tensor(kth_indices(rows, k).reshape(tuple(moved.shape[:-1]) + (1,)), dtype=_C.int64)
    idx = arange(moved.shape[-1]).expand(*moved.shape)  # positions as the "sorted" indices
    return _kt(*_pick(moved, idx, pos, d, keepdim, input.ndim == 0))


_MODES = ('linear', 'lower', 'higher', 'midpoint', 'nearest')


def _quantile(input, q, dim, keepdim, interpolation, nan_aware, name):
    if interpolation not in _MODES:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    # a number or a 0-d tensor: no q dim in the result, as PyTorch's
    scalar_q = not isinstance(q, Tensor) or q.ndim == 0
    if isinstance(q, Tensor):
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        qt = q.reshape(-1)
    else:
        qt = tensor([float(q)], dtype=input.dtype)
    # checked on the host: q is a number or a concrete tensor (in a graph too)
    qs = [] if qt.is_symbolic else qt.tolist()
    if not all(0 <= v <= 1 for v in qs):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    qv = qt.reshape(-1)
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        from ._ops_shape import _dim
        d = _dim(dim, input.ndim)  # PyTorch's IndexError out of range
        x = input.reshape(1) if input.ndim == 0 else input
    v, _, _ = _sorted_last(x, d)                      # [..., n]
    n = v.shape[-1]
    Q = qv.numel()
    isnan = v != v
    valid = n - _C.sum(isnan.to(_C.int64), -1, True)  # [..., 1]
    # PyTorch's ranks: q * (count - 1) in the input's dtype; a row with a
    # NaN (quantile) or only NaNs (nanquantile) reads its last element
    if nan_aware:
        ranks = qv * (valid.to(input.dtype) - 1)      # [..., Q]
        last = valid == 0
    else:
        ranks = qv * (n - 1) + zeros(valid.shape, dtype=input.dtype)
        last = valid < n
    ranks = _C.where(last, zeros((), dtype=input.dtype) + (n - 1), ranks)
    if interpolation == 'lower':
        ranks = ranks.floor()
    elif interpolation == 'higher':
        ranks = ranks.ceil()
    elif interpolation == 'nearest':
        ranks = ranks.round()  # half to even, as PyTorch's round
    below = ranks.to(_C.int64)
    vb = _C.gather(v, -1, below)
    if interpolation in ('linear', 'midpoint'):
        above = ranks.ceil().to(_C.int64)
        va = _C.gather(v, -1, above)
        w = (ranks - below.to(input.dtype) if interpolation == 'linear'
             else zeros(ranks.shape, dtype=input.dtype) + 0.5)
        from ._ops_math import lerp
        vb = lerp(vb, va, w)
    out = vb.movedim(-1, 0)                            # [Q, ...]
    if dim is None:
        out = out.reshape((Q,) + ((1,) * input.ndim if keepdim else ()))
    elif keepdim:
        out = out.unsqueeze(d + 1) if input.ndim else out
    return out.reshape(out.shape[1:]) if scalar_q else out


def quantile(input, q, dim=None, keepdim=False, *, interpolation='linear'):
    """the q-quantiles along dim (all elements when None); q a number or a
    1-D tensor (its dim first in the result); NaN where a row has NaN"""
    return _quantile(input, q, dim, keepdim, interpolation, False, 'quantile')


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear'):
    return _quantile(input, q, dim, keepdim, interpolation, True, 'nanquantile')


def _as_t(x, like=None):
    if isinstance(x, Tensor):
        return x
    return tensor(x, dtype=like.dtype if like is not None and isinstance(x, float)
                  and like.dtype.is_floating_point else None)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """elements that occur in test_elements (bool, elements' shape)"""
    e = _as_t(elements)
    t = _as_t(test_elements).reshape(-1)
    hit = _C.sum((e.unsqueeze(-1) == t).to(_C.int32), -1) > 0 if t.numel() else \
        zeros(e.shape, dtype=_C.bool)
    return ~hit if invert else hit


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """where input's values would go in the sorted last dim of
    sorted_sequence: the count of elements < v (left) or <= v (right)"""
    if side is not None:
        if side not in ('left', 'right'):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == 'left':
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == 'right'
    seq = sorted_sequence
    if sorter is not None:
        seq = _C.gather(seq, -1, sorter)
    scalar = not isinstance(input, Tensor)
    v = _as_t(input, seq)
    if scalar:
        v = v.reshape(1)
    if seq.ndim > 1 and seq.shape[:-1] != v.shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           "the first N-1 dimensions of boundaries tensor and input value "
                           "tensor must match")
    s = seq.unsqueeze(-2) if seq.ndim > 1 else seq   # [..., 1, M] or [M]
    vv = v.unsqueeze(-1)
    below = (s <= vv) if right else (s < vv)
    if v.dtype.is_floating_point:  # a NaN goes after everything, as PyTorch's
        below = below | (vv != vv)
    out = _C.sum(below.to(_C.int64), -1)
    out = out.to(_C.int32) if out_int32 else out
    return out.reshape(()) if scalar else out


def histc(input, bins=100, min=0, max=0):  # noqa: A002
    """counts of input in bins equal-width bins over [min, max] (the data's
    range when min == max); values outside are ignored, max goes in the
    last bin; the input's dtype"""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"histogram_cpu\" not implemented for "
                           f"'{str(input.dtype).replace('tg.', '').capitalize()}'")
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0")
    x = input.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.numel():
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc(): max must be larger than min")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc(): range of [{lo}, {hi}] is not finite")
    lo_t = zeros((), dtype=x.dtype) + lo
    hi_t = zeros((), dtype=x.dtype) + hi
    inside = (x >= lo_t) & (x <= hi_t)
    pos = ((x - lo_t) * bins / (hi_t - lo_t)).floor()  # PyTorch's order of operations
    pos = _C.clamp(_C.where(inside, pos, zeros((), dtype=x.dtype)), 0, bins - 1).to(_C.int64)
    hit = (pos.unsqueeze(-1) == arange(bins)) & inside.unsqueeze(-1)
    return _C.sum(hit.to(x.dtype), 0)


def _memory_bytes():
    """the machine's physical memory, a bound on what a result may hold"""
    return os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')


def tensor_split(input, indices_or_sections, dim=0):
    """views of input along dim: n nearly equal parts (the first size % n
    one longer) or the pieces between the given indices"""
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.ndim == 0:
            indices_or_sections = int(indices_or_sections.item())
        else:
            indices_or_sections = indices_or_sections.tolist()
    d = dim % input.ndim if input.ndim else 0
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    size = input.shape[d]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        if n > size and n * 64 > _memory_bytes():  # each view is a Tensor object
            raise RuntimeError(f"tensor_split: {n} sections (views) would not fit in memory")
        q, r = divmod(size, n)
        bounds, start = [], 0
        for k in range(n):
            stop = start + q + (1 if k < r else 0)
            bounds.append((start, stop))
            start = stop
    else:
        cuts = [builtins.min(builtins.max(int(i) if i >= 0 else int(i) + size, 0), size)
                for i in indices_or_sections]
        edges = [0] + cuts + [size]
        bounds = [(a, builtins.max(a, b)) for a, b in zip(edges[:-1], edges[1:])]
    return tuple(input.narrow(d, a, b - a) for a, b in bounds)


def dist(input, other, p=2):
    """the p-norm of input - other (broadcast): PyTorch's norm, so every
    order vector_norm takes (a negative p: (sum |d|^p)^(1/p), 0 when some
    d is 0), with its gradients"""
    from .linalg import vector_norm
    if isinstance(p, str) or p is None:
        raise TypeError(f"dist(): argument 'p' (position 3) must be Number, not "
                        f"{type(p).__name__}")
    d = input - other
    # PyTorch's norm is 0 over no elements for every p, also the negative
    # and infinite ones that linalg.vector_norm refuses there (no identity)
    # (p 0 has no gradient, as there, also over no elements)
    return vector_norm(d, 2.0 if d.numel() == 0 and p != 0 else float(p))


def pdist(input, p=2):
    """the p-norm distances between the rows of an [N, M] input, for every
    pair i < j in row-major order: N (N - 1) / 2 values"""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n < 2:  # no pairs: empty, still a function of input (PyTorch's requires grad)
        return input.reshape(-1).narrow(0, 0, 0).clone()
    from ._ops_more import triu_indices
    ij = triu_indices(n, n, 1)
    d = _C.index_select(input, 0, ij[0]) - _C.index_select(input, 0, ij[1])
    from .linalg import _count_nonzero, vector_norm
    # p = 0: PyTorch's pdist gives zeros (its vector_norm no gradient)
    r = _count_nonzero(d, [1], False) if p == 0 else vector_norm(d, float(p), 1)
    return _C._set_grad_fn_name(r, 'PdistBackward0') if r.requires_grad else r


def cov(input, *, correction=1, fweights=None, aweights=None):
    """the covariance of the rows (variables) over the columns
    (observations) of a 1-D or 2-D input, with frequency and/or
    observation weights; PyTorch's normalisation"""
    if input.ndim > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {input.ndim} dimensions")
    x = _float(input if input.ndim == 2 else input.reshape(1, -1))
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected fweights to have integral dtype")
        w = fweights
    if aweights is not None:
        if not aweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to have floating point dtype")
        w = aweights if w is None else w * aweights
    if w is None:
        avg = _C.mean(x, 1, False)
        norm = n - correction
    else:
        w = w.to(x.dtype)
        w_sum = _C.sum(w)
        avg = _C.sum(x * w, 1, False) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * _C.sum(w * aweights.to(x.dtype)) / w_sum
    if isinstance(norm, Tensor):
        norm = _C.clamp(norm, 0, None)
    else:
        norm = builtins.max(norm, 0)
    xc = x - avg.unsqueeze(1)
    xw = xc if w is None else xc * w
    c = _C.matmul(xc, xw.t()) / norm
    # one variable: a 0-d result, as PyTorch's
    return c.reshape(()) if input.ndim < 2 or x.shape[0] == 1 else c


def corrcoef(input):
    """Pearson correlation coefficients of the rows, clipped to [-1, 1]"""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    sd = c.diagonal().sqrt()
    c = c / sd.unsqueeze(1)
    c = c / sd.unsqueeze(0)
    return _C.clamp(c, -1, 1)


def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges) as torch.histogram: bins equal-width bins over
    range (the data's, widened by 0.5 each way when it is one value; [0, 1]
    for no data) or the given edges; bin i holds [e_i, e_i+1), the last one closed; the
    counts (or weights) in the input's float dtype; density divides by
    the total and the widths. Counted on the host (eager only)"""
    if not input.dtype.is_floating_point:
        from ._ops_shape import torch_type_name
        raise RuntimeError(f'"histogramdd" not implemented for '
                           f'\'{torch_type_name(input.dtype)}\'')
    a = input.detach().numpy().reshape(-1)
    np_dt = a.dtype
    if isinstance(bins, Tensor):
        edges = bins.detach().numpy().astype(np_dt)
    else:
        lo, hi = (builtins.float(range[0]), builtins.float(range[1])) if range is not None \
            else ((builtins.float(a.min()), builtins.float(a.max())) if a.size else (0., 1.))
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, bins + 1).astype(np_dt)
    inside = (a >= edges[0]) & (a <= edges[-1])
    pos = np.searchsorted(edges, a[inside], side='right') - 1
    pos = np.minimum(pos, len(edges) - 2)
    w = None if weight is None else weight.detach().numpy().reshape(-1)[inside]
    hist = np.bincount(pos, weights=w, minlength=len(edges) - 1).astype(np_dt)
    if density:
        hist = hist / (hist.sum() * np.diff(edges))
    from .return_types import histogram as _histogram
    return _histogram(tensor(hist.astype(np_dt), dtype=input.dtype),
                      tensor(edges, dtype=input.dtype))


def renorm(input, p, dim, maxnorm):
    """each slice along dim whose p-norm exceeds maxnorm scaled down to it
    (PyTorch's factor maxnorm / (norm + 1e-7)); differentiable"""
    d = dim % builtins.max(input.ndim, 1)
    others = [i for i in builtins.range(input.ndim) if i != d]
    norm = input.norm(p, others, keepdim=True) if others else input.abs()
    scale = maxnorm / (norm + 1e-7)
    one = zeros((), dtype=input.dtype) + 1
    return input * _C.where(norm > maxnorm, scale, one)
