"""torch.special's orthogonal polynomials, modified_bessel_i0/i1 and
spherical_bessel_j0 (python/tensorgraph/_special_poly.py)."""
import math

import numpy as np
import pytest

import tensorgraph as tg
from conftest import torch, needs_torch, SANITIZED

S = tg.special
POLYS = ['chebyshev_polynomial_t', 'chebyshev_polynomial_u', 'chebyshev_polynomial_v',
         'chebyshev_polynomial_w', 'shifted_chebyshev_polynomial_t',
         'shifted_chebyshev_polynomial_u', 'shifted_chebyshev_polynomial_v',
         'shifted_chebyshev_polynomial_w', 'hermite_polynomial_h', 'hermite_polynomial_he',
         'laguerre_polynomial_l', 'legendre_polynomial_p']
X = np.array([-2.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5])


def _closed_forms(name, x, n):
    """the polynomials of degree 3 written out"""
    y = 2 * x - 1
    return {
        'chebyshev_polynomial_t': 4 * x**3 - 3 * x,
        'chebyshev_polynomial_u': 8 * x**3 - 4 * x,
        'chebyshev_polynomial_v': 8 * x**3 - 4 * x**2 - 4 * x + 1,
        'chebyshev_polynomial_w': 8 * x**3 + 4 * x**2 - 4 * x - 1,
        'shifted_chebyshev_polynomial_t': 4 * y**3 - 3 * y,
        'shifted_chebyshev_polynomial_u': 8 * y**3 - 4 * y,
        'shifted_chebyshev_polynomial_v': 8 * y**3 - 4 * y**2 - 4 * y + 1,
        'shifted_chebyshev_polynomial_w': 8 * y**3 + 4 * y**2 - 4 * y - 1,
        'hermite_polynomial_h': 8 * x**3 - 12 * x,
        'hermite_polynomial_he': x**3 - 3 * x,
        'laguerre_polynomial_l': (-x**3 + 9 * x**2 - 18 * x + 6) / 6,
        'legendre_polynomial_p': (5 * x**3 - 3 * x) / 2,
    }[name]


@pytest.mark.parametrize('name', POLYS)
def test_degree_three_and_degree_rules(name):
    f = getattr(S, name)
    x = tg.tensor(X, dtype=tg.float64)
    np.testing.assert_allclose(f(x, 3).numpy(), _closed_forms(name, X, 3), rtol=1e-13,
                               atol=1e-13)
    np.testing.assert_allclose(f(x, 3.9).numpy(), _closed_forms(name, X, 3), rtol=1e-13,
                               atol=1e-13)  # the degree truncated
    np.testing.assert_array_equal(f(x, -2).numpy(), np.zeros(len(X)))
    np.testing.assert_array_equal(f(x, 0).numpy(), np.ones(len(X)))
    y = f(tg.tensor(X, dtype=tg.float64, requires_grad=True), 3)
    assert not y.requires_grad


@pytest.mark.parametrize('kind', 'tuvw')
def test_chebyshev_trigonometric_forms_above_degree_six(kind):
    f = getattr(S, f'chebyshev_polynomial_{kind}')
    x = np.linspace(-0.95, 0.95, 11)
    t = np.arccos(x)
    n = 9
    want = {'t': np.cos(n * t), 'u': np.sin((n + 1) * t) / np.sin(t),
            'v': np.cos((n + 0.5) * t) / np.cos(t / 2),
            'w': np.sin((n + 0.5) * t) / np.sin(t / 2)}[kind]
    np.testing.assert_allclose(f(tg.tensor(x), n).numpy(), want, rtol=1e-12, atol=1e-12)
    # at the ends: exact integers
    ends = f(tg.tensor([-1.0, 1.0], dtype=tg.float64), n).numpy()
    want_ends = {'t': [-1, 1], 'u': [-10, 10], 'v': [-19, 1], 'w': [-1, 19]}[kind]
    np.testing.assert_array_equal(ends, want_ends)


def test_broadcasting_dtypes_and_numbers():
    h = S.hermite_polynomial_h(tg.tensor([[0.5], [1.0]], dtype=tg.float64), tg.tensor([1, 2, 3]))
    assert h.dtype == tg.float64
    np.testing.assert_array_equal(h.numpy(), [[1, -1, -5], [2, 2, -4]])
    assert S.chebyshev_polynomial_t(2, tg.tensor([3, 4])).tolist() == [26, 97]
    assert S.chebyshev_polynomial_t(tg.tensor([2, 3]), 3).dtype == tg.float32
    with pytest.raises(TypeError):
        S.chebyshev_polynomial_t(0.5, 3)


def test_bessel_forms():
    x = tg.tensor([0.0, 1e-9, 0.3, -2.0, math.inf, math.nan], dtype=tg.float64,
                  requires_grad=True)
    i0 = S.modified_bessel_i0(x)
    assert not i0.requires_grad
    np.testing.assert_allclose(i0.numpy()[:4], [1, 1, 1.0226268793515967, 2.279585302336067],
                               rtol=1e-14)
    assert np.isnan(i0.numpy()[4:]).all()  # PyTorch's NaN at the infinities
    np.testing.assert_allclose(S.modified_bessel_i1(x).numpy()[:4],
                               [0, 5e-10, 0.15169384000359282, -1.5906368546373295], rtol=1e-14)
    j0 = S.spherical_bessel_j0(x).numpy()
    np.testing.assert_allclose(j0[:4], [1, 1, math.sin(0.3) / 0.3, math.sin(2.0) / 2.0],
                               rtol=1e-15)
    assert j0[4] == 0 and np.isnan(j0[5])


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
@pytest.mark.parametrize('name', POLYS)
def test_against_pytorch(name):
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.uniform(-1.2, 1.2, 200), rng.uniform(-0.1, 1.1, 60),
                         [-2, -1, -0.5, 0, 0.5, 1, 2, np.inf, -np.inf, np.nan]])
    for n in [-3, -0.5, 0, 1, 2, 2.7, 5, 6, 7, 9, 12, 25]:
        want = getattr(torch.special, name)(torch.tensor(xs), torch.tensor(float(n),
                                            dtype=torch.float64)).numpy()
        got = getattr(S, name)(tg.tensor(xs), tg.tensor(float(n), dtype=tg.float64)).numpy()
        scale = np.nanmax(np.abs(want[np.isfinite(want)]))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * max(1.0, scale))
