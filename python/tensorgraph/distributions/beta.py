"""Beta(concentration1, concentration0): log_prob, entropy and moments
composed from lgamma/digamma (so differentiable in both concentrations);
draws as X / (X + Y) of two Gamma draws (Marsaglia and Tsang's method on
tensorgraph's generator). Not reparameterized (PyTorch's Beta is, through
the Gamma's implicit gradient, which tensorgraph does not have)."""
import numbers

import tensorgraph as tg

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ['Beta']


def _standard_gamma(alpha):
    """one Gamma(alpha, 1) draw per element of alpha (no gradient):
    Marsaglia-Tsang's squeeze and rejection for alpha + 1, then
    boosted by U^(1/alpha) so that alpha < 1 works too"""
    a = alpha.detach().double()
    d = (a + 1) - 1.0 / 3
    c = 1.0 / tg.sqrt(9 * d)
    result = tg.zeros_like(a)
    pending = tg.ones(tuple(a.shape), dtype=tg.bool)
    while bool(pending.any()):
        x = tg.randn(tuple(a.shape), dtype=tg.float64)
        v = (1 + c * x) ** 3
        u = tg.rand(tuple(a.shape), dtype=tg.float64)
        safe_v = tg.where(v > 0, v, tg.ones_like(v))
        accept = (v > 0) & (tg.log(u) < 0.5 * x * x + d - d * safe_v + d * tg.log(safe_v))
        take = accept & pending
        result = tg.where(take, d * safe_v, result)
        pending = pending & ~accept
    boost = tg.rand(tuple(a.shape), dtype=tg.float64) ** (1.0 / a)
    tiny = tg.finfo(alpha.dtype).tiny
    return (result * boost).clamp(min=tiny).to(alpha.dtype)


class Beta(Distribution):
    arg_constraints = {'concentration1': constraints.positive,
                       'concentration0': constraints.positive}
    support = constraints.unit_interval
    has_rsample = False

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        scalar = isinstance(concentration1, numbers.Number) and \
            isinstance(concentration0, numbers.Number)
        batch_shape = tg.Size() if scalar else self.concentration1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = tg.Size(batch_shape)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        # PyTorch's (its Dirichlet's): clamped at the edges, 0/0 NaN where
        # a concentration is 1, and 1 (the first one-hot) where both are < 1
        a, b = self.concentration1, self.concentration0
        am1, bm1 = (a - 1).clamp(min=0.0), (b - 1).clamp(min=0.0)
        mode = am1 / (am1 + bm1)
        return tg.where((a < 1) & (b < 1), tg.ones_like(mode), mode)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with tg.no_grad():
            x = _standard_gamma(self.concentration1.expand(shape))
            y = _standard_gamma(self.concentration0.expand(shape))
            eps = tg.finfo(x.dtype).eps
            return (x / (x + y)).clamp(min=eps, max=1 - eps)

    def _log_normalizer(self):
        a, b = self.concentration1, self.concentration0
        return tg.lgamma(a) + tg.lgamma(b) - tg.lgamma(a + b)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return tg.xlogy(a - 1, value) + tg.xlogy(b - 1, 1 - value) - self._log_normalizer()

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (self._log_normalizer() - (a - 1) * tg.digamma(a) - (b - 1) * tg.digamma(b)
                + (total - 2) * tg.digamma(total))
