"""TripletMarginWithDistanceLoss, AdaptiveMaxPool3d, MaxUnpool3d and
CrossMapLRN2d, with their functional forms (triplet_margin_with_distance_
loss, adaptive_max_pool3d, max_unpool3d), composed from tensor ops; and
F.conv_tbc, F.rrelu_, F.native_channel_shuffle."""
from .. import _C
from ._ctor_signature import REQUIRED
from .activation import PairwiseDistance, _act
from .functional_act import _adaptive, pairwise_distance
from .functional_loss import _reduce
from .functional_misc import _unpool
from .layers_misc import _MaxUnpoolNd
from .loss import _Loss
from .module import Module

__all__ = ['AdaptiveMaxPool3d', 'CrossMapLRN2d', 'MaxUnpool3d', 'TripletMarginWithDistanceLoss',
           'adaptive_max_pool3d', 'conv_tbc', 'max_unpool3d', 'native_channel_shuffle',
           'rrelu_', 'triplet_margin_with_distance_loss']


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction='mean'):
    """max(d(a, p) - d(a, n) + margin, 0) with any distance (pairwise
    distance by default); swap: d(a, n) is min(d(a, n), d(p, n))"""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater "
                         f"than 0, got {margin} instead")
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           "same number of dimensions, but got: anchor "
                           f"{dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _C.minimum(d_neg, dist(positive, negative))
    loss = (d_pos - d_neg + margin).clamp(min=0)
    return _reduce(loss, reduction)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction='mean'):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """the maximum over each of PyTorch's adaptive windows (5-D or an
    unbatched 4-D input); with return_indices also the flat positions"""
    if return_indices:
        from .functional_act import adaptive_max_pool3d_with_indices
        return adaptive_max_pool3d_with_indices(input, output_size)
    return _adaptive(input, output_size, 3, lambda x, d, k=False: _C.amax(x, d, k),
                     'adaptive_max_pool3d')


AdaptiveMaxPool3d = _act('AdaptiveMaxPool3d', adaptive_max_pool3d, ('output_size', REQUIRED),
                         ('return_indices', False), repr=('output_size',))


def _triple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * 3


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool3d's values put back at their indices in zero volumes of
    the pooled-from size (or output_size)"""
    k = _triple(kernel_size)
    s = k if stride is None else _triple(stride)
    p = _triple(padding)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"max_unpool3d: Input to max_unpooling3d should be a 4d or 5d "
                           f"Tensor, but got a tensor with {input.ndim} dimensions.")
    if output_size is not None:
        size = list(output_size)[-3:]
    else:
        size = [(input.shape[-3 + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(3)]
    return _unpool(input, indices, size)


class MaxUnpool3d(_MaxUnpoolNd):
    _fn, _n = staticmethod(max_unpool3d), 3


class CrossMapLRN2d(Module):
    """PyTorch's legacy cross-channel LRN for 4-D input: x / (k + alpha /
    size * S)^beta, S the sum of squares over channels c - h + 1 .. c + h
    - 1 (h = (size - 1) // 2 + 1), plus channel 0's once the window has
    left it, as PyTorch's running-sum implementation computes it"""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.ndim != 4:
            raise AssertionError("CrossMapLRN2d: Expected input to be 4D, got "
                                 f"{input.ndim}D instead.")
        channels = input.shape[1]
        sq = input * input
        half = int((self.size - 1) / 2 + 1)
        sums = []
        for c in range(channels):
            lo, hi = max(c - half + 1, 0), min(c + half - 1, channels - 1)
            s = sq.narrow(1, lo, hi - lo + 1).sum(1, keepdim=True)
            if c - half + 1 >= 1:
                s = s + sq.narrow(1, 0, 1)
            sums.append(s)
        scale = _C.cat(sums, 1) * (self.alpha / self.size) + self.k
        return input * scale ** (-self.beta)

    def extra_repr(self):
        return f'{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}'


def conv_tbc(input, weight, bias, pad=0):
    """a 1-D convolution over time-major input [time, batch, in] with a
    weight [width, in, out]: conv1d with the dims moved"""
    from .functional_conv import conv1d
    if input.ndim != 3 or weight.ndim != 3 or bias.ndim != 1:
        raise RuntimeError("conv_tbc: Input must have 3 dims: time, batch, in_channel; weight "
                           "3 dims: kernel_width, in_channels, out_channels; bias 1 dim")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("conv_tbc: Input dim 2 (input channels) is not == dim 1 in the "
                           "weight tensor")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """rrelu in place"""
    from .functional_misc import rrelu
    return rrelu(input, lower, upper, training, inplace=True)


def native_channel_shuffle(input, groups):
    """channel_shuffle (PyTorch's native form, the same result)"""
    from .functional_misc import channel_shuffle
    return channel_shuffle(input, groups)
