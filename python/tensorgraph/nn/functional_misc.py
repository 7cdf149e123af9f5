"""More of torch.nn.functional, composed of ops (autograd gives the
gradients): power-average pooling (lp_pool1d/2d), channel_shuffle, rrelu,
max_unpool1d/2d (the inverse of max pooling with indices, one scatter),
multi_margin_loss and multilabel_margin_loss."""
from .. import _C
from .._creation import arange, rand, zeros
from .functional_loss import _reduce, legacy_reduction

__all__ = ['lp_pool1d', 'lp_pool2d', 'channel_shuffle', 'rrelu', 'max_unpool1d', 'max_unpool2d',
           'multi_margin_loss', 'multilabel_margin_loss']


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _lp(avg, x, norm_type, window):
    """(window * the average of x^p)^(1/p), negative averages taken as 0"""
    from .. import nn
    out = avg(x.pow(norm_type))
    return (out.sign() * nn.functional.relu(out.abs())).mul(window).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    from . import functional as F
    kh, kw = _pair(kernel_size)
    return _lp(lambda t: F.avg_pool2d(t, kernel_size, stride, 0, ceil_mode), input,
               float(norm_type), kh * kw)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    from . import functional as F
    return _lp(lambda t: F.avg_pool1d(t, kernel_size, stride, 0, ceil_mode), input,
               float(norm_type), kernel_size)


def channel_shuffle(input, groups):
    """[N, C, ...]: the channels as groups x C/groups, transposed"""
    n, c = input.shape[0], input.shape[1]
    if groups <= 0 or c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    rest = list(input.shape[2:])
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """x where x >= 0, else x times a slope: (lower + upper) / 2 in eval, drawn
    from U(lower, upper) per element in training"""
    if not training:
        slope = (lower + upper) / 2
        y = _C.where(input >= 0, input, input * slope)
    else:
        a = rand(*input.shape, dtype=input.dtype) * (upper - lower) + lower
        y = _C.where(input >= 0, input, input * a)
    if inplace:
        return input.copy_(y)
    return y


def _unpool(input, indices, spatial_out):
    """values scattered at their flat positions in zero planes of spatial_out"""
    n_lead = input.ndim - len(spatial_out)
    lead = list(input.shape[:n_lead])
    size = 1
    for s in spatial_out:
        size *= s
    flat = input.reshape(*lead, -1)
    idx = indices.reshape(*lead, -1).long()
    if idx.numel() and (int(idx.min().item()) < 0 or int(idx.max().item()) >= size):
        raise RuntimeError(f"Found an invalid max index: {int(idx.max().item())} (output "
                           f"volumes are of size {'x'.join(str(s) for s in spatial_out)}")
    out = zeros(*lead, size, dtype=input.dtype)
    return out.scatter(flat.ndim - 1, idx, flat).reshape(*lead, *spatial_out)


def _unpool_size(input, kernel_size, stride, padding, output_size, nd):
    k = _pair(kernel_size) if nd == 2 else (kernel_size if isinstance(kernel_size, int)
                                            else kernel_size[0],)
    s = k if stride is None else (_pair(stride) if nd == 2 else
                                  (stride if isinstance(stride, int) else stride[0],))
    p = _pair(padding) if nd == 2 else (padding if isinstance(padding, int) else padding[0],)
    if output_size is not None:
        return list(output_size)[-nd:]
    return [(input.shape[-nd + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd)]


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _unpool(input, indices, _unpool_size(input, kernel_size, stride, padding,
                                                output_size, 2))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _unpool(input, indices, _unpool_size(input, kernel_size, stride, padding,
                                                output_size, 1))


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction='mean'):
    """sum over classes i != y of max(0, margin - x[y] + x[i])^p (times
    weight[y]), over the number of classes"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input.unsqueeze(0) if input.ndim == 1 else input
    y = target.reshape(-1, 1).long()
    c = x.shape[1]
    xy = x.gather(1, y)
    m = _C.relu(xy.neg() + x + margin)  # z > 0, as PyTorch's kernel
    if p == 2:
        m = m * m
    if weight is not None:
        m = m * weight.gather(0, y.reshape(-1)).reshape(-1, 1)
    m = _C.where(arange(c).reshape(1, c) == y, zeros(1, dtype=m.dtype), m)
    loss = m.sum(1) / c
    if input.ndim == 1:
        loss = loss.reshape(())
    return _C._set_grad_fn_name(_reduce(loss, reduction), 'MultiMarginLossBackward0')


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    """target lists each sample's classes, ended by the first -1: the sum
    over target classes j and other classes i of max(0, 1 - (x[j] - x[i])),
    over the number of classes"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    # one sample: [C], or a 0-d input as one class (PyTorch's)
    x = input.reshape(1, -1) if input.ndim <= 1 else input
    t = (target.reshape(1, -1) if target.ndim <= 1 else target).long()
    n, c = x.shape
    valid = (t != -1).long().cumprod(1) > 0                             # [N, C] before the -1
    cls = arange(c).reshape(1, 1, c)
    hit = (t.unsqueeze(2) == cls) & valid.unsqueeze(2)                 # [N, C(j), C(class)]
    is_target = hit.any(1)                                             # [N, C]
    xj = x.gather(1, t.clamp(min=0))                                   # [N, C(j)]
    pair = _C.relu(1 - (xj.unsqueeze(2) - x.unsqueeze(1)))             # [N, j, i]; z > 0
    keep = valid.unsqueeze(2) & (~is_target).unsqueeze(1)
    loss = _C.where(keep, pair, zeros(1, dtype=pair.dtype)).sum((1, 2)) / c
    if input.ndim <= 1:
        loss = loss.reshape(())
    return _C._set_grad_fn_name(_reduce(loss, reduction), 'MultilabelMarginLossBackward0')
