"""Convolutions with PyTorch's padding arguments: padding='valid' | 'same'
as well as numbers. The C ops take symmetric numeric padding; 'same' with
an odd extent dilation * (k - 1) needs one more on the right, which an
explicit zero pad gives, as PyTorch does. Convolutions and pooling also
take one unbatched sample [C, *spatial], as PyTorch's do (`unbatched`)."""
import functools

from .. import _C
from ._padding import same_padding

__all__ = ['conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d',
           'conv_transpose3d']


def unbatched(fn, nd):
    """fn over [N, C, *spatial] (nd spatial dims) that also takes one sample
    [C, *spatial]: run as a batch of one, the batch dim taken off again
    (every result of a tuple: a pooling's values and indices)"""
    @functools.wraps(fn)
    def call(input, *args, **kwargs):
        if getattr(input, 'ndim', None) != nd + 1:
            return fn(input, *args, **kwargs)
        out = fn(input.unsqueeze(0), *args, **kwargs)
        if isinstance(out, tuple):
            return type(out)(*(o.squeeze(0) for o in out)) if hasattr(out, '_fields') else \
                tuple(o.squeeze(0) for o in out)
        return out.squeeze(0)
    return call


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _resolve(input, weight, stride, padding, dilation, n):
    """the numeric padding for the C op, padding the input first where
    'same' is asymmetric"""
    if not isinstance(padding, str):
        return input, padding
    if padding == 'valid':
        return input, 0
    if padding != 'same':
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in _ntuple(stride, n)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    pads = same_padding(tuple(weight.shape[2:]), _ntuple(dilation, n))
    if all(left == right for left, right in pads):
        return input, tuple(left for left, _ in pads)
    widths = [0, 0] * (input.ndim - n) + [v for pair in pads for v in pair]
    return _C._pad(input, widths, 0.0, 0), 0


@functools.partial(unbatched, nd=1)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    input, padding = _resolve(input, weight, stride, padding, dilation, 1)
    return _C.conv1d(input, weight, bias, stride, padding, dilation, groups)


@functools.partial(unbatched, nd=2)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    input, padding = _resolve(input, weight, stride, padding, dilation, 2)
    return _C.conv2d(input, weight, bias, stride, padding, dilation, groups)


@functools.partial(unbatched, nd=3)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    input, padding = _resolve(input, weight, stride, padding, dilation, 3)
    return _C.conv3d(input, weight, bias, stride, padding, dilation, groups)


conv_transpose1d = unbatched(_C.conv_transpose1d, 1)
conv_transpose2d = unbatched(_C.conv_transpose2d, 2)
conv_transpose3d = unbatched(_C.conv_transpose3d, 3)
