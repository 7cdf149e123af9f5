"""ExpRelaxedCategorical and RelaxedOneHotCategorical (the Concrete /
Gumbel-softmax relaxation of a one-hot draw): at a temperature t, the
log-softmax of (logits + Gumbel noise) / t, and its exp on the simplex;
reparameterized draws, PyTorch 1.13's log_prob."""
import tensorgraph as tg

from . import constraints
from .discrete import Categorical
from .relaxed_bernoulli import _Relaxed
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ['ExpRelaxedCategorical', 'RelaxedOneHotCategorical']


class ExpRelaxedCategorical(Distribution):
    """ExpRelaxedCategorical(temperature, probs=None, logits=None): the
    log of a RelaxedOneHotCategorical draw (event_shape (K,))"""
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_wrapped(ExpRelaxedCategorical, '_categorical', batch_shape, _instance)
        new.temperature = self.temperature
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = clamp_probs(tg.rand(shape, dtype=self.logits.dtype))
        gumbels = -(-u.log()).log()
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = tg.full_like(self.temperature, float(k)).lgamma() - \
            self.temperature.log().mul(-(k - 1))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Relaxed, TransformedDistribution):
    """RelaxedOneHotCategorical(temperature, probs=None, logits=None): on
    the simplex"""
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

