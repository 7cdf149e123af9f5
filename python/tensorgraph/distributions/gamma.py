"""Gamma(concentration, rate) and the reparameterized standard Gamma draw
Beta shares: Marsaglia and Tsang's method on tensorgraph's generator, and
the implicit gradient dx/dalpha = -(dP(alpha, x)/dalpha) / p(x; alpha)
(P the regularized incomplete gamma function, its alpha-derivative by a
central difference in float64)."""
import numbers

import tensorgraph as tg

from . import constraints
from .continuous import _new_instance
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ['Gamma']


def _marsaglia_tsang(alpha):
    """one Gamma(alpha, 1) draw per element (float64, no gradient): the
    squeeze-and-reject method for alpha + 1, boosted by U^(1/alpha)"""
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
        result = tg.where(accept & pending, d * safe_v, result)
        pending = pending & ~accept
    return result * tg.rand(tuple(a.shape), dtype=tg.float64) ** (1.0 / a)


def _dx_dalpha(alpha, x):
    """the implicit reparameterization gradient of a Gamma(alpha, 1) draw"""
    from .._special_zeta import _gammainc64
    a, x = alpha.double(), x.double()
    h = 1e-5 * tg.clamp(a, min=1e-3)
    dP = (_gammainc64(a + h, x, False) - _gammainc64(a - h, x, False)) / (2 * h)
    log_pdf = (a - 1) * tg.log(x) - x - tg.lgamma(a)
    return -dP / tg.exp(log_pdf)


class _StandardGamma(tg.autograd.Function):
    @staticmethod
    def forward(ctx, alpha):
        tiny = tg.finfo(alpha.dtype).tiny
        x = _marsaglia_tsang(alpha).clamp(min=tiny).to(alpha.dtype)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * _dx_dalpha(alpha.detach(), x.detach()).to(grad.dtype)


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws, differentiable in alpha"""
    return _StandardGamma.apply(alpha)


class Gamma(ExponentialFamily):
    arg_constraints = {'concentration': constraints.positive, 'rate': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        batch_shape = tg.Size() if scalar else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _new_instance(self, Gamma, batch_shape, ('concentration', 'rate'), _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = tg.finfo(value.dtype).tiny
        return value.clamp(min=tiny)

    def log_prob(self, value):
        value = tg.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (tg.xlogy(self.concentration, self.rate) + tg.xlogy(self.concentration - 1, value)
                - self.rate * value - tg.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - tg.log(self.rate) + tg.lgamma(self.concentration)
                + (1.0 - self.concentration) * tg.digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return tg.lgamma(x + 1) + (x + 1) * tg.log(-y.reciprocal())
