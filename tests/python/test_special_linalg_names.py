"""torch.special's and torch.linalg's names that tensorgraph now offers,
against PyTorch: values and gradients (inside the functions' domains),
xlog1py at 0 and NaN, multi_dot with 1-D ends, F.linear with a 1-D
weight."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch
from torch_compare import compare_with_torch as _both

X = np.array([-3.0, -0.5, 0.25, 0.5, 1.5, 2.0, 40.0, -40.0], np.float32)


@needs_torch
@pytest.mark.parametrize('name', ['expit', 'exp2', 'expm1', 'erf', 'erfc', 'sinc', 'ndtr',
                                  'round'])
def test_special_unary(name):
    _both(lambda L, x: getattr(L.special, name)(x), X, grad=() if name == 'round' else (0,))


@needs_torch
@pytest.mark.parametrize('name', ['logit', 'erfinv', 'log1p', 'entr'])
def test_special_inside_domain(name):
    x = np.array([0.05, 0.3, 0.5, 0.7, 0.95], np.float32)
    _both(lambda L, t: getattr(L.special, name)(t), x, grad=(0,))


@needs_torch
@pytest.mark.parametrize('name', ['gammaln', 'digamma', 'psi'])
def test_special_gamma_family(name):
    _both(lambda L, x: getattr(L.special, name)(x), np.array([0.3, 1.0, 2.5, 7.0], np.float32),
          grad=(0,))


@needs_torch
def test_special_binary_and_reductions():
    a = np.array([0.0, 0.0, 1.0, 2.0, -1.5], np.float32)
    b = np.array([np.nan, 3.0, 0.5, np.inf, 2.0], np.float32)
    _both(lambda L, x, y: L.special.xlog1py(x, y), a, b)
    _both(lambda L, x, y: L.special.xlog1py(x, y), a[2:], b[2:] * 0 + 0.5, grad=(0, 1))
    _both(lambda L, x: L.special.xlog1py(x, 2.0), a, grad=(0,))
    _both(lambda L, x, y: L.special.xlogy(x, y), a, np.abs(b) + 1)
    _both(lambda L, x: L.special.multigammaln(x, 2), np.array([1.5, 2.5], np.float32),
          grad=(0,))
    _both(lambda L, x: L.special.softmax(x, 0), X[:4], grad=(0,))
    _both(lambda L, x: L.special.log_softmax(x, 0), X[:4], grad=(0,))
    _both(lambda L, x: L.special.logsumexp(x, 0), X, grad=(0,))
    _both(lambda L, x: L.special.entr(x), np.array([-1.0, 0.0, 0.5, np.nan], np.float32))


@needs_torch
def test_linalg_names():
    rng = np.random.default_rng(4)
    r = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
    _both(lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), r(3), r(3, 4), r(4), grad=(0, 1, 2))
    _both(lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), r(2, 3), r(3, 4), r(4, 5),
          grad=(0, 1, 2))
    _both(lambda L, a, b: L.linalg.vecdot(a, b), r(4, 3), r(3), grad=(0, 1))
    _both(lambda L, a, b: L.linalg.cross(a, b), r(4, 3), r(4, 3), grad=(0, 1))
    _both(lambda L, a: L.linalg.diagonal(a, offset=1), r(2, 3, 4), grad=(0,))
    _both(lambda L, a, b: L.linalg.matmul(a, b), r(2, 3), r(3), grad=(0, 1))
    with pytest.raises(RuntimeError, match="must be 2D"):
        tg.linalg.multi_dot([tg.ones(2, 3), tg.ones(3), tg.ones(3, 5)])


@needs_torch
def test_linear_with_1d_weight():
    rng = np.random.default_rng(6)
    _both(lambda L, x, w: L.nn.functional.linear(x, w), rng.normal(size=(2, 5, 3)).astype(
        np.float32), rng.normal(size=3).astype(np.float32), grad=(0, 1))
