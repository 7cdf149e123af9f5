"""LogitRelaxedBernoulli and RelaxedBernoulli (the binary Concrete /
Gumbel-softmax relaxation): at a temperature t, (logit(u) + logits) / t
for uniform u, and its sigmoid on (0, 1); reparameterized draws, PyTorch
1.13's log_prob."""
import numbers

import tensorgraph as tg

from . import constraints
from .discrete import _BinaryParameters, _expand_params, _one_of
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs

__all__ = ['LogitRelaxedBernoulli', 'RelaxedBernoulli']


class _Relaxed:
    """a relaxed distribution as the transform of its base: the base's
    temperature, logits and probs, and expand keeping the family (a
    subclass with its own __init__ must define expand, as PyTorch checks;
    RelaxedBernoulli, RelaxedOneHotCategorical)"""

    def expand(self, batch_shape, _instance=None):
        family = next(c for c in type(self).__mro__ if _Relaxed in c.__bases__)
        new = self._get_checked_instance(family, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class LogitRelaxedBernoulli(_BinaryParameters, Distribution):
    """LogitRelaxedBernoulli(temperature, probs=None, logits=None): over
    the reals. has_rsample is False, as PyTorch 1.13's, though rsample
    is differentiable"""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            self.probs, = broadcast_all(probs)
            self._param = self.probs
        else:
            self.logits, = broadcast_all(logits)
            self._param = self.logits
        batch_shape = tg.Size() if isinstance(given, numbers.Number) else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = tg.Size(batch_shape)
        new.temperature = self.temperature
        _expand_params(self, new, batch_shape, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(tg.rand(shape, dtype=probs.dtype))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(_Relaxed, TransformedDistribution):
    """RelaxedBernoulli(temperature, probs=None, logits=None): the sigmoid
    of a LogitRelaxedBernoulli, on the unit interval"""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

