"""More of torch.nn's modules over functional: reflection and replication
padding, Softmax2d, BatchNorm3d, Bilinear, LocalResponseNorm, LazyLinear,
AdaptiveAvgPool3d, AlphaDropout / FeatureAlphaDropout (PyTorch's
constructors, defaults, parameter names and reprs)."""
import math

from .. import _C
from .._creation import empty
from . import functional as F, init
from ._ctor_signature import REQUIRED
from ._factory_kwargs import factory_kwargs
from .activation import _act, _DropoutNd
from .layers import Linear, _BatchNorm
from .module import Module
from .parameter import Parameter


class _PadNd(Module):
    _n, _mode = 1, 'reflect'

    def __init__(self, padding):
        super().__init__()
        self.padding = (padding,) * (2 * self._n) if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != 2 * self._n:
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of "
                             f"{2 * self._n} ints, got {padding}")

    def forward(self, x):
        return F.pad(x, self.padding, self._mode)

    def extra_repr(self):
        return f'{self.padding}'


def _pad_class(name, n, mode):
    return type(name, (_PadNd,), {'_n': n, '_mode': mode})


ReflectionPad1d = _pad_class('ReflectionPad1d', 1, 'reflect')
ReflectionPad2d = _pad_class('ReflectionPad2d', 2, 'reflect')
ReflectionPad3d = _pad_class('ReflectionPad3d', 3, 'reflect')
ReplicationPad1d = _pad_class('ReplicationPad1d', 1, 'replicate')
ReplicationPad2d = _pad_class('ReplicationPad2d', 2, 'replicate')
ReplicationPad3d = _pad_class('ReplicationPad3d', 3, 'replicate')


class Softmax2d(Module):
    """softmax over the channels of each location: dim -3 of a 3-D or 4-D
    input"""

    def forward(self, x):
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {x.ndim}D instead")
        return _C.softmax(x, -3)


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, x):
        if x.ndim != 5:
            raise ValueError(f"expected 5D input (got {x.ndim}D input)")


class Bilinear(Module):
    """y = x1^T A x2 + b, weight [out, in1, in2] and bias [out] drawn from
    U(-1/sqrt(in1), 1/sqrt(in1)) as PyTorch's"""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f'in1_features={self.in1_features}, in2_features={self.in2_features}, '
                f'out_features={self.out_features}, bias={self.bias is not None}')


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x):
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f'{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}'


class LazyLinear(Linear):
    """a Linear whose in_features is the last dim of its first input: it
    has no parameters until then (PyTorch's are uninitialized placeholders),
    then becomes a Linear initialised as one"""

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        factory_kwargs(device, dtype)
        self.in_features, self.out_features = 0, out_features
        self._lazy_bias, self._lazy_dtype = bias, dtype
        self.register_parameter('weight', None)
        self.register_parameter('bias', None)

    def reset_parameters(self):
        if self.in_features:
            super().reset_parameters()

    def _load_from_state_dict(self, state_dict, prefix, *rest):
        """pending, it takes in_features from the checkpoint's weight
        (PyTorch materializes its placeholders to the checkpoint's shapes)"""
        w = state_dict.get(prefix + 'weight')
        if self.weight is None and getattr(w, 'ndim', 0) == 2:
            dt = self._lazy_dtype or w.dtype
            self.in_features = w.shape[1]
            self.weight = Parameter(empty(self.out_features, self.in_features, dtype=dt))
            if self._lazy_bias:
                self.bias = Parameter(empty(self.out_features, dtype=dt))
            self.__class__ = Linear
        Linear._load_from_state_dict(self, state_dict, prefix, *rest)

    def has_uninitialized_params(self):
        return self.weight is None

    def initialize_parameters(self, x):
        """the parameters for x's last dim, in the dtype given (else x's);
        the module becomes a Linear, as PyTorch's cls_to_become"""
        if self.weight is not None:
            return
        if x.ndim == 0:
            raise RuntimeError("LazyLinear: the input needs at least one dimension")
        dt = self._lazy_dtype or x.dtype
        self.in_features = x.shape[-1]
        self.weight = Parameter(empty(self.out_features, self.in_features, dtype=dt))
        if self._lazy_bias:
            self.bias = Parameter(empty(self.out_features, dtype=dt))
        super().reset_parameters()
        self.__class__ = Linear

    def forward(self, x):
        self.initialize_parameters(x)
        return _C.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return (f'in_features={self.in_features}, out_features={self.out_features}, '
                f'bias={self._lazy_bias}')


AdaptiveAvgPool3d = _act('AdaptiveAvgPool3d', F.adaptive_avg_pool3d,
                         ('output_size', REQUIRED))


class AlphaDropout(_DropoutNd):
    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    _fn = staticmethod(F.feature_alpha_dropout)
