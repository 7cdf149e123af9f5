"""Gradients through tg.function as eager code gives them:
- x.detach(), x.detach_() and x.data inside the function (detach raised:
  "the tensor is symbolic"), a stop_gradient node;
- a `with no_grad():` block inside the function: its ops were ordinary
  graph nodes and gradients flowed through them (twice the gradient in
  the test below); now nodes built under no_grad stop them;
- a first call made under no_grad traces a graph that later calls with
  grad mode on differentiate;
- gradients of gradients (create_graph=True: a gradient penalty, Hessian
  products): the backward's values had no history, so the penalty's
  gradient was silently missing; now the gradient graph is replayed as
  eager ops (tg_graph_replay)."""
import numpy as np
import pytest

import tensorgraph as tg

W = [[0.5, -1.0, 0.25], [2.0, 0.3, -0.7]]


def grads(fn, *args):
    """d(fn(x))/dw for a fresh w, eagerly and through tg.function"""
    out = []
    for f in (fn, tg.function(fn)):
        w = tg.tensor(W, requires_grad=True)
        f(w, *args).backward()
        out.append(w.grad.numpy())
    return out


def detach_inside(w, x):
    return ((x @ w).detach() * (x @ w)).sum()


def detach_in_place(w, x):
    t = (x @ w).detach_()
    return (t * (x @ w)).sum()


def data_inside(w, x):
    return ((x @ w).data * (x @ w)).sum()


def no_grad_block(w, x):
    with tg.no_grad():
        t = x @ w
    return (t * (x @ w)).sum()


@pytest.mark.parametrize("fn", [detach_inside, detach_in_place, data_inside, no_grad_block])
def test_cut_gradients_as_eager(fn):
    x = tg.tensor([[1.0, -2.0], [0.5, 3.0]])
    eager, traced = grads(fn, x)
    np.testing.assert_allclose(traced, eager, rtol=1e-6)
    # the cut part counts once: d/dw of sum(c * (x @ w)) with c = x @ w fixed
    np.testing.assert_allclose(eager, x.numpy().T @ (x.numpy() @ np.array(W, np.float32)),
                               rtol=1e-6)


def test_first_call_under_no_grad():
    w = tg.tensor(W, requires_grad=True)
    f = tg.function(lambda x: (x @ w).sum())
    x = tg.ones(1, 2)
    with tg.no_grad():
        assert not f(x).requires_grad
    f(x).backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.ones((2, 3), np.float32))
    assert f.trace_count == 1


def test_second_derivative():
    f = tg.function(lambda x: (x ** 3).sum())
    x = tg.tensor([2.0, -1.0], requires_grad=True)
    (d,) = tg.autograd.grad(f(x), x, create_graph=True)
    (d2,) = tg.autograd.grad(d.sum(), x)
    np.testing.assert_allclose(d.detach().numpy(), [12, 3])
    np.testing.assert_allclose(d2.numpy(), [12, -6])


def test_gradient_penalty_against_torch():
    """WGAN-GP's penalty (||d critic / d z|| - 1)^2 through a traced critic:
    the critic's weights get torch's gradients"""
    torch = pytest.importorskip("torch")
    z0 = np.array([[0.2, 0.4], [-1.0, 0.7]], np.float32)

    def run(lib, wrap):
        w = lib.tensor(W, requires_grad=True)
        z = lib.tensor(z0, requires_grad=True)
        critic = wrap(lambda z: (z @ w).tanh().sum())
        (gz,) = lib.autograd.grad(critic(z), z, create_graph=True)
        ((gz.norm(dim=1) - 1) ** 2).mean().backward()
        return w.grad.numpy()

    want = run(torch, lambda f: f)
    np.testing.assert_allclose(run(tg, lambda f: f), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(run(tg, tg.function), want, rtol=1e-5, atol=1e-7)


def test_second_derivative_through_random_ops_refused():
    """a replay would draw a new dropout mask: refused, not wrong"""
    f = tg.function(lambda x: tg.nn.functional.dropout(x, 0.5).pow(2).sum())
    x = tg.ones(8, requires_grad=True)
    with pytest.raises(RuntimeError, match="random"):
        tg.autograd.grad(f(x), x, create_graph=True)


def test_second_derivative_after_a_plain_backward():
    """the gradient graph built by a first, plain backward (under the
    engine's no_grad) serves a later create_graph backward"""
    f = tg.function(lambda x: (x ** 3).sum())
    x = tg.tensor([2.0, -1.0], requires_grad=True)
    f(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [12, 3])
    (d,) = tg.autograd.grad(f(x), x, create_graph=True)
    (d2,) = tg.autograd.grad(d.sum(), x)
    np.testing.assert_allclose(d2.numpy(), [12, -6])
