"""The kl_divergence pairs of PyTorch 1.13 not in kl.py: two members of
one exponential family (the Bregman divergence of the log normalizer),
ContinuousBernoulli against the univariate families, the pairs of
different univariate families (KL = -H(p) + E_p[-log q(x)], the cross
entropy from p's moments: infinite where p's support is not inside q's,
or where a moment it needs is infinite), Cauchy, Gumbel and Pareto with
themselves, TransformedDistributions with equal transforms (the KL of
their bases), and the low-rank Gaussians against each other and
MultivariateNormal."""
import math

import tensorgraph as tg

from .beta import Beta
from .continuous import Cauchy, Exponential, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Binomial, HalfNormal, LogNormal, Poisson
from .discrete import Bernoulli
from .exp_family import ExponentialFamily
from .gamma import Gamma
from .kl import _infinite_like, kl_divergence, register_kl
from .lowrank_multivariate_normal import (_batch_lowrank_logdet, _batch_lowrank_mahalanobis,
                                          LowRankMultivariateNormal)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .transformed_distribution import TransformedDistribution
from .transformed_families import EULER_GAMMA, Gumbel, Pareto
from .transforms import AbsTransform, ExpTransform

__all__ = []


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if type(p) is not type(q):
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}: "
                                  "the cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    return p._bregman_kl(q)


def _as_transformed(d):
    """(base, transforms) of a TransformedDistribution, or of LogNormal
    and HalfNormal: their own classes here, PyTorch's are
    TransformedDistributions (of a Normal by ExpTransform, AbsTransform)"""
    if isinstance(d, LogNormal):
        return d.base_dist, [ExpTransform()]
    if isinstance(d, HalfNormal):
        return d.base_dist, [AbsTransform()]
    return d.base_dist, d.transforms


def _kl_transformed_transformed(p, q):
    """KL of the bases when the transforms are equal, as PyTorch's (exact
    for bijective transforms, which leave the KL unchanged)"""
    (p_base, p_transforms), (q_base, q_transforms) = _as_transformed(p), _as_transformed(q)
    if p_transforms != q_transforms or p.event_shape != q.event_shape:
        raise NotImplementedError("No KL(p || q) is implemented for TransformedDistributions "
                                  "whose transforms or event shapes differ")
    return kl_divergence(p_base, q_base)


# PyTorch's (TransformedDistribution, TransformedDistribution), and the
# pairs that stand in for it with LogNormal and HalfNormal (but theirs with
# themselves, registered in counts.py)
for _type_p in (TransformedDistribution, LogNormal, HalfNormal):
    for _type_q in (TransformedDistribution, LogNormal, HalfNormal):
        if _type_p is TransformedDistribution or _type_p is not _type_q:
            register_kl(_type_p, _type_q)(_kl_transformed_transformed)


# Infinite: p puts mass where q has none (for every parameter value).
# p's class and the parameter the result takes its shape from -> the q classes
_INFINITE = {
    (Beta, 'concentration1'): (Pareto,),
    (ContinuousBernoulli, 'probs'): (Pareto,),
    (Exponential, 'rate'): (Beta, ContinuousBernoulli, Pareto, Uniform),
    (Gamma, 'concentration'): (Beta, ContinuousBernoulli, Pareto, Uniform),
    (Gumbel, 'loc'): (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform),
    (Laplace, 'loc'): (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform),
    (Normal, 'loc'): (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform),
    (Pareto, 'scale'): (Beta, ContinuousBernoulli, Uniform),
    (Poisson, 'rate'): (Bernoulli, Binomial),
}


def _infinite_kl(param):
    """inf in the shape of p's parameter param (PyTorch's shape: not
    broadcast with q's), with no gradient"""
    def kl(p, q):
        return _infinite_like(getattr(p, param))
    return kl


for (_type_p, _param), _types_q in _INFINITE.items():
    for _type_q in _types_q:
        register_kl(_type_p, _type_q)(_infinite_kl(_param))
del _type_p, _type_q, _param, _types_q


def _outside(result, mask):
    """result, infinite where mask (p's support not inside q's)"""
    return tg.where(mask, _infinite_like(result), result)


# E_p[-log q(x)] of each q family, from the moments of p it needs

def _cross_entropy_exponential(q, mean):
    return q.rate * mean - q.rate.log()


def _cross_entropy_normal(q, mean, variance):
    """variance + (mean - loc)^2 is E_p[(x - loc)^2]"""
    return (0.5 * math.log(2 * math.pi) + q.scale.log() +
            (variance + (mean - q.loc).pow(2)) / (2 * q.scale.pow(2)))


def _cross_entropy_gamma(q, mean, mean_log):
    """mean_log is E_p[log x]"""
    k = q.concentration
    return tg.lgamma(k) - k * q.rate.log() - (k - 1) * mean_log + q.rate * mean


def _cross_entropy_gumbel(q, mean, mean_exp):
    """mean_exp is E_p[exp(-(x - loc) / scale)]"""
    return q.scale.log() + (mean - q.loc) / q.scale + mean_exp


def _cross_entropy_beta(q, mean_log, mean_log1m):
    """mean_log1m is E_p[log(1 - x)]"""
    a, b = q.concentration1, q.concentration0
    log_beta = tg.lgamma(a) + tg.lgamma(b) - tg.lgamma(a + b)
    return log_beta - (a - 1) * mean_log - (b - 1) * mean_log1m


def _cross_entropy_pareto(q, mean_log):
    return (q.alpha + 1) * mean_log - q.alpha.log() - q.alpha * q.scale.log()


def _beta_mean_log(p):
    return tg.digamma(p.concentration1) - tg.digamma(p.concentration1 + p.concentration0)


def _gamma_mean_log(p):
    return tg.digamma(p.concentration) - p.rate.log()


def _uniform_mean_log(low, high):
    """E[log x] for x uniform on (low, high): [x log x - x] / (high - low);
    NaN where an end is <= 0 (0 log 0 too, as PyTorch's)"""
    return (high * high.log() - low * low.log()) / (high - low) - 1


def _pareto_mean(p):
    """alpha scale / (alpha - 1), left finite (negative) for alpha < 1
    where the callers give inf"""
    return p.alpha * p.scale / (p.alpha - 1)


# ContinuousBernoulli

def _cross_entropy_cb(p, q):
    """-E_p[log q(x)] less p's entropy for a p on [0, 1] and a
    ContinuousBernoulli q, whose log density is linear in x"""
    return -p.entropy() - p.mean * q.logits - tg.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + tg.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - tg.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return _cross_entropy_cb(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    return _outside(_cross_entropy_cb(p, q),
                    (p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound))


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() + _cross_entropy_exponential(q, p.mean)


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    return -p.entropy() + _cross_entropy_normal(q, p.mean, p.variance)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    return _outside(-p.entropy() + (q.high - q.low).log(),
                    (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound))


# same family

@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    numerator = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return numerator.log() - (4 * p.scale * q.scale).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    # x = loc_p + scale_p g, g standard Gumbel: E[exp(-t g)] = Gamma(1 + t)
    ratio = p.scale / q.scale
    mean_exp = ((q.loc - p.loc) / q.scale + tg.lgamma(1 + ratio)).exp()
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, mean_exp)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    result = -p.entropy() + _cross_entropy_pareto(q, p.scale.log() + p.alpha.reciprocal())
    return _outside(result, p.support.lower_bound < q.support.lower_bound)


# p discrete

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    # log(x!) is 0 on {0, 1}
    return -p.entropy() + q.rate - p.probs * q.rate.log()


# p Beta

@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() + _cross_entropy_exponential(q, p.mean)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    return -p.entropy() + _cross_entropy_gamma(q, p.mean, _beta_mean_log(p))


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return -p.entropy() + _cross_entropy_normal(q, p.mean, p.variance)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    return _outside(-p.entropy() + (q.high - q.low).log(),
                    (q.low > p.support.lower_bound) | (q.high < p.support.upper_bound))


# p Exponential

@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    return -p.entropy() + _cross_entropy_gamma(q, p.mean, -EULER_GAMMA - p.rate.log())


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    # E[exp(-x / scale)] = rate / (rate + 1 / scale)
    rate_scale = p.rate * q.scale
    mean_exp = (q.loc / q.scale).exp() * rate_scale / (rate_scale + 1)
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, mean_exp)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return -p.entropy() + _cross_entropy_normal(q, p.mean, p.variance)


# p Gamma

@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() + _cross_entropy_exponential(q, p.mean)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    # E[exp(-x / scale)] = (1 + 1 / (rate scale))^-concentration
    mean_exp = ((q.loc / q.scale).exp() *
                (1 + (p.rate * q.scale).reciprocal()).pow(-p.concentration))
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, mean_exp)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    return -p.entropy() + _cross_entropy_normal(q, p.mean, p.variance)


# p Gumbel, Laplace, Normal

@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    return -p.entropy() + _cross_entropy_normal(q, p.mean, p.variance)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return -p.entropy() + _cross_entropy_normal(q, p.mean, p.variance)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    # the log-normal mean: E[exp(-x / scale)] = exp(-loc / scale + var / (2 scale^2))
    mean_exp = ((q.loc - p.loc) / q.scale + 0.5 * (p.scale / q.scale).pow(2)).exp()
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, mean_exp)


# p Pareto: the mean is infinite for alpha <= 1, the variance for alpha <= 2

@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    result = -p.entropy() + _cross_entropy_exponential(q, _pareto_mean(p))
    return _outside(result, p.alpha <= 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    mean_log = p.scale.log() + p.alpha.reciprocal()
    result = -p.entropy() + _cross_entropy_gamma(q, _pareto_mean(p), mean_log)
    return _outside(result, p.alpha <= 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    a = p.alpha
    variance = a * (p.scale / (a - 1)).pow(2) / (a - 2)
    result = -p.entropy() + _cross_entropy_normal(q, _pareto_mean(p), variance)
    return _outside(result, a <= 2)


# p Uniform

@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    mean_log = _uniform_mean_log(p.low, p.high)
    mean_log1m = _uniform_mean_log(1 - p.high, 1 - p.low)
    result = -p.entropy() + _cross_entropy_beta(q, mean_log, mean_log1m)
    return _outside(result, (p.high > q.support.upper_bound) | (p.low < q.support.lower_bound))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() + _cross_entropy_exponential(q, p.mean)
    return _outside(result, p.low < q.support.lower_bound)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    result = -p.entropy() + _cross_entropy_gamma(q, p.mean, _uniform_mean_log(p.low, p.high))
    return _outside(result, p.low < q.support.lower_bound)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    # E[exp(-z)] = scale / (high - low) [exp(-z(low)) - exp(-z(high))]
    z_low, z_high = (p.low - q.loc) / q.scale, (p.high - q.loc) / q.scale
    mean_exp = q.scale / (p.high - p.low) * ((-z_low).exp() - (-z_high).exp())
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, mean_exp)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    result = -p.entropy() + _cross_entropy_pareto(q, _uniform_mean_log(p.low, p.high))
    return _outside(result, p.low < q.support.lower_bound)


# LowRankMultivariateNormal

def _batch_trace_XXT(bmat):
    """trace(X X^T) over the last two dims"""
    return bmat.pow(2).sum((-2, -1))


def _check_events(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with "
                         "different event shapes cannot be computed")


def _lowrank_parts(q):
    """W, D, C of a low-rank q, and A = C^-1 W^T D^-1 (C its capacitance
    factor), the pieces of tr(Sigma_q^-1 M) by Woodbury"""
    W, D, C = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril
    A = tg.linalg.solve_triangular(C, W.mT / D.unsqueeze(-2), upper=False)
    return W, D, C, A


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _check_events(p, q)
    qW, qD, qC, A = _lowrank_parts(q)
    pW, pD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = _batch_lowrank_logdet(qW, qD, qC) - \
        _batch_lowrank_logdet(pW, pD, p._capacitance_tril)
    term3 = _batch_lowrank_mahalanobis(qW, qD, q.loc - p.loc, qC)
    term2 = ((pD / qD).sum(-1) + _batch_trace_XXT(pW * qD.rsqrt().unsqueeze(-1))
             - _batch_trace_XXT(A * pD.sqrt().unsqueeze(-2)) - _batch_trace_XXT(A @ pW))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _check_events(p, q)
    qW, qD, qC, A = _lowrank_parts(q)
    pL = p._unbroadcasted_scale_tril
    term1 = _batch_lowrank_logdet(qW, qD, qC) - \
        2 * pL.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term3 = _batch_lowrank_mahalanobis(qW, qD, q.loc - p.loc, qC)
    term2 = _batch_trace_XXT(pL * qD.rsqrt().unsqueeze(-1)) - _batch_trace_XXT(A @ pL)
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _check_events(p, q)
    qL = q._unbroadcasted_scale_tril
    pW, pD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = 2 * qL.diagonal(dim1=-2, dim2=-1).log().sum(-1) - \
        _batch_lowrank_logdet(pW, pD, p._capacitance_tril)
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    batch = tuple(tg.broadcast_shapes(tuple(qL.shape[:-2]), tuple(pW.shape[:-2])))
    n = p.event_shape[0]
    qL = qL.expand(batch + (n, n))
    pW = pW.expand(batch + (n, pW.shape[-1]))
    pD_sqrt = tg.diag_embed(pD.sqrt()).expand(batch + (n, n))
    term2 = (_batch_trace_XXT(tg.linalg.solve_triangular(qL, pW, upper=False)) +
             _batch_trace_XXT(tg.linalg.solve_triangular(qL, pD_sqrt, upper=False)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])
