"""VonMises(loc, concentration): the circular normal on [-pi, pi). The
log of the Bessel functions I0, I1 in its normalizer and variance are the
polynomial approximations of Abramowitz and Stegun 9.8.1-9.8.4, as
PyTorch 1.13 evaluates them (so the values match it to rounding); draws
by Best and Fisher's rejection method, in float64, not reparameterized."""
import math

import tensorgraph as tg

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ['VonMises']

# (coefficients below 3.75 in (x / 3.75)^2, above it in 3.75 / x) for I0, I1
_COEF_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
               [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411])
_COEF_LARGE = ([0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
                0.02635537, -0.01647633, 0.00392377],
               [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
                -0.02895312, 0.01787654, -0.00420059])


def _horner(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0, order 0 or 1"""
    assert order in (0, 1)
    small = _horner((x / 3.75).pow(2), _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _horner(3.75 / x, _COEF_LARGE[order]).log()
    return tg.where(x < 3.75, small, large)


def _proposal_r(concentration):
    """the wrapped-Cauchy envelope's parameter for a concentration"""
    tau = 1 + (1 + 4 * concentration ** 2).sqrt()
    rho = (tau - (2 * tau).sqrt()) / (2 * concentration)
    return (1 + rho ** 2) / (2 * rho)


def _rejection_sample(loc, concentration, shape):
    loc = loc.detach().double().expand(shape)
    concentration = concentration.detach().double().expand(shape)
    r = _proposal_r(concentration)
    x = tg.zeros(shape, dtype=tg.float64)
    done = tg.zeros(shape, dtype=tg.bool)
    while not bool(done.all()):
        u1, u2, u3 = tg.rand((3,) + shape, dtype=tg.float64).unbind()
        z = tg.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = concentration * (r - f)
        accept = ((c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)) & ~done
        x = tg.where(accept, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints = {'loc': constraints.real, 'concentration': constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, tg.Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = tg.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * tg.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - \
            _log_modified_bessel_fn(self.concentration, order=0)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with tg.no_grad():
            return _rejection_sample(self.loc, self.concentration, shape).to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """1 - I1(k) / I0(k), the circular variance"""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1) -
                    _log_modified_bessel_fn(self.concentration, order=0)).exp()
