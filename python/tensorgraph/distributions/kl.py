"""kl_divergence(p, q) and register_kl: closed forms for the common pairs,
looked up by the most specific registered (type(p), type(q)) as PyTorch's."""
import math
from functools import total_ordering

import tensorgraph as tg

from .beta import Beta
from .continuous import Exponential, Laplace, Normal, Uniform
from .dirichlet import Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .gamma import Gamma
from .independent import Independent
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .utils import sum_rightmost

__all__ = ['kl_divergence', 'register_kl']

_KL_REGISTRY = {}
_KL_MEMOIZE = {}


def register_kl(type_p, type_q):
    """decorator: fun(p, q) computes KL(p || q) for these two classes"""
    if not isinstance(type_p, type) or not isinstance(type_q, type):
        raise TypeError(f'Expected type_p and type_q to be types, got {type_p}, {type_q}')

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


@total_ordering
class _Match:
    """orders (type_p, type_q) candidates by how specific they are"""

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        import warnings
        warnings.warn(f'Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). '
                      f'Please register_kl({left_p.__name__}, {right_q.__name__})',
                      RuntimeWarning)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q) per batch element; NotImplementedError for a pair with
    no registered closed form"""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(tensor):
    return tg.full_like(tensor, math.inf)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    softplus = tg.nn.functional.softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = tg.where(q.probs == 0, _infinite_like(t1), t1)
    t1 = tg.where(p.probs == 0, tg.zeros_like(t1), t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = tg.where(q.probs == 1, _infinite_like(t2), t2)
    t2 = tg.where(p.probs == 1, tg.zeros_like(t2), t2)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = tg.where(q.probs == 0, _infinite_like(t), t)
    t = tg.where(p.probs == 0, tg.zeros_like(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return tg.where(outside, _infinite_like(result), result)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * tg.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = tg.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * tg.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * tg.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = tg.lgamma(q.concentration1) + tg.lgamma(q.concentration0) + tg.lgamma(sum_params_p)
    t2 = tg.lgamma(p.concentration1) + tg.lgamma(p.concentration0) + tg.lgamma(sum_params_q)
    t3 = (p.concentration1 - q.concentration1) * tg.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * tg.digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * tg.digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * tg.log(p.rate / q.rate)
    t2 = tg.lgamma(q.concentration) - tg.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * tg.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p, sum_q = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = tg.lgamma(sum_p) - tg.lgamma(sum_q)
    t2 = (tg.lgamma(p.concentration) - tg.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = tg.digamma(p.concentration) - tg.digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with "
                         "different event shapes cannot be computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - \
        Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    n = p.event_shape[0]
    batch = tg.broadcast_shapes(tuple(Lq.shape[:-2]), tuple(Lp.shape[:-2]))
    term2 = tg.linalg.solve_triangular(Lq.expand(tuple(batch) + (n, n)),
                                       Lp.expand(tuple(batch) + (n, n)),
                                       upper=False).pow(2).flatten(-2).sum(-1)
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return sum_rightmost(result, p.reinterpreted_batch_ndims)
