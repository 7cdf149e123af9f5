"""The torch.distributions 1.13 pieces added after test_distributions_more:
ContinuousBernoulli, the relaxed (Concrete) distributions,
OneHotCategoricalStraightThrough, VonMises, LowRankMultivariateNormal,
Wishart, LKJCholesky, ExponentialFamily, the Cat/Stack/CorrCholesky/
LowerCholesky/CumulativeDistribution transforms, biject_to/transform_to,
their kl_divergence pairs and torch's submodule names. Values and float64
gradients against torch; draws (tensorgraph's generator, fixed seed) by
shape, support and moments with wide margins."""
import math
import types

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.distributions as D
import tensorgraph.distributions.transforms as T
from conftest import SANITIZED, close, needs_torch, torch

if torch is not None:
    import torch.distributions as TD
    import torch.distributions.transforms as TT

torch_only = [needs_torch, pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")]


def with_torch(f):
    for mark in torch_only:
        f = mark(f)
    return f


def _pair(values):
    """float64 leaves with the same data in both libraries"""
    a = tg.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)
    b = torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)
    return a, b


def _pairs(*values):
    pairs = [_pair(v) for v in values]
    return [a for a, _ in pairs], [b for _, b in pairs]


def _same(out_tg, out_torch, ins_tg, ins_torch, rtol=1e-10, atol=1e-12):
    """equal values (NaN and inf where torch has them), shapes and dtypes,
    and equal gradients of sum(out * w) for a fixed w over the finite
    entries"""
    expected = out_torch.detach().numpy()
    close(out_tg, expected, rtol, atol)
    assert tuple(out_tg.shape) == tuple(out_torch.shape)
    assert str(out_tg.dtype).split('.')[-1] == str(out_torch.dtype).split('.')[-1]
    if not out_torch.requires_grad:
        return
    assert out_tg.requires_grad
    w = np.random.RandomState(3).uniform(0.5, 1.5, tuple(out_torch.shape))
    w = np.where(np.isfinite(expected), w, 0.0)
    gt = tg.autograd.grad((out_tg * tg.tensor(w)).sum(), ins_tg, retain_graph=True,
                          allow_unused=True)
    gp = torch.autograd.grad((out_torch * torch.tensor(w)).sum(), ins_torch,
                             retain_graph=True, allow_unused=True)
    for a, b in zip(gt, gp):
        if b is None:
            assert a is None or not np.any(a.numpy())
            continue
        close(a, b.numpy(), rtol, atol)


def _compare(ours, theirs, ins_tg, ins_torch, methods, value=None, rtol=1e-10, atol=1e-12):
    """each of methods (a property, or a method called with value) equal"""
    for method in methods:
        a, b = getattr(ours, method), getattr(theirs, method)
        if callable(b):
            if value is None:
                a, b = a(), b()
            else:
                a, b = a(tg.tensor(value)), b(torch.tensor(value))
        _same(a, b, ins_tg, ins_torch, rtol, atol)


R = np.random.RandomState(0)


# --- namespace ---------------------------------------------------------------

@with_torch
def test_names_match_torch():
    public = {n for n in dir(TD) if not n.startswith('_')}
    assert public <= set(dir(D))
    for name in dir(TT):
        if name.endswith('Transform') or name == 'identity_transform':
            assert hasattr(T, name), name
    for name in TD.constraints.__all__:
        assert hasattr(D.constraints, name), name
    # the lowercase module names, with the classes torch's modules export
    for name in public:
        module = getattr(TD, name)
        if isinstance(module, types.ModuleType) and name.islower() and name != 'utils':
            ours = __import__(f'tensorgraph.distributions.{name}', fromlist=['_'])
            assert ours is getattr(D, name)
            for cls in getattr(module, '__all__', []):
                assert hasattr(ours, cls), (name, cls)


def test_submodules_import_without_torch():
    from tensorgraph.distributions.normal import Normal
    from tensorgraph.distributions.one_hot_categorical import OneHotCategoricalStraightThrough
    from tensorgraph.distributions.relaxed_bernoulli import LogitRelaxedBernoulli
    from tensorgraph.distributions.relaxed_categorical import ExpRelaxedCategorical
    from tensorgraph.distributions.studentT import StudentT
    import tensorgraph.distributions.constraint_registry as cr
    assert Normal is D.Normal and StudentT is D.StudentT
    assert issubclass(OneHotCategoricalStraightThrough, D.OneHotCategorical)
    assert D.RelaxedBernoulli(tg.tensor(0.5), tg.tensor(0.3)).base_dist.__class__ is \
        LogitRelaxedBernoulli
    assert isinstance(D.RelaxedOneHotCategorical(tg.tensor(0.5), tg.tensor([0.3, 0.7]))
                      .base_dist, ExpRelaxedCategorical)
    assert cr.biject_to is D.biject_to


@with_torch
def test_exponential_family_members():
    for name in dir(TD):
        cls = getattr(TD, name)
        if isinstance(cls, type) and issubclass(cls, TD.Distribution):
            assert issubclass(getattr(D, name), D.ExponentialFamily) == \
                issubclass(cls, TD.ExponentialFamily), name


# --- ContinuousBernoulli ----------------------------------------------------

# inside lims (0.499, 0.501] the Taylor branches, elsewhere the closed forms
CB_PROBS = np.array([[0.02, 0.3, 0.4995], [0.5, 0.5008, 0.93]])
CB_VALUES = R.uniform(0.0, 1.0, (4, 2, 3))


@with_torch
@pytest.mark.parametrize('param', ['probs', 'logits'])
def test_continuous_bernoulli_against_torch(param):
    given = CB_PROBS if param == 'probs' else np.log(CB_PROBS / (1 - CB_PROBS))
    (a,), (b,) = _pairs(given)
    ours, theirs = D.ContinuousBernoulli(**{param: a}), TD.ContinuousBernoulli(**{param: b})
    assert ours.batch_shape == tuple(theirs.batch_shape) == (2, 3)
    assert repr(ours.support) == repr(theirs.support) and ours.has_rsample
    _compare(ours, theirs, [a], [b], ['mean', 'variance', 'stddev', 'entropy', 'probs',
                                      'logits'], rtol=1e-9)
    _compare(ours, theirs, [a], [b], ['log_prob', 'cdf'], CB_VALUES, rtol=1e-9)
    _compare(ours, theirs, [a], [b], ['icdf'], R.uniform(0.01, 0.99, (4, 2, 3)), rtol=1e-9)
    edges = np.array([-0.5, 0.0, 1.0, 2.0]).reshape(4, 1, 1) * np.ones((4, 2, 3))
    # outside [0, 1] the cdf is 0 or 1 (without validation)
    loose = D.ContinuousBernoulli(**{param: a}, validate_args=False)
    loose_t = TD.ContinuousBernoulli(**{param: b}, validate_args=False)
    close(loose.cdf(tg.tensor(edges)), loose_t.cdf(torch.tensor(edges)).detach().numpy())
    # the exponential-family entropy (through the log normalizer) agrees
    close(D.ExponentialFamily.entropy(ours), theirs.entropy().detach().numpy(), rtol=1e-6,
          atol=1e-7)
    big, big_t = ours.expand((5, 2, 3)), theirs.expand((5, 2, 3))
    assert big.batch_shape == (5, 2, 3) and big._lims == ours._lims
    close(big.log_prob(tg.tensor(CB_VALUES[0])), big_t.log_prob(
        torch.tensor(CB_VALUES[0])).detach().numpy(), rtol=1e-9)


def test_continuous_bernoulli_draws():
    # (at probs within lims the draw is the uniform itself, no gradient)
    probs = tg.tensor([0.1, 0.3, 0.8], dtype=tg.float64, requires_grad=True)
    dist = D.ContinuousBernoulli(probs)
    x = dist.rsample((40000,))
    assert x.shape == (40000, 3) and x.requires_grad and x.dtype == tg.float64
    assert bool(dist.support.check(x).all())
    se = np.sqrt(dist.variance.detach().numpy() / 40000)
    assert np.all(np.abs(x.detach().numpy().mean(0) - dist.mean.detach().numpy()) < 6 * se)
    # the pathwise gradient of the mean is the mean's derivative
    g, = tg.autograd.grad(x.mean(0).sum(), [probs], retain_graph=True)
    e, = tg.autograd.grad(dist.mean.sum(), [probs])
    close(g, e.numpy(), rtol=0.1, atol=0.02)
    s = dist.sample((2, 5))
    assert s.shape == (2, 5, 3) and not s.requires_grad
    assert D.ContinuousBernoulli(0.3).sample().shape == ()


def test_continuous_bernoulli_validation():
    with pytest.raises(ValueError, match='probs has invalid values'):
        D.ContinuousBernoulli(tg.tensor([1.5]), validate_args=True)
    with pytest.raises(ValueError, match='Either `probs` or `logits`'):
        D.ContinuousBernoulli()
    with pytest.raises(ValueError, match='support'):
        D.ContinuousBernoulli(tg.tensor([0.3]), validate_args=True).log_prob(tg.tensor([1.5]))
    # probs are clamped away from 0 and 1, as PyTorch's
    assert 0 < float(D.ContinuousBernoulli(tg.tensor(0.0)).probs) < 1e-6


# --- relaxed distributions ---------------------------------------------------

@with_torch
def test_relaxed_bernoulli_against_torch():
    probs = R.uniform(0.1, 0.9, (2, 3))
    (t, p), (t_, p_) = _pairs([0.7], probs)
    for ours, theirs, values in [
            (D.RelaxedBernoulli(t, p), TD.RelaxedBernoulli(t_, p_),
             R.uniform(0.02, 0.98, (4, 2, 3))),
            (D.relaxed_bernoulli.LogitRelaxedBernoulli(t, logits=p),
             TD.relaxed_bernoulli.LogitRelaxedBernoulli(t_, logits=p_),
             R.normal(size=(4, 2, 3)))]:
        assert ours.batch_shape == tuple(theirs.batch_shape)
        assert ours.has_rsample == theirs.has_rsample
        assert repr(ours.support) == repr(theirs.support)
        _compare(ours, theirs, [t, p], [t_, p_], ['log_prob'], values)
        _compare(ours, theirs, [t, p], [t_, p_], ['probs', 'logits'])
        assert ours.expand((4, 2, 3)).batch_shape == (4, 2, 3)
        assert type(ours.expand((4, 2, 3))) is type(ours)


@with_torch
def test_relaxed_one_hot_categorical_against_torch():
    probs = R.dirichlet(np.ones(4), size=(2, 3))
    (t, p), (t_, p_) = _pairs([0.6], probs)
    value = R.dirichlet(np.ones(4), size=(5, 2, 3))
    for ours, theirs, v in [
            (D.RelaxedOneHotCategorical(t, p), TD.RelaxedOneHotCategorical(t_, p_), value),
            (D.relaxed_categorical.ExpRelaxedCategorical(t, logits=p),
             TD.relaxed_categorical.ExpRelaxedCategorical(t_, logits=p_), np.log(value))]:
        assert ours.batch_shape == tuple(theirs.batch_shape) == (2, 3)
        assert ours.event_shape == tuple(theirs.event_shape) == (4,)
        assert repr(ours.support) == repr(theirs.support)
        _compare(ours, theirs, [t, p], [t_, p_], ['log_prob'], v, rtol=1e-9)
        big = ours.expand((7, 2, 3))
        assert type(big) is type(ours) and big.batch_shape == (7, 2, 3)
        assert big.sample().shape == (7, 2, 3, 4)


def test_relaxed_draws_follow_their_discrete_limit():
    # Gumbel-max: the argmax of a relaxed one-hot draw is Categorical(probs)
    # at any temperature, and a RelaxedBernoulli draw exceeds 1/2 with
    # probability probs
    probs = tg.tensor([0.2, 0.5, 0.3], dtype=tg.float64, requires_grad=True)
    x = D.RelaxedOneHotCategorical(tg.tensor(2.0, dtype=tg.float64), probs).rsample((30000,))
    assert x.shape == (30000, 3) and x.requires_grad
    assert bool(D.constraints.simplex.check(x).all())
    freq = np.bincount(x.detach().numpy().argmax(-1), minlength=3) / 30000
    np.testing.assert_allclose(freq, probs.detach().numpy(), atol=0.015)
    assert all(g is not None for g in tg.autograd.grad(x[:, 0].sum(), [probs]))
    p = tg.tensor([0.1, 0.6], dtype=tg.float64, requires_grad=True)
    y = D.RelaxedBernoulli(tg.tensor(0.3, dtype=tg.float64), p).rsample((30000,))
    assert y.requires_grad and bool(((y >= 0) & (y <= 1)).all())
    np.testing.assert_allclose((y.detach().numpy() > 0.5).mean(0), [0.1, 0.6], atol=0.015)


def test_one_hot_categorical_straight_through():
    probs = tg.tensor([[0.2, 0.8], [0.6, 0.4]], dtype=tg.float64, requires_grad=True)
    dist = D.OneHotCategoricalStraightThrough(probs)
    assert dist.has_rsample and not D.OneHotCategorical.has_rsample
    x = dist.rsample((1000,))
    assert x.shape == (1000, 2, 2) and x.requires_grad
    assert bool(D.constraints.one_hot.check(x.detach()).all())
    np.testing.assert_allclose(x.detach().numpy().mean(0), probs.detach().numpy(), atol=0.06)
    w = tg.tensor([[1.0, 2.0], [3.0, 5.0]], dtype=tg.float64)
    g, = tg.autograd.grad((x * w).sum(), [probs])
    # the draws' gradient is that of the normalized probs: w - <w, p> per row
    wn, p = w.numpy(), probs.detach().numpy()
    close(g, 1000 * (wn - (wn * p).sum(-1, keepdims=True)))
    assert type(dist.expand((3, 2))) is D.OneHotCategoricalStraightThrough


# --- VonMises -----------------------------------------------------------------

@with_torch
def test_von_mises_against_torch():
    loc = R.uniform(-3, 3, (2, 3))
    conc = np.array([[0.05, 1.0, 3.7], [3.8, 10.0, 150.0]])   # both polynomial branches
    ins, ins_t = _pairs(loc, conc)
    ours, theirs = D.VonMises(*ins), TD.VonMises(*ins_t)
    assert ours.batch_shape == tuple(theirs.batch_shape) and not ours.has_rsample
    _compare(ours, theirs, ins, ins_t, ['log_prob'], R.uniform(-4, 4, (5, 2, 3)))
    _compare(ours, theirs, ins, ins_t, ['mean', 'mode', 'variance'])
    big, big_t = ours.expand((4, 2, 3)), theirs.expand((4, 2, 3))
    assert big.batch_shape == tuple(big_t.batch_shape)
    close(big.variance, big_t.variance.detach().numpy(), rtol=1e-12)


def test_von_mises_draws():
    loc = tg.tensor([0.5, -2.8, 3.0], dtype=tg.float64)
    conc = tg.tensor([0.3, 2.0, 40.0], dtype=tg.float64)
    dist = D.VonMises(loc, conc)
    x = dist.sample((30000,))
    assert x.shape == (30000, 3) and x.dtype == tg.float64
    xs = x.numpy()
    assert np.all((xs >= -math.pi) & (xs < math.pi))
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - variance, E[sin(x - loc)] = 0
    c = np.cos(xs - loc.numpy()).mean(0)
    s = np.sin(xs - loc.numpy()).mean(0)
    np.testing.assert_allclose(c, 1 - dist.variance.numpy(), atol=0.02)
    np.testing.assert_allclose(s, 0.0, atol=0.02)
    assert D.VonMises(0.0, 1.0).sample((2,)).dtype == tg.float32
    with pytest.raises(ValueError, match='concentration'):
        D.VonMises(tg.tensor([0.0]), tg.tensor([0.0]), validate_args=True)


# --- LowRankMultivariateNormal -------------------------------------------------

def _lowrank_params(batch=(2,), n=4, m=2, seed=1):
    r = np.random.RandomState(seed)
    return r.normal(size=batch + (n,)), r.normal(size=batch + (n, m)), \
        r.uniform(0.5, 2, batch + (n,))


@with_torch
def test_lowrank_against_torch():
    ins, ins_t = _pairs(*_lowrank_params())
    ours, theirs = D.LowRankMultivariateNormal(*ins), TD.LowRankMultivariateNormal(*ins_t)
    assert ours.batch_shape == tuple(theirs.batch_shape) == (2,)
    assert ours.event_shape == tuple(theirs.event_shape) == (4,)
    _compare(ours, theirs, ins, ins_t, ['mean', 'mode', 'variance', 'scale_tril',
                                        'covariance_matrix', 'precision_matrix', 'entropy'],
             rtol=1e-9)
    _compare(ours, theirs, ins, ins_t, ['log_prob'], R.normal(size=(3, 2, 4)), rtol=1e-9)
    # broadcasting parameters of different batch shapes
    loc, W, d = _lowrank_params(batch=(3, 1))
    (a, b, c), (a_, b_, c_) = _pairs(loc[0, 0], W, d[:1])
    ours, theirs = D.LowRankMultivariateNormal(a, b, c), TD.LowRankMultivariateNormal(a_, b_, c_)
    assert ours.batch_shape == tuple(theirs.batch_shape) == (3, 1)
    _compare(ours, theirs, [a, b, c], [a_, b_, c_], ['log_prob'], R.normal(size=(2, 3, 5, 4)),
             rtol=1e-9)
    big, big_t = ours.expand((2, 3, 5)), theirs.expand((2, 3, 5))
    assert big.batch_shape == (2, 3, 5) and big.cov_factor.shape == tuple(big_t.cov_factor.shape)
    close(big.entropy(), big_t.entropy().detach().numpy(), rtol=1e-10)


@with_torch
def test_lowrank_kl_pairs_against_torch():
    p_ins, p_t = _pairs(*_lowrank_params(seed=2))
    q_ins, q_t = _pairs(*_lowrank_params(seed=3))
    p, pt = D.LowRankMultivariateNormal(*p_ins), TD.LowRankMultivariateNormal(*p_t)
    q, qt = D.LowRankMultivariateNormal(*q_ins), TD.LowRankMultivariateNormal(*q_t)
    (loc, cov), (loc_t, cov_t) = _pairs(R.normal(size=(2, 4)),
                                        np.eye(4) * 1.5 + 0.3 * np.ones((4, 4)))
    mvn, mvn_t = D.MultivariateNormal(loc, cov), TD.MultivariateNormal(loc_t, cov_t)
    ins, ins_t = p_ins + q_ins + [loc, cov], p_t + q_t + [loc_t, cov_t]
    for a, b, a_t, b_t in [(p, q, pt, qt), (mvn, q, mvn_t, qt), (p, mvn, pt, mvn_t)]:
        _same(D.kl_divergence(a, b), TD.kl_divergence(a_t, b_t), ins, ins_t, rtol=1e-9)
    with pytest.raises(ValueError, match='different event shapes'):
        D.kl_divergence(p, D.LowRankMultivariateNormal(*[tg.tensor(v) for v in
                                                          _lowrank_params(n=3)]))


def test_lowrank_draws_and_errors():
    loc, W, d = [tg.tensor(v, requires_grad=True) for v in _lowrank_params(batch=())]
    dist = D.LowRankMultivariateNormal(loc, W, d)
    x = dist.rsample((40000,))
    assert x.shape == (40000, 4) and x.requires_grad
    np.testing.assert_allclose(np.cov(x.detach().numpy().T),
                               dist.covariance_matrix.detach().numpy(), atol=0.15)
    assert all(g is not None for g in tg.autograd.grad(x.sum(), [loc, W, d]))
    with pytest.raises(ValueError, match='cov_factor must be a batch of matrices'):
        D.LowRankMultivariateNormal(loc, W[:3], d)
    with pytest.raises(ValueError, match='cov_diag must be a batch of vectors'):
        D.LowRankMultivariateNormal(loc, W, d[:3])
    with pytest.raises(ValueError, match='Incompatible batch shapes'):
        D.LowRankMultivariateNormal(tg.zeros(2, 4), tg.zeros(3, 4, 1), tg.ones(4))
    with pytest.raises(ValueError, match='Expected parameter cov_diag'):
        D.LowRankMultivariateNormal(loc.detach(), 0.01 * W.detach(), -d.detach(),
                                    validate_args=True)


# --- Wishart --------------------------------------------------------------------

def _spd(n, seed, batch=()):
    r = np.random.RandomState(seed)
    a = r.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@with_torch
@pytest.mark.parametrize('param', ['covariance_matrix', 'precision_matrix', 'scale_tril'])
def test_wishart_against_torch(param):
    m = _spd(3, 4, (2,))
    given = np.linalg.cholesky(m) if param == 'scale_tril' else m
    (df, p), (df_t, p_t) = _pairs([4.5, 6.0], given)
    ours, theirs = D.Wishart(df, **{param: p}), TD.Wishart(df_t, **{param: p_t})
    assert ours.batch_shape == tuple(theirs.batch_shape) == (2,)
    assert ours.event_shape == tuple(theirs.event_shape) == (3, 3)
    assert repr(ours.support) == repr(theirs.support)
    _compare(ours, theirs, [df, p], [df_t, p_t],
             ['mean', 'mode', 'variance', 'entropy', 'scale_tril', 'covariance_matrix',
              'precision_matrix'], rtol=1e-9)
    values = np.stack([_spd(3, s, (2,)) for s in range(5, 8)])
    _compare(ours, theirs, [df, p], [df_t, p_t], ['log_prob'], values, rtol=1e-9)
    close(D.ExponentialFamily.entropy(ours), theirs.entropy().detach().numpy(), rtol=1e-8)
    big, big_t = ours.expand((4, 2)), theirs.expand((4, 2))
    assert big.batch_shape == (4, 2)
    close(big.log_prob(tg.tensor(values[0])), big_t.log_prob(
        torch.tensor(values[0])).detach().numpy(), rtol=1e-9)
    # KL between Wisharts: the exponential family's Bregman divergence
    (df2, p2), (df2_t, p2_t) = _pairs([5.0, 3.5], _spd(3, 9, (2,)))
    _same(D.kl_divergence(ours, D.Wishart(df2, covariance_matrix=p2)),
          TD.kl_divergence(theirs, TD.Wishart(df2_t, covariance_matrix=p2_t)),
          [df, p, df2, p2], [df_t, p_t, df2_t, p2_t], rtol=1e-8)


def test_wishart_draws_and_errors():
    cov = tg.tensor(_spd(2, 1) / 3, requires_grad=True)
    df = tg.tensor(5.0, dtype=tg.float64, requires_grad=True)
    dist = D.Wishart(df, covariance_matrix=cov)
    x = dist.rsample((20000,))
    assert x.shape == (20000, 2, 2) and x.requires_grad
    assert bool(dist.support.check(x).all())
    xs = x.detach().numpy()
    np.testing.assert_allclose(xs.mean(0), dist.mean.detach().numpy(), rtol=0.05)
    np.testing.assert_allclose(xs.var(0), dist.variance.detach().numpy(), rtol=0.1)
    g = tg.autograd.grad(x.mean(0).sum(), [df, cov], retain_graph=True)
    e = tg.autograd.grad(dist.mean.sum(), [df, cov])
    for a, b in zip(g, e):
        close(a, b.numpy(), rtol=0.06, atol=0.06)
    with pytest.raises(ValueError, match='expected to be greater than ndim - 1'):
        D.Wishart(tg.tensor(0.5), covariance_matrix=tg.eye(2))
    with pytest.raises(AssertionError, match='Exactly one'):
        D.Wishart(3.0)
    with pytest.raises(ValueError, match='Expected parameter covariance_matrix'):
        D.Wishart(3.0, covariance_matrix=-tg.eye(2), validate_args=True)
    with pytest.warns(UserWarning, match='Low df'):
        D.Wishart(1.5, covariance_matrix=tg.eye(2))


# --- LKJCholesky ------------------------------------------------------------------

@with_torch
@pytest.mark.parametrize('dim', [2, 3, 5])
def test_lkj_cholesky_against_torch(dim):
    (conc,), (conc_t,) = _pairs([0.5, 1.0, 3.0])
    ours, theirs = D.LKJCholesky(dim, conc), TD.LKJCholesky(dim, conc_t)
    assert ours.batch_shape == tuple(theirs.batch_shape) == (3,)
    assert ours.event_shape == tuple(theirs.event_shape) == (dim, dim)
    assert repr(ours.support) == repr(theirs.support) and not ours.has_rsample
    value = TD.LKJCholesky(dim, torch.tensor(2.0, dtype=torch.float64)).sample((4, 3))
    _compare(ours, theirs, [conc], [conc_t], ['log_prob'], value.numpy(), rtol=1e-9)
    big = ours.expand((2, 3))
    assert big.batch_shape == (2, 3) and big.sample().shape == (2, 3, dim, dim)
    # the same sampler: the last correlation's spread as torch's draws'
    torch.manual_seed(0)
    conc = torch.tensor(0.5, dtype=torch.float64)
    Lt = TD.LKJCholesky(dim, conc).sample((20000,))
    L = D.LKJCholesky(dim, tg.tensor(0.5, dtype=tg.float64)).sample((20000,))
    var_t = (Lt @ Lt.mT)[:, -1, -2].var().item()
    assert abs((L @ L.mT)[:, -1, -2].numpy().var() - var_t) < 0.02


@pytest.mark.parametrize('dim,eta', [(2, 1.0), (3, 0.5), (4, 2.0)])
def test_lkj_cholesky_draws(dim, eta):
    dist = D.LKJCholesky(dim, tg.tensor(eta, dtype=tg.float64))
    L = dist.sample((20000,))
    assert L.shape == (20000, dim, dim)
    assert bool(dist.support.check(L).all())
    # the first correlation r is 2 Beta(b, b) - 1 with b = eta - 1 + dim / 2:
    # mean 0, variance 1 / (2 eta + dim - 1). (PyTorch 1.13's onion sampler,
    # reproduced here, gives the later rows other marginals.)
    C = (L @ L.mT).numpy()
    r = C[:, 1, 0]
    assert abs(r.mean()) < 0.03
    assert abs(r.var() - 1 / (2 * eta + dim - 1)) < 0.02
    with pytest.raises(ValueError, match='dim to be an integer greater than or equal to 2'):
        D.LKJCholesky(1)


# --- ExponentialFamily ----------------------------------------------------------

@with_torch
def test_exponential_family_entropy_and_bregman_kl():
    (a, b), (a_t, b_t) = _pairs([0.3, 1.2], [0.8, 2.0])
    cases = [(D.Normal(a, b), TD.Normal(a_t, b_t)), (D.Exponential(b), TD.Exponential(b_t)),
             (D.Gamma(b, b + 1), TD.Gamma(b_t, b_t + 1)),
             (D.Bernoulli(logits=a), TD.Bernoulli(logits=a_t))]
    for ours, theirs in cases:
        _same(D.ExponentialFamily.entropy(ours), TD.ExponentialFamily.entropy(theirs),
              [a, b], [a_t, b_t], rtol=1e-9)
        # (the natural parameters are detached there, in both libraries)
        close(D.ExponentialFamily.entropy(ours), theirs.entropy().detach().numpy(), rtol=1e-9)
    # the Bregman divergence equals the closed forms it stands in for
    p, q = D.Normal(a, b), D.Normal(b, a + 1)
    close(p._bregman_kl(q), D.kl_divergence(p, q).detach().numpy(), rtol=1e-9)
    p, q = D.Dirichlet(tg.tensor([[1.5, 2.0, 0.7]])), D.Dirichlet(tg.tensor([[0.5, 3.0, 1.0]]))
    close(p._bregman_kl(q), D.kl_divergence(p, q).detach().numpy(), rtol=1e-5)
    with pytest.raises(NotImplementedError):
        D.ExponentialFamily.entropy(D.Poisson(tg.tensor(2.0)))   # no carrier measure
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Poisson(tg.tensor(1.0)))


# --- kl pairs with ContinuousBernoulli ----------------------------------------

@with_torch
def test_continuous_bernoulli_kl_pairs_against_torch():
    (p, q), (p_t, q_t) = _pairs([0.2, 0.4996, 0.7], [0.9, 0.3, 0.5002])
    (x, y), (x_t, y_t) = _pairs([0.5, 1.5, 2.0], [2.0, 0.7, 1.1])
    (lo, hi), (lo_t, hi_t) = _pairs([-0.5, 0.1, 0.2], [0.8, 0.9, 1.2])
    cb, cb_t = D.ContinuousBernoulli(p), TD.ContinuousBernoulli(p_t)
    others = [
        (D.ContinuousBernoulli(q), TD.ContinuousBernoulli(q_t)),
        (D.Beta(x, y), TD.Beta(x_t, y_t)), (D.Exponential(x), TD.Exponential(x_t)),
        (D.Normal(lo, x), TD.Normal(lo_t, x_t)), (D.Uniform(lo, hi), TD.Uniform(lo_t, hi_t)),
        (D.Pareto(x, y), TD.Pareto(x_t, y_t)), (D.Gamma(x, y), TD.Gamma(x_t, y_t)),
        (D.Gumbel(lo, x), TD.Gumbel(lo_t, x_t)), (D.Laplace(lo, x), TD.Laplace(lo_t, x_t)),
    ]
    ins, ins_t = [p, q, x, y, lo, hi], [p_t, q_t, x_t, y_t, lo_t, hi_t]
    for other, other_t in others:
        for a, b, a_t, b_t in [(cb, other, cb_t, other_t), (other, cb, other_t, cb_t)]:
            try:
                expected = TD.kl_divergence(a_t, b_t)
            except NotImplementedError:
                with pytest.raises(NotImplementedError):
                    D.kl_divergence(a, b)
                continue
            _same(D.kl_divergence(a, b), expected, ins, ins_t, rtol=1e-8)


# --- transforms and constraints -------------------------------------------------

@with_torch
def test_corr_cholesky_transform_against_torch():
    (x,), (x_t,) = _pairs(R.normal(size=(2, 6)) * 1.5)
    t, t_ = T.CorrCholeskyTransform(), TT.CorrCholeskyTransform()
    y, y_t = t(x), t_(x_t)
    _same(y, y_t, [x], [x_t])
    assert bool(D.constraints.corr_cholesky.check(y).all())
    _same(t.inv(y), t_.inv(y_t), [x], [x_t], rtol=1e-8)
    _same(t.log_abs_det_jacobian(x, y), t_.log_abs_det_jacobian(x_t, y_t), [x], [x_t],
          rtol=1e-9)
    assert t.forward_shape((5, 6)) == tuple(t_.forward_shape((5, 6))) == (5, 4, 4)
    assert t.inverse_shape((5, 4, 4)) == (5, 6)
    with pytest.raises(ValueError, match='flattend lower-diagonal'):
        t.forward_shape((5,))
    assert t.domain.event_dim == 1 and t.codomain.event_dim == 2 and t.bijective


@with_torch
def test_lower_cholesky_and_cdf_transforms_against_torch():
    (x,), (x_t,) = _pairs(R.normal(size=(2, 3, 3)))
    t, t_ = T.LowerCholeskyTransform(), TT.LowerCholeskyTransform()
    _same(t(x), t_(x_t), [x], [x_t])
    _same(t.inv(t(x)), t_.inv(t_(x_t)), [x], [x_t])
    assert bool(D.constraints.lower_cholesky.check(t(x)).all())
    assert t == T.LowerCholeskyTransform() and not t.bijective
    (loc, scale), (loc_t, scale_t) = _pairs([0.3], [1.7])
    c = T.CumulativeDistributionTransform(D.Normal(loc, scale))
    c_ = TT.CumulativeDistributionTransform(TD.Normal(loc_t, scale_t))
    v = R.normal(size=(4, 1))
    y, y_t = c(tg.tensor(v)), c_(torch.tensor(v))
    _same(y, y_t, [loc, scale], [loc_t, scale_t])
    _same(c.inv(y), c_.inv(y_t), [loc, scale], [loc_t, scale_t], rtol=1e-9)
    _same(c.log_abs_det_jacobian(tg.tensor(v), y), c_.log_abs_det_jacobian(torch.tensor(v), y_t),
          [loc, scale], [loc_t, scale_t])
    assert c.sign == 1 and repr(c.codomain) == repr(c_.codomain)
    assert c.with_cache(1)._cache_size == 1
    # a copula-style TransformedDistribution: the cdf of a Normal is Uniform(0, 1)
    u = D.TransformedDistribution(D.Normal(0.0, 1.0), [T.CumulativeDistributionTransform(
        D.Normal(0.0, 1.0))])
    close(u.log_prob(tg.tensor([0.2, 0.7])), [0.0, 0.0], atol=1e-6)


@with_torch
def test_cat_and_stack_transforms_against_torch():
    (x,), (x_t,) = _pairs(R.normal(size=(2, 5, 3)))
    cat = T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0),
                          T.SigmoidTransform()], dim=1, lengths=[2, 2, 1])
    cat_t = TT.CatTransform([TT.ExpTransform(), TT.AffineTransform(1.0, 3.0),
                             TT.SigmoidTransform()], dim=1, lengths=[2, 2, 1])
    stack = T.StackTransform([T.ExpTransform(), T.TanhTransform(), T.SoftplusTransform()],
                             dim=-1)
    stack_t = TT.StackTransform([TT.ExpTransform(), TT.TanhTransform(),
                                 TT.SoftplusTransform()], dim=-1)
    for t, t_ in [(cat, cat_t), (stack, stack_t)]:
        y, y_t = t(x), t_(x_t)
        _same(y, y_t, [x], [x_t])
        _same(t.inv(y), t_.inv(y_t), [x], [x_t], rtol=1e-9)
        _same(t.log_abs_det_jacobian(x, y), t_.log_abs_det_jacobian(x_t, y_t), [x], [x_t])
        assert t.bijective == t_.bijective
        assert t.domain.event_dim == t_.domain.event_dim
        close(t.codomain.check(y), t_.codomain.check(y_t).numpy())
        assert t.with_cache(1)._cache_size == 1
    # a piece of a larger event dim: the others' log|det J| summed to match
    (x2,), (x2_t,) = _pairs(R.normal(size=(5, 3)))
    cat2 = T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1),
                           T.AffineTransform(0.5, 2.0)], dim=0, lengths=[2, 3])
    cat2_t = TT.CatTransform([TT.IndependentTransform(TT.ExpTransform(), 1),
                              TT.AffineTransform(0.5, 2.0)], dim=0, lengths=[2, 3])
    assert cat2.event_dim == cat2_t.event_dim == 1
    y2, y2_t = cat2(x2), cat2_t(x2_t)
    _same(y2, y2_t, [x2], [x2_t])
    _same(cat2.log_abs_det_jacobian(x2, y2), cat2_t.log_abs_det_jacobian(x2_t, y2_t),
          [x2], [x2_t])
    with pytest.raises(AssertionError):
        cat(tg.zeros(2, 4, 3))


@with_torch
def test_new_constraints_against_torch():
    L = TD.LKJCholesky(3, 1.0).sample((4,)).double()
    bad = L.clone()
    bad[1, 2, 2] = 2.0
    for value in (L, bad, torch.tensor(R.normal(size=(4, 3, 3)))):
        close(D.constraints.corr_cholesky.check(tg.tensor(value.numpy())),
              TD.constraints.corr_cholesky.check(value).numpy())
    for shape in [(2, 3, 3), (2, 3, 4)]:
        z = np.zeros(shape)
        close(D.constraints.square.check(tg.tensor(z)),
              TD.constraints.square.check(torch.tensor(z)).numpy())
    v = R.normal(size=(3, 4))
    ours = D.constraints.cat([D.constraints.positive, D.constraints.real], 1, [1, 3])
    theirs = TD.constraints.cat([TD.constraints.positive, TD.constraints.real], 1, [1, 3])
    close(ours.check(tg.tensor(v)), theirs.check(torch.tensor(v)).numpy())
    ours = D.constraints.stack([D.constraints.positive, D.constraints.unit_interval], 0)
    theirs = TD.constraints.stack([TD.constraints.positive, TD.constraints.unit_interval], 0)
    close(ours.check(tg.tensor(v[:2])), theirs.check(torch.tensor(v[:2])).numpy())
    assert ours.event_dim == theirs.event_dim and ours.is_discrete == theirs.is_discrete


def _registry_cases(C):
    return [C.real, C.positive, C.nonnegative, C.greater_than(2.0), C.greater_than_eq(-1.0),
            C.less_than(3.0), C.unit_interval, C.interval(-2.0, 5.0),
            C.half_open_interval(0.0, 4.0), C.simplex, C.real_vector,
            C.independent(C.positive, 1), C.lower_cholesky, C.corr_cholesky,
            C.cat([C.positive, C.unit_interval], -1, [2, 1]),
            C.stack([C.real, C.positive, C.less_than(1.0)], -1)]


@with_torch
@pytest.mark.parametrize('registry', ['biject_to', 'transform_to'])
def test_constraint_registry_against_torch(registry):
    ours_reg, theirs_reg = getattr(D, registry), getattr(TD, registry)
    for c, c_t in zip(_registry_cases(D.constraints), _registry_cases(TD.constraints)):
        try:
            t_ = theirs_reg(c_t)
        except NotImplementedError:
            with pytest.raises(NotImplementedError, match='Cannot transform'):
                ours_reg(c)
            continue
        t = ours_reg(c)
        assert type(t).__name__ == type(t_).__name__, c
        assert repr(t) == repr(t_)
        n = 6 if c is D.constraints.corr_cholesky else 3
        shape = (4, 3, 3) if c is D.constraints.lower_cholesky else (4, n)
        x = R.normal(size=shape)
        y, y_t = t(tg.tensor(x)), t_(torch.tensor(x))
        close(y, y_t.numpy(), rtol=1e-10, atol=1e-12)
        assert bool(c.check(y).all())
        if t_.bijective:
            close(t.inv(y), t_.inv(y_t).numpy(), rtol=1e-7, atol=1e-9)
            close(t.log_abs_det_jacobian(tg.tensor(x), y),
                  t_.log_abs_det_jacobian(torch.tensor(x), y_t).numpy(), rtol=1e-9)


def test_constraint_registry_register():
    registry = D.constraint_registry.ConstraintRegistry()

    @registry.register(D.constraints.positive)
    def _softplus(constraint):
        return T.SoftplusTransform()
    assert isinstance(registry(D.constraints.greater_than(3.0)), T.SoftplusTransform)
    with pytest.raises(NotImplementedError, match='Cannot transform _Boolean constraints'):
        registry(D.constraints.boolean)
    with pytest.raises(TypeError, match='Expected constraint'):
        registry.register(3, _softplus)
    # the global registries: a fitted parameter round trip through biject_to
    t = D.biject_to(D.Gamma.arg_constraints['rate'])
    close(t(tg.tensor([0.0, 1.0])), np.exp([0.0, 1.0]))


def test_tril_vec_helpers():
    from tensorgraph.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
    v = tg.arange(1., 7.)
    m = vec_to_tril_matrix(v)
    close(m, [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
    close(tril_matrix_to_vec(m), v.numpy())
    close(vec_to_tril_matrix(tg.tensor([1., 2., 3.]), diag=-1),
          [[0, 0, 0], [1, 0, 0], [2, 3, 0]])
    with pytest.raises(ValueError, match='cannot be expressed'):
        vec_to_tril_matrix(tg.ones(5))
    with pytest.raises(ValueError, match='outside'):
        tril_matrix_to_vec(m, diag=3)
