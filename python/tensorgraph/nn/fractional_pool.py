"""Fractional max pooling (Graham, 2014), PyTorch's F.fractional_max_pool2d/3d
and nn.FractionalMaxPool2d/3d: windows of kernel_size whose starts move by
pseudo-random steps of 1 or 2 so that they span the input in output_size
steps. Each plane (image, channel) draws its own offsets u in [0, 1), one
per spatial dim, from _random_samples [N, C, dims] (drawn from the default
generator when not given); along a dim of input length n, window i of m
starts at int((i + u) a) - int(u a), a = (n - k) / (m - 1), the last at
n - k. PyTorch reads the samples of a 2-D pool in the order (W, H) and of a
3-D pool in the order (T, H, W); so does this.

The windows' start positions are a host table (from the samples' values);
the input's window elements are gathered, the first maximum of each window
taken (a NaN counting as the maximum), and the value gathered at its flat
position in the plane: gradients go to that element alone, as PyTorch's."""
import math

import numpy as np

from .. import _C
from .module import Module

__all__ = ['fractional_max_pool2d', 'fractional_max_pool3d',
           'fractional_max_pool2d_with_indices', 'fractional_max_pool3d_with_indices',
           'FractionalMaxPool2d', 'FractionalMaxPool3d']

_DIM_NAMES = {2: ('height', 'width'), 3: ('time', 'height', 'width')}
# which column of the samples drives each spatial dim (PyTorch's kernels)
_SAMPLE_COLUMN = {2: (1, 0), 3: (0, 1, 2)}


def _scalar_name(dtype):
    """a dtype as PyTorch's messages name it (c10's ScalarType)"""
    short = str(dtype).split('.')[-1]
    return {'float32': 'Float', 'float64': 'Double', 'int32': 'Int', 'int64': 'Long',
            'uint8': 'Byte', 'bool': 'Bool'}.get(short, short)


def _ntuple(v, nd, what, name):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(v) * nd
        if len(v) != nd:
            raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of "
                               f"{'Ints' if nd == 2 else 'three Ints'}")
        return tuple(v)
    return (v,) * nd


def _starts(u, n, m, k):
    """window starts along one dim: PyTorch's interval sequence"""
    seq = np.zeros(m, dtype=np.int64)
    if m > 1:
        alpha = (n - k) / (m - 1)
        i = np.arange(m - 1)
        seq[:-1] = np.trunc((i + u) * alpha).astype(np.int64) - int(u * alpha)
    if m > 0:
        seq[-1] = n - k
    return seq


def _check_sizes(sizes, out, k, nd, name):
    for d, (n, m, kk) in enumerate(zip(sizes, out, k)):
        # PyTorch's 3-D check is strict (m + k - 1 < n), the 2-D one not
        too_large = m + kk - 1 >= n if nd == 3 else m + kk - 1 > n
        if too_large:
            dim = _DIM_NAMES[nd][d]
            where = f"{name}_out()" if nd == 3 else f"{name}()"
            raise RuntimeError(f"{where}: pool {dim} {kk} too large relative to input "
                               f"{dim} {n}")


def _flat_positions(samples, sizes, out, k, nd, N, C):
    """[N, C, prod(out) * prod(k)] int64: each window's elements' flat
    positions in its plane, windows in output order, elements in C order"""
    cols = _SAMPLE_COLUMN[nd]
    strides = [int(np.prod(sizes[d + 1:])) for d in range(nd)]
    table = np.zeros((N, C) + tuple(out) + tuple(k), dtype=np.int64)
    for d in range(nd):
        u = samples[:, :, cols[d]]
        starts = np.stack([[_starts(float(u[n, c]), sizes[d], out[d], k[d]) for c in range(C)]
                           for n in range(N)]) if N * C else np.zeros((N, C, out[d]), np.int64)
        pos = starts[..., :, None] + np.arange(k[d])  # [N, C, out_d, k_d]
        shape = [N, C] + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = out[d], k[d]
        table += pos.reshape(shape) * strides[d]
    return table.reshape(N, C, -1)


def _fractional(input, kernel_size, output_size, output_ratio, _random_samples, nd):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"{name}_out_frame" not implemented for '
                           f"'{_scalar_name(input.dtype)}'")
    k = _ntuple(kernel_size, nd, 'kernel_size', name)
    sizes = list(input.shape[-nd:])
    if output_size is None:
        ratio = _ntuple(output_ratio, nd, 'output_ratio', name)
        output_size = [int(s * r) for s, r in zip(sizes, ratio)]
    out = [int(o) for o in _ntuple(output_size, nd, 'output_size', name)]
    batched = input.ndim == nd + 2
    x = input if batched else input.unsqueeze(0)
    N, C = x.shape[0], x.shape[1]
    if _random_samples is None:
        from .._creation import rand
        _random_samples = rand(N, C, nd, dtype=input.dtype)
    elif _random_samples.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input.dtype)} but found "
                           f"{_scalar_name(_random_samples.dtype)}")
    samples = np.asarray(_random_samples.detach().numpy(), dtype=np.float64)
    if samples.ndim != 3 or samples.shape[0] < N or samples.shape[1] < C or \
            samples.shape[2] < nd:
        raise RuntimeError(f"{name}: _random_samples must have shape at least "
                           f"[{N}, {C}, {nd}], got {list(samples.shape)}")
    if any(o < 0 for o in out) or any(kk <= 0 for kk in k):
        raise RuntimeError(f"{name}: kernel_size must be greater than zero and output_size "
                           f"non-negative, got kernel_size {list(k)}, output_size {out}")
    _check_sizes(sizes, out, k, nd, name)
    if x.numel() == 0 or 0 in out:
        from .._creation import zeros
        y = zeros(N, C, *out, dtype=input.dtype) + x.sum() * 0
        idx = zeros(N, C, *out, dtype=_C.int64)
    else:
        from .._creation import tensor
        table = tensor(_flat_positions(samples, sizes, out, k, nd, N, C))
        window = math.prod(k)
        planes = x.reshape(N, C, -1)
        values = planes.gather(2, table).reshape(N, C, -1, window)
        pick = _first_max(values.detach())
        flat = table.reshape(N, C, -1, window).gather(3, pick.unsqueeze(3)).squeeze(3)
        # PyTorch's backward is an op of the input: the gradient tied to it
        y = _C._grad_tie(planes).gather(2, flat).reshape(N, C, *out)
        idx = flat.reshape(N, C, *out)
    if not batched:
        y, idx = y.squeeze(0), idx.squeeze(0)
    return y, idx


def _first_max(values):
    """the position of each window's first maximum (last dim), a NaN being
    the maximum (its last one, as PyTorch's loop keeps replacing on NaN)"""
    nan = values.isnan()
    any_nan = nan.any(-1)
    w = values.shape[-1]
    from .._creation import arange
    last_nan = (nan.to(_C.int64) * (arange(w) + 1)).argmax(-1)
    return _C.where(any_nan, last_nan, values.argmax(-1))


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    y, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return (y, idx) if return_indices else y


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    y, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return (y, idx) if return_indices else y


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        nd, cls = self._nd, type(self).__name__
        self.kernel_size = _ntuple(kernel_size, nd, 'kernel_size', cls)
        self.return_indices = return_indices
        self.register_buffer('_random_samples', _random_samples)
        self.output_size = _ntuple(output_size, nd, 'output_size', cls) \
            if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, nd, 'output_ratio', cls) \
            if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{cls} requires specifying either an output size, or a "
                             f"pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        f = fractional_max_pool2d if self._nd == 2 else fractional_max_pool3d
        return f(input, self.kernel_size, self.output_size, self.output_ratio,
                 self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _nd = 3
