"""tensorgraph.nn.functional against PyTorch 1.13 where a differential
fuzzing session (fuzz/python/diff_ops.py) found them apart: gradients of
the Python-composed pools tied to their input (grad_tie), softplus with
beta 0 or a tensor beta, cross_entropy on empty inputs,
binary_cross_entropy_with_logits's dtypes and formula, mvlgamma's slope at
-0, and group_norm's float32 gradients (where the two differ by rounding
only, tensorgraph's the closer to the float64 values)."""
import math

import numpy as np
import pytest

import tensorgraph as tg
from conftest import torch, needs_torch

X = np.random.default_rng(5).uniform(-1, 1, (2, 3, 6, 6))
SAMPLES2 = [[[0.3, 0.6]] * 3] * 2
SAMPLES3 = [[[0.3, 0.6, 0.2]] * 3]

# functions whose PyTorch backward is an op of the input: under
# create_graph their gradient requires grad and gives the input zeros
TIED = {
    'adaptive_avg_pool1d': lambda m, x: m.nn.functional.adaptive_avg_pool1d(x[0], 4),
    'adaptive_avg_pool2d': lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 4),
    'adaptive_avg_pool2d_equal': lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 3),
    'adaptive_avg_pool3d': lambda m, x: m.nn.functional.adaptive_avg_pool3d(x, 2),
    'adaptive_max_pool1d': lambda m, x: m.nn.functional.adaptive_max_pool1d(x[0], 4),
    'adaptive_max_pool1d_one': lambda m, x: m.nn.functional.adaptive_max_pool1d(x[0], 1),
    'adaptive_max_pool1d_indices': lambda m, x: m.nn.functional.adaptive_max_pool1d(
        x[0], 4, return_indices=True)[0],
    'adaptive_max_pool2d': lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 4),
    'adaptive_max_pool2d_equal': lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 3),
    'adaptive_max_pool2d_indices': lambda m, x: m.nn.functional.adaptive_max_pool2d(
        x, 4, return_indices=True)[0],
    'adaptive_max_pool3d': lambda m, x: m.nn.functional.adaptive_max_pool3d(x, 2),
    'torch.adaptive_avg_pool1d': lambda m, x: m.adaptive_avg_pool1d(x[0], 4),
    'torch.adaptive_max_pool1d': lambda m, x: m.adaptive_max_pool1d(x[0], 4)[0],
    'max_pool1d_with_indices': lambda m, x: m.nn.functional.max_pool1d_with_indices(x[0], 2)[0],
    'torch.max_pool1d_with_indices': lambda m, x: m.max_pool1d_with_indices(x[0], 2)[0],
    'max_pool2d_with_indices': lambda m, x: m.nn.functional.max_pool2d_with_indices(x, 2)[0],
    'fractional_max_pool2d': lambda m, x: m.nn.functional.fractional_max_pool2d(
        x, 2, output_size=3, _random_samples=m.tensor(SAMPLES2, dtype=m.float64)),
    'fractional_max_pool2d_indices': lambda m, x: m.nn.functional.fractional_max_pool2d(
        x, 2, output_size=3, return_indices=True,
        _random_samples=m.tensor(SAMPLES2, dtype=m.float64))[0],
    'fractional_max_pool3d': lambda m, x: m.nn.functional.fractional_max_pool3d(
        x[None], (1, 2, 2), output_size=2, _random_samples=m.tensor(SAMPLES3, dtype=m.float64)),
    'softplus_beta0': lambda m, x: m.nn.functional.softplus(x, 0),
}
# PyTorch's shortcut for an all-ones output is a mean: not tied
UNTIED = {
    'adaptive_avg_pool1d_one': lambda m, x: m.nn.functional.adaptive_avg_pool1d(x[0], 1),
    'adaptive_avg_pool2d_one': lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 1),
}


def _first_order(m, f):
    x = m.tensor(X, requires_grad=True)
    y = f(m, x)
    g, = m.autograd.grad(y, x, m.ones_like(y), create_graph=True)
    return x, g


@needs_torch
@pytest.mark.parametrize('name', sorted(TIED))
def test_pool_gradient_is_tied_to_the_input(name):
    x, g = _first_order(tg, TIED[name])
    tx, tg_ = _first_order(torch, TIED[name])
    assert tg_.requires_grad and g.requires_grad
    np.testing.assert_allclose(g.detach().numpy(), tg_.detach().numpy(), rtol=1e-12)
    gg, = tg.autograd.grad((g * g).sum(), x)
    tgg, = torch.autograd.grad((tg_ * tg_).sum(), tx)
    np.testing.assert_array_equal(gg.numpy(), tgg.numpy())
    np.testing.assert_array_equal(gg.numpy(), np.zeros_like(X))


@needs_torch
@pytest.mark.parametrize('name', sorted(UNTIED))
def test_mean_shortcut_gradient_is_not_tied(name):
    _, g = _first_order(tg, UNTIED[name])
    _, tg_ = _first_order(torch, UNTIED[name])
    assert not tg_.requires_grad and not g.requires_grad
    np.testing.assert_allclose(g.numpy(), tg_.numpy(), rtol=1e-12)


def test_grad_tie_is_identity_without_grad():
    x = tg.tensor(X)
    assert tg._C._grad_tie(x) is x or np.array_equal(tg._C._grad_tie(x).numpy(), X)
    xi = tg.tensor([1, 2, 3])
    np.testing.assert_array_equal(tg._C._grad_tie(xi).numpy(), [1, 2, 3])
    xr = tg.tensor(X, requires_grad=True)
    y = tg._C._grad_tie(xr)
    np.testing.assert_array_equal(y.detach().numpy(), X)
    g, = tg.autograd.grad((y * 3).sum(), xr)  # no create_graph: plain pass-through
    assert not g.requires_grad
    np.testing.assert_array_equal(g.numpy(), np.full_like(X, 3.0))


@needs_torch
def test_softplus_tensor_beta_and_threshold_are_scalars():
    x32 = np.random.default_rng(1).uniform(-2, 2, (2, 3)).astype(np.float32)
    out = []
    for m in (torch, tg):
        x = m.tensor(x32, requires_grad=True)
        y = m.nn.functional.softplus(x, m.tensor(2.0, dtype=m.float64),
                                     m.tensor(1.0, dtype=m.float64))
        g, = m.autograd.grad(y.sum(), x)
        out.append((str(y.dtype).split('.')[-1], y.detach().numpy(), g.numpy()))
    assert out[1][0] == out[0][0] == 'float32'
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=2e-6)
    np.testing.assert_allclose(out[1][2], out[0][2], rtol=2e-6)
    with pytest.raises(TypeError):
        tg.nn.functional.softplus(tg.tensor(x32), tg.tensor([2.0]))


@needs_torch
@pytest.mark.parametrize('shape', [(0,), (2, 0), (3, 0, 2), (0, 3)])
@pytest.mark.parametrize('weighted', [False, True])
@pytest.mark.parametrize('smoothing', [0.0, 0.2])
@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
def test_cross_entropy_empty_probabilities(shape, weighted, smoothing, reduction):
    res = []
    for m in (torch, tg):
        x = m.zeros(shape, dtype=m.float64, requires_grad=True)
        t = m.zeros(shape, dtype=m.float64)
        w = m.ones(shape[1 if len(shape) >= 2 else 0], dtype=m.float64) if weighted else None
        y = m.nn.functional.cross_entropy(x, t, w, reduction=reduction,
                                          label_smoothing=smoothing)
        g, = m.autograd.grad(y.sum(), x)
        res.append((tuple(y.shape), y.detach().numpy(), tuple(g.shape)))
    assert res[1][0] == res[0][0] and res[1][2] == res[0][2]
    np.testing.assert_array_equal(res[1][1], res[0][1])  # NaN where PyTorch's is


@needs_torch
@pytest.mark.parametrize('dx', ['float32', 'float64'])
@pytest.mark.parametrize('dt', ['float32', 'float64'])
@pytest.mark.parametrize('dw', ['float32', 'float64'])
@pytest.mark.parametrize('weights', ['none', 'weight', 'pos_weight', 'both'])
@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
def test_bce_with_logits_dtype_values_and_gradients(dx, dt, dw, weights, reduction):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4)) * 3
    t = rng.uniform(0, 1, (3, 4))
    w = rng.uniform(0, 2, (3, 4))
    pw = rng.uniform(0, 2, (4,))
    gys = rng.standard_normal((3, 4))
    res = []
    for m in (torch, tg):
        X = m.tensor(x.astype(dx), requires_grad=True)
        T = m.tensor(t.astype(dt), requires_grad=True)
        W = m.tensor(w.astype(dw)) if weights in ('weight', 'both') else None
        P = m.tensor(pw.astype(dw)) if weights in ('pos_weight', 'both') else None
        y = m.nn.functional.binary_cross_entropy_with_logits(X, T, W, reduction=reduction,
                                                             pos_weight=P)
        gy = m.tensor((gys if reduction == 'none' else gys[0, 0]).astype(dt))
        gx, gt = m.autograd.grad(y, [X, T], gy)
        res.append((str(y.dtype).split('.')[-1], y.detach().numpy().astype(np.float64),
                    gx.numpy().astype(np.float64), gt.numpy().astype(np.float64)))
    assert res[1][0] == res[0][0] == dt  # the target's dtype, weighted or not
    tol = 1e-12 if dx == dt == dw == 'float64' else 2e-6
    for a, b in zip(res[0][1:], res[1][1:]):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


@needs_torch
def test_bce_with_logits_mixed_dtypes_use_pytorchs_formula():
    """float32 logits, float64 targets: PyTorch takes the log term in
    float32 (log(exp(-m) + exp(-x - m))) and the rest in float64; the
    loss differs from an all-float64 one by float32 rounding"""
    x = np.array([-0.3577291, 1.5, -2.25, 0.125], dtype=np.float32)
    t = np.array([-0.5072609643063692, 0.25, 1.0, 0.5])
    a = torch.nn.functional.binary_cross_entropy_with_logits(
        torch.tensor(x), torch.tensor(t), reduction='none').numpy()
    b = tg.nn.functional.binary_cross_entropy_with_logits(
        tg.tensor(x), tg.tensor(t), reduction='none').numpy()
    assert b.dtype == np.float64
    np.testing.assert_allclose(b, a, rtol=0, atol=2e-7)
    # the log term's float32 rounding is there, as in PyTorch's
    full = tg.nn.functional.binary_cross_entropy_with_logits(
        tg.tensor(x.astype(np.float64)), tg.tensor(t), reduction='none').numpy()
    assert np.abs(b - full).max() > 1e-9


@needs_torch
def test_bce_with_logits_input_gradient_is_sigmoid_minus_target():
    """float64 logits, float32 targets: the input's gradient is
    sigmoid(x) - t exactly (no float32 rounding of 1 - t)"""
    x = np.array([0.75768659, 0.06116145])
    t = np.array([0.45913056, 0.08595072], dtype=np.float32)
    X = tg.tensor(x, requires_grad=True)
    y = tg.nn.functional.binary_cross_entropy_with_logits(X, tg.tensor(t), reduction='sum')
    g, = tg.autograd.grad(y, X)
    np.testing.assert_allclose(g.numpy(), 1 / (1 + np.exp(-x)) - t.astype(np.float64),
                               rtol=1e-14)


@needs_torch
def test_mvlgamma_slope_at_negative_zero():
    res = []
    for m in (torch, tg):
        x = m.tensor([-0.0, 0.0, 1.5], dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(m.mvlgamma(x, 1).sum(), x)
        res.append(g.numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12)  # -inf at both zeros
    assert res[1][0] == res[1][1] == -math.inf


@needs_torch
def test_group_norm_float64_first_and_second_order():
    rng = np.random.default_rng(2)
    for shape, groups in [((4, 4), 2), ((3, 4, 5), 2), ((2, 6, 3), 3)]:
        x = rng.standard_normal(shape)
        gy = rng.standard_normal(shape)
        w2 = rng.standard_normal(shape)
        res = []
        for m in (torch, tg):
            xt = m.tensor(x, requires_grad=True)
            y = m.group_norm(xt, groups)
            g, = m.autograd.grad(y, xt, m.tensor(gy), create_graph=True)
            gg, = m.autograd.grad((g * m.tensor(w2)).sum(), xt)
            res.append([y.detach().numpy(), g.detach().numpy(), gg.numpy()])
        for a, b in zip(*res):
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


@needs_torch
def test_group_norm_float32_gradient_is_as_close_to_float64():
    """groups of nearly equal values (variance near eps): both libraries'
    float32 gradients lose digits to cancellation (r dy against r mean(dy)
    with r = 1 / sqrt(var + eps) large); tensorgraph's layer-norm kernel
    keeps x - mean, PyTorch's group-norm backward multiplies x and mean
    separately, so tensorgraph's stays the closer to the float64 values"""
    rng = np.random.default_rng(3)
    err_t, err_g = [], []
    for _ in range(60):
        n, c = int(rng.integers(1, 5)), int(rng.choice([2, 4, 6]))
        groups = int(rng.choice([g for g in (1, 2) if c % g == 0]))
        x = (rng.standard_normal((n, c)) * rng.choice([1e-3, 1e-2, 1])
             + rng.standard_normal()).astype(np.float32)
        gy = rng.standard_normal(x.shape).astype(np.float32)
        res = {}
        for key, m, dt in (('t', torch, np.float32), ('g', tg, np.float32),
                           ('r', torch, np.float64)):
            xt = m.tensor(x.astype(dt), requires_grad=True)
            y = m.group_norm(xt, groups)
            g, = m.autograd.grad(y, xt, m.tensor(gy.astype(dt)))
            res[key] = (y.detach().numpy().astype(np.float64), g.numpy().astype(np.float64))
        scale = np.abs(res['r'][1]).max() + 1
        np.testing.assert_allclose(res['g'][0], res['t'][0], atol=2e-4)  # the same values
        err_t.append(np.abs(res['t'][1] - res['r'][1]).max() / scale)
        err_g.append(np.abs(res['g'][1] - res['r'][1]).max() / scale)
    assert max(err_g) < 1e-3
    assert np.median(err_g) <= np.median(err_t)


@needs_torch
@pytest.mark.parametrize('beta,threshold', [(2, 0), (0, -1), (0, 0), (0, 1), (-1, 0.5)])
def test_softplus_threshold_edges(beta, threshold):
    """at beta x == threshold the slope is the softplus branch's but the
    second derivative 0 (PyTorch's double backward tests beta x <
    threshold); beta 0 below a negative threshold is x itself"""
    x = np.array([2., -0., 0., 5., -4., 1., -1., 0.5])
    res = []
    for m in (torch, tg):
        X = m.tensor(x, requires_grad=True)
        y = m.nn.functional.softplus(X, beta, threshold)
        g, = m.autograd.grad(y.sum(), X, create_graph=True)
        assert g.requires_grad
        gg, = m.autograd.grad((g * g).sum(), X)
        res.append((y.detach().numpy(), g.detach().numpy(), gg.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)


@needs_torch
def test_empty_adaptive_max_pool_gradient_is_tied():
    res = []
    for m in (torch, tg):
        x = m.zeros((0, 2, 4), dtype=m.float64, requires_grad=True)
        y = m.nn.functional.adaptive_max_pool2d(x, (1, 2))
        g, = m.autograd.grad(y, x, m.ones_like(y), create_graph=True)
        res.append((tuple(y.shape), tuple(g.shape), g.requires_grad))
    assert res[1] == res[0]
