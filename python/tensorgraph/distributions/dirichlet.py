"""Dirichlet(concentration): over the simplex of the last dim; draws are
normalized Gamma draws, reparameterized through their implicit gradient
(gamma.py), as PyTorch's."""
import tensorgraph as tg

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import standard_gamma

__all__ = ['Dirichlet']


class Dirichlet(ExponentialFamily):
    arg_constraints = {'concentration': constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = tg.Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) +
                                                      tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        gammas = standard_gamma(self.concentration.expand(shape))
        draws = gammas / gammas.sum(-1, keepdim=True)
        tiny = tg.finfo(draws.dtype).tiny
        return draws.clamp(min=tiny, max=1 - tg.finfo(draws.dtype).eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return ((tg.log(value) * (a - 1.0)).sum(-1) + tg.lgamma(a.sum(-1))
                - tg.lgamma(a).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        # PyTorch's: (a - 1)+ normalized; where every a < 1, the one-hot of
        # the first (argmax of the all-NaN 0/0), as its Dirichlet.mode
        am1 = (self.concentration - 1).clamp(min=0.0)
        mode = am1 / am1.sum(-1, keepdim=True)
        all_below = (self.concentration < 1).all(-1, keepdim=True)
        first = tg.zeros_like(mode)
        first[..., 0] = 1.0
        return tg.where(all_below, first, mode)

    @property
    def variance(self):
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0.pow(2) * (a0 + 1))

    def entropy(self):
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(-1)
        return (tg.lgamma(a).sum(-1) - tg.lgamma(a0) - (k - a0) * tg.digamma(a0)
                - ((a - 1.0) * tg.digamma(a)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return tg.lgamma(x).sum(-1) - tg.lgamma(x.sum(-1))
