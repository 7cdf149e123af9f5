"""Every op family: forward against numpy, backward against float64 central
finite differences (tg.autograd.gradcheck), and against PyTorch when
installed."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F
from conftest import close, needs_torch, torch

rng = np.random.default_rng(0)


def arr(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape)


def pos(*shape):
    return rng.uniform(0.5, 2.0, size=shape)


def softmax_np(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def erf_np(x):
    import math
    return np.vectorize(math.erf)(x)


# name: (tensorgraph function, numpy reference, inputs)
UNARY = {
    "neg": (tg.neg, np.negative, arr), "abs": (tg.abs, np.abs, arr),
    "exp": (tg.exp, np.exp, arr), "log": (tg.log, np.log, pos),
    "sqrt": (tg.sqrt, np.sqrt, pos), "rsqrt": (tg.rsqrt, lambda x: 1 / np.sqrt(x), pos),
    "sin": (tg.sin, np.sin, arr), "cos": (tg.cos, np.cos, arr),
    "tanh": (tg.tanh, np.tanh, arr), "sigmoid": (tg.sigmoid, lambda x: 1 / (1 + np.exp(-x)), arr),
    "relu": (tg.relu, lambda x: np.maximum(x, 0), arr),
    "erf": (tg.erf, erf_np, arr),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + erf_np(x / np.sqrt(2))), arr),
    "softplus": (F.softplus, lambda x: np.log1p(np.exp(x)), arr),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x), arr),
    "elu": (F.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1), arr),
    "clamp": (lambda x: x.clamp(-0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7), arr),
    "softmax": (lambda x: tg.softmax(x, -1), lambda x: softmax_np(x, -1), arr),
    "log_softmax": (lambda x: tg.log_softmax(x, 1), lambda x: np.log(softmax_np(x, 1)), arr),
    "sum": (lambda x: x.sum(1), lambda x: x.sum(1), arr),
    "sum_all": (lambda x: x.sum(), lambda x: x.sum(), arr),
    "mean": (lambda x: x.mean((0, 2), keepdim=True), lambda x: x.mean((0, 2), keepdims=True), arr),
    "prod": (lambda x: x.prod(-1), lambda x: x.prod(-1), pos),
    "amax": (lambda x: x.amax(0), lambda x: x.max(0), arr),
    "var": (lambda x: x.var(1), lambda x: x.var(1, ddof=1), arr),
    "std": (lambda x: x.std(), lambda x: x.std(ddof=1), arr),
    "logsumexp": (lambda x: x.logsumexp(1), lambda x: np.log(np.exp(x).sum(1)), arr),
    "transpose": (lambda x: x.transpose(0, 2), lambda x: x.transpose(2, 1, 0), arr),
    "permute": (lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1), arr),
    "reshape": (lambda x: x.reshape(4, -1), lambda x: x.reshape(4, -1), arr),
    "slice": (lambda x: x[1:, ::2, None, 1], lambda x: x[1:, ::2, None, 1], arr),
    "flatten": (lambda x: x.flatten(1), lambda x: x.reshape(2, -1), arr),
    "expand": (lambda x: x[:, :1].expand(2, 5, 4), lambda x: np.broadcast_to(x[:, :1], (2, 5, 4)), arr),
    "tile": (lambda x: x.tile(2, 1, 1), lambda x: np.tile(x, (2, 1, 1)), arr),
    "pad": (lambda x: F.pad(x, (1, 2)), lambda x: np.pad(x, ((0, 0), (0, 0), (1, 2))), arr),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_forward_and_backward(name):
    fn, ref, make = UNARY[name]
    x = make(2, 3, 4)
    close(fn(tg.tensor(x, dtype=tg.float32)), ref(x.astype(np.float32)), rtol=1e-4, atol=1e-5)
    xt = tg.tensor(x, dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(fn, (xt,))


BINARY = {
    "add": (tg.add, np.add), "sub": (tg.sub, np.subtract), "mul": (tg.mul, np.multiply),
    "div": (tg.div, np.divide), "maximum": (tg.maximum, np.maximum),
    "minimum": (tg.minimum, np.minimum),
    "pow": (lambda a, b: tg.pow(a.abs() + 0.5, b), lambda a, b: (np.abs(a) + 0.5) ** b),
    "matmul": (lambda a, b: a @ b.transpose(-1, -2), lambda a, b: a @ np.swapaxes(b, -1, -2)),
    "where": (lambda a, b: tg.where(a > b, a, b * 2), lambda a, b: np.where(a > b, a, b * 2)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_forward_and_backward(name):
    fn, ref = BINARY[name]
    a, b = arr(2, 3, 4), arr(1, 3, 4)  # broadcasting along the first dim
    if name == "matmul":
        b = arr(2, 5, 4)
    close(fn(tg.tensor(a), tg.tensor(b)), ref(a, b).astype(np.float32), rtol=1e-4, atol=1e-5)
    at = tg.tensor(a, dtype=tg.float64, requires_grad=True)
    bt = tg.tensor(b, dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(fn, (at, bt))


def test_comparisons_and_logic():
    a, b = tg.tensor([1, 2, 3]), tg.tensor([3, 2, 1])
    assert (a < b).tolist() == [True, False, False] and (a == b).tolist() == [False, True, False]
    assert (a >= 2).tolist() == [False, True, True] and (2 < a).tolist() == [False, False, True]
    assert ((a > 1) & (b > 1)).tolist() == [False, True, False]
    assert ((a > 2) | (b > 2)).tolist() == [True, False, True]
    assert (~(a > 1)).tolist() == [True, False, False]
    assert tg.logical_xor(a > 1, b > 1).tolist() == [True, False, True]
    assert (a == None) is False and (a != None) is True  # noqa: E711


def test_argmax_max_min():
    x = tg.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    assert x.argmax().item() == 3 and x.argmax(1).tolist() == [1, 0]
    v, i = x.max(1)
    assert v.tolist() == [5.0, 7.0] and i.tolist() == [1, 0]
    assert x.max().item() == 7.0 and tg.min(x, 0).values.tolist() == [1.0, 0.0, 2.0]
    assert tg.max(x, tg.zeros(3)).shape == (2, 3)
    assert x.argmin(1, keepdim=True).shape == (2, 1)


def test_array_ops():
    a, b = tg.ones(2, 3), tg.zeros(1, 3)
    close(tg.cat([a, b]), np.concatenate([np.ones((2, 3)), np.zeros((1, 3))]))
    assert tg.stack([a, a], dim=1).shape == (2, 2, 3)
    x = tg.arange(12.0).reshape(3, 4)
    close(tg.gather(x, 1, tg.tensor([[0, 0], [1, 0], [3, 2]])), [[0, 0], [5, 4], [11, 10]])
    close(x.index_select(0, tg.tensor([2, 0])), [[8, 9, 10, 11], [0, 1, 2, 3]])
    parts = tg.split(x, [1, 3], dim=1)
    assert [p.shape for p in parts] == [(3, 1), (3, 3)]
    assert [c.shape for c in x.chunk(2, 0)] == [(2, 4), (1, 4)]
    assert F.one_hot(tg.tensor([0, 2])).tolist() == [[1, 0, 0], [0, 0, 1]]
    assert x.squeeze().shape == (3, 4) and x[:1].squeeze(0).shape == (4,)
    assert x.unsqueeze(0).shape == (1, 3, 4)


def test_nn_ops_forward_and_backward():
    x = tg.tensor(arr(2, 3, 6, 6), dtype=tg.float64, requires_grad=True)
    w = tg.tensor(arr(4, 3, 3, 3), dtype=tg.float64, requires_grad=True)
    bias = tg.tensor(arr(4), dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda x, w, b: F.conv2d(x, w, b, padding=1, stride=2),
                                 (x, w, bias))
    assert tg.autograd.gradcheck(lambda x: F.max_pool2d(x, 2), (x,))
    assert tg.autograd.gradcheck(lambda x: F.avg_pool2d(x, 3, stride=1, padding=1), (x,))
    assert tg.autograd.gradcheck(lambda x: F.layer_norm(x, (6,)), (x,))
    assert tg.autograd.gradcheck(lambda x: F.batch_norm(x, None, None, training=True), (x,))
    lin_w = tg.tensor(arr(5, 6), dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda x, w: F.linear(x, w), (x, lin_w))
    assert F.adaptive_avg_pool2d(x, 1).shape == (2, 3, 1, 1)


def test_losses_forward_and_backward():
    logits = tg.tensor(arr(4, 5), dtype=tg.float64, requires_grad=True)
    labels = tg.tensor([0, 4, 2, 2])
    ref = -np.log(softmax_np(logits.detach().numpy(), 1))[np.arange(4), labels.numpy()].mean()
    close(F.cross_entropy(logits, labels), ref)
    close(F.nll_loss(F.log_softmax(logits, 1), labels), ref)
    assert tg.autograd.gradcheck(lambda z: F.cross_entropy(z, labels), (logits,))
    t = tg.tensor(arr(4, 5), dtype=tg.float64)
    close(F.mse_loss(logits, t, reduction="sum"), ((logits.detach().numpy() - t.numpy()) ** 2).sum())
    assert tg.autograd.gradcheck(lambda z: F.mse_loss(z, t), (logits,))
    y = (t > 0).double()
    assert tg.autograd.gradcheck(lambda z: F.binary_cross_entropy_with_logits(z, y), (logits,))
    assert F.cross_entropy(logits, labels, reduction="none").shape == (4,)


@needs_torch
def test_against_torch_backward():
    x = arr(3, 4)
    for name, fn in (("tanh", lambda m, v: m.tanh(v)), ("softmax", lambda m, v: m.softmax(v, 1)),
                     ("logsumexp", lambda m, v: m.logsumexp(v, 1))):
        a = tg.tensor(x, requires_grad=True)
        b = torch.tensor(x, dtype=torch.float32, requires_grad=True)
        (fn(tg, a) * tg.arange(a.numel() if name != "logsumexp" else 3).reshape(
            (3, 4) if name != "logsumexp" else (3,)).float()).sum().backward()
        (fn(torch, b) * torch.arange(b.numel() if name != "logsumexp" else 3).reshape(
            (3, 4) if name != "logsumexp" else (3,)).float()).sum().backward()
        close(a.grad, b.grad.numpy(), rtol=1e-4, atol=1e-5)
