"""The convolution modules (Conv1d/2d/3d, ConvTranspose1d/2d/3d: one class
per kind, parameterised by rank) and the 1-D and 3-D pools (the 2-D ones
are in layers.py): thin Modules over one functional op each, with
PyTorch's constructors, defaults, checks and initialisation."""
import math

from .. import _C
from .._creation import zeros
from . import functional as F, init
from ._factory_kwargs import factory_kwargs
from ._padding import same_padding
from .functional_conv import _ntuple
from .module import Module
from .parameter import Parameter


_PADDING_MODES = ('zeros', 'reflect', 'replicate', 'circular')


def _check_padding(name, padding, padding_mode, stride, transposed):
    """PyTorch's constructor checks of padding and padding_mode"""
    if padding_mode not in _PADDING_MODES:
        raise ValueError("padding_mode must be one of {'circular', 'replicate', 'reflect', "
                         f"'zeros'}}, but got padding_mode='{padding_mode}'")
    if transposed and padding_mode != 'zeros':
        raise ValueError(f'Only "zeros" padding mode is supported for {name}')
    if not isinstance(padding, str):
        return
    if transposed:
        raise NotImplementedError(f"{name}: padding strings are for convolutions, not "
                                  "transposed ones")
    if padding not in ('valid', 'same'):
        raise ValueError(f"Invalid padding string '{padding}', should be one of "
                         "{'valid', 'same'}")
    if padding == 'same' and any(s != 1 for s in stride):
        raise ValueError("padding='same' is not supported for strided convolutions")


class _ConvNd(Module):
    """the parameters and PyTorch's initialisation; the weight is [out,
    in/groups, *k], or [in, out/groups, *k] when transposed"""

    def __init__(self, n, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode, dtype, transposed, output_padding=0):
        super().__init__()
        _check_padding(type(self).__name__, padding, padding_mode, _ntuple(stride, n),
                       transposed)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _ntuple(kernel_size, n), _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation, self.padding_mode = _ntuple(dilation, n), padding_mode
        # what the other padding modes pad by, in pad's order (last dim first)
        pairs = (same_padding(self.kernel_size, self.dilation) if padding == 'same'
                 else [(0, 0)] * n if padding == 'valid' else [(p, p) for p in self.padding])
        self._reversed_padding_repeated_twice = [v for pr in reversed(pairs) for v in pr]
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
        if isinstance(self.padding, str):
            s += f', padding={self.padding}'
        elif any(self.padding):
            s += f', padding={self.padding}'
        if any(d != 1 for d in self.dilation):  # PyTorch's order: dilation, output_padding
            s += f', dilation={self.dilation}'
        if any(self.output_padding):
            s += f', output_padding={self.output_padding}'
        if self.groups != 1:
            s += f', groups={self.groups}'
        s += '' if self.bias is not None else ', bias=False'
        return s + ('' if self.padding_mode == 'zeros' else f', padding_mode={self.padding_mode}')

    def _conv_forward(self, x, conv):
        """conv (F.conv1d/2d/3d) with this module's padding: zeros through the
        op, the other modes by pad first"""
        if self.padding_mode != 'zeros':
            x = F.pad(x, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)


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


class _Conv(_ConvNd):
    """Conv1d/2d/3d: PyTorch's constructor over _ConvNd of rank _n"""
    _n, _fn = 0, None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode='zeros', device=None, dtype=None):
        factory_kwargs(device, dtype)
        super().__init__(self._n, in_channels, out_channels, kernel_size, stride, padding,
                         dilation, groups, bias, padding_mode, dtype, False)

    def forward(self, x):
        return self._conv_forward(x, self._fn)


class _ConvTranspose(_ConvNd):
    """ConvTranspose1d/2d/3d: PyTorch's constructor (output_padding before
    groups) over _ConvNd of rank _n"""
    _n, _fn = 0, None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros',
                 device=None, dtype=None):
        factory_kwargs(device, dtype)
        super().__init__(self._n, in_channels, out_channels, kernel_size, stride, padding,
                         dilation, groups, bias, padding_mode, dtype, True, output_padding)

    def forward(self, x, output_size=None):
        return self._fn(x, self.weight, self.bias, self.stride, self.padding,
                        _output_padding(self, x, output_size, self._n), self.groups,
                        self.dilation)


class Conv1d(_Conv):
    _n, _fn = 1, staticmethod(F.conv1d)


class Conv2d(_Conv):
    _n, _fn = 2, staticmethod(F.conv2d)


class Conv3d(_Conv):
    _n, _fn = 3, staticmethod(F.conv3d)


class ConvTranspose1d(_ConvTranspose):
    _n, _fn = 1, staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    _n, _fn = 2, staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    _n, _fn = 3, staticmethod(F.conv_transpose3d)


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
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        if divisor_override is not None:  # AvgPool3d's (AvgPool1d has none)
            self.divisor_override = divisor_override

    def forward(self, x):
        args = (x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                self.count_include_pad)
        d = getattr(self, 'divisor_override', None)
        return type(self)._fn(*args) if d is None else type(self)._fn(*args, d)

    def extra_repr(self):
        k, s, p = self.kernel_size, self.stride or self.kernel_size, self.padding
        if type(self).__name__ == 'AvgPool1d':  # PyTorch's AvgPool1d stores 1-tuples
            k, s, p = (_one(k), _one(s), _one(p))
        return f'kernel_size={k}, stride={s}, padding={p}'


def _one(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class MaxPool1d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool1d)


class AvgPool1d(_AvgPoolNd):
    _fn = staticmethod(F.avg_pool1d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):  # PyTorch's: no divisor_override
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)


class MaxPool3d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool3d)


class AvgPool3d(_AvgPoolNd):
    _fn = staticmethod(F.avg_pool3d)
