"""More of PyTorch's commonly used functions, composed: nan_to_num,
nansum/nanmean, std_mean/var_mean, aminmax, where(condition), bucketize,
cdist, matrix products (mv, addmv, addr, baddbmm, addbmm, kron,
block_diag, cross, cartesian_prod), tril/triu_indices, and the
data-dependent unique / bincount / multinomial (read on the host: eager
only)."""
import builtins
import math

import numpy as np

from . import _C
from ._creation import arange, tensor, zeros

Tensor = _C.Tensor

__all__ = ['nan_to_num', 'nansum', 'nanmean', 'std_mean', 'var_mean', 'aminmax', 'where',
           'bucketize', 'cdist', 'mv', 'addmv', 'addr', 'baddbmm', 'addbmm', 'kron',
           'block_diag', 'cross', 'cartesian_prod', 'tril_indices', 'triu_indices', 'unique',
           'bincount', 'multinomial', 'cosine_similarity', 'pairwise_distance',
           'pixel_shuffle', 'pixel_unshuffle', 'prelu']

_c_where = _C.where


def _const(x, v):
    return _C.add(zeros((), dtype=x.dtype), v)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN -> nan, +inf -> posinf, -inf -> neginf (default: the dtype's
    largest / lowest finite value)"""
    if not input.dtype.is_floating_point:
        return input.clone()
    big = float(np.finfo(np.float32 if input.dtype == _C.float32 else np.float64).max)
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    x = _c_where(input != input, _const(input, nan), input)
    x = _c_where(x == math.inf, _const(input, posinf), x)
    return _c_where(x == -math.inf, _const(input, neginf), x)


def _nansum_value(x, dim, keepdim):
    from ._ops import sum as _sum
    if x.dtype.is_floating_point:
        x = _c_where(x != x, _const(x, 0), x)
    return _sum(x, dim, keepdim)


def _nansum_function():
    """nansum with PyTorch's gradient, grad * (x == x): inf * 0 makes an
    incoming inf or NaN NaN at the NaN positions, where a where()'s
    gradient would give 0 (built on first use: autograd imports us)"""
    global _NanSum
    from .autograd import Function

    class NansumBackward0(Function):  # the name PyTorch's grad_fn shows
        @staticmethod
        def forward(ctx, x, dim, keepdim):
            ctx.save_for_backward(x)
            ctx.dim, ctx.keepdim = dim, keepdim
            return _nansum_value(x, dim, keepdim)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            if ctx.dim is not None and not ctx.keepdim and x.ndim:
                dims = ctx.dim if isinstance(ctx.dim, (tuple, list)) else (ctx.dim,)
                for d in builtins.sorted(d % x.ndim for d in dims):
                    grad = grad.unsqueeze(d)
            return grad * (x == x).to(grad.dtype), None, None
    _NanSum = NansumBackward0
    return _NanSum


_NanSum = None


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    x = input.to(dtype) if dtype is not None else input
    if x.dtype.is_floating_point and x.requires_grad and _C.is_grad_enabled() and \
            not x.is_symbolic:
        return (_NanSum or _nansum_function()).apply(x, dim, keepdim)
    return _nansum_value(x, dim, keepdim)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    x = input.to(dtype) if dtype is not None else input
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got "
                           f"{x.dtype}")
    ok = x == x
    n = _C.sum(ok.to(x.dtype), dim, keepdim)
    mean = _C.sum(_c_where(ok, x, _const(x, 0)), dim, keepdim) / n
    # PyTorch's gradient is grad / n * (x == x): NaN (inf * 0) over an
    # all-NaN slice, where the masked sum's is 0. sqrt(x - x) is NaN there
    # with a NaN slope, and the mean NaN already; elsewhere it adds nothing
    empty = _C.sum(ok.to(x.dtype), dim, True) == 0
    return mean + _C.sum(_C.sqrt(_c_where(empty, x - x, _const(x, 0))), dim, keepdim)


def std_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    from ._ops import std
    return std(input, dim, unbiased, keepdim, correction=correction), \
        _C.mean(input, None if isinstance(dim, bool) else dim, keepdim)


def var_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    from ._ops import var
    return var(input, dim, unbiased, keepdim, correction=correction), \
        _C.mean(input, None if isinstance(dim, bool) else dim, keepdim)


def aminmax(input, *, dim=None, keepdim=False):
    from .return_types import MinMax
    return MinMax(_C.amin(input, dim, keepdim), _C.amax(input, dim, keepdim))


def where(condition, input=None, other=None):
    """where(condition, input, other), or where(condition) alone:
    nonzero(condition, as_tuple=True)"""
    if input is None and other is None:
        from ._ops_shape import nonzero
        return nonzero(condition, as_tuple=True)
    return _c_where(condition, input, other)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """the index of the bucket of each value among sorted boundaries (a
    count of the boundaries below it)"""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    x = input if isinstance(input, Tensor) else tensor(input)
    b = boundaries.reshape(*([1] * x.ndim), -1)
    below = (b <= x.unsqueeze(-1)) if right else (b < x.unsqueeze(-1))
    return _C.sum(below.to(_C.int64), -1).to(_C.int32 if out_int32 else _C.int64)


def cdist(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'):
    """p-norm distances between the rows of x1 [.., P, M] and x2 [.., R, M]"""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)   # [.., P, R, M]
    if p == 0:  # PyTorch's count: min(ceil |d|, 1), NaN through, a zero gradient
        one = tensor(1, dtype=d.dtype)
        r = _C.sum(_C.minimum(_C.ceil(_C.abs(d)), one), -1)
    else:
        # the vector norm's gradient is 0 at a zero difference (equal rows),
        # as PyTorch's cdist, where sqrt(sum d^2) would give 0/0
        from .linalg import vector_norm
        r = vector_norm(d, p, -1)
    return _C._set_grad_fn_name(r, 'CdistBackward0') if r.grad_fn is not None else r


def mv(input, vec):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    return _C.matmul(input, vec)


def _scaled(x, s):
    return x if s == 1 else x * s


def addmv(input, mat, vec, *, beta=1, alpha=1):
    r = _scaled(mv(mat, vec), alpha)
    return r if beta == 0 else _C._set_grad_fn_name(_scaled(input, beta) + r, 'AddmvBackward0')


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    from ._ops_shape import outer
    r = _scaled(outer(vec1, vec2), alpha)
    return r if beta == 0 else _scaled(input, beta) + r


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    r = _scaled(_C.matmul(batch1, batch2), alpha)
    return r if beta == 0 else _C._set_grad_fn_name(_scaled(input, beta) + r, 'BaddbmmBackward0')


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    r = _scaled(_C.sum(_C.matmul(batch1, batch2), 0), alpha)
    return r if beta == 0 else _scaled(input, beta) + r


def kron(input, other):
    """the Kronecker product: out[i*m + k] = a[i] * b[k] per dim"""
    nd = builtins.max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.ndim) + tuple(other.shape))
    a_shape, b_shape = a.shape, b.shape
    # interleave: a -> [a0, 1, a1, 1, ...], b -> [1, b0, 1, b1, ...]
    ai = a.reshape(tuple(v for s in a_shape for v in (s, 1)))
    bi = b.reshape(tuple(v for s in b_shape for v in (1, s)))
    # a copy, as PyTorch's: no view of the product
    return _C._untrack_view(_C._set_grad_fn_name(
        (ai * bi).reshape(tuple(x * y for x, y in zip(a_shape, b_shape))),
        'UnsafeViewBackward0'))


def block_diag(*tensors):
    ts = [t.reshape(1, -1) if t.ndim == 1 else t.reshape(1, 1) if t.ndim == 0 else t
          for t in tensors]
    for t in ts:
        if t.ndim != 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {ts.index(t)} has {t.ndim} dimensions")
    if not ts:
        return zeros(1, 0)
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = _C.promote_types(dt, t.dtype)
    cols = builtins.sum(t.shape[1] for t in ts)
    rows, left = [], 0
    for t in ts:
        r, c = t.shape
        rows.append(_C._pad(t.to(dt), [0, 0, left, cols - left - c], 0))
        left += c
    return _C.cat(rows, 0)


def cross(input, other, dim=None):
    """the 3-vector cross product along dim (default: the first dim of
    size 3, as torch.cross)"""
    if dim is None:
        sizes = [i for i, s in enumerate(input.shape) if s == 3]
        if not sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes[0]
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    a = [input.narrow(dim, i, 1) for i in range(3)]
    b = [other.narrow(dim, i, 1) for i in range(3)]
    return _C.cat([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                   a[0] * b[1] - a[1] * b[0]], dim)


def cartesian_prod(*tensors):
    from ._ops_shape import meshgrid
    for t in tensors:
        if isinstance(t, _C.Tensor) and t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing='ij')
    return _C.stack([g.reshape(-1) for g in grids], 1)


def _tri_indices(row, col, offset, lower, dtype):
    r, c = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return tensor(np.stack([r, c]).reshape(2, -1), dtype=dtype or _C.int64)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, True, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, False, dtype)


def _host(t, name):
    if t.is_symbolic:
        raise RuntimeError(f"{name}: the result depends on the values, which a tg.function "
                           f"trace cannot read (run it eagerly)")
    return t.detach().numpy()


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """the distinct values (sorted), with the inverse indices and counts
    when asked (eager only)"""
    a = _host(input, 'unique')
    if dim is None and not sorted:  # PyTorch's hash-set order
        from ._unique_order import unordered_unique
        vals, inv, cnt = unordered_unique(a.reshape(-1))
        inv = inv.reshape(a.shape)
    elif dim is None:
        # every NaN is distinct in PyTorch's unique (NaN != NaN)
        vals, inv, cnt = np.unique(a.reshape(-1), return_inverse=True, return_counts=True,
                                   equal_nan=False)
        inv = inv.reshape(a.shape)
    else:
        from ._ops_shape import _dim
        d = _dim(dim, a.ndim)
        zero_dims = [k for k in range(a.ndim) if a.shape[k] == 0]
        if len(zero_dims) > 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique "
                               "cannot be applied ")
        if zero_dims and zero_dims != [d]:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        # the slices in PyTorch's order: lexicographic over each slice of
        # transpose(0, dim), whose elements run in another order than
        # numpy's moveaxis for 3 or more dims
        t = np.swapaxes(a, 0, d)
        rows = t.reshape(t.shape[0], int(np.prod(t.shape[1:], dtype=np.int64)))
        _, first, inv, cnt = np.unique(rows, return_index=True, return_inverse=True,
                                       return_counts=True, axis=0)
        vals = np.take(a, first, axis=d)
        inv = inv.reshape(-1)
    out = [tensor(vals, dtype=input.dtype)]
    if return_inverse:
        out.append(tensor(inv, dtype=_C.int64))
    if return_counts:
        out.append(tensor(cnt, dtype=_C.int64))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input, weights=None, minlength=0):
    a = _host(input, 'bincount')
    if a.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if input.dtype.is_floating_point or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return tensor(np.bincount(a, minlength=minlength), dtype=_C.int64)
    w = _host(weights, 'bincount')
    r = np.bincount(a, weights=w, minlength=minlength)
    return tensor(r, dtype=weights.dtype if weights.dtype.is_floating_point else _C.float64)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """indices drawn with probabilities proportional to the rows of input
    (the tensorgraph generator's uniforms, inverse CDF on the host)"""
    from ._creation import rand
    p = _host(input, 'multinomial').astype(np.float64)
    squeeze = p.ndim == 1
    p = np.atleast_2d(p)
    if (p < 0).any() or not np.isfinite(p).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (p.sum(1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > p.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if not replacement and ((p > 0).sum(1) < num_samples).any():
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                           "enough non-negative category to sample)")
    out = np.zeros((p.shape[0], num_samples), dtype=np.int64)
    u = rand(p.shape[0], num_samples, generator=generator, dtype=_C.float64).numpy()
    for i in range(p.shape[0]):
        w = p[i].copy()
        for j in range(num_samples):
            idx = np.flatnonzero(w > 0)  # zero-probability categories are never drawn
            cdf = np.cumsum(w[idx])
            k = int(np.searchsorted(cdf, u[i, j] * cdf[-1], side='right'))
            out[i, j] = idx[builtins.min(k, len(idx) - 1)]
            if not replacement:
                w[out[i, j]] = 0
    r = tensor(out, dtype=_C.int64)
    return r[0] if squeeze else r


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    from .nn.functional_act import cosine_similarity as f
    return f(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    from .nn.functional_act import pairwise_distance as f
    return f(x1, x2, p, eps, keepdim)


def pixel_shuffle(input, upscale_factor):
    from .nn.functional_act import pixel_shuffle as f
    return f(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    from .nn.functional_act import pixel_unshuffle as f
    return f(input, downscale_factor)


def prelu(input, weight):
    from .nn.functional_act import prelu as f
    return f(input, weight)
