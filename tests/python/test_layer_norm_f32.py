"""float32 layer norm (kernels/cpu/layer_norm_arch.h): outputs and all
three gradients against float64 on rows that defeat naive float sums
(a large offset, a tiny variance, an outlier first element, a ramp), rows
of 1 to 4096 elements, odd lengths, eps, NaN and inf; the same bits at 1
and 2 threads, in eager and graph mode, and at every instruction-set level
(TG_CPU, in subprocesses); against PyTorch where it is installed."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch


def _ref64(x, w, b, dy, eps):
    """y and the gradients of sum(y * dy) in float64 numpy"""
    x, w, b, dy = (np.asarray(a, np.float64) for a in (x, w, b, dy))
    K = x.shape[-1]
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    a = 1 / np.sqrt(v + eps)
    xh = (x - m) * a
    g = dy * w
    dx = a * (g - g.mean(-1, keepdims=True) - xh * (g * xh).mean(-1, keepdims=True))
    lead = tuple(range(x.ndim - 1))
    return xh * w + b, dx, (dy * xh).sum(lead), dy.sum(lead)


def _run(x, w, b, dy, eps):
    xt = tg.tensor(x, requires_grad=True)
    wt, bt = tg.tensor(w, requires_grad=True), tg.tensor(b, requires_grad=True)
    y = F.layer_norm(xt, (x.shape[-1],), wt, bt, eps)
    y.backward(tg.tensor(dy))
    return y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()


def _case(x, eps=1e-5, seed=0):
    rng = np.random.default_rng(seed)
    K = x.shape[-1]
    w = rng.standard_normal(K).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    return x.astype(np.float32), w, b, dy, eps


def _check(x, eps=1e-5, ytol=4e-6, gtol=2e-5):
    args = _case(x, eps)
    got = _run(*args)
    ref = _ref64(*args)
    for name, g, r, tol in zip(("y", "dx", "dw", "db"), got, ref, (ytol, gtol, gtol, gtol)):
        scale = max(np.abs(r).max(), 1.0)
        err = np.abs(g - r).max() / scale
        assert err < tol, f"{name}: {err:.2e} relative to float64 (shape {x.shape})"


@pytest.mark.parametrize("K", [1, 2, 3, 5, 7, 8, 9, 16, 31, 32, 33, 63, 100, 127, 128, 129,
                               255, 257, 512, 1000, 4096])
def test_lengths_against_float64(K):
    _check(np.random.default_rng(K).standard_normal((19, K)))


def test_hard_rows_against_float64():
    rng = np.random.default_rng(1)
    # the naive sums lose everything here; the gradients start from the
    # saved float32 mean, within half an ulp of 1e4 (5e-4), as PyTorch's
    _check(rng.standard_normal((8, 4096)) + 1e4, gtol=1e-3)
    _check(rng.standard_normal((16, 128)) + 1e4, gtol=1e-3)
    _check(rng.standard_normal((16, 33)) * 0.01 - 3e3, gtol=2e-2)  # std 40 ulp of the mean
    _check(rng.standard_normal((8, 256)) * 1e-3)
    x = rng.standard_normal((8, 128))
    x[:, 0] = 50  # the first element far from the mean: summed again
    _check(x)
    x = rng.standard_normal((8, 128))
    x[:, :8] = 30
    _check(x)
    _check(np.tile(np.arange(4096.0), (4, 1)))  # a ramp: blocked sums
    _check(rng.standard_normal((8, 64)) * 0.1, eps=0.1)
    _check(np.full((4, 64), 3.0))  # var 0


def test_nan_and_inf_rows():
    x = np.random.default_rng(2).standard_normal((5, 64)).astype(np.float32)
    x[0, 5], x[1, 0], x[2, 3], x[3, 0] = np.nan, np.inf, -np.inf, np.nan
    y = F.layer_norm(tg.tensor(x), (64,)).numpy()
    assert np.isnan(y[:4]).all()
    ref = _ref64(x[4:], np.ones(64), np.zeros(64), np.ones((1, 64)), 1e-5)[0]
    np.testing.assert_allclose(y[4:], ref, atol=2e-6)


def _bits(*arrays):
    return [np.asarray(a).tobytes() for a in arrays]


def test_same_bits_at_one_and_two_threads():
    args = _case(np.random.default_rng(3).standard_normal((3000, 96)))
    old = tg.get_num_threads()
    try:
        tg.set_num_threads(1)
        one = _bits(*_run(*args))
        tg.set_num_threads(2)
        two = _bits(*_run(*args))
    finally:
        tg.set_num_threads(old)
    assert one == two


def test_eager_and_graph_same_bits():
    x, w, b, dy, eps = _case(np.random.default_rng(4).standard_normal((64, 40)))
    wt, bt = tg.tensor(w), tg.tensor(b)

    @tg.function
    def f(x):
        return F.layer_norm(x, (40,), wt, bt, eps)

    eager = F.layer_norm(tg.tensor(x), (40,), wt, bt, eps).numpy()
    assert _bits(f(tg.tensor(x)).numpy()) == _bits(eager)


_LEVEL_SCRIPT = """
import hashlib, sys
import numpy as np
sys.path.insert(0, {here!r})
import test_layer_norm_f32 as t
h = hashlib.sha256()
for K in (7, 40, 128, 1000):
    for a in t._run(*t._case(np.random.default_rng(K).standard_normal((21, K)))):
        h.update(a.tobytes())
print(h.hexdigest())
"""


def test_same_bits_at_every_isa_level():
    here = os.path.dirname(os.path.abspath(__file__))
    script = _LEVEL_SCRIPT.format(here=here)
    digests = set()
    for level in ("generic", "avx2", "avx512"):
        env = dict(os.environ, TG_CPU=level)
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1


@needs_torch
def test_against_pytorch():
    for shape in ((37, 128), (2, 3, 100), (5, 4096)):
        x, w, b, dy, eps = _case(np.random.default_rng(5).standard_normal(shape))
        got = _run(x, w, b, dy, eps)
        xt = torch.tensor(x, requires_grad=True)
        wt, bt = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
        y = torch.nn.functional.layer_norm(xt, (shape[-1],), wt, bt, eps)
        y.backward(torch.tensor(dy))
        for g, r in zip(got, (y.detach(), xt.grad, wt.grad, bt.grad)):
            np.testing.assert_allclose(g, r.numpy(), rtol=1e-4, atol=1e-4)
