"""GroupNorm and InstanceNorm1d/2d/3d: PyTorch's constructors and defaults
over F.group_norm / F.instance_norm (batch statistics only)."""
from .._creation import zeros, ones
from . import functional as F
from .module import Module
from .parameter import Parameter


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        if affine:
            self.weight = Parameter(ones(num_channels, dtype=dtype))
            self.bias = Parameter(zeros(num_channels, dtype=dtype))
        else:
            self.register_parameter('weight', None)
            self.register_parameter('bias', None)

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f'{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}'


class _InstanceNorm(Module):
    _dims = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, dtype=None):
        super().__init__()
        if track_running_stats:
            raise NotImplementedError(f"{type(self).__name__}: track_running_stats=True is "
                                      f"not supported")
        self.num_features, self.eps, self.momentum, self.affine = (num_features, eps, momentum,
                                                                   affine)
        if affine:
            self.weight = Parameter(ones(num_features, dtype=dtype))
            self.bias = Parameter(zeros(num_features, dtype=dtype))
        else:
            self.register_parameter('weight', None)
            self.register_parameter('bias', None)

    def forward(self, x):
        if x.ndim == self._dims + 1:  # unbatched [C, ...]
            return F.instance_norm(x.unsqueeze(0), weight=self.weight, bias=self.bias,
                                   eps=self.eps).squeeze(0)
        if x.ndim != self._dims + 2:
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input "
                             f"(got {x.ndim}D input)")
        return F.instance_norm(x, weight=self.weight, bias=self.bias, eps=self.eps)

    def extra_repr(self):
        return (f'{self.num_features}, eps={self.eps}, momentum={self.momentum}, '
                f'affine={self.affine}, track_running_stats=False')


class InstanceNorm1d(_InstanceNorm):
    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    _dims = 2


class InstanceNorm3d(_InstanceNorm):
    _dims = 3
