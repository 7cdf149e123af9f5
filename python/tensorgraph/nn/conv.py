"""Convolution and pooling modules beyond the 2-D ones of layers.py:
PyTorch's ConvTranspose2d, Conv1d, Conv3d and the 1-D and 3-D pools,
each a thin Module over one functional op, with PyTorch's constructors,
defaults and initialisation."""
import math

from .. import _C
from .._creation import zeros
from . import init
from .module import Module
from .parameter import Parameter


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    """the parameters and PyTorch's initialisation; the weight is [out,
    in/groups, *k], or [in, out/groups, *k] when transposed"""

    def __init__(self, n, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode, dtype, transposed, output_padding=0):
        super().__init__()
        name = type(self).__name__
        if padding_mode != 'zeros' or isinstance(padding, str):
            raise NotImplementedError(f"{name}: only numeric zero padding is supported")
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _ntuple(kernel_size, n), _ntuple(stride, n)
        self.padding, self.dilation = _ntuple(padding, n), _ntuple(dilation, n)
        self.output_padding = _ntuple(output_padding, n)
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(zeros(*shape, dtype=dtype))
        if bias:
            self.bias = Parameter(zeros(out_channels, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = (f'{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, '
             f'stride={self.stride}')
        if any(self.padding):
            s += f', padding={self.padding}'
        if any(self.output_padding):
            s += f', output_padding={self.output_padding}'
        if any(d != 1 for d in self.dilation):
            s += f', dilation={self.dilation}'
        if self.groups != 1:
            s += f', groups={self.groups}'
        return s + ('' if self.bias is not None else ', bias=False')


def _output_padding(m, x, output_size, n):
    """PyTorch's output_size for transposed convolutions: the output_padding
    that gives it (each in [0, max(stride, dilation)))"""
    if output_size is None:
        return m.output_padding
    size = list(output_size)[-n:]
    if len(size) != n:
        raise ValueError(f"output_size must have {n} or {n + 2} elements")
    pads = []
    for i in range(n):
        least = ((x.shape[2 + i] - 1) * m.stride[i] - 2 * m.padding[i] +
                 m.dilation[i] * (m.kernel_size[i] - 1) + 1)
        extra = size[i] - least
        if not 0 <= extra < max(m.stride[i], m.dilation[i]):
            raise ValueError(f"requested an output size of {tuple(size)}, but valid sizes "
                             f"range from {least} to "
                             f"{least + max(m.stride[i], m.dilation[i]) - 1} in dim {i}")
        pads.append(extra)
    return tuple(pads)


class ConvTranspose2d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros',
                 dtype=None):
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype, True, output_padding)

    def forward(self, x, output_size=None):
        return _C.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding,
                                   _output_padding(self, x, output_size, 2), self.groups,
                                   self.dilation)


class Conv1d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode='zeros', dtype=None):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype, False)

    def forward(self, x):
        return _C.conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                         self.groups)


class ConvTranspose1d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros',
                 dtype=None):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype, True, output_padding)

    def forward(self, x, output_size=None):
        return _C.conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding,
                                   _output_padding(self, x, output_size, 1), self.groups,
                                   self.dilation)


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, x):
        return type(self)._fn(x, self.kernel_size, self.stride, self.padding, self.dilation,
                              self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return (f'kernel_size={self.kernel_size}, stride={self.stride or self.kernel_size}, '
                f'padding={self.padding}, dilation={self.dilation}, '
                f'ceil_mode={self.ceil_mode}')


class _AvgPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, x):
        return type(self)._fn(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad)

    def extra_repr(self):
        return (f'kernel_size={self.kernel_size}, stride={self.stride or self.kernel_size}, '
                f'padding={self.padding}')


class MaxPool1d(_MaxPoolNd):
    _fn = staticmethod(_C.max_pool1d)


class AvgPool1d(_AvgPoolNd):
    _fn = staticmethod(_C.avg_pool1d)


class Conv3d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode='zeros', dtype=None):
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype, False)

    def forward(self, x):
        return _C.conv3d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                         self.groups)


class ConvTranspose3d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros',
                 dtype=None):
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype, True, output_padding)

    def forward(self, x, output_size=None):
        return _C.conv_transpose3d(x, self.weight, self.bias, self.stride, self.padding,
                                   _output_padding(self, x, output_size, 3), self.groups,
                                   self.dilation)


class MaxPool3d(_MaxPoolNd):
    _fn = staticmethod(_C.max_pool3d)


class AvgPool3d(_AvgPoolNd):
    _fn = staticmethod(_C.avg_pool3d)
