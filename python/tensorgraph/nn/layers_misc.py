"""torch.nn's modules over functional_misc: LPPool1d/2d, ChannelShuffle,
RReLU, MaxUnpool1d/2d, MultiMarginLoss, MultiLabelMarginLoss (PyTorch's
constructors and reprs)."""
from . import functional as F
from .loss import _Loss, _WeightedLoss
from .module import Module


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, x):
        return type(self)._fn(x, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self):
        return (f'norm_type={self.norm_type}, kernel_size={self.kernel_size}, '
                f'stride={self.stride}, ceil_mode={self.ceil_mode}')


class LPPool1d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool2d)


class ChannelShuffle(Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        return F.channel_shuffle(x, self.groups)

    def extra_repr(self):
        return f'groups={self.groups}'


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, x):
        return F.rrelu(x, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f'lower={self.lower}, upper={self.upper}' + (', inplace=True' if self.inplace
                                                            else '')


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _MaxUnpoolNd(Module):
    _fn, _n = None, 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()  # stored as tuples, as PyTorch's
        self.kernel_size, self.padding = _tuple(kernel_size, self._n), _tuple(padding, self._n)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._n)

    def forward(self, x, indices, output_size=None):
        return type(self)._fn(x, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self):
        return f'kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}'


class MaxUnpool1d(_MaxUnpoolNd):
    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    _fn, _n = staticmethod(F.max_unpool2d), 2


class MultiMarginLoss(_WeightedLoss):
    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction='mean'):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)
