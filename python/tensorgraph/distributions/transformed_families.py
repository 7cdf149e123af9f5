"""Distributions that are a simple one transformed, as PyTorch builds them
(so isinstance(d, TransformedDistribution) holds, and cdf/icdf come from
the transforms): Gumbel, Weibull, Pareto, HalfCauchy, Kumaraswamy,
LogisticNormal. Where
PyTorch has a closed form (log_prob of Gumbel, HalfCauchy's) it is used."""
import math
import numbers

import tensorgraph as tg

from . import constraints
from .continuous import Cauchy, Exponential, Normal, Uniform
from .counts import _Folded
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ExpTransform, PowerTransform,
                         StickBreakingTransform)
from .utils import broadcast_all

__all__ = ['Gumbel', 'HalfCauchy', 'Kumaraswamy', 'LogisticNormal', 'Pareto', 'Weibull']

EULER_GAMMA = 0.57721566490153286060


def _expand_params(dist, cls, names, batch_shape, _instance):
    """a new cls with its parameters expanded, before the transformed part
    (base and transforms) is expanded by TransformedDistribution.expand"""
    new = dist._get_checked_instance(cls, _instance)
    for name in names:
        setattr(new, name, getattr(dist, name).expand(batch_shape))
    return TransformedDistribution.expand(dist, batch_shape, _instance=new)


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale): loc - scale * log(-log(U)), U uniform on
    (tiny, 1 - eps) so that both logs stay finite"""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = tg.finfo(self.loc.dtype)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(tg.full_like(self.loc, finfo.tiny),
                                tg.full_like(self.loc, 1 - finfo.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-tg.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Gumbel, ('loc', 'scale'), batch_shape, _instance)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + EULER_GAMMA)


class Weibull(TransformedDistribution):
    """Weibull(scale, concentration): scale * E^(1/concentration), E a
    standard Exponential"""
    arg_constraints = {'scale': constraints.positive, 'concentration': constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(tg.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * tg.exp(tg.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        c = self.concentration
        return self.scale * ((c - 1) / c) ** c.reciprocal()

    @property
    def variance(self):
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (tg.exp(tg.lgamma(1 + 2 * r)) -
                                    tg.exp(2 * tg.lgamma(1 + r)))

    def entropy(self):
        r = self.concentration_reciprocal
        return EULER_GAMMA * (1 - r) + tg.log(self.scale * r) + 1


def _clamp_min(x, bound):
    """x.clamp(min=bound) whose gradient is exactly 0 below the bound even
    when the later terms are infinite there (PyTorch's clamp backward
    masks; a product with 0 would give NaN)"""
    return tg.where(x >= bound, x, tg.full_like(x, bound))


class Pareto(TransformedDistribution):
    """Pareto(scale, alpha): scale * exp(E), E an Exponential(alpha)"""
    arg_constraints = {'alpha': constraints.positive, 'scale': constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Pareto, ('scale', 'alpha'), batch_shape, _instance)

    @property
    def mean(self):
        a = _clamp_min(self.alpha, 1)  # infinite for alpha <= 1
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = _clamp_min(self.alpha, 2)  # infinite for alpha <= 2
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class HalfCauchy(_Folded, TransformedDistribution):
    """HalfCauchy(scale): |x| of a Cauchy(0, scale); infinite mean"""
    arg_constraints = {'scale': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return tg.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self):
        return tg.zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance


def _kumaraswamy_moment(a, b, n):
    """E[X^n] = b * B(1 + n/a, b), through lgamma"""
    arg1 = 1 + n / a
    return b * tg.exp(tg.lgamma(arg1) + tg.lgamma(b) - tg.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1, concentration0): (1 - U^(1/b))^(1/a),
    U uniform on [0, 1)"""
    arg_constraints = {'concentration1': constraints.positive,
                       'concentration0': constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(tg.full_like(self.concentration0, 0),
                            tg.full_like(self.concentration0, 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1., scale=-1.),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Kumaraswamy, ('concentration1', 'concentration0'),
                              batch_shape, _instance)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        log_mode = tg.where((b < 1) | (a < 1), tg.full_like(log_mode, math.nan), log_mode)
        return log_mode.exp()

    @property
    def variance(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 2) - \
            self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        h0 = tg.digamma(b + 1) + EULER_GAMMA
        return t0 + t1 * h0 - tg.log(a) - tg.log(b)


class LogisticNormal(TransformedDistribution):
    """LogisticNormal(loc, scale): a Normal of K - 1 dims stick-broken onto
    the K-simplex (event_shape (K,)); no closed-form moments (as PyTorch's)"""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
