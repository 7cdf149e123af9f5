"""More of torch.nn.functional, composed: the in-place activations
(relu_, elu_, leaky_relu_, selu_), bilinear, local_response_norm,
gumbel_softmax, alpha_dropout / feature_alpha_dropout,
adaptive_avg_pool3d, max_pool1d/2d/3d_with_indices, pdist, and avg_pool2d/3d
with divisor_override."""
import math

from .. import _C
from .._creation import arange, rand, tensor, zeros
from .._ops_stats import pdist
from .functional_act import _adaptive, _all_ones, _inplace, elu, leaky_relu

__all__ = ['relu_', 'elu_', 'leaky_relu_', 'selu_', 'bilinear', 'local_response_norm',
           'gumbel_softmax', 'alpha_dropout', 'feature_alpha_dropout', 'adaptive_avg_pool3d',
           'max_pool1d_with_indices', 'max_pool2d_with_indices', 'max_pool3d_with_indices',
           'max_pool1d', 'max_pool2d', 'max_pool3d',
           'pdist', 'avg_pool2d', 'avg_pool3d']


def relu_(input):
    return input.relu_()


def elu_(input, alpha=1.0, scale=1.0, input_scale=1.0):
    """PyTorch's elu_ (torch._C._nn.elu_) also takes selu's scales:
    scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1)"""
    if scale == 1 and input_scale == 1:
        return elu(input, alpha, True)
    out = _C.where(input > 0, input * scale, (input * input_scale).expm1() * (alpha * scale))
    return input.copy_(out)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def selu_(input):
    return _inplace(input, _C.selu, True)


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij x1[..., i] weight[o, i, j] x2[..., j] + bias[o]"""
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, got {weight.ndim}D")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input sizes {input1.shape[-1]} and "
                           f"{input2.shape[-1]} do not match weight {list(weight.shape)}")
    lead = input1.shape[:-1]
    a = input1.reshape(-1, input1.shape[-1])
    b = input2.reshape(-1, input2.shape[-1])
    o, i, j = weight.shape
    # (a W_o) for every o at once: [N, i] @ [i, o*j] -> [N, o, j], then . b
    aw = _C.matmul(a, weight.permute(1, 0, 2).reshape(i, o * j)).reshape(-1, o, j)
    y = _C.sum(aw * b.unsqueeze(1), 2)
    if bias is not None:
        y = y + bias
    return y.reshape(*lead, o)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta,
    the window centred as PyTorch's (size // 2 before, (size - 1) // 2 after,
    zeros beyond the edges)"""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         "dimensions)")
    if input.numel() == 0:
        return input.clone()
    c = input.shape[1]
    sq = input * input
    before, after = size // 2, (size - 1) // 2
    shape = list(sq.shape)
    parts = []
    if before:
        shape[1] = before
        parts.append(zeros(shape, dtype=sq.dtype))
    parts.append(sq)
    if after:
        shape[1] = after
        parts.append(zeros(shape, dtype=sq.dtype))
    padded = _C.cat(parts, 1) if len(parts) > 1 else sq
    total = padded.narrow(1, 0, c)
    for s in range(1, size):
        total = total + padded.narrow(1, s, c)
    div = _C.pow(total * (alpha / size) + k, beta)
    return input / div


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel noise) / tau) along dim; hard=True gives
    the one-hot of its argmax with the soft sample's gradient"""
    with _NoGrad():
        u = rand(tuple(logits.shape), dtype=logits.dtype)
        # -log(Exponential(1)) noise; u == 0 would give an infinite sample
        gumbels = -_C.log(-_C.log1p(-u))
    y = _C.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    from .._ops_shape import scatter
    idx = _C.argmax(y, dim, True)
    y_hard = scatter(zeros(tuple(logits.shape), dtype=logits.dtype), dim, idx, 1.0)
    with _NoGrad():
        y0 = _C.softmax((logits + gumbels) / tau, dim)
    return y_hard - y0 + y  # y_hard's values, y's gradient


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ALPHA_PRIME = _SELU_ALPHA * _SELU_SCALE  # SELU's negative saturation value


def _alpha_dropout(input, p, training, inplace, feature, name):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return _inplace(input, lambda x: x * 0, inplace)
    if feature and input.ndim < 2:
        raise RuntimeError(f"{name}: Feature dropout requires at least 2 dimensions in the "
                           "input")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    keep = (rand(shape, dtype=input.dtype) >= p).to(input.dtype)
    # dropped units go to SELU's saturation -alpha'; a and b restore
    # the mean and variance of a standard normal input (PyTorch's formula)
    a = 1.0 / math.sqrt((_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
    noise = keep * a
    b = (keep - 1) * (_ALPHA_PRIME * a) + _ALPHA_PRIME * a * p
    return _inplace(input, lambda x: x * noise + b, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, False, 'alpha_dropout')


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, True, 'feature_alpha_dropout')


def adaptive_avg_pool3d(input, output_size):
    if _all_ones(input, output_size, 3):  # PyTorch's shortcut, as adaptive_avg_pool2d's
        return _C.mean(input, (-1, -2, -3), True)
    return _adaptive(input, output_size, 3, lambda x, d, k=False: _C.mean(x, d, k),
                     'adaptive_avg_pool3d')


def _pooled_length(length, k, s, p, d, ceil_mode):
    """PyTorch's output length of a max pooling dim: with ceil_mode the
    last window may start past the end of the input plus its left padding
    only if it still starts inside it"""
    span = length + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= length + p:
        out -= 1
    return out


def _ceil_extra(length, k, s, p, d, out):
    """the padding past the right edge that ceil_mode's last window reads
    (beyond p): the windows' reach minus the padded length, at least 0"""
    return max(0, (out - 1) * s + d * (k - 1) + 1 - (length + 2 * p))


def _empty_window_index(dims, k, s, p, d, out):
    """PyTorch's index for each window (flat, [prod(out)]) as it gives it
    for a window over the padding alone, whose value is -inf: the flat
    position of the window's first tap at or past the input's start in
    every dim, whatever lies there (past the end, in PyTorch too)"""
    import numpy as np
    grids = np.meshgrid(*[np.arange(o) for o in out], indexing='ij')
    flat = np.zeros(tuple(out), dtype=np.int64)
    for g, size, kk, ss, pp, dd in zip(grids, dims, k, s, p, d):
        start = g * ss - pp
        start = np.where(start < 0, start + dd * ((-start + dd - 1) // dd), start)
        flat = flat * size + start
    return tensor(flat.reshape(-1))


def _gather_windows(x, pos, dims, k, s, p, d, out):
    """the values and int64 indices of x [N, C, prod(dims)] at the
    windows' chosen positions pos [N, C, prod(out)] (float64, -1 where a
    window covers the padding alone: -inf and PyTorch's index there).
    Only a dilated window can: with padding at most half the kernel every
    undilated one, ceil_mode's last included, holds an input element.
    The gradient is tied to x (grad_tie), as PyTorch's max_pool2d_with_
    indices_backward(grad, self, indices) is an op of the input"""
    x = _C._grad_tie(x)
    if all(dd == 1 for dd in d):
        idx = pos.to(_C.int64)
        return _C.gather(x, 2, idx), idx
    empty = pos < 0
    idx = _C.where(empty, zeros((), dtype=pos.dtype), pos).to(_C.int64)
    values = _C.gather(x, 2, idx)
    values = _C.where(empty, _C.add(zeros((), dtype=x.dtype), -math.inf), values)
    idx = _C.where(empty, _empty_window_index(dims, k, s, p, d, out), idx)
    return values, idx


def _pool_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, nd, name):
    """max pooling and the flat position (within each [..., spatial]
    plane) of every window's maximum, the first one on ties as PyTorch;
    the values are gathered at those positions, so the gradient goes to
    them alone. Windows are enumerated with unfold on the position grid."""
    from .functional_act import unfold
    tup = (lambda v: (v,) * nd if isinstance(v, int) else tuple(v))
    k, p, dl = tup(kernel_size), tup(padding), tup(dilation)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else tup(stride)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D input, got {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}\" not implemented for '{input.dtype}'")
    for kk, pp, dd in zip(k, p, dl):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"{name}: pad should be at most half of effective kernel size, "
                               f"but got pad={pp}, kernel_size={kk} and dilation={dd}")
    batched = input.ndim == nd + 2
    x = input if batched else input.unsqueeze(0)
    if nd == 1:
        x, k, s, p, dl = x.unsqueeze(2), (1,) + k, (1,) + s, (0,) + p, (1,) + dl
    n, c, h, w = x.shape
    seen = [n, c, h, w] if batched else [c, h, w]  # PyTorch's words: 1-D as 2-D
    if 0 in seen[1:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{seen}")
    out_h = _pooled_length(h, k[0], s[0], p[0], dl[0], ceil_mode)
    out_w = _pooled_length(w, k[1], s[1], p[1], dl[1], ceil_mode)
    if n == 0:  # an empty batch: empty values and indices
        shape = (0, c) + ((out_w,) if nd == 1 else (out_h, out_w))
        return (x.reshape(-1).narrow(0, 0, 0).reshape(shape).clone(),
                zeros(*shape, dtype=_C.int64))
    planes = x.reshape(n * c, 1, h, w)  # only compared: no gradient flows through
    pads = [0, 0, 0, 0, p[0], p[0] + _ceil_extra(h, k[0], s[0], p[0], dl[0], out_h),
            p[1], p[1] + _ceil_extra(w, k[1], s[1], p[1], dl[1], out_w)]
    # the comparison key: padding is -inf and loses to every element (a
    # -inf element becomes the lowest finite value, a NaN +inf: PyTorch's
    # NaN is the maximum)
    low = -math.inf
    key = _C.where(_C.isnan(planes), _C.add(zeros((), dtype=planes.dtype), math.inf),
                   _C.where(planes == low, _C.add(zeros((), dtype=planes.dtype),
                                                  -_finfo_max(planes.dtype)), planes))
    padded = _C._pad(key, pads, low, 0)
    pos = arange(h * w, dtype=_C.float64).reshape(1, 1, h, w)
    pos = _C._pad(pos, pads, -1.0, 0)
    cols = unfold(padded, k, dl, 0, s)                     # [NC, K, L]
    cols_pos = unfold(pos, k, dl, 0, s)                    # [1, K, L]
    best = _C.argmax(cols, 1, True)  # the first maximum of each window, [NC, 1, L]
    pos_best = _C.gather(cols_pos.expand(n * c, cols_pos.shape[1], cols_pos.shape[2]), 1, best)
    values, idx = _gather_windows(x.reshape(n, c, h * w), pos_best.reshape(n, c, out_h * out_w),
                                  (h, w), k, s, p, dl, (out_h, out_w))
    values, idx = values.reshape(n, c, out_h, out_w), idx.reshape(n, c, out_h, out_w)
    if nd == 1:
        values, idx = values.squeeze(2), idx.squeeze(2)
    if not batched:
        values, idx = values.squeeze(0), idx.squeeze(0)
    return values, idx


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _pool_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, 1,
                              'max_pool1d_with_indices')


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _pool_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, 2,
                              'max_pool2d_with_indices')


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """3-D max pooling and the flat position (within each [D, H, W]
    volume) of every window's first maximum, as PyTorch's: each of the
    window's kd x kh x kw offsets is a strided slice of the padded volume
    (positions alongside), stacked so that argmax over them picks the
    window's maximum; the values are gathered at those positions, so the
    gradient reaches them alone"""
    name = 'max_pool3d_with_indices'
    tup = (lambda v: (v,) * 3 if isinstance(v, int) else tuple(v))
    k, p, dl = tup(kernel_size), tup(padding), tup(dilation)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else tup(stride)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{name}: Expected 4D or 5D input, got {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}\" not implemented for '{input.dtype}'")
    if any(v <= 0 for v in k + s + dl):
        raise RuntimeError(f"{name}: kernel_size, stride and dilation must be greater than zero")
    for kk, pp, dd in zip(k, p, dl):
        if pp < 0 or pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"{name}: pad should be at most half of effective kernel size, "
                               f"but got pad={pp}, kernel_size={kk} and dilation={dd}")
    batched = input.ndim == 5
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1]
    dims = tuple(x.shape[2:])
    out = tuple(_pooled_length(d, kk, ss, pp, dd, ceil_mode) for d, pp, dd, kk, ss in
                zip(dims, p, dl, k, s))
    if x.numel() == 0 or any(o <= 0 for o in out):
        raise RuntimeError(f"{name}: input {tuple(input.shape)} too small or empty for output "
                           f"size {out}")
    vol = x.reshape(n * c, *dims)  # only compared: no gradient flows through
    low = -math.inf
    key = _C.where(_C.isnan(vol), _C.add(zeros((), dtype=vol.dtype), math.inf),
                   _C.where(vol == low, _C.add(zeros((), dtype=vol.dtype),
                                               -_finfo_max(vol.dtype)), vol))
    pads = [0, 0]
    for i in range(3):
        pads += [p[i], p[i] + _ceil_extra(dims[i], k[i], s[i], p[i], dl[i], out[i])]
    padded = _C._pad(key, pads, low, 0)
    pos = _C._pad(arange(dims[0] * dims[1] * dims[2], dtype=_C.float64).reshape(1, *dims),
                  pads, -1.0, 0)
    keys, poss = [], []
    for a in range(k[0]):
        for b in range(k[1]):
            for e in range(k[2]):
                at = (a * dl[0], b * dl[1], e * dl[2])
                sl = tuple(slice(o, o + ss * (m - 1) + 1, ss) for o, ss, m in zip(at, s, out))
                keys.append(padded[(slice(None),) + sl])
                poss.append(pos[(slice(None),) + sl])
    best = _C.argmax(_C.stack(keys, 1), 1, True)           # [NC, 1, od, oh, ow]
    stacked_pos = _C.stack(poss, 1)                         # [1, K, od, oh, ow]
    pos_best = _C.gather(stacked_pos.expand(n * c, *stacked_pos.shape[1:]), 1, best)
    values, idx = _gather_windows(x.reshape(n, c, -1), pos_best.reshape(n, c, -1), dims, k, s, p,
                                  dl, out)
    values, idx = values.reshape(n, c, *out), idx.reshape(n, c, *out)
    if not batched:
        values, idx = values.squeeze(0), idx.squeeze(0)
    return values, idx


def _finfo_max(dt):
    return 3.4028234663852886e38 if dt == _C.float32 else 1.7976931348623157e308


def _pool(c_op, composed):
    """the C pool, or the composed one where the C op has no answer:
    return_indices=True (a (values, indices) pair) or dilation != 1"""
    def f(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
          return_indices=False):
        dilated = any(d != 1 for d in ((dilation,) if isinstance(dilation, int) else dilation))
        if not return_indices and not dilated:
            return c_op(input, kernel_size, stride, padding, dilation, ceil_mode, False)
        values, indices = composed(input, kernel_size, stride, padding, dilation, ceil_mode)
        return (values, indices) if return_indices else values
    f.__name__ = c_op.__name__
    return f


max_pool1d = _pool(_C.max_pool1d, max_pool1d_with_indices)
max_pool2d = _pool(_C.max_pool2d, max_pool2d_with_indices)
max_pool3d = _pool(_C.max_pool3d, max_pool3d_with_indices)


class _NoGrad:
    def __enter__(self):
        self._prev = _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


def _tuple(v, nd):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd


def _window_sizes(length, k, s, p, ceil_mode):
    """PyTorch's output length of a pooling dim and each window's size
    counting the padding (clipped at the padded end, as its average
    divides by)"""
    out = _pooled_length(length, k, s, p, 1, ceil_mode)
    return [min(o * s - p + k, length + p) - (o * s - p) for o in range(out)]


def _avg_pool(fn, nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    if divisor_override is None:
        return fn(input, kernel_size, stride, padding, ceil_mode, count_include_pad)
    if divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    # the window sums: the average counting the padding, times each window's size
    avg = fn(input, kernel_size, stride, padding, ceil_mode, True)
    k, p = _tuple(kernel_size, nd), _tuple(padding, nd)
    s = k if stride is None or stride == [] else _tuple(stride, nd)
    factor = None
    for d in range(nd):
        w = _window_sizes(input.shape[input.ndim - nd + d], k[d], s[d], p[d], ceil_mode)
        col = tensor([float(v) for v in w], dtype=input.dtype).reshape(
            *([len(w)] + [1] * (nd - 1 - d)))
        factor = col if factor is None else factor * col
    return avg * (factor / float(divisor_override))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """the average pooling op, or with divisor_override each window's sum
    over that divisor (padding counts as zeros), as PyTorch"""
    return _avg_pool(_C.avg_pool2d, 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool(_C.avg_pool3d, 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)
