"""Activation and simple layer modules over the composed functions
(functional_act): PyTorch's constructor arguments, defaults, parameter
names and extra_repr."""
import warnings

from .._creation import full
from . import functional as F
from ._ctor_signature import REQUIRED, init_with_signature
from ._factory_kwargs import factory_kwargs
from .module import Module
from .parameter import Parameter


class _Act(Module):
    """an activation with PyTorch's constructor arguments (_args: (name,
    default) pairs, REQUIRED for none) stored as attributes: each class
    made with _args and no __init__ of its own gets an __init__ of that
    signature"""
    _args = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if '_args' in cls.__dict__ and '__init__' not in cls.__dict__:
            cls.__init__ = init_with_signature(cls._args, lambda self, vals: self._set(**vals))

    def _set(self, **vals):
        Module.__init__(self)
        for k, v in vals.items():
            object.__setattr__(self, k, v)

    _repr = None  # names printed (default: every argument); inplace only when set

    def extra_repr(self):
        names = self._repr if self._repr is not None else [n for n, _ in self._args]
        s = ', '.join(f'{n}={getattr(self, n)}' for n in names if n != 'inplace')
        if getattr(self, 'inplace', False):
            s += ', inplace=True' if s else 'inplace=True'
        return s


def _act(name, fn, *args, repr=None):
    cls = type(name, (_Act,), {'_args': args, '_repr': repr})
    cls.forward = lambda self, x: fn(x, **{n: getattr(self, n) for n, _ in args})
    return cls


SiLU = _act('SiLU', F.silu, ('inplace', False))
Mish = _act('Mish', F.mish, ('inplace', False))
class Hardtanh(_act('Hardtanh', F.hardtanh, ('min_val', -1.0), ('max_val', 1.0),
                    ('inplace', False))):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        # PyTorch's deprecated spellings, with its warnings
        if min_value is not None:
            warnings.warn("keyword argument min_value is deprecated and rename to min_val")
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument max_value is deprecated and rename to max_val")
            max_val = max_value
        self._set(min_val=min_val, max_val=max_val, inplace=inplace)
        assert self.max_val > self.min_val  # PyTorch's module check (F.hardtanh has none)
ReLU6 = _act('ReLU6', F.relu6, ('inplace', False))
LogSigmoid = _act('LogSigmoid', F.logsigmoid)
Softsign = _act('Softsign', F.softsign)
GLU = _act('GLU', F.glu, ('dim', -1))
Threshold = _act('Threshold', F.threshold, ('threshold', REQUIRED), ('value', REQUIRED),
                 ('inplace', False))
CELU = _act('CELU', F.celu, ('alpha', 1.0), ('inplace', False))
Softmin = _act('Softmin', F.softmin, ('dim', None))
Tanhshrink = _act('Tanhshrink', F.tanhshrink)
Softshrink = _act('Softshrink', F.softshrink, ('lambd', 0.5))
Softshrink.extra_repr = lambda self: str(self.lambd)
Hardshrink = _act('Hardshrink', F.hardshrink, ('lambd', 0.5))
Hardshrink.extra_repr = lambda self: str(self.lambd)
Softplus = _act('Softplus', F.softplus, ('beta', 1), ('threshold', 20))  # ints, as PyTorch
CosineSimilarity = _act('CosineSimilarity', None, ('dim', 1), ('eps', 1e-8), repr=())
CosineSimilarity.forward = lambda self, x1, x2: F.cosine_similarity(x1, x2, self.dim, self.eps)
PairwiseDistance = _act('PairwiseDistance', None, ('p', 2.0), ('eps', 1e-6), ('keepdim', False),
                        repr=())
PairwiseDistance.forward = lambda self, x1, x2: F.pairwise_distance(x1, x2, self.p, self.eps,
                                                                    self.keepdim)
PixelShuffle = _act('PixelShuffle', F.pixel_shuffle, ('upscale_factor', REQUIRED))
PixelUnshuffle = _act('PixelUnshuffle', F.pixel_unshuffle, ('downscale_factor', REQUIRED))
AdaptiveMaxPool2d = _act('AdaptiveMaxPool2d', F.adaptive_max_pool2d,
                         ('output_size', REQUIRED), ('return_indices', False),
                         repr=('output_size',))
AdaptiveMaxPool1d = _act('AdaptiveMaxPool1d', F.adaptive_max_pool1d,
                         ('output_size', REQUIRED), ('return_indices', False),
                         repr=('output_size',))
AdaptiveAvgPool1d = _act('AdaptiveAvgPool1d', F.adaptive_avg_pool1d, ('output_size', REQUIRED))
AdaptiveAvgPool2d = _act('AdaptiveAvgPool2d', F.adaptive_avg_pool2d, ('output_size', REQUIRED))
Unfold = _act('Unfold', F.unfold, ('kernel_size', REQUIRED), ('dilation', 1), ('padding', 0),
              ('stride', 1))
Fold = _act('Fold', F.fold, ('output_size', REQUIRED), ('kernel_size', REQUIRED),
            ('dilation', 1), ('padding', 0), ('stride', 1))


class _DropoutNd(_Act):
    _args = (('p', 0.5), ('inplace', False))

    def extra_repr(self):
        return f'p={self.p}, inplace={self.inplace}'

    def __init__(self, p=0.5, inplace=False):
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self._set(p=p, inplace=inplace)

    def forward(self, x):
        return self._fn(x, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    _fn = staticmethod(F.dropout3d)


class PReLU(Module):
    """x where x > 0, weight * x elsewhere; weight: num_parameters values
    (1, or one per channel) initialised to init"""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), float(init), dtype=dtype))

    def reset_parameters(self):
        with _no_grad():
            self.weight.fill_(self.init)

    def forward(self, x):
        return F.prelu(x, self.weight)

    def extra_repr(self):
        return f'num_parameters={self.num_parameters}'


def _no_grad():
    from .._grad_mode import no_grad
    return no_grad()


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x):
        return x.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f'dim={self.dim}, unflattened_size={self.unflattened_size}'


class _ConstantPadNd(Module):
    _n = 2

    def __init__(self, padding, value):
        super().__init__()
        self.padding = (padding,) * (2 * self._n) if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != 2 * self._n:
            raise ValueError(f"{type(self).__name__}: padding must have {2 * self._n} values")
        self.value = value

    def forward(self, x):
        return F.pad(x, self.padding, 'constant', self.value)

    def extra_repr(self):
        return f'padding={self.padding}, value={self.value}'


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f'{self.padding}'


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)
