"""Multinomial(total_count, probs/logits): counts of total_count
Categorical draws, and NegativeBinomial(total_count, probs/logits): the
number of successes before total_count failures (a Gamma-Poisson
mixture, which is how it is drawn). PyTorch 1.13's formulas."""
import math

import tensorgraph as tg

from . import constraints
from .counts import Binomial, _Trials
from .discrete import Categorical
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, lazy_property

__all__ = ['Multinomial', 'NegativeBinomial']


class Multinomial(Distribution):
    """Multinomial(total_count=1, probs=None, logits=None): event_shape (K,);
    total_count one int for the whole batch (as PyTorch's). sample and
    log_prob work for any total_count; log_prob does not check that the
    counts sum to total_count (PyTorch's support only checks <=)."""
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError('inhomogeneous total_count is not supported')
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = tg.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        sample_shape = tg.Size(sample_shape)
        with tg.no_grad():
            # (total_count,) + sample_shape + batch_shape category indices,
            # the trials moved last and counted per category
            draws = self._categorical.sample(tg.Size((self.total_count,)) + sample_shape)
            order = list(range(draws.dim()))
            order.append(order.pop(0))
            draws = draws.permute(*order)
            counts = tg.zeros(tuple(self._extended_shape(sample_shape)), dtype=draws.dtype)
            counts.scatter_add_(-1, draws, tg.ones_like(draws))
            return counts.type_as(self.probs)

    def entropy(self):
        # n H(categorical) - log n! + sum_k E[log X_k!], X_k ~ Binomial(n, p_k)
        n = tg.tensor(float(self.total_count), dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - tg.lgamma(n + 1)
        binomial = Binomial(total_count=self.total_count, probs=self.probs,
                            validate_args=False)
        support = tg.arange(1, self.total_count + 1, dtype=self.probs.dtype)
        support = support.view((-1,) + (1,) * len(binomial.batch_shape))
        binomial_probs = tg.exp(binomial.log_prob(support))
        weights = tg.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = tg.lgamma(value.sum(-1) + 1)
        log_factorial_xs = tg.lgamma(value + 1).sum(-1)
        # a category of probability 0 that was never drawn adds 0, not NaN
        logits = tg.where((value == 0) & (logits == -math.inf), tg.zeros_like(logits), logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers


class NegativeBinomial(_Trials):
    """NegativeBinomial(total_count, probs=None, logits=None): P(k) =
    C(k + r - 1, k) p^k (1 - p)^r, r = total_count (real, >= 0), p = probs
    in [0, 1)"""
    arg_constraints = {'total_count': constraints.greater_than_eq(0),
                       'probs': constraints.half_open_interval(0., 1.),
                       'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args)

    @property
    def mean(self):
        return self.total_count * tg.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.)

    @property
    def variance(self):
        return self.mean / tg.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        # not validated: total_count may be 0
        return Gamma(concentration=self.total_count, rate=tg.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=()):
        with tg.no_grad():
            rate = self._gamma.sample(sample_shape)
            return tg.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = tg.nn.functional.logsigmoid
        r = self.total_count
        log_unnormalized_prob = r * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -tg.lgamma(r + value) + tg.lgamma(1. + value) + tg.lgamma(r)
        # r = k = 0: probability 1 (lgamma(0) is inf)
        log_normalization = log_normalization.masked_fill(r + value == 0., 0.)
        return log_unnormalized_prob - log_normalization
