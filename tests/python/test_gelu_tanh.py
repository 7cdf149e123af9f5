"""GELU's approximate='tanh' (F.gelu, nn.GELU, the C op's attribute):
values against the formula in float64 numpy and against PyTorch in both
float dtypes, gradients against PyTorch, graph mode and the error for
other modes. (ONNX's Gelu is opset 20, beyond what the importer reads.)"""
import math

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch

X = np.linspace(-6, 6, 97)


def _tanh_ref(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def test_values_against_formula():
    got = F.gelu(tg.tensor(X), approximate='tanh').numpy()
    np.testing.assert_allclose(got, _tanh_ref(X), rtol=1e-14, atol=1e-15)
    exact = F.gelu(tg.tensor(X)).numpy()
    assert np.abs(exact - got).max() > 1e-5  # the two forms differ


def test_gradient_against_finite_differences():
    x = tg.tensor(X, requires_grad=True)
    F.gelu(x, approximate='tanh').sum().backward()
    h = 1e-6
    fd = (_tanh_ref(X + h) - _tanh_ref(X - h)) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-7, atol=1e-8)


def test_module_graph_and_errors():
    m = nn.GELU('tanh')
    assert repr(m) == "GELU(approximate='tanh')" and repr(nn.GELU()) == "GELU(approximate='none')"
    x = tg.tensor(X.astype(np.float32))
    f = tg.function(lambda t: m(t) * 2)
    np.testing.assert_array_equal(f(x).numpy(), (m(x) * 2).numpy())
    with pytest.raises(RuntimeError, match="either none or tanh"):
        F.gelu(x, approximate='fast')


@needs_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_torch(dtype):
    a = tg.tensor(X.astype(dtype), requires_grad=True)
    b = torch.tensor(X.astype(dtype), requires_grad=True)
    ya, yb = F.gelu(a, approximate='tanh'), torch.nn.functional.gelu(b, approximate='tanh')
    # float32: PyTorch's vectorized tanh saturates a step earlier (x ~ -5.3)
    tol = 2e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=tol, atol=tol)
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('act', ['gelu', 'gelu_tanh', 'relu'])
def test_backward_of_a_sum_gives_the_bits_of_a_full_gradient(act, dtype):
    """sum().backward() hands the activation's gradient a broadcast dy (stride
    0): its vectorized path must give what a materialized dy gives"""
    fn = {'gelu': F.gelu, 'gelu_tanh': lambda t: F.gelu(t, approximate='tanh'),
          'relu': F.relu}[act]
    x0 = np.random.default_rng(5).standard_normal(1000) * 4
    x = tg.tensor(x0, dtype=getattr(tg, dtype), requires_grad=True)
    fn(x).sum().backward()
    full, = tg.autograd.grad(fn(x), x, tg.full((1000,), 1.0, dtype=x.dtype).clone())
    assert np.array_equal(x.grad.numpy(), full.numpy())
    x.grad = None
    (fn(x).sum() * 2.5).backward()
    full, = tg.autograd.grad(fn(x), x, tg.full((1000,), 2.5, dtype=x.dtype).clone())
    assert np.array_equal(x.grad.numpy(), full.numpy())
