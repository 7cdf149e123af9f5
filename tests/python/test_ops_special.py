"""lgamma and digamma (composed, _ops_special.py): values at poles,
infinities, NaN, tiny and huge arguments, and gradients, against PyTorch."""
import math

import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, needs_torch, torch

X = np.array([0.0, -0.0, -1.0, -2.5, 1.0, 2.0, 0.5, 1e-8, -1e-8, np.inf, -np.inf, np.nan, 1e10,
              171.5, 1e306, 3.3, 0.7, 15.2, -7.3, 100.0, -0.4, 11.9, 12.6])


@needs_torch
@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_values_against_torch_float64(name):
    got = getattr(tg, name)(tg.tensor(X, dtype=tg.float64))
    want = getattr(torch, name)(torch.tensor(X, dtype=torch.float64)).numpy()
    assert got.dtype == tg.float64
    close(got, want, 1e-13, 1e-14)  # absolute near lgamma's zeros at 1 and 2
    close(getattr(tg.tensor(X, dtype=tg.float64), name)(), want, 1e-13, 1e-14)


@needs_torch
@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_values_float32_ints_and_empty(name):
    x = np.linspace(-9.7, 30.3, 57).astype(np.float32)
    got = getattr(tg, name)(tg.tensor(x))
    assert got.dtype == tg.float32
    close(got, getattr(torch, name)(torch.tensor(x)).numpy(), 2e-6, 1e-6)
    i = getattr(tg, name)(tg.tensor([1, 3, 7]))
    assert i.dtype == tg.float32
    close(i, getattr(torch, name)(torch.tensor([1, 3, 7])).numpy(), 1e-6, 1e-6)
    assert getattr(tg, name)(tg.zeros(0, 2)).shape == (0, 2)
    with pytest.raises(TypeError, match="must be Tensor"):
        getattr(tg, name)(2.0)


@needs_torch
@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_gradients_against_torch(name):
    x = np.array([[0.3, 1.0, 2.5, 7.0], [-0.4, -2.5, 13.0, 40.0]])
    a = tg.tensor(x, dtype=tg.float64, requires_grad=True)
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    w = np.random.RandomState(1).uniform(-1, 1, x.shape)
    (getattr(tg, name)(a) * tg.tensor(w)).sum().backward()
    (getattr(torch, name)(t) * torch.tensor(w)).sum().backward()
    # PyTorch's trigamma (digamma's gradient) is itself off by up to 5e-10
    close(a.grad, t.grad.numpy(), 1e-11 if name == 'lgamma' else 1e-9, 1e-12)


def test_digamma_gradient_is_trigamma_to_float64():
    mpmath = pytest.importorskip("mpmath")
    x = np.array([0.3, 1.0, 2.5, 7.0, -0.4, -2.5, 13.0, 40.0])
    a = tg.tensor(x, dtype=tg.float64, requires_grad=True)
    tg.digamma(a).sum().backward()
    close(a.grad, [float(mpmath.polygamma(1, v)) for v in x], 2e-15, 0)


def test_digamma_slope_at_its_poles_is_pytorchs_huge_finite_trigamma():
    # PyTorch's trigamma at a negative integer is pi^2 / sin^2(pi x) of the
    # rounded pi x: about 6.58e32 at -1, not 0 (a selection) nor inf
    x = tg.tensor([-1.0, -2.0, -7.0], dtype=tg.float64, requires_grad=True)
    y = tg.digamma(x)
    y.sum().backward()
    assert all(v != v for v in y.tolist())
    want = [math.pi ** 2 / math.sin(math.pi * v) ** 2 for v in (-1.0, -2.0, -7.0)]
    close(x.grad, want, 1e-6, 0)


def test_trigamma_at_the_poles_is_pytorchs_in_each_dtype():
    # polygamma(1, x) at 0 and the negative integers: pi^2 / sin^2(pi x) of
    # the rounded pi x in x's dtype, as PyTorch's trigamma reflects
    for dt, want in ((tg.float64, [6.58079e32, 1.64520e32]), (tg.float32, [1.29137e15, 3.22842e14])):
        got = tg.polygamma(1, tg.tensor([-1.0, -2.0, 0.0, 2.0], dtype=dt)).tolist()
        close(tg.tensor(got[:2], dtype=tg.float64), want, 1e-5, 0)
        assert got[2] == math.inf and abs(got[3] - (math.pi ** 2 / 6 - 1)) < 1e-6


def test_lgamma_in_place_and_known_values():
    x = tg.tensor([5.0, 0.5], dtype=tg.float64)
    x.lgamma_()
    close(x, [np.log(24.0), 0.5 * np.log(np.pi)], 1e-14)
    close(tg.digamma(tg.tensor([1.0], dtype=tg.float64)), [-0.5772156649015329], 1e-14)


@needs_torch
def test_erfinv_values_edges_and_dtypes():
    y = np.array([-1.0, 1.0, 0.0, -0.0, 1.5, -2.0, np.nan, 0.5, -0.3, 0.9, -0.99, 0.49999,
                  0.50001, 1e-300])
    got = tg.erfinv(tg.tensor(y, dtype=tg.float64))
    close(got, torch.erfinv(torch.tensor(y, dtype=torch.float64)).numpy(), 1e-14, 0)
    y32 = np.linspace(-0.999, 0.999, 37).astype(np.float32)
    g32 = tg.tensor(y32).erfinv()
    assert g32.dtype == tg.float32
    close(g32, torch.erfinv(torch.tensor(y32)).numpy(), 1e-6, 0)
    assert tg.erfinv(tg.tensor([0, 1])).tolist() == [0.0, float('inf')]
    assert tg.erfinv(tg.zeros(2, 0)).shape == (2, 0)


def test_erfinv_far_tail_keeps_float64_precision():
    # erf is flat there: PyTorch's own erfinv is off by 5e-5 at -(1 - 1e-15)
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    y = np.array([0.999, 1 - 1e-10, -(1 - 1e-15), 0.9999999, 1 - 2 ** -53, -1 + 2 ** -53])
    want = [float(mpmath.erfinv(mpmath.mpf(v))) for v in y]
    close(tg.erfinv(tg.tensor(y, dtype=tg.float64)), want, 1e-15, 0)


@needs_torch
def test_erfinv_first_and_second_derivatives():
    y = np.array([0.5, -0.3, 0.999, -0.9, 0.0, 0.7])
    a = tg.tensor(y, dtype=tg.float64, requires_grad=True)
    t = torch.tensor(y, dtype=torch.float64, requires_grad=True)
    g, = tg.autograd.grad(tg.erfinv(a).sum(), a, create_graph=True)
    tg_, = torch.autograd.grad(torch.erfinv(t).sum(), t, create_graph=True)
    close(g, tg_.detach().numpy(), 1e-12, 0)
    g2, = tg.autograd.grad(g.sum(), a)
    t2, = torch.autograd.grad(tg_.sum(), t)
    close(g2, t2.numpy(), 1e-10, 1e-12)


# gradients at the poles: PyTorch's formulas give grad * inf there (erfinv
# at +-1, lgamma at +-0) and NaN beyond +-1 / at the negative integers
POLES = {'erfinv': ([1.0, -1.0, 1.5, -3.0, 0.5, np.nan], [np.inf, np.inf, np.nan, np.nan, None, np.nan]),
         'lgamma': ([0.0, -0.0, -1.0, -4.0, 1.5, -2.5], [-np.inf, np.inf, np.nan, np.nan, None, None])}


def _pole_grad(f, x, dtype, traced=False):
    a = tg.tensor(x, dtype=dtype, requires_grad=True)
    fn = tg.function(lambda v: f(v)) if traced else f
    (fn(a) * tg.tensor([2.0] * len(x), dtype=dtype)).sum().backward()
    return a.grad.numpy()


@pytest.mark.parametrize("name", sorted(POLES))
@pytest.mark.parametrize("traced", [False, True])
def test_gradient_at_poles(name, traced):
    x, want = POLES[name]
    for dt in (tg.float64, tg.float32):
        got = _pole_grad(getattr(tg, name), x, dt, traced)
        for g, w in zip(got, want):
            if w is None:
                assert np.isfinite(g)
            elif np.isnan(w):
                assert np.isnan(g), (name, x, got)
            else:
                assert g == 2 * w, (name, x, got)
        if torch is not None:
            t = torch.tensor(x, dtype=getattr(torch, str(dt).split('.')[-1]), requires_grad=True)
            (getattr(torch, name)(t) * 2).sum().backward()
            close(got, t.grad.numpy(), 1e-5, 0)
    # values stay as they were, the second derivative is +inf as PyTorch's
    a = tg.tensor(x, dtype=tg.float64, requires_grad=True)
    g, = tg.autograd.grad(getattr(tg, name)(a).sum(), a, create_graph=True)
    g2, = tg.autograd.grad(g[:2].sum(), a)
    assert g2[0].item() == np.inf and (name == 'erfinv' or g2[1].item() == np.inf)
