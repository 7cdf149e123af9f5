"""Autograd from Python, with PyTorch's semantics and error cases: backward,
accumulation, retain_graph errors, no_grad, in-place version errors,
autograd.grad with create_graph, custom Functions."""
import math

import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, needs_torch, torch


def test_backward_accumulates_into_leaves():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    close(x.grad, [2, 4, 6])
    (x * 3).sum().backward()
    close(x.grad, [5, 7, 9])
    x.grad = None
    assert x.grad is None
    y = x.exp()
    y.backward(tg.ones(3))
    close(x.grad, np.exp([1, 2, 3]), rtol=1e-5)
    assert x.is_leaf and not y.is_leaf and y.requires_grad and y.grad_fn.name() == "ExpBackward0"
    assert x.grad_fn is None


def test_backward_errors():
    x = tg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.ones(2).sum().backward()
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()
    z = (x * x).sum()
    z.backward(retain_graph=True)
    z.backward()
    close(x.grad, [6, 6, 6])
    with pytest.raises(RuntimeError, match="floating point|float"):
        tg.ones(2, dtype=tg.int64).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf"):
        (x * 2).requires_grad_(False)


def test_no_grad_and_enable_grad():
    x = tg.ones(2, requires_grad=True)
    with tg.no_grad():
        y = x * 2
        assert not tg.is_grad_enabled()
        with tg.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None and z.requires_grad

    @tg.no_grad()
    def f(a):
        return a * 3
    assert not f(x).requires_grad
    with tg.set_grad_enabled(False):
        assert not (x + 1).requires_grad
    assert tg.is_grad_enabled()
    assert not x.detach().requires_grad and (x.detach() * 1).grad_fn is None


def test_inplace_version_errors_at_backward():
    x = tg.ones(3, requires_grad=True)
    a = tg.full((3,), 2.0)
    y = x * a           # mul saves a
    a.add_(1)           # ... which is then modified in place
    assert a._version == 1
    with pytest.raises(RuntimeError, match="in.place|version"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="grad"):
        x.add_(1)       # a leaf that requires grad: refused, as PyTorch
    with tg.no_grad():
        x.add_(1)       # allowed as a parameter update
    close(x, [2, 2, 2])


def test_inplace_ops_and_versions():
    t = tg.zeros(3)
    v0 = t._version
    t += 1
    t *= 3
    t -= tg.tensor([1.0, 0.0, 1.0])
    t /= 2
    close(t, [1, 1.5, 1])
    assert t._version == v0 + 4
    u = t
    u += 1
    assert u is t
    t.zero_()
    t.fill_(2.5)
    t.mul_(2).add_(1, alpha=2).sub_(tg.ones(3))
    close(t, [6, 6, 6])
    i = tg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i /= 2


def test_autograd_grad_create_graph():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    g, = tg.autograd.grad(y, x, create_graph=True)
    close(g, [3, 12])
    gg, = tg.autograd.grad(g.sum(), x)
    close(gg, [6, 12])
    assert x.grad is None  # grad() does not accumulate
    w = tg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused"):
        tg.autograd.grad((x * 2).sum(), [x, w])
    gx, gw = tg.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)
    assert gw is None
    out = x * 2
    go, = tg.autograd.grad(out, x, grad_outputs=tg.tensor([1.0, 10.0]))
    close(go, [2, 20])


class Exp(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = x.exp() * scale
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * y, None


def test_custom_function():
    x = tg.tensor([0.0, 1.0], dtype=tg.float64, requires_grad=True)
    y = Exp.apply(x, 2.0)
    close(y, 2 * np.exp([0.0, 1.0]))
    assert y.grad_fn.name().startswith("Exp")
    y.sum().backward()
    close(x.grad, 2 * np.exp([0.0, 1.0]))
    assert tg.autograd.gradcheck(lambda t: Exp.apply(t, 3.0), (x,))
    # no grad needed: forward only
    with tg.no_grad():
        assert not Exp.apply(x, 1.0).requires_grad


def test_custom_function_saved_tensor_modified():
    x = tg.ones(2, requires_grad=True)
    y = Exp.apply(x, 1.0)
    with tg.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified|in-place"):
        y.sum().backward()


class Bad(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("backward exploded")


class WrongCount(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


def test_custom_function_errors_propagate():
    x = tg.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="exploded"):
        Bad.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="incorrect number"):
        WrongCount.apply(x).sum().backward()

    class NotTensor(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 3

    with pytest.raises(TypeError, match="single Tensor"):
        NotTensor.apply(x)


HIGHER_ORDER = [
    ("sin_x2", lambda m, x: (x.sin() * x ** 2).sum()),
    ("tanh_exp", lambda m, x: (x.tanh() * x.exp()).sum()),
    ("sigmoid_sq", lambda m, x: (m.sigmoid(x) ** 2).sum()),
    ("softmax", lambda m, x: (m.softmax(x, 0) * m.arange(3.0)).sum()),
    ("matmul", lambda m, x: (x.reshape(3, 1) @ x.reshape(1, 3)).pow(2).sum()),
]


def _higher_order(m, f, order):
    """x.grad after backward(create_graph) then backward of sum(grad * w),
    order times; returns each level's gradient"""
    x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
    w = m.tensor([1.0, -2.0, 3.0], dtype=m.float64)
    out, y = [], f(m, x)
    for _ in range(order):
        y.backward(create_graph=True)
        g = x.grad
        out.append(g.detach().numpy().copy())
        assert g.requires_grad
        x.grad = None
        y = (g * w).sum()
    return out


@needs_torch
@pytest.mark.filterwarnings("ignore:Using backward")
@pytest.mark.parametrize("name,f", HIGHER_ORDER, ids=[h[0] for h in HIGHER_ORDER])
def test_backward_create_graph_matches_torch(name, f):
    for got, want in zip(_higher_order(tg, f, 3), _higher_order(torch, f, 3)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_backward_create_graph_accumulates_and_retains():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    y.backward(create_graph=True)    # retains the graph: a second pass works
    y.backward(create_graph=True)    # accumulates: 2 * 3x^2, still differentiable
    close(x.grad, [6.0, 24.0])
    g = x.grad
    x.grad = None
    g.sum().backward()
    close(x.grad, [12.0, 24.0])      # d/dx 6 x^2
    y = (x ** 2).sum()
    y.backward(retain_graph=False, create_graph=False)
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_autograd_backward_several_roots():
    x = tg.tensor([0.5, 1.0], requires_grad=True)
    a, b = (x * 3).sum(), x.exp()
    tg.autograd.backward([a, b], [None, [1.0, 2.0]])
    close(x.grad, [3 + np.exp(0.5), 3 + 2 * np.exp(1.0)], rtol=1e-6)
    with pytest.raises(RuntimeError, match="scalar outputs"):
        tg.autograd.backward([x * 2])
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.autograd.backward([x.sum(), tg.ones(1)])
    with pytest.raises(RuntimeError, match="entries"):
        tg.autograd.backward([x.sum(), x.sum()], [None])
    with pytest.raises(TypeError):
        tg.autograd.backward([1.0])


def test_backward_inputs_accumulates_only_into_inputs():
    # PyTorch's backward(inputs=...): other leaves keep no gradient; an
    # input that is not a leaf gets one too
    x = tg.tensor([1.0], requires_grad=True)
    y = tg.tensor([2.0], requires_grad=True)
    (x * y * 3).sum().backward(inputs=[x])
    assert x.grad.tolist() == [6.0] and y.grad is None
    (x * y).sum().backward(inputs=[x, y])
    assert x.grad.tolist() == [8.0] and y.grad.tolist() == [1.0]
    h = x * 2
    (h * 3).sum().backward(inputs=h)
    assert h.grad.tolist() == [3.0]
    v = tg.tensor([1.0, 2.0], requires_grad=True)
    tg.autograd.backward([v * y], grad_tensors=[tg.tensor([1.0, 1.0])], inputs=[y])
    assert v.grad is None and y.grad.tolist() == [4.0]
    (v * 3).backward(tg.tensor([1.0, 2.0]), inputs=[v])
    assert v.grad.tolist() == [3.0, 6.0]
    w = tg.tensor([2.0], requires_grad=True)
    (w ** 3).sum().backward(inputs=[w], create_graph=True)
    assert w.grad.tolist() == [12.0] and w.grad.requires_grad
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (w * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (w * tg.ones(2)).backward(inputs=[w])


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_second_derivative_of_the_exponential_units(dtype):
    """elu, selu and celu: f'' is the exponential branch's below 0 and 0
    from 0 on (PyTorch's double backward masks by x < 0); an exp that
    overflows above 0 (celu with a small alpha) gives 0 there, not NaN"""
    F = tg.nn.functional
    xs = [-2.0, -1e-3, 0.0, 0.3, 800.0]
    for f, second in [(lambda t: F.elu(t, 0.7), lambda v: 0.7 * math.exp(v)),
                      (F.selu, lambda v: 1.0507009873554805 * 1.6732632423543772 * math.exp(v)),
                      (lambda t: F.celu(t, 0.001), lambda v: math.exp(v / 0.001) / 0.001)]:
        x = tg.tensor(xs, dtype=getattr(tg, dtype), requires_grad=True)
        g, = tg.autograd.grad(f(x).sum(), x, create_graph=True)
        first, = tg.autograd.grad(f(x).sum(), x)
        assert np.array_equal(g.detach().numpy(), first.numpy())  # the same first order
        h, = tg.autograd.grad(g.sum(), x)
        want = [second(v) if v < 0 else 0.0 for v in xs]
        assert np.allclose(h.numpy(), want, rtol=1e-5, atol=1e-6), (h.tolist(), want)


@pytest.mark.parametrize('fn', ['logaddexp', 'logaddexp2'])
def test_logaddexp_second_derivative_at_a_tie(fn):
    """d2/da2 log(e^a + e^b) = s (1 - s), s = sigmoid(a - b): 1/4 at a tie
    (a max and |a - b| composition gave 0 there); ln 2 scales the base-2 form"""
    x = tg.tensor([1.0, 0.0, 3.0], dtype=tg.float64, requires_grad=True)
    y = tg.tensor([1.0, 0.0, 2.0], dtype=tg.float64, requires_grad=True)
    gx, gy = tg.autograd.grad(getattr(tg, fn)(x, y).sum(), (x, y), create_graph=True)
    assert gx.tolist()[:2] == [0.5, 0.5] and gy.tolist()[:2] == [0.5, 0.5]
    hx, = tg.autograd.grad(gx.sum(), x)
    scale = math.log(2.0) if fn == 'logaddexp2' else 1.0
    s = 1 / (1 + math.exp(-scale * 1.0))
    assert np.allclose(hx.numpy(), [0.25 * scale, 0.25 * scale, s * (1 - s) * scale], rtol=1e-12)
