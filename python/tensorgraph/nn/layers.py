"""The layers: PyTorch's constructors, defaults and initialisation, each a
thin Module over one functional op."""
import math

from .. import _C
from .._creation import zeros, ones, tensor
from . import functional as F, init
from ._ctor_signature import init_with_signature
from ._factory_kwargs import factory_kwargs
from .module import Module
from .parameter import Parameter


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(zeros(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(zeros(out_features, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return _C.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return (f'in_features={self.in_features}, out_features={self.out_features}, '
                f'bias={self.bias is not None}')


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return (f'kernel_size={self.kernel_size}, stride={self.stride or self.kernel_size}, '
                f'padding={self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}')


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return (f'kernel_size={self.kernel_size}, stride={self.stride or self.kernel_size}, '
                f'padding={self.padding}')


def init_affine(m, shape, affine, dtype):
    """a normalization's weight (ones) and bias (zeros) of shape, or both
    None when it has no affine part, as PyTorch's norms register them"""
    if affine:
        m.weight = Parameter(ones(*shape, dtype=dtype))
        m.bias = Parameter(zeros(*shape, dtype=dtype))
    else:
        m.register_parameter('weight', None)
        m.register_parameter('bias', None)


def reset_affine(m):
    """a normalization's weight back to ones and bias to zeros (if it has them)"""
    from .._grad_mode import no_grad
    with no_grad():
        if m.weight is not None:
            m.weight.fill_(1.0)
        if m.bias is not None:
            m.bias.fill_(0.0)


class NormStateMixin:
    """the batch and instance norms' reset_running_stats and reset_parameters,
    as PyTorch's _NormBase"""
    _version = 2  # version 2 added num_batches_tracked

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        """a state_dict saved before version 2 (or without metadata) may lack
        num_batches_tracked: it loads as 0, as PyTorch's"""
        version = local_metadata.get('version', None)
        if (version is None or version < 2) and self.track_running_stats:
            state_dict.setdefault(prefix + 'num_batches_tracked', tensor(0))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def reset_running_stats(self):
        if self.track_running_stats:
            from .._grad_mode import no_grad
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1.0)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        reset_affine(self)


def init_norm_state(m, num_features, eps, momentum, affine, track_running_stats, dtype):
    """what the batch and instance norms keep, as PyTorch's: the settings,
    weight and bias (affine) and the running statistics (tracked)"""
    m.num_features, m.eps, m.momentum = num_features, eps, momentum
    m.affine, m.track_running_stats = affine, track_running_stats
    init_affine(m, (num_features,), affine, dtype)
    if track_running_stats:
        m.register_buffer('running_mean', zeros(num_features, dtype=dtype))
        m.register_buffer('running_var', ones(num_features, dtype=dtype))
        m.register_buffer('num_batches_tracked', tensor(0))
    else:
        m.running_mean = m.running_var = m.num_batches_tracked = None


class _BatchNorm(NormStateMixin, Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        init_norm_state(self, num_features, eps, momentum, affine, track_running_stats, dtype)

    def forward(self, x):
        self._check_input_dim(x)
        momentum = 0.0 if self.momentum is None else self.momentum
        use_batch = self.training or self.running_mean is None
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        stats = self.training or not self.track_running_stats
        return _C.batch_norm(x, self.running_mean if not use_batch or self.training else None,
                             self.running_var if not use_batch or self.training else None,
                             self.weight, self.bias, stats, momentum, self.eps)

    def extra_repr(self):
        return (f'{self.num_features}, eps={self.eps}, momentum={self.momentum}, '
                f'affine={self.affine}, track_running_stats={self.track_running_stats}')


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, x):
        if x.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {x.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, x):
        if x.ndim != 4:
            raise ValueError(f"expected 4D input (got {x.ndim}D input)")


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        init_affine(self, shape, elementwise_affine, dtype)

    def forward(self, x):
        return _C.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def reset_parameters(self):
        reset_affine(self)

    def extra_repr(self):
        return (f'{self.normalized_shape}, eps={self.eps}, '
                f'elementwise_affine={self.elementwise_affine}')


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x):
        y = _C.dropout(x, self.p, self.training)
        return x.copy_(y) if self.inplace else y

    def extra_repr(self):
        return f'p={self.p}, inplace={self.inplace}'


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return _C.flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f'start_dim={self.start_dim}, end_dim={self.end_dim}'


def _activation(name, fn, inplace=None, **defaults):
    """inplace: None when PyTorch's module has no inplace argument; else
    it is stored, and True writes the result into the input (recorded as
    in-place ops are), as F's inplace=True"""
    def body(self, vals):
        Module.__init__(self)
        self.__dict__.update(vals)
        self._args = tuple(vals[n] for n in defaults)
    __init__ = init_with_signature(
        list(defaults.items()) + ([] if inplace is None else [('inplace', False)]), body)

    def forward(self, x):
        y = fn(x, *self._args)
        return x.copy_(y) if getattr(self, 'inplace', False) else y

    def extra_repr(self):
        # PyTorch prints inplace only when it is set
        s = ', '.join(f'{k}={getattr(self, k)}' for k in defaults)
        if getattr(self, 'inplace', False):
            s += ', inplace=True' if s else 'inplace=True'
        return s
    return type(name, (Module,), {'__init__': __init__, 'forward': forward,
                                  'extra_repr': extra_repr})


ReLU = _activation('ReLU', _C.relu, inplace=True)
Hardswish = _activation('Hardswish', _C.hardswish, inplace=True)
Hardsigmoid = _activation('Hardsigmoid', lambda x: _C._hardsigmoid(x, 1.0 / 6.0, 0.5),
                          inplace=True)
SELU = _activation('SELU', _C.selu, inplace=True)
Hardswish.extra_repr = Hardsigmoid.extra_repr = lambda self: ''  # PyTorch prints no arguments
Tanh = _activation('Tanh', _C.tanh)
Sigmoid = _activation('Sigmoid', _C.sigmoid)


class GELU(Module):
    def __init__(self, approximate='none'):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def extra_repr(self):
        return f'approximate={self.approximate!r}'


LeakyReLU = _activation('LeakyReLU', _C.leaky_relu, inplace=True, negative_slope=0.01)
ELU = _activation('ELU', _C.elu, inplace=True, alpha=1.0)
# dim None: PyTorch's legacy implicit dim (F.softmax's, with its warning)
Softmax = _activation('Softmax', lambda x, dim: F.softmax(x, dim), dim=None)
LogSoftmax = _activation('LogSoftmax', lambda x, dim: F.log_softmax(x, dim), dim=None)


