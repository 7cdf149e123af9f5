"""The univariate continuous distributions: Normal, Laplace, Uniform,
Exponential (log_prob, cdf, icdf, entropy, moments as PyTorch's; draws
from tensorgraph's generator, reparameterized)."""
import math
import numbers

import tensorgraph as tg

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ['Cauchy', 'Exponential', 'Laplace', 'Normal', 'Uniform']


def _new_instance(dist, cls, batch_shape, names, _instance):
    """dist expanded to batch_shape: the same class with each parameter
    expanded (the shared body of the expand() methods)"""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = tg.Size(batch_shape)
    for name in names:
        setattr(new, name, getattr(dist, name).expand(batch_shape))
    Distribution.__init__(new, batch_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new


def _uniform(shape, like, low, high):
    return tg.empty(tuple(shape), dtype=like.dtype).uniform_(low, high)


class _LocScale(Distribution):
    """Normal and Laplace: loc and scale broadcast together, mean and mode loc"""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = tg.Size() if isinstance(loc, numbers.Number) and \
            isinstance(scale, numbers.Number) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        # the public class (Normal or Laplace): a subclass of it with its own
        # __init__ must define expand, as PyTorch checks
        family = next(c for c in type(self).__mro__ if _LocScale in c.__bases__)
        return _new_instance(self, family, batch_shape, ('loc', 'scale'), _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class Normal(_LocScale, ExponentialFamily):
    """Normal(loc, scale)"""
    _mean_carrier_measure = 0

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        with tg.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = tg.randn(tuple(shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() \
            - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + tg.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * tg.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + tg.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * tg.log(-math.pi / y)


class Laplace(_LocScale):
    """Laplace(loc, scale)"""

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = tg.finfo(self.loc.dtype).eps
        u = _uniform(shape, self.loc, eps - 1, 1)  # (-1, 1): log1p(-|u|) finite
        return self.loc - self.scale * u.sign() * tg.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -tg.log(2 * self.scale) - tg.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * \
            tg.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * tg.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + tg.log(2 * self.scale)


class Cauchy(_LocScale):
    """Cauchy(loc, scale): no mean (NaN) and an infinite variance"""

    @property
    def mean(self):
        return tg.full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype)

    @property
    def variance(self):
        return tg.full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = tg.rand(tuple(shape), dtype=self.loc.dtype)
        return self.loc + self.scale * tg.tan(math.pi * (u - 0.5))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - \
            (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return tg.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tg.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Uniform(Distribution):
    """Uniform(low, high): the half-open interval [low, high)"""
    arg_constraints = {'low': constraints.dependent(is_discrete=False, event_dim=0),
                       'high': constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch_shape = tg.Size() if isinstance(low, numbers.Number) and \
            isinstance(high, numbers.Number) else self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and not bool(tg.lt(self.low, self.high).all()):
            raise ValueError("Uniform is not defined when low>= high")

    def expand(self, batch_shape, _instance=None):
        return _new_instance(self, Uniform, batch_shape, ('low', 'high'), _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * math.nan

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = tg.rand(tuple(shape), dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return tg.log(lb.mul(ub)) - tg.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return tg.log(self.high - self.low)


class Exponential(ExponentialFamily):
    """Exponential(rate)"""
    arg_constraints = {'rate': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        batch_shape = tg.Size() if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _new_instance(self, Exponential, batch_shape, ('rate',), _instance)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return tg.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = tg.rand(tuple(shape), dtype=self.rate.dtype)  # [0, 1): -log1p(-u) finite
        return -tg.log1p(-u) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - tg.exp(-self.rate * value)

    def icdf(self, value):
        return -tg.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - tg.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -tg.log(-x)
