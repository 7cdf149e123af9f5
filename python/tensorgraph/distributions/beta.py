"""Beta(concentration1, concentration0): log_prob, entropy and moments
composed from lgamma/digamma (so differentiable in both concentrations);
draws as X / (X + Y) of two Gamma draws (Marsaglia and Tsang's method on
tensorgraph's generator), reparameterized through the Gammas' implicit
gradient (gamma.py), as PyTorch's."""
import numbers

import tensorgraph as tg

from . import constraints
from .continuous import _new_instance
from .exp_family import ExponentialFamily
from .gamma import standard_gamma
from .utils import broadcast_all

__all__ = ['Beta']


class Beta(ExponentialFamily):
    arg_constraints = {'concentration1': constraints.positive,
                       'concentration0': constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        scalar = isinstance(concentration1, numbers.Number) and \
            isinstance(concentration0, numbers.Number)
        batch_shape = tg.Size() if scalar else self.concentration1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _new_instance(self, Beta, batch_shape, ('concentration1', 'concentration0'),
                             _instance)

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

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        x = standard_gamma(self.concentration1.expand(shape))
        y = standard_gamma(self.concentration0.expand(shape))
        eps = tg.finfo(x.dtype).eps
        return (x / (x + y)).clamp(min=eps, max=1 - eps)

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return tg.lgamma(x) + tg.lgamma(y) - tg.lgamma(x + y)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return tg.xlogy(a - 1, value) + tg.xlogy(b - 1, 1 - value) - self._log_normalizer(a, b)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (self._log_normalizer(a, b) - (a - 1) * tg.digamma(a) - (b - 1) * tg.digamma(b)
                + (total - 2) * tg.digamma(total))
