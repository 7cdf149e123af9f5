"""More of torch.distributions: Poisson, Geometric, Binomial (counts) and
LogNormal, HalfNormal (a Normal transformed), with PyTorch 1.13's
formulas for log_prob, moments, entropy, cdf/icdf where it has them;
draws from tensorgraph's generator (not PyTorch's numbers)."""
import math
import numbers

import tensorgraph as tg

from . import constraints
from .continuous import Normal, _new_instance
from .discrete import _BinaryParameters, _expand_params, _one_of
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ['Binomial', 'Geometric', 'HalfNormal', 'LogNormal', 'Poisson']


def _batch_shape(given, t):
    return tg.Size() if isinstance(given, numbers.Number) else t.size()


class Poisson(ExponentialFamily):
    """Poisson(rate)"""
    arg_constraints = {'rate': constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        super().__init__(_batch_shape(rate, self.rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _new_instance(self, Poisson, batch_shape, ('rate',), _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with tg.no_grad():
            return tg.poisson(self.rate.expand(tuple(shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (tg.log(self.rate),)

    def _log_normalizer(self, x):
        return tg.exp(x)


class Geometric(_BinaryParameters, Distribution):
    """Geometric(probs=None, logits=None): the number of failures before
    the first success"""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            self.probs, = broadcast_all(probs)
            self._param = self.probs
        else:
            self.logits, = broadcast_all(logits)
            self._param = self.logits
        super().__init__(_batch_shape(given, self._param), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = tg.Size(batch_shape)
        _expand_params(self, new, batch_shape, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1. / self.probs - 1.

    @property
    def mode(self):
        return tg.zeros_like(self.probs)

    @property
    def variance(self):
        return (1. / self.probs - 1.) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = tg.finfo(self.probs.dtype).tiny
        with tg.no_grad():
            u = tg.rand(tuple(shape), dtype=self.probs.dtype).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # PyTorch: a certain success (probs 1) has log_prob 0 at value 0
        safe = tg.where((probs == 1) & (value == 0), tg.zeros_like(probs), probs)
        return value * (-safe).log1p() + self.probs.log()

    def entropy(self):
        return tg.nn.functional.binary_cross_entropy_with_logits(
            self.logits, self.probs, reduction='none') / self.probs


class _Trials(_BinaryParameters, Distribution):
    """total_count with probs or logits of one trial, broadcast together
    (Binomial, NegativeBinomial): the constructor, expand and the two
    views of the parameter"""

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
            self._param = self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        # the public class: a subclass with its own __init__ must define
        # expand, as PyTorch checks
        family = next(c for c in type(self).__mro__ if _Trials in c.__bases__)
        new = self._get_checked_instance(family, _instance)
        batch_shape = tg.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        _expand_params(self, new, batch_shape, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._param.size()


class Binomial(_Trials):
    """Binomial(total_count=1, probs=None, logits=None)"""
    arg_constraints = {'total_count': constraints.nonnegative_integer,
                       'probs': constraints.unit_interval, 'logits': constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with tg.no_grad():
            return tg.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = tg.lgamma(n + 1)
        log_factorial_k = tg.lgamma(value + 1)
        log_factorial_nmk = tg.lgamma(n - value + 1)
        # n * max(logits, 0) + n * log1p(exp(-|logits|)): log((1 + e^logits)^n) stably
        normalize = n * logits.clamp(min=0) + n * tg.log1p(tg.exp(-logits.abs())) - \
            log_factorial_n
        return value * logits - log_factorial_k - log_factorial_nmk - normalize


class LogNormal(Distribution):
    """LogNormal(loc, scale): exp of a Normal(loc, scale)"""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(self.base_dist.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_wrapped(LogNormal, 'base_dist', batch_shape, _instance)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = value.log()
        return self.base_dist.log_prob(y) - y

    def cdf(self, value):
        return self.base_dist.cdf(value.log())

    def icdf(self, value):
        return self.base_dist.icdf(value).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class _Folded:
    """|x| of a distribution symmetric about 0 (base_dist): HalfNormal,
    HalfCauchy. The density doubles on [0, inf), the cdf and icdf fold,
    the entropy loses log 2"""

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = tg.as_tensor(value, dtype=self.base_dist.scale.dtype)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return tg.where(value >= 0, lp, tg.full_like(lp, -math.inf))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded, Distribution):
    """HalfNormal(scale): |x| of a Normal(0, scale)"""
    arg_constraints = {'scale': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        self.base_dist = Normal(0, scale, validate_args=False)
        super().__init__(self.base_dist.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_wrapped(HalfNormal, 'base_dist', batch_shape, _instance)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return tg.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape).abs()


def _register_kl():
    from .kl import _kl_normal_normal, register_kl

    @register_kl(Poisson, Poisson)
    def _kl_poisson_poisson(p, q):
        return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)

    @register_kl(Geometric, Geometric)
    def _kl_geometric_geometric(p, q):
        return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits

    @register_kl(Binomial, Binomial)
    def _kl_binomial_binomial(p, q):
        if (p.total_count < q.total_count).any():
            raise NotImplementedError('KL between Binomials where q.total_count > '
                                      'p.total_count is not implemented')
        kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() -
                              (-q.probs).log1p())
        inf_idxs = p.total_count > q.total_count
        return tg.where(inf_idxs, tg.full_like(kl, math.inf), kl)

    @register_kl(LogNormal, LogNormal)
    def _kl_lognormal_lognormal(p, q):
        return _kl_normal_normal(p.base_dist, q.base_dist)

    @register_kl(HalfNormal, HalfNormal)
    def _kl_halfnormal_halfnormal(p, q):
        return _kl_normal_normal(p.base_dist, q.base_dist)


_register_kl()
