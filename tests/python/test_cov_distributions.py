"""tg.distributions against torch.distributions: log_prob, cdf, icdf,
entropy and the moments (values and gradients in float64), sample shapes
and statistics (draws come from tensorgraph's generator, so only their
law is compared), argument and sample validation, kl_divergence."""
import math

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.distributions as D
from conftest import close, needs_torch, torch

if torch is not None:
    import torch.distributions as TD


def _pair(values):
    """float64 leaves with the same data in both libraries"""
    a = tg.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)
    b = torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)
    return a, b


def _same(out_tg, out_torch, ins_tg, ins_torch, rtol=1e-9, atol=1e-11):
    """equal values, and equal gradients of sum(out * w) for a fixed w"""
    close(out_tg, out_torch.detach().numpy(), rtol, atol)
    assert tuple(out_tg.shape) == tuple(out_torch.shape)
    if not out_torch.requires_grad:
        return
    w = np.random.RandomState(3).uniform(0.5, 1.5, tuple(out_torch.shape))
    gt = tg.autograd.grad((out_tg * tg.tensor(w)).sum(), ins_tg, retain_graph=True,
                       allow_unused=True)
    gp = torch.autograd.grad((out_torch * torch.tensor(w)).sum(), ins_torch,
                             retain_graph=True, allow_unused=True)
    for a, b in zip(gt, gp):
        if b is None:
            continue
        close(a, b.numpy(), rtol, atol)


UNIVARIATE = [
    ('Normal', ([0.3, -1.0, 2.0], [0.5, 1.5, 2.0]), [0.1, -0.4, 3.5]),
    ('Laplace', ([0.3, -1.0, 2.0], [0.5, 1.5, 2.0]), [0.1, -0.4, 3.5]),
    ('Uniform', ([-1.0, 0.0, 2.0], [1.0, 0.5, 4.0]), [0.1, 0.25, 3.5]),
    ('Exponential', ([0.5, 1.5, 3.0],), [0.1, 0.4, 3.5]),
    ('Beta', ([0.5, 2.0, 3.0], [0.7, 1.5, 4.0]), [0.1, 0.4, 0.9]),
    ('Gamma', ([0.5, 2.0, 7.0], [1.5, 0.7, 2.0]), [0.1, 0.4, 3.5]),
    ('Cauchy', ([0.3, -1.0, 2.0], [0.5, 1.5, 2.0]), [0.1, -0.4, 3.5]),
]
LIGHT_TAILED = [u for u in UNIVARIATE if u[0] != 'Cauchy']


@needs_torch
@pytest.mark.parametrize('name,params,value', UNIVARIATE, ids=[u[0] for u in UNIVARIATE])
def test_univariate_against_torch(name, params, value):
    pairs = [_pair(p) for p in params]
    ours = getattr(D, name)(*[a for a, _ in pairs])
    theirs = getattr(TD, name)(*[b for _, b in pairs])
    ins_tg, ins_torch = [a for a, _ in pairs], [b for _, b in pairs]
    v_tg, v_torch = tg.tensor(value, dtype=tg.float64), torch.tensor(value, dtype=torch.float64)
    # PyTorch's digamma/trigamma (Beta's and Gamma's gradients) are off by up to 5e-10
    tol = dict(rtol=1e-7, atol=1e-9) if name in ('Beta', 'Gamma') else {}
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    _same(ours.log_prob(v_tg), theirs.log_prob(v_torch), ins_tg, ins_torch, **tol)
    _same(ours.entropy(), theirs.entropy(), ins_tg, ins_torch, **tol)
    for moment in ('mean', 'variance', 'stddev'):
        _same(getattr(ours, moment), getattr(theirs, moment), ins_tg, ins_torch, **tol)
    if name == 'Gamma':   # PyTorch 1.13's Gamma has neither cdf nor icdf
        for fn in ('cdf', 'icdf'):
            with pytest.raises(NotImplementedError):
                getattr(theirs, fn)(v_torch)
            with pytest.raises(NotImplementedError):
                getattr(ours, fn)(v_tg)
    elif name != 'Beta':  # PyTorch's Beta has no cdf/icdf
        _same(ours.cdf(v_tg), theirs.cdf(v_torch), ins_tg, ins_torch)
        p = [0.1, 0.5, 0.8]
        _same(ours.icdf(tg.tensor(p, dtype=tg.float64)),
              theirs.icdf(torch.tensor(p, dtype=torch.float64)), ins_tg, ins_torch)
    if name != 'Uniform':  # Uniform's mode is NaN in both
        close(ours.mode, theirs.mode.detach().numpy())
    assert str(ours).split('(')[0] == str(theirs).split('(')[0]


@pytest.mark.parametrize('name,params,value', LIGHT_TAILED, ids=[u[0] for u in LIGHT_TAILED])
def test_univariate_samples(name, params, value):
    dist = getattr(D, name)(*[tg.tensor(p, dtype=tg.float64) for p in params])
    draws = dist.sample((20000,))
    assert draws.shape == (20000, 3) and not draws.requires_grad
    assert dist.sample().shape == (3,)
    assert dist.sample((2, 4)).shape == (2, 4, 3)
    se = dist.stddev.numpy() / math.sqrt(20000)
    np.testing.assert_array_less(np.abs(draws.mean(0).numpy() - dist.mean.numpy()), 6 * se)
    np.testing.assert_allclose(draws.std(0).numpy(), dist.stddev.numpy(), rtol=0.05)
    assert bool(dist.support.check(draws).all())


@pytest.mark.parametrize('name', ['Normal', 'Laplace', 'Uniform', 'Exponential', 'Beta',
                                  'Gamma'])
def test_rsample_is_differentiable(name):
    params = [tg.tensor(p, dtype=tg.float64, requires_grad=True)
              for p in dict((u[0], u[1]) for u in UNIVARIATE)[name]]
    dist = getattr(D, name)(*params)
    draws = dist.rsample((4000,))
    assert draws.requires_grad
    grads = tg.autograd.grad(draws.mean(), params)
    # the pathwise estimate of d E[x] / d params: the mean's derivative
    expected = tg.autograd.grad(dist.mean.sum() / 3, params, allow_unused=True)
    for g, e in zip(grads, expected):
        e = np.zeros(3) if e is None else e.numpy()
        np.testing.assert_allclose(g.numpy() * 3, e * 3, atol=0.15, rtol=0.05)


@needs_torch
def test_bernoulli_against_torch():
    for kind in ('probs', 'logits'):
        vals = [0.2, 0.5, 0.9] if kind == 'probs' else [-1.2, 0.0, 2.0]
        a, b = _pair(vals)
        ours, theirs = D.Bernoulli(**{kind: a}), TD.Bernoulli(**{kind: b})
        v = [1.0, 0.0, 1.0]
        _same(ours.log_prob(tg.tensor(v, dtype=tg.float64)),
              theirs.log_prob(torch.tensor(v, dtype=torch.float64)), [a], [b])
        _same(ours.entropy(), theirs.entropy(), [a], [b])
        _same(ours.probs, theirs.probs, [a], [b])
        _same(ours.logits, theirs.logits, [a], [b])
        _same(ours.variance, theirs.variance, [a], [b])
        close(ours.mode, theirs.mode.numpy())
        close(ours.enumerate_support(), theirs.enumerate_support().numpy())
        assert ours.enumerate_support(expand=False).shape == (2, 1)
    draws = D.Bernoulli(tg.tensor([0.2, 0.7])).sample((20000,))
    np.testing.assert_allclose(draws.mean(0).numpy(), [0.2, 0.7], atol=0.02)


@needs_torch
def test_categorical_against_torch():
    raw = np.random.RandomState(0).uniform(0.1, 1, (2, 4))
    for kind in ('probs', 'logits'):
        a, b = _pair(raw)
        ours, theirs = D.Categorical(**{kind: a}), TD.Categorical(**{kind: b})
        assert ours.batch_shape == (2,) and ours.event_shape == ()
        idx = [[3, 1], [0, 2], [1, 1]]
        _same(ours.log_prob(tg.tensor(idx)), theirs.log_prob(torch.tensor(idx)), [a], [b])
        _same(ours.entropy(), theirs.entropy(), [a], [b])
        _same(ours.probs, theirs.probs, [a], [b])
        close(ours.mode, theirs.mode.numpy())
        assert ours.sample((5, 3)).shape == (5, 3, 2)
        close(ours.enumerate_support(), theirs.enumerate_support().numpy())
        o, t = D.OneHotCategorical(**{kind: a}), TD.OneHotCategorical(**{kind: b})
        assert o.event_shape == (4,) and o.sample((7,)).shape == (7, 2, 4)
        onehot = np.eye(4)[[2, 0]]
        _same(o.log_prob(tg.tensor(onehot)), t.log_prob(torch.tensor(onehot)), [a], [b])
        _same(o.entropy(), t.entropy(), [a], [b])
        _same(o.variance, t.variance, [a], [b])
        close(o.mode, t.mode.numpy())
        close(o.enumerate_support(), t.enumerate_support().numpy())
    probs = tg.tensor([0.1, 0.6, 0.3])
    counts = np.bincount(D.Categorical(probs).sample((20000,)).numpy(), minlength=3)
    np.testing.assert_allclose(counts / 20000, [0.1, 0.6, 0.3], atol=0.02)
    onehots = D.OneHotCategorical(probs).sample((20000,))
    np.testing.assert_allclose(onehots.mean(0).numpy(), [0.1, 0.6, 0.3], atol=0.02)


def _spd(n, batch=(), seed=0):
    a = np.random.RandomState(seed).normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@needs_torch
@pytest.mark.parametrize('param', ['covariance_matrix', 'precision_matrix', 'scale_tril'])
def test_multivariate_normal_against_torch(param):
    m = _spd(3, (2,))
    if param == 'scale_tril':
        m = np.linalg.cholesky(m)
    loc_t, loc_p = _pair(np.random.RandomState(1).normal(size=3))
    m_t, m_p = _pair(m)
    ours = D.MultivariateNormal(loc_t, **{param: m_t})
    theirs = TD.MultivariateNormal(loc_p, **{param: m_p})
    assert ours.batch_shape == (2,) and ours.event_shape == (3,)
    v = np.random.RandomState(2).normal(size=(4, 2, 3))
    ins_t, ins_p = [loc_t, m_t], [loc_p, m_p]
    _same(ours.log_prob(tg.tensor(v)), theirs.log_prob(torch.tensor(v)), ins_t, ins_p)
    _same(ours.entropy(), theirs.entropy(), ins_t, ins_p)
    for name in ('scale_tril', 'covariance_matrix', 'precision_matrix', 'variance', 'mean'):
        _same(getattr(ours, name), getattr(theirs, name), ins_t, ins_p, rtol=1e-8)
    draws = ours.rsample((20000,))
    assert draws.shape == (20000, 2, 3) and draws.requires_grad
    emp = np.einsum('sbi,sbj->bij', draws.detach().numpy() - loc_t.detach().numpy(),
                    draws.detach().numpy() - loc_t.detach().numpy()) / 20000
    cov = ours.covariance_matrix.detach().numpy()
    scale = np.sqrt(np.einsum('bii->bi', cov))
    # within 5 standard errors (sqrt(2 / N) of each sqrt(var_i var_j))
    np.testing.assert_array_less(np.abs(emp - cov) / (scale[:, :, None] * scale[:, None, :]),
                                 5 * math.sqrt(2 / 20000))


@needs_torch
def test_independent_and_expand():
    a, b = _pair(np.random.RandomState(0).normal(size=(2, 3)))
    ours = D.Independent(D.Normal(a, 1.0), 1)
    theirs = TD.Independent(TD.Normal(b, 1.0), 1)
    assert ours.batch_shape == (2,) and ours.event_shape == (3,)
    v = np.zeros((5, 2, 3))
    _same(ours.log_prob(tg.tensor(v)), theirs.log_prob(torch.tensor(v)), [a], [b])
    _same(ours.entropy(), theirs.entropy(), [a], [b])
    assert ours.rsample((4,)).shape == (4, 2, 3) and ours.has_rsample
    with pytest.raises(ValueError):
        D.Independent(D.Normal(a, 1.0), 3)
    e = D.Normal(tg.tensor(0.0), tg.tensor(1.0)).expand((4, 2))
    assert e.batch_shape == (4, 2) and e.sample().shape == (4, 2)
    c = D.Categorical(logits=tg.zeros(3)).expand((5,))
    assert c.batch_shape == (5,) and c.sample((2,)).shape == (2, 5)


def _kl_pairs():
    r = np.random.RandomState(0)
    pos = lambda: r.uniform(0.5, 2, 3)  # noqa: E731
    probs = lambda: r.dirichlet(np.ones(4), 2)  # noqa: E731
    return [('Normal', 'Normal', (r.normal(size=3), pos()), (r.normal(size=3), pos())),
            ('Laplace', 'Laplace', (r.normal(size=3), pos()), (r.normal(size=3), pos())),
            ('Normal', 'Laplace', (r.normal(size=3), pos()), (r.normal(size=3), pos())),
            ('Exponential', 'Exponential', (pos(),), (pos(),)),
            ('Uniform', 'Uniform', ([0.0, 0.2, -1.0], [1.0, 0.5, 1.0]),
             ([-1.0, 0.0, -2.0], [2.0, 0.6, 0.0])),
            ('Uniform', 'Normal', ([0.0, 0.2, -1.0], [1.0, 0.5, 1.0]), (r.normal(size=3), pos())),
            ('Beta', 'Beta', (pos(), pos()), (pos(), pos())),
            ('Gamma', 'Gamma', (pos(), pos()), (pos(), pos())),
            ('Bernoulli', 'Bernoulli', (r.uniform(0.1, 0.9, 3),), (r.uniform(0.1, 0.9, 3),)),
            ('Categorical', 'Categorical', (probs(),), (probs(),)),
            ('OneHotCategorical', 'OneHotCategorical', (probs(),), (probs(),))]


@needs_torch
@pytest.mark.parametrize('p_name,q_name,p_args,q_args', _kl_pairs(),
                         ids=[f'{p[0]}-{p[1]}' for p in _kl_pairs()])
def test_kl_divergence_against_torch(p_name, q_name, p_args, q_args):
    pp, qp = [_pair(x) for x in p_args], [_pair(x) for x in q_args]
    ours = D.kl_divergence(getattr(D, p_name)(*[a for a, _ in pp]),
                           getattr(D, q_name)(*[a for a, _ in qp]))
    theirs = TD.kl_divergence(getattr(TD, p_name)(*[b for _, b in pp]),
                              getattr(TD, q_name)(*[b for _, b in qp]))
    # rtol 1e-7: PyTorch's digamma (Beta's gradients) is off by up to 5e-10
    _same(ours, theirs, [a for a, _ in pp + qp], [b for _, b in pp + qp], rtol=1e-7, atol=1e-9)


@needs_torch
def test_kl_multivariate_normal_and_independent():
    l1, l1p = _pair(np.linalg.cholesky(_spd(3, (2,), 0)))
    l2, l2p = _pair(np.linalg.cholesky(_spd(3, (), 1)))
    m1, m1p = _pair(np.random.RandomState(3).normal(size=(2, 3)))
    ours = D.kl_divergence(D.MultivariateNormal(m1, scale_tril=l1),
                           D.MultivariateNormal(tg.zeros(3, dtype=tg.float64), scale_tril=l2))
    theirs = TD.kl_divergence(TD.MultivariateNormal(m1p, scale_tril=l1p),
                              TD.MultivariateNormal(torch.zeros(3, dtype=torch.float64),
                                                    scale_tril=l2p))
    _same(ours, theirs, [l1, l2, m1], [l1p, l2p, m1p], rtol=1e-8)
    a, b = _pair(np.random.RandomState(4).normal(size=(2, 3)))
    ours = D.kl_divergence(D.Independent(D.Normal(a, 1.0), 1),
                           D.Independent(D.Normal(tg.zeros(2, 3, dtype=tg.float64), 2.0), 1))
    theirs = TD.kl_divergence(TD.Independent(TD.Normal(b, 1.0), 1),
                              TD.Independent(TD.Normal(torch.zeros(2, 3, dtype=torch.float64),
                                                       2.0), 1))
    _same(ours, theirs, [a], [b])
    # infinite, as PyTorch's: the Normal puts mass outside (0, 1)
    assert math.isinf(D.kl_divergence(D.Normal(0.0, 1.0), D.Beta(1.0, 1.0)).item())
    # a pair PyTorch 1.13 registers no closed form for
    with pytest.raises(NotImplementedError, match='No KL'):
        D.kl_divergence(D.Beta(1.0, 1.0), D.Laplace(0.0, 1.0))


def test_register_kl_dispatch():
    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return tg.tensor(42.0)

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0))) == 42.0
    # a plain Normal still takes the general formula
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0))) == 0.0


@needs_torch
def test_validation_errors_as_torch():
    bad = [('Normal', (0.0, -1.0)), ('Laplace', (0.0, 0.0)), ('Exponential', (-2.0,)),
           ('Uniform', (1.0, 0.0)), ('Beta', (0.0, 1.0)), ('Gamma', (1.0, -1.0))]
    for name, args in bad:
        with pytest.raises(ValueError):
            getattr(TD, name)(*[torch.tensor(a) for a in args], validate_args=True)
        with pytest.raises(ValueError):
            getattr(D, name)(*[tg.tensor(a) for a in args], validate_args=True)
        getattr(D, name)(*[tg.tensor(a) for a in args], validate_args=False)
    with pytest.raises(ValueError, match='GreaterThan'):
        D.Normal(tg.tensor([0.0]), tg.tensor([-1.0]))
    with pytest.raises(ValueError, match='support'):
        D.Exponential(1.0).log_prob(tg.tensor(-1.0))
    with pytest.raises(ValueError, match='Tensor'):
        D.Normal(0.0, 1.0).log_prob(0.5)
    with pytest.raises(ValueError, match='broadcastable'):
        D.Normal(tg.zeros(3), 1.0).log_prob(tg.zeros(2))
    with pytest.raises(ValueError, match='support'):
        D.Bernoulli(tg.tensor(0.3)).log_prob(tg.tensor(0.5))
    with pytest.raises(ValueError):
        D.Bernoulli(probs=tg.tensor(0.3), logits=tg.tensor(0.1))
    with pytest.raises(ValueError):
        D.Bernoulli(tg.tensor(1.5))
    with pytest.raises(ValueError):
        D.Categorical(tg.tensor([-0.1, 1.1]))
    with pytest.raises(ValueError, match='one-dimensional'):
        D.Categorical(tg.tensor(0.5))
    with pytest.raises(ValueError, match='Exactly one'):
        D.MultivariateNormal(tg.zeros(2))
    with pytest.raises(ValueError, match='at least one-dimensional'):
        D.MultivariateNormal(tg.tensor(0.0), covariance_matrix=tg.eye(1))
    with pytest.raises(ValueError, match='PositiveDefinite'):
        D.MultivariateNormal(tg.zeros(2), covariance_matrix=tg.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match='LowerCholesky'):
        D.MultivariateNormal(tg.zeros(2), scale_tril=tg.tensor([[1.0, 1.0], [0.0, 1.0]]))


@needs_torch
def test_constraints_and_repr_as_torch():
    for name in ('real', 'positive', 'nonnegative', 'unit_interval', 'simplex', 'boolean',
                 'real_vector', 'lower_cholesky', 'positive_definite'):
        assert repr(getattr(D.constraints, name)) == repr(getattr(TD.constraints, name))
    assert repr(D.constraints.interval(0.0, 2.0)) == repr(TD.constraints.interval(0.0, 2.0))
    assert repr(D.Normal(0.0, 1.0)) == repr(TD.Normal(0.0, 1.0))
    assert repr(D.Normal(tg.zeros(2), tg.ones(2))) == \
        repr(TD.Normal(torch.zeros(2), torch.ones(2))).replace('torch', 'tensorgraph')
    assert repr(D.Uniform(0.0, 2.0).support) == repr(TD.Uniform(0.0, 2.0).support)
    assert D.Normal(0.0, 1.0).batch_shape == () and D.Normal(0.0, 1.0).sample().shape == ()
    assert D.Normal(0.0, 1.0).sample().dtype == tg.float32


@needs_torch
def test_gamma_implicit_gradient_matches_torch():
    """the pathwise gradient of a Gamma draw: per draw, -(dP/dalpha)/p(x)
    at the drawn x; PyTorch's for the same x and alpha agrees"""
    from tensorgraph.distributions.gamma import _dx_dalpha
    alpha = np.array([0.3, 1.0, 2.5, 10.0, 50.0])
    x = np.array([0.05, 0.7, 3.1, 8.0, 55.0])
    ours = _dx_dalpha(tg.tensor(alpha), tg.tensor(x)).numpy()
    theirs = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)


@needs_torch
def test_cauchy_draws_follow_its_cdf():
    draws = D.Cauchy(tg.tensor(0.5), tg.tensor(2.0)).sample((20000,)).numpy()
    for q in (0.1, 0.25, 0.5, 0.9):
        x = float(TD.Cauchy(0.5, 2.0).icdf(torch.tensor(q)))
        assert abs((draws <= x).mean() - q) < 0.015


@needs_torch
def test_dirichlet_against_torch():
    conc = np.array([[0.5, 2.0, 3.0], [0.3, 0.4, 0.9]])
    a, b = _pair(conc)
    ours, theirs = D.Dirichlet(a), TD.Dirichlet(b)
    assert ours.batch_shape == (2,) and ours.event_shape == (3,)
    v = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    tol = dict(rtol=1e-7, atol=1e-9)   # PyTorch's digamma
    _same(ours.log_prob(tg.tensor(v)), theirs.log_prob(torch.tensor(v)), [a], [b], **tol)
    _same(ours.entropy(), theirs.entropy(), [a], [b], **tol)
    for name in ('mean', 'variance'):
        _same(getattr(ours, name), getattr(theirs, name), [a], [b], **tol)
    close(ours.mode, theirs.mode.detach().numpy())
    draws = ours.rsample((8000,))
    assert draws.shape == (8000, 2, 3) and draws.requires_grad
    np.testing.assert_allclose(draws.sum(-1).detach().numpy(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(draws.mean(0).detach().numpy(), ours.mean.detach().numpy(),
                               atol=0.01)
    g, = tg.autograd.grad(draws.mean(0)[0, 1], a)
    e, = tg.autograd.grad(ours.mean[0, 1], a)
    np.testing.assert_allclose(g.numpy(), e.numpy(), atol=0.02)
    p, q = _pair(conc[::-1].copy())
    _same(D.kl_divergence(D.Dirichlet(a), D.Dirichlet(p)),
          TD.kl_divergence(TD.Dirichlet(b), TD.Dirichlet(q)), [a, p], [b, q], **tol)
    with pytest.raises(ValueError):
        D.Dirichlet(tg.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match='one-dimensional'):
        D.Dirichlet(tg.tensor(1.0))
