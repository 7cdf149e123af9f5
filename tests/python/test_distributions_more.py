"""tg.distributions' transforms, TransformedDistribution and the further
families (Gumbel, Weibull, Pareto, HalfCauchy, Kumaraswamy, Chi2, StudentT,
FisherSnedecor, Multinomial, NegativeBinomial, MixtureSameFamily,
LogisticNormal) against
torch.distributions 1.13: values and gradients in float64, shapes,
validation; draws (tensorgraph's generator) by shape, support and
moments; a few closed-form values that need no torch."""
import math

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


def _same(out_tg, out_torch, ins_tg, ins_torch, rtol=1e-10, atol=1e-12):
    """equal values (NaN and inf where torch has them), equal shapes and
    dtypes, and equal gradients of sum(out * w) for a fixed w over the
    finite entries"""
    expected = out_torch.detach().numpy()
    close(out_tg, expected, rtol, atol)
    assert tuple(out_tg.shape) == tuple(out_torch.shape)
    assert str(out_tg.dtype).split('.')[-1] == str(out_torch.dtype).split('.')[-1]
    if not out_torch.requires_grad or not out_tg.requires_grad:
        assert out_tg.requires_grad == out_torch.requires_grad
        return
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


# name, parameters (positional), values for log_prob/cdf; tolerances where
# torch's lgamma/digamma differ in the last bits
R = np.random.RandomState(0)
POS = R.uniform(0.5, 3.0, (2, 3))
POS2 = R.uniform(0.5, 3.0, (2, 3))
REAL = R.normal(size=(2, 3))
DF = np.array([[0.7, 1.5, 2.0], [3.0, 4.5, 9.0]])   # moments NaN / inf / finite
CASES = [
    ('Gumbel', (REAL, POS), R.normal(size=(4, 2, 3)), {}),
    ('Weibull', (POS, POS2), R.uniform(0.1, 4, (4, 2, 3)), {}),
    ('Pareto', (POS, DF), POS + R.uniform(0.01, 3, (4, 2, 3)), {}),
    ('HalfCauchy', (POS,), R.uniform(0, 4, (4, 2, 3)), {}),
    ('Kumaraswamy', (POS, POS2), R.uniform(0.01, 0.99, (4, 2, 3)), dict(rtol=1e-8)),
    ('Chi2', (DF,), R.uniform(0.1, 5, (4, 2, 3)), dict(rtol=1e-8)),
    ('StudentT', (DF, REAL, POS), R.normal(size=(4, 2, 3)), dict(rtol=1e-8)),
    ('FisherSnedecor', (DF, DF[::-1] + 2.5), R.uniform(0.05, 4, (4, 2, 3)), dict(rtol=1e-8)),
]
METHODS = ('log_prob', 'cdf', 'icdf', 'entropy', 'mean', 'mode', 'variance', 'stddev')


def _both(ours, theirs, method, value_tg, value_torch):
    """ours.method and theirs.method (values for the callables); None
    when torch has no such method, after checking ours has none either"""
    try:
        out_torch = getattr(theirs, method)
        if callable(out_torch):
            out_torch = out_torch() if value_torch is None else out_torch(value_torch)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            out = getattr(ours, method)
            if callable(out):
                out() if value_tg is None else out(value_tg)
        return None
    out = getattr(ours, method)
    if callable(out):
        out = out() if value_tg is None else out(value_tg)
    return out, out_torch


@with_torch
@pytest.mark.parametrize('name,params,value,tol', CASES, ids=[c[0] for c in CASES])
def test_family_against_torch(name, params, value, tol):
    pairs = [_pair(p) for p in params]
    ins_tg, ins_torch = [a for a, _ in pairs], [b for _, b in pairs]
    ours, theirs = getattr(D, name)(*ins_tg), getattr(TD, name)(*ins_torch)
    assert ours.batch_shape == tuple(theirs.batch_shape) == (2, 3)
    assert ours.event_shape == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert isinstance(ours, D.TransformedDistribution) == \
        isinstance(theirs, TD.TransformedDistribution)
    assert repr(ours.support) == repr(theirs.support) or name == 'Pareto'
    probs = R.uniform(0.05, 0.95, (4, 2, 3))
    for method in METHODS:
        v = probs if method == 'icdf' else value
        args = (None, None) if method in ('entropy', 'mean', 'mode', 'variance', 'stddev') \
            else (tg.tensor(v), torch.tensor(v))
        got = _both(ours, theirs, method, *args)
        if got is not None:
            _same(*got, ins_tg, ins_torch, **tol)


@with_torch
@pytest.mark.parametrize('name,params,value,tol', CASES, ids=[c[0] for c in CASES])
def test_family_scalar_params_and_expand(name, params, value, tol):
    scalars = [float(p[1, 2]) for p in params]
    ours, theirs = getattr(D, name)(*scalars), getattr(TD, name)(*scalars)
    assert ours.batch_shape == tuple(theirs.batch_shape) == ()
    v = float(value[0, 1, 2])
    close(ours.log_prob(tg.tensor(v, dtype=tg.float32)),
          theirs.log_prob(torch.tensor(v)).numpy(), rtol=1e-5)
    big, big_t = ours.expand((5, 2)), theirs.expand((5, 2))
    assert type(big) is type(ours)
    assert big.batch_shape == tuple(big_t.batch_shape) == (5, 2)
    vv = np.full((5, 2), v)
    close(big.log_prob(tg.tensor(vv)), big_t.log_prob(torch.tensor(vv)).numpy(), rtol=1e-5)
    assert big.sample((3,)).shape == (3, 5, 2)


SAMPLED = [
    # name, params, (mean, variance) known in closed form for these
    ('Gumbel', (0.5, 2.0)),
    ('Weibull', (1.5, 2.5)),
    ('Pareto', (1.0, 5.0)),
    ('Kumaraswamy', (2.0, 3.0)),
    ('Chi2', (3.0,)),
    ('StudentT', (6.0, 1.0, 2.0)),
    ('FisherSnedecor', (6.0, 12.0)),
]


@pytest.mark.parametrize('name,params', SAMPLED, ids=[s[0] for s in SAMPLED])
def test_family_draws(name, params):
    tensors = [tg.tensor([p, p], dtype=tg.float64) for p in params]
    dist = getattr(D, name)(*tensors)
    n = 40000
    draws = dist.sample((n,))
    assert draws.shape == (n, 2) and not draws.requires_grad
    assert dist.sample().shape == (2,) and dist.sample((3, 4)).shape == (3, 4, 2)
    assert bool(dist.support.check(draws).all())
    d = draws.numpy()
    se = math.sqrt(float(dist.variance[0]) / n)
    np.testing.assert_array_less(np.abs(d.mean(0) - dist.mean.numpy()), 6 * se)
    if name not in ('Pareto', 'FisherSnedecor', 'StudentT'):   # heavy tails: var noisy
        np.testing.assert_allclose(d.var(0), dist.variance.numpy(), rtol=0.06)
    # the empirical cdf at the median of the draws is 1/2
    if name not in ('Chi2', 'StudentT', 'FisherSnedecor'):
        med = tg.tensor(np.median(d, 0))
        np.testing.assert_allclose(dist.cdf(med).numpy(), 0.5, atol=0.01)


@pytest.mark.parametrize('name,params', SAMPLED + [('HalfCauchy', (1.5,))],
                         ids=[s[0] for s in SAMPLED] + ['HalfCauchy'])
def test_rsample_has_gradients(name, params):
    tensors = [tg.tensor([p], dtype=tg.float64, requires_grad=True) for p in params]
    dist = getattr(D, name)(*tensors)
    assert dist.has_rsample
    draws = dist.rsample((2000,))
    assert draws.requires_grad and draws.shape == (2000, 1)
    grads = tg.autograd.grad(draws.clamp(max=50).mean(), tensors)
    assert all(np.all(np.isfinite(g.numpy())) for g in grads)


def test_rsample_pathwise_gradient_of_the_mean():
    # d E[x] / d theta estimated by the draws equals the mean's derivative
    for name, params in [('Gumbel', (0.5, 2.0)), ('Weibull', (1.5, 2.5)),
                         ('StudentT', (8.0, 1.0, 2.0)), ('Kumaraswamy', (2.0, 3.0))]:
        tensors = [tg.tensor(p, dtype=tg.float64, requires_grad=True) for p in params]
        dist = getattr(D, name)(*tensors)
        grads = tg.autograd.grad(dist.rsample((40000,)).mean(), tensors, retain_graph=True)
        expected = tg.autograd.grad(dist.mean, tensors, allow_unused=True)
        for g, e in zip(grads, expected):
            e = 0.0 if e is None else float(e)
            assert abs(float(g) - e) < 0.05 + 0.05 * abs(e), (name, float(g), e)


def test_closed_forms_without_torch():
    euler = 0.5772156649015329
    g = D.Gumbel(tg.tensor(1.0, dtype=tg.float64), tg.tensor(2.0, dtype=tg.float64))
    assert abs(float(g.mean) - (1 + 2 * euler)) < 1e-14
    assert abs(float(g.cdf(tg.tensor(1.0, dtype=tg.float64))) - math.exp(-1)) < 1e-14
    assert abs(float(g.icdf(tg.tensor(math.exp(-1), dtype=tg.float64))) - 1.0) < 1e-12
    assert abs(float(g.entropy()) - (math.log(2) + 1 + euler)) < 1e-14
    # Weibull with concentration 1 is an Exponential of mean scale
    w = D.Weibull(tg.tensor(2.0, dtype=tg.float64), tg.tensor(1.0, dtype=tg.float64))
    x = tg.tensor([0.3, 1.0, 4.0], dtype=tg.float64)
    close(w.log_prob(x), np.log(0.5) - x.numpy() / 2, rtol=1e-13)
    close(w.cdf(x), 1 - np.exp(-x.numpy() / 2), rtol=1e-13)
    # Pareto: P(X > x) = (scale / x)^alpha
    p = D.Pareto(tg.tensor(1.5, dtype=tg.float64), tg.tensor(3.0, dtype=tg.float64))
    close(1 - p.cdf(tg.tensor([2.0, 5.0], dtype=tg.float64)), (1.5 / np.array([2, 5.])) ** 3,
          rtol=1e-12)
    assert float(p.mean) == pytest.approx(3 * 1.5 / 2, rel=1e-14)
    # HalfCauchy(1): density 2 / (pi (1 + x^2)), median 1
    h = D.HalfCauchy(tg.tensor(1.0, dtype=tg.float64))
    close(h.log_prob(x), np.log(2 / (np.pi * (1 + x.numpy() ** 2))), rtol=1e-13)
    assert float(h.icdf(tg.tensor(0.5, dtype=tg.float64))) == pytest.approx(1.0, rel=1e-14)
    assert float(D.HalfCauchy(tg.tensor(1.0), validate_args=False).log_prob(
        tg.tensor(-1.0))) == -math.inf
    # Chi2(2) is an Exponential(1/2); StudentT(1) a Cauchy
    c = D.Chi2(tg.tensor(2.0, dtype=tg.float64))
    close(c.log_prob(x), np.log(0.5) - x.numpy() / 2, rtol=1e-13)
    assert float(c.df) == 2.0 and isinstance(c, D.Gamma)
    t = D.StudentT(tg.tensor(1.0, dtype=tg.float64))
    close(t.log_prob(x), -np.log(np.pi * (1 + x.numpy() ** 2)), rtol=1e-12)
    assert math.isnan(float(t.mean)) and math.isnan(float(t.variance))
    assert float(D.StudentT(tg.tensor(2.0)).variance) == math.inf
    # Kumaraswamy(1, 1) is Uniform(0, 1)
    k = D.Kumaraswamy(tg.tensor(1.0, dtype=tg.float64), tg.tensor(1.0, dtype=tg.float64))
    close(k.log_prob(tg.tensor([0.2, 0.7], dtype=tg.float64)), [0.0, 0.0], atol=1e-14)
    assert float(k.entropy()) == pytest.approx(0.0, abs=1e-14)
    # F(2, 2): density 1 / (1 + x)^2
    f = D.FisherSnedecor(tg.tensor(2.0, dtype=tg.float64), tg.tensor(2.0, dtype=tg.float64))
    close(f.log_prob(x), -2 * np.log1p(x.numpy()), rtol=1e-13)
    # Multinomial(2, (1/2, 1/2)): P((1, 1)) = 1/2
    m = D.Multinomial(2, tg.tensor([0.5, 0.5], dtype=tg.float64))
    assert float(m.log_prob(tg.tensor([1., 1.], dtype=tg.float64))) == \
        pytest.approx(math.log(0.5), rel=1e-14)
    # NegativeBinomial(1, p) is a Geometric counting successes: p^k (1 - p)
    nb = D.NegativeBinomial(tg.tensor(1.0, dtype=tg.float64), tg.tensor(0.3, dtype=tg.float64))
    k3 = tg.tensor([0., 1., 4.], dtype=tg.float64)
    close(nb.log_prob(k3), k3.numpy() * np.log(0.3) + np.log(0.7), rtol=1e-13)


# --- validation -------------------------------------------------------------

BAD = [
    (D.Gumbel, (0.0, -1.0)), (D.Weibull, (-1.0, 1.0)), (D.Weibull, (1.0, 0.0)),
    (D.Pareto, (0.0, 1.0)), (D.Pareto, (1.0, -2.0)), (D.HalfCauchy, (-1.0,)),
    (D.Kumaraswamy, (0.0, 1.0)), (D.Chi2, (-1.0,)), (D.StudentT, (0.0,)),
    (D.StudentT, (1.0, 0.0, -1.0)), (D.FisherSnedecor, (1.0, -1.0)),
]


@pytest.mark.parametrize('cls,args', BAD, ids=[f'{c.__name__}{a}' for c, a in BAD])
def test_bad_parameters_raise(cls, args):
    tensors = [tg.tensor([a], dtype=tg.float64) for a in args]
    with pytest.raises(ValueError, match='Expected parameter'):
        cls(*tensors, validate_args=True)
    if cls not in (D.StudentT, D.FisherSnedecor):
        cls(*tensors, validate_args=False)  # no check
    # (their inner Chi2/Gammas validate by default, as PyTorch's: no opt-out)


def test_bad_values_and_arguments_raise():
    with pytest.raises(ValueError, match='support'):
        D.Weibull(tg.tensor([1.0]), tg.tensor([1.0]), validate_args=True).log_prob(
            tg.tensor([-1.0]))
    with pytest.raises(ValueError, match='support'):
        D.Pareto(tg.tensor([2.0]), tg.tensor([1.0]), validate_args=True).log_prob(
            tg.tensor([1.0]))
    with pytest.raises(ValueError, match='support'):
        D.Multinomial(3, tg.tensor([0.2, 0.8]), validate_args=True).log_prob(
            tg.tensor([2.0, 2.0]))
    with pytest.raises(ValueError, match='support'):
        D.NegativeBinomial(tg.tensor(2.0), tg.tensor(0.5), validate_args=True).log_prob(
            tg.tensor(1.5))
    with pytest.raises(ValueError, match='Expected parameter probs'):
        D.NegativeBinomial(tg.tensor(2.0), tg.tensor(1.0), validate_args=True)
    with pytest.raises(ValueError, match='Expected parameter total_count'):
        D.NegativeBinomial(tg.tensor(-2.0), tg.tensor(0.5), validate_args=True)
    with pytest.raises(ValueError, match='Either `probs` or `logits`'):
        D.NegativeBinomial(tg.tensor(2.0))
    with pytest.raises(NotImplementedError, match='inhomogeneous'):
        D.Multinomial(tg.tensor(3.0), tg.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match='transforms must be'):
        D.TransformedDistribution(D.Normal(0., 1.), 'exp')
    with pytest.raises(ValueError, match='transforms must be'):
        D.TransformedDistribution(D.Normal(0., 1.), [T.ExpTransform(), 1])
    with pytest.raises(ValueError, match='at least 1'):
        D.TransformedDistribution(D.Normal(0., 1.), T.SoftmaxTransform())
    cat = D.Categorical(tg.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match='Categorical'):
        D.MixtureSameFamily(D.Normal(0., 1.), D.Normal(tg.zeros(2), tg.ones(2)))
    with pytest.raises(ValueError, match='Component'):
        D.MixtureSameFamily(cat, 'normal')
    with pytest.raises(ValueError, match='does not equal'):
        D.MixtureSameFamily(cat, D.Normal(tg.zeros(3), tg.ones(3)))
    with pytest.raises(ValueError, match='not compatible'):
        D.MixtureSameFamily(D.Categorical(tg.ones(4, 2)), D.Normal(tg.zeros(3, 2), tg.ones(3, 2)))
    with pytest.raises(ValueError, match='cache_size'):
        T.ExpTransform(cache_size=2)
    with pytest.raises(ValueError, match='different numbers'):
        T.ReshapeTransform((2, 3), (5,))
    with pytest.raises(ValueError, match='Shape mismatch'):
        T.ReshapeTransform((2, 3), (6,)).forward_shape((4, 3, 2))


# --- Multinomial, NegativeBinomial, MixtureSameFamily -----------------------

@with_torch
@pytest.mark.parametrize('kind', ['probs', 'logits'])
def test_multinomial_against_torch(kind):
    raw = R.uniform(0.1, 1.0, (2, 4)) if kind == 'probs' else R.normal(size=(2, 4))
    a, b = _pair(raw)
    ours, theirs = D.Multinomial(5, **{kind: a}), TD.Multinomial(5, **{kind: b})
    assert ours.batch_shape == (2,) and ours.event_shape == (4,)
    counts = np.array([[[1, 2, 0, 2], [5, 0, 0, 0]], [[0, 1, 1, 3], [2, 1, 1, 1]]], float)
    _same(ours.log_prob(tg.tensor(counts)), theirs.log_prob(torch.tensor(counts)), [a], [b])
    # PyTorch takes lgamma(n + 1) of an int64 tensor, so in float32
    _same(ours.entropy(), theirs.entropy(), [a], [b], rtol=1e-7)
    for name in ('mean', 'variance', 'probs', 'logits'):
        _same(getattr(ours, name), getattr(theirs, name), [a], [b])
    assert repr(ours.support) == repr(theirs.support)
    draws = ours.sample((20000,))
    assert draws.shape == (20000, 2, 4) and draws.dtype == tg.float64
    assert bool((draws.sum(-1) == 5).all()) and bool(ours.support.check(draws).all())
    np.testing.assert_allclose(draws.mean(0).numpy(), ours.mean.detach().numpy(), atol=0.05)
    big = ours.expand((3, 2))
    assert big.batch_shape == (3, 2) and big.sample((7,)).shape == (7, 3, 2, 4)
    close(big.log_prob(tg.tensor(counts[0])), theirs.expand((3, 2)).log_prob(
        torch.tensor(counts[0])).detach().numpy(), rtol=1e-12)
    # a zero-probability category never drawn contributes 0
    z = D.Multinomial(3, tg.tensor([0.0, 0.5, 0.5], dtype=tg.float64))
    zt = TD.Multinomial(3, torch.tensor([0.0, 0.5, 0.5], dtype=torch.float64))
    v = [0.0, 1.0, 2.0]
    close(z.log_prob(tg.tensor(v, dtype=tg.float64)),
          zt.log_prob(torch.tensor(v, dtype=torch.float64)).numpy(), rtol=1e-13)


@with_torch
@pytest.mark.parametrize('kind', ['probs', 'logits'])
def test_negative_binomial_against_torch(kind):
    raw = R.uniform(0.05, 0.9, (2, 3)) if kind == 'probs' else R.normal(size=(2, 3))
    a, b = _pair(raw)
    rt, rp = _pair(R.uniform(0.5, 6.0, (2, 3)))
    ours = D.NegativeBinomial(rt, **{kind: a})
    theirs = TD.NegativeBinomial(rp, **{kind: b})
    assert ours.batch_shape == (2, 3)
    k = R.randint(0, 9, (4, 2, 3)).astype(float)
    _same(ours.log_prob(tg.tensor(k)), theirs.log_prob(torch.tensor(k)), [a, rt], [b, rp],
          rtol=1e-9)
    for name in ('mean', 'mode', 'variance', 'probs', 'logits'):
        _same(getattr(ours, name), getattr(theirs, name), [a, rt], [b, rp], rtol=1e-9)
    # total_count 0: all mass at 0
    zero = D.NegativeBinomial(tg.tensor(0.0, dtype=tg.float64), tg.tensor(0.4, dtype=tg.float64))
    assert float(zero.log_prob(tg.tensor(0.0, dtype=tg.float64))) == 0.0
    d = D.NegativeBinomial(tg.tensor([3.0, 0.5]), tg.tensor([0.4, 0.7])).sample((40000,))
    assert d.shape == (40000, 2) and bool((d >= 0).all()) and bool((d % 1 == 0).all())
    mean = np.array([3 * 0.4 / 0.6, 0.5 * 0.7 / 0.3])
    var = mean / np.array([0.6, 0.3])
    np.testing.assert_array_less(np.abs(d.numpy().mean(0) - mean), 6 * np.sqrt(var / 40000))
    np.testing.assert_allclose(d.numpy().var(0), var, rtol=0.08)
    assert D.NegativeBinomial(tg.tensor(2.0), tg.tensor(0.5)).expand((3,)).sample().shape == (3,)


@with_torch
def test_mixture_same_family_against_torch():
    la, lb = _pair(R.normal(size=(2, 3)))
    ma, mb = _pair(R.normal(size=(2, 3)))
    sa, sb = _pair(R.uniform(0.5, 2, (2, 3)))
    ins_tg, ins_torch = [la, ma, sa], [lb, mb, sb]
    ours = D.MixtureSameFamily(D.Categorical(logits=la), D.Normal(ma, sa))
    theirs = TD.MixtureSameFamily(TD.Categorical(logits=lb), TD.Normal(mb, sb))
    assert ours.batch_shape == (2,) and ours.event_shape == ()
    x = R.normal(size=(5, 2))
    _same(ours.log_prob(tg.tensor(x)), theirs.log_prob(torch.tensor(x)), ins_tg, ins_torch)
    _same(ours.cdf(tg.tensor(x)), theirs.cdf(torch.tensor(x)), ins_tg, ins_torch)
    _same(ours.mean, theirs.mean, ins_tg, ins_torch)
    _same(ours.variance, theirs.variance, ins_tg, ins_torch)
    draws = ours.sample((40000,))
    assert draws.shape == (40000, 2) and not ours.has_rsample
    se = np.sqrt(ours.variance.detach().numpy() / 40000)
    np.testing.assert_array_less(np.abs(draws.numpy().mean(0) - ours.mean.detach().numpy()),
                                 6 * se)
    np.testing.assert_allclose(draws.numpy().var(0), ours.variance.detach().numpy(), rtol=0.05)
    # events: a mixture of Independent Normals (event (2,)) with a shared mixture
    la2, lb2 = _pair(R.normal(size=3))
    loc = R.normal(size=(4, 3, 2))
    ours2 = D.MixtureSameFamily(D.Categorical(logits=la2),
                                D.Independent(D.Normal(tg.tensor(loc), tg.ones(4, 3, 2,
                                                       dtype=tg.float64)), 1))
    theirs2 = TD.MixtureSameFamily(TD.Categorical(logits=lb2),
                                   TD.Independent(TD.Normal(torch.tensor(loc), torch.ones(
                                       4, 3, 2, dtype=torch.float64)), 1))
    assert ours2.batch_shape == (4,) and ours2.event_shape == (2,)
    v = R.normal(size=(6, 4, 2))
    _same(ours2.log_prob(tg.tensor(v)), theirs2.log_prob(torch.tensor(v)), [la2], [lb2])
    _same(ours2.mean, theirs2.mean, [la2], [lb2])
    _same(ours2.variance, theirs2.variance, [la2], [lb2])
    assert ours2.sample((5,)).shape == (5, 4, 2)
    big = ours2.expand((2, 4))
    assert big.batch_shape == (2, 4) and big.sample((3,)).shape == (3, 2, 4, 2)
    close(big.log_prob(tg.tensor(v[0])), theirs2.expand((2, 4)).log_prob(
        torch.tensor(v[0])).detach().numpy(), rtol=1e-12)


# --- transforms -------------------------------------------------------------

def _transforms(lib):
    """the same transforms built in tg (lib=T) or torch (lib=TT)"""
    arr = tg.tensor if lib is T else torch.tensor
    loc = arr(np.array([0.5, -1.0, 2.0]))
    scale = arr(np.array([2.0, -0.5, 1.5]))
    return {
        'exp': (lib.ExpTransform(), 'real'),
        'power': (lib.PowerTransform(arr(np.array([0.5, 2.0, -1.5]))), 'positive'),
        'sigmoid': (lib.SigmoidTransform(), 'real'),
        'tanh': (lib.TanhTransform(), 'real'),
        'softplus': (lib.SoftplusTransform(), 'real'),
        'affine': (lib.AffineTransform(loc, scale), 'real'),
        'affine_scalar': (lib.AffineTransform(1.5, -3.0), 'real'),
        'affine_event': (lib.AffineTransform(loc, scale, event_dim=1), 'real'),
        'exp_inv': (lib.ExpTransform().inv, 'positive'),
        'independent': (lib.IndependentTransform(lib.SigmoidTransform(), 1), 'real'),
        'reshape': (lib.ReshapeTransform((3,), (3, 1)), 'real'),
        'stick_breaking': (lib.StickBreakingTransform(), 'real'),
        'compose': (lib.ComposeTransform([lib.AffineTransform(loc, scale),
                                          lib.ExpTransform(),
                                          lib.PowerTransform(arr(np.array(2.0)))]), 'real'),
        'compose_event': (lib.ComposeTransform([lib.ExpTransform(),
                                                lib.AffineTransform(loc, scale, event_dim=1)]),
                          'real'),
    }


BIJECTIONS = sorted(_transforms(T))


@with_torch
@pytest.mark.parametrize('key', BIJECTIONS)
def test_transform_against_torch(key):
    ours, dom = _transforms(T)[key]
    theirs, _ = _transforms(TT)[key]
    x = R.normal(size=(4, 3)) if dom == 'real' else R.uniform(0.2, 3, (4, 3))
    xa, xb = _pair(x)
    ya, yb = ours(xa), theirs(xb)
    _same(ya, yb, [xa], [xb])
    _same(ours.inv(ya), theirs.inv(yb), [xa], [xb], rtol=1e-9)
    close(ours.inv(ya), x, rtol=1e-9, atol=1e-12)   # the round trip
    _same(ours.log_abs_det_jacobian(xa, ya), theirs.log_abs_det_jacobian(xb, yb), [xa], [xb],
          rtol=1e-9)
    _same(ours.inv.log_abs_det_jacobian(ya, xa), theirs.inv.log_abs_det_jacobian(yb, xb),
          [xa], [xb], rtol=1e-9)
    assert ours.bijective == theirs.bijective
    assert repr(ours.domain) == repr(theirs.domain)
    assert repr(ours.codomain) == repr(theirs.codomain)
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    for shape in [(3,), (5, 3), (2, 4, 3)]:
        assert tuple(ours.forward_shape(tg.Size(shape))) == tuple(theirs.forward_shape(
            torch.Size(shape)))
        out_shape = tuple(theirs.forward_shape(torch.Size(shape)))
        assert tuple(ours.inverse_shape(tg.Size(out_shape))) == tuple(theirs.inverse_shape(
            torch.Size(out_shape)))
    try:
        sign_t = theirs.sign
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.sign
    else:
        s = ours.sign
        if isinstance(sign_t, int):
            assert s == sign_t
        else:
            close(s, sign_t.numpy())
    if key not in ('independent', 'reshape', 'affine_event', 'compose_event', 'compose'):
        assert ours.event_dim == theirs.event_dim
    assert repr(ours).replace('tensorgraph', 'torch').split('(')[0] == repr(theirs).split('(')[0]


@with_torch
def test_softmax_and_abs_transforms():
    xa, xb = _pair(R.normal(size=(4, 3)))
    s, st = T.SoftmaxTransform(), TT.SoftmaxTransform()
    _same(s(xa), st(xb), [xa], [xb])
    _same(s.inv(s(xa)), st.inv(st(xb)), [xa], [xb])
    assert not s.bijective and repr(s.codomain) == repr(st.codomain)
    with pytest.raises(NotImplementedError):
        s.log_abs_det_jacobian(xa, s(xa))
    with pytest.raises(ValueError, match='Too few'):
        s.forward_shape(tg.Size(()))
    a, at = T.AbsTransform(), TT.AbsTransform()
    _same(a(xa), at(xb), [xa], [xb])
    close(a.inv(tg.tensor([1.5])), [1.5])
    assert not a.bijective and repr(a.codomain) == repr(at.codomain)


def test_transform_equality_inverse_and_identity():
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.ExpTransform().inv == T.ExpTransform().inv
    assert T.ExpTransform().inv != T.ExpTransform()
    e = T.ExpTransform()
    assert e.inv.inv is e and e.inv is e.inv   # weakly held, but alive while used
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.AffineTransform(tg.tensor([1., 2.]), 2.0) == T.AffineTransform(tg.tensor([1., 2.]),
                                                                            2.0)
    assert T.PowerTransform(2.0) == T.PowerTransform(2.0) != T.PowerTransform(3.0)
    assert T.ComposeTransform([T.ExpTransform(), T.TanhTransform()]) == \
        T.ComposeTransform([T.ExpTransform(), T.TanhTransform()])
    c = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0., -2.)])
    assert c.inv.inv is c and c.sign == -1 and c.bijective
    assert c.inv.parts[0] == T.AffineTransform(0., -2.).inv
    x = tg.tensor([0.3, -1.0], dtype=tg.float64)
    close(c.inv(c(x)), x.numpy(), rtol=1e-14)
    assert D.identity_transform is T.identity_transform
    close(T.identity_transform(x), x.numpy())
    close(T.identity_transform.log_abs_det_jacobian(x, x), [0., 0.])
    assert T.identity_transform.domain is D.constraints.real
    assert T.AffineTransform(0., 1., event_dim=2).event_dim == 2
    with pytest.raises(ValueError, match='domain.event_dim'):
        T.ComposeTransform([T.ReshapeTransform((2,), (2, 1))]).event_dim
    for name in T.__all__:
        assert getattr(D, name) is getattr(T, name)


def test_transform_caching():
    x = tg.tensor([0.2, 40.0], dtype=tg.float64)
    plain, cached = T.SigmoidTransform(), T.SigmoidTransform(cache_size=1)
    # sigmoid(40) rounds to 1 - eps: only the cache gives x back exactly
    assert float(plain.inv(plain(x))[1]) != 40.0
    y = cached(x)
    assert cached.inv(y) is x and cached(x) is y
    assert cached.inv(y.clone()) is not x
    assert plain.with_cache(1)._cache_size == 1 and plain.with_cache(0) is plain
    assert cached.inv.with_cache(0)._cache_size == 0
    comp = T.ComposeTransform([T.ExpTransform(), T.SigmoidTransform()], cache_size=1)
    assert all(p._cache_size == 1 for p in comp.parts)
    z = comp(x)
    assert comp.inv(z) is x
    aff = T.AffineTransform(1., 2.).with_cache(1)
    assert aff._cache_size == 1 and aff.loc == 1. and aff.scale == 2.
    ind = T.IndependentTransform(T.ExpTransform(), 1, cache_size=1)
    assert ind.base_transform._cache_size == 1
    t = T.TanhTransform(cache_size=1)
    w = t(x)
    assert t.inv(w) is x


# --- TransformedDistribution -------------------------------------------------

@with_torch
def test_transformed_distribution_against_torch():
    la, lb = _pair(R.normal(size=(2, 3)))
    sa, sb = _pair(R.uniform(0.5, 1.5, (2, 3)))
    ins_tg, ins_torch = [la, sa], [lb, sb]
    ta, tb = _pair(R.normal(size=(5, 1, 3)))
    cases = [
        # a LogNormal through exp; a decreasing affine (cdf flipped); a
        # transform whose parameters broadcast the batch; events from
        # Independent/affine with event_dim; a reshape of the event
        (lambda l: [l.ExpTransform()], (2, 3), ()),
        (lambda l: [l.AffineTransform(1.0, -2.0), l.SigmoidTransform()], (2, 3), ()),
        (lambda l: [l.AffineTransform(0., ta if l is T else tb)], (5, 2, 3), ()),
        (lambda l: [l.AffineTransform(0.5, 2.0, event_dim=1)], (2,), (3,)),
        (lambda l: [l.ReshapeTransform((3,), (3, 1))], (2,), (3, 1)),
        (lambda l: [l.ExpTransform(), l.PowerTransform(tg.tensor(2.0, dtype=tg.float64)
                                                       if l is T else torch.tensor(
                                                           2.0, dtype=torch.float64))],
         (2, 3), ()),
    ]
    for make, batch, event in cases:
        ours = D.TransformedDistribution(D.Normal(la, sa), make(T))
        theirs = TD.TransformedDistribution(TD.Normal(lb, sb), make(TT))
        assert ours.batch_shape == tuple(theirs.batch_shape) == batch
        assert ours.event_shape == tuple(theirs.event_shape) == event
        assert repr(ours.support) == repr(theirs.support)
        draws = ours.rsample((5,))
        assert draws.shape == (5,) + batch + event and draws.requires_grad
        v = theirs.sample((4,)).double()
        ins = [ta] if make is cases[2][0] else []
        _same(ours.log_prob(tg.tensor(v.numpy())), theirs.log_prob(v), ins_tg + ins,
              ins_torch + ([tb] if ins else []), rtol=1e-9)
        if not event:
            _same(ours.cdf(tg.tensor(v.numpy())), theirs.cdf(v), ins_tg, ins_torch, rtol=1e-9)
            p = R.uniform(0.05, 0.95, (4,) + batch)
            _same(ours.icdf(tg.tensor(p)), theirs.icdf(torch.tensor(p)), ins_tg, ins_torch,
                  rtol=1e-9)
        big, big_t = ours.expand((7,) + batch), theirs.expand((7,) + batch)
        assert big.batch_shape == tuple(big_t.batch_shape) and big.sample().shape == \
            tuple(big_t.sample().shape)
    # a transform needing an event the base lacks (softmax on a Normal batch)
    ours = D.TransformedDistribution(D.Normal(la, sa), [T.SoftmaxTransform()])
    theirs = TD.TransformedDistribution(TD.Normal(lb, sb), [TT.SoftmaxTransform()])
    assert ours.batch_shape == (2,) and ours.event_shape == (3,)
    assert isinstance(ours.base_dist, D.Independent)
    assert ours.sample((4,)).shape == (4, 2, 3)


def test_transformed_distribution_is_lognormal():
    loc, scale = tg.tensor([0.2, -0.5], dtype=tg.float64), tg.tensor([0.7, 1.3],
                                                                     dtype=tg.float64)
    td = D.TransformedDistribution(D.Normal(loc, scale), T.ExpTransform())
    ln = D.LogNormal(loc, scale)
    x = tg.tensor([[0.5, 2.0], [1.5, 0.1]], dtype=tg.float64)
    close(td.log_prob(x), ln.log_prob(x).numpy(), rtol=1e-13)
    close(td.cdf(x), ln.cdf(x).numpy(), rtol=1e-13)
    close(td.icdf(tg.tensor([0.3, 0.9], dtype=tg.float64)),
          ln.icdf(tg.tensor([0.3, 0.9], dtype=tg.float64)).numpy(), rtol=1e-13)
    assert td.has_rsample and td.support is D.constraints.positive
    draws = td.sample((20000,))
    np.testing.assert_allclose(np.log(draws.numpy()).mean(0), loc.numpy(), atol=0.05)
    with pytest.raises(ValueError, match='support'):
        D.TransformedDistribution(D.Normal(loc, scale), T.ExpTransform(),
                                  validate_args=True).log_prob(-x)


def test_kumaraswamy_and_gumbel_expand_keep_parameters():
    k = D.Kumaraswamy(tg.tensor([2.0]), tg.tensor([3.0])).expand((4,))
    assert k.concentration1.shape == (4,) and k.batch_shape == (4,)
    assert k.sample((2,)).shape == (2, 4)
    g = D.Gumbel(tg.tensor(0.), tg.tensor(1.)).expand((3, 2))
    assert g.loc.shape == (3, 2) and g.log_prob(tg.zeros(3, 2)).shape == (3, 2)
    w = D.Weibull(tg.tensor(1.), tg.tensor(2.)).expand((3,))
    assert w.concentration_reciprocal.shape == (3,) and w.sample().shape == (3,)
    st = D.StudentT(tg.tensor(3.)).expand((2,))
    assert st.rsample((5,)).shape == (5, 2)
    f = D.FisherSnedecor(tg.tensor(3.), tg.tensor(5.)).expand((2,))
    assert f.rsample((5,)).shape == (5, 2)
    c = D.Chi2(tg.tensor([3.])).expand((2, 1))
    assert type(c) is D.Chi2 and c.df.shape == (2, 1)


@with_torch
def test_logistic_normal_against_torch():
    la, lb = _pair(R.normal(size=(2, 3)))
    sa, sb = _pair(R.uniform(0.5, 2, (2, 3)))
    ours, theirs = D.LogisticNormal(la, sa), TD.LogisticNormal(lb, sb)
    assert ours.batch_shape == (2,) and ours.event_shape == (4,)
    assert repr(ours.support) == repr(theirs.support) and ours.has_rsample
    v = theirs.sample((5,)).double()
    _same(ours.log_prob(tg.tensor(v.numpy())), theirs.log_prob(v), [la, sa], [lb, sb],
          rtol=1e-9)
    assert ours.loc is la and ours.scale is sa
    draws = ours.rsample((6,))
    assert draws.shape == (6, 2, 4) and draws.requires_grad
    close(draws.sum(-1), np.ones((6, 2)), rtol=1e-12)
    scalar, scalar_t = D.LogisticNormal(0.3, 1.2), TD.LogisticNormal(0.3, 1.2)
    assert scalar.batch_shape == tuple(scalar_t.batch_shape) == ()
    assert scalar.event_shape == tuple(scalar_t.event_shape) == (2,)
    big = ours.expand((3, 2))
    assert big.batch_shape == (3, 2) and big.sample().shape == (3, 2, 4)
    with pytest.raises(ValueError, match='Expected parameter scale'):
        D.LogisticNormal(tg.zeros(2), -tg.ones(2), validate_args=True)
