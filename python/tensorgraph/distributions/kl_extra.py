"""The kl_divergence pairs of PyTorch 1.13 for the distributions added
after kl.py: two members of one exponential family (the Bregman
divergence of the log normalizer), ContinuousBernoulli against the
univariate families (infinite where the supports differ), and the
low-rank Gaussians against each other and MultivariateNormal."""
import math

import tensorgraph as tg

from .beta import Beta
from .continuous import Exponential, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .exp_family import ExponentialFamily
from .gamma import Gamma
from .kl import _infinite_like, register_kl
from .lowrank_multivariate_normal import (_batch_lowrank_logdet, _batch_lowrank_mahalanobis,
                                          LowRankMultivariateNormal)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .transformed_families import Gumbel, Pareto

__all__ = []


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if type(p) is not type(q):
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}: "
                                  "the cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    return p._bregman_kl(q)


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
    result = _cross_entropy_cb(p, q)
    outside = (p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound)
    return tg.where(outside, _infinite_like(result), result)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_pareto(p, q):
    return _infinite_like(p.probs)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - tg.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + tg.square(q.loc / q.scale)) + tg.log(q.scale)
    t3 = (p.variance + tg.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * tg.square(q.scale))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound)
    return tg.where(outside, _infinite_like(result), result)


def _register_infinite(param, *types_p):
    """KL(p || ContinuousBernoulli) is infinite for p not on [0, 1]"""
    for type_p in types_p:
        register_kl(type_p, ContinuousBernoulli)(
            lambda p, q: _infinite_like(getattr(p, param)))


_register_infinite('rate', Exponential)
_register_infinite('concentration', Gamma)
_register_infinite('loc', Gumbel, Laplace, Normal)
_register_infinite('scale', Pareto)


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
