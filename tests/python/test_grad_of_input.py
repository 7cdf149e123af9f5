"""First-order gradients taken with create_graph through ops whose PyTorch
backward is an op of the forward's input (hardtanh_backward(grad, self),
leaky_relu_backward, the shrinks, threshold, hardsigmoid, the pools):
they require grad whenever the input does, even with nothing else in the
graph, and differentiating them again gives the input zeros (not an
error, not None). Ops whose PyTorch backward is a where over the
gradient alone (clamp, max, sort) keep a gradient that does not."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F
from conftest import torch, needs_torch, SANITIZED

TIED = {
    'leaky_relu': lambda m, x: m.nn.functional.leaky_relu(x, 0.1),
    'hardtanh': lambda m, x: m.nn.functional.hardtanh(x, -0.5, 0.5),
    'relu6': lambda m, x: m.nn.functional.relu6(x * 4),
    'hardshrink': lambda m, x: m.nn.functional.hardshrink(x, 0.3),
    'softshrink': lambda m, x: m.nn.functional.softshrink(x, 0.3),
    'threshold': lambda m, x: m.nn.functional.threshold(x, 0.1, 2.0),
    'hardsigmoid': lambda m, x: m.nn.functional.hardsigmoid(x * 4),
    'max_pool1d': lambda m, x: m.nn.functional.max_pool1d(x, 2),
    'max_pool2d': lambda m, x: m.nn.functional.max_pool2d(x[None], 2),
    'max_pool3d': lambda m, x: m.nn.functional.max_pool3d(x[None, None], 2),
    'avg_pool1d': lambda m, x: m.nn.functional.avg_pool1d(x, 2),
    'avg_pool2d': lambda m, x: m.nn.functional.avg_pool2d(x[None], 2),
    'avg_pool3d': lambda m, x: m.nn.functional.avg_pool3d(x[None, None], 2),
}
UNTIED = {
    'clamp': lambda m, x: x.clamp(-0.5, 0.5),
    'amax': lambda m, x: x.amax(1),
    'sort': lambda m, x: x.sort(1)[0],
}

X = np.random.default_rng(5).uniform(-1, 1, (2, 4, 4))


def _first_order(m, f):
    x = m.tensor(X, requires_grad=True)
    g, = m.autograd.grad(f(m, x).sum(), x, create_graph=True)
    return x, g


@pytest.mark.parametrize('name', sorted(TIED))
def test_gradient_requires_grad_and_has_zero_second_derivative(name):
    x, g = _first_order(tg, TIED[name])
    assert g.requires_grad
    assert g.grad_fn is not None
    gg, = tg.autograd.grad((g * g).sum(), x)
    np.testing.assert_array_equal(gg.numpy(), np.zeros_like(X))
    # the values are the plain backward's
    x2 = tg.tensor(X, requires_grad=True)
    TIED[name](tg, x2).sum().backward()
    np.testing.assert_array_equal(g.detach().numpy(), x2.grad.numpy())


@pytest.mark.parametrize('name', sorted(UNTIED))
def test_gradient_of_a_where_over_the_gradient_does_not(name):
    _, g = _first_order(tg, UNTIED[name])
    assert not g.requires_grad


def test_no_tie_without_create_graph_or_without_grad_on_x():
    x = tg.tensor(X, requires_grad=True)
    g, = tg.autograd.grad(F.leaky_relu(x).sum(), x)
    assert not g.requires_grad
    w = tg.tensor(2.0, requires_grad=True)
    x = tg.tensor(X)
    g, = tg.autograd.grad(F.leaky_relu(x * w).sum(), w, create_graph=True)
    assert g.requires_grad  # through w, as before


def test_gradient_penalty_through_weights_is_unchanged():
    """the usual case (weights in the graph): the tie adds a zero"""
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((4, 4))
    w = tg.tensor(w0, requires_grad=True)
    x = tg.tensor(X[0], requires_grad=True)
    g, = tg.autograd.grad(F.leaky_relu(x @ w, 0.2).sum(), x, create_graph=True)
    (g * g).sum().backward()
    slope = np.where(X[0] @ w0 > 0, 1.0, 0.2)
    # d/dw sum((slope @ w.T)^2) = 2 (slope @ w.T).T @ slope
    gx = slope @ w0.T
    np.testing.assert_allclose(w.grad.numpy(), 2 * gx.T @ slope, rtol=1e-12)


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
@pytest.mark.parametrize('name', sorted(TIED) + sorted(UNTIED))
def test_requires_grad_as_pytorch(name):
    f = {**TIED, **UNTIED}[name]
    _, g = _first_order(tg, f)
    _, tg_ = _first_order(torch, f)
    assert g.requires_grad == tg_.requires_grad
    # (PyTorch's hardsigmoid slope is float32's 1/6 even in float64)
    np.testing.assert_allclose(g.detach().numpy(), tg_.detach().numpy(), rtol=1e-7)
