"""ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501)): the
density C(p) p^x (1 - p)^(1 - x) on [0, 1], an exponential family in the
logits. Near p = 1/2 (inside lims) the closed forms lose precision to
0/0, so there the normalizer, mean and variance are Taylor polynomials in
(p - 1/2), as PyTorch 1.13's; draws are the icdf of uniforms
(reparameterized)."""
import math
import numbers

import tensorgraph as tg

from . import constraints
from .discrete import _expand_params, _one_of
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['ContinuousBernoulli']


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            self.probs, = broadcast_all(probs)
            # PyTorch checks probs here only when validate_args is given,
            # before clamping them away from 0 and 1
            if validate_args is not None and \
                    not bool(self.arg_constraints['probs'].check(self.probs).all()):
                raise ValueError('The parameter probs has invalid values')
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        else:
            self.logits, = broadcast_all(logits)
            self._param = self.logits
        batch_shape = tg.Size() if isinstance(given, numbers.Number) else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = tg.Size(batch_shape)
        _expand_params(self, new, batch_shape, batch_shape)
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, with lims[0] inside the unstable region (where the closed
        forms are not used)"""
        return tg.where(self._outside_unstable_region(), self.probs,
                        self._lims[0] * tg.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(p) = log(|log(p / (1 - p))| / |1 - 2p|)"""
        cut = self._cut_probs()
        below = tg.where(cut <= 0.5, cut, tg.zeros_like(cut))
        above = tg.where(cut >= 0.5, cut, tg.ones_like(cut))
        log_norm = tg.log(tg.abs(tg.log1p(-cut) - tg.log(cut))) - tg.where(
            cut <= 0.5, tg.log1p(-2.0 * below), tg.log(2.0 * above - 1.0))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return tg.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (tg.log1p(-cut) - tg.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return tg.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return tg.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + \
            1.0 / (tg.log1p(-cut) - tg.log(cut)).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return tg.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = tg.rand(tuple(shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = tg.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction='none')
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = tg.where(self._outside_unstable_region(), cdfs, value)
        return tg.where(value <= 0.0, tg.zeros_like(value),
                        tg.where(value >= 1.0, tg.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        closed = (tg.log1p(-cut + value * (2.0 * cut - 1.0)) - tg.log1p(-cut)) / \
            (tg.log(cut) - tg.log1p(-cut))
        return tg.where(self._outside_unstable_region(), closed, value)

    def entropy(self):
        log_probs0 = tg.log1p(-self.probs)
        log_probs1 = tg.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log of the integral of exp(x t) over [0, 1]: log((e^x - 1) / x),
        its Taylor polynomial near x = 0"""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = tg.where(outside, x, (self._lims[0] - 0.5) * tg.ones_like(x))
        log_norm = tg.log(tg.abs(tg.exp(cut) - 1.0)) - tg.log(tg.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return tg.where(outside, log_norm, taylor)
