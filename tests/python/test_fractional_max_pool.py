"""F.fractional_max_pool2d/3d and nn.FractionalMaxPool2d/3d: PyTorch's
windows for given samples, its indices and gradients, its checks."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F
from conftest import torch, needs_torch, SANITIZED


def test_windows_of_given_samples():
    # PyTorch 1.13's output for this input and these samples
    x = tg.arange(35, dtype=tg.float64).reshape(1, 1, 5, 7)
    s = tg.tensor([[[0.3, 0.9]]], dtype=tg.float64)
    y, i = F.fractional_max_pool2d(x, 2, output_size=(3, 4), _random_samples=s,
                                   return_indices=True)
    want = [[8, 10, 11, 13], [15, 17, 18, 20], [29, 31, 32, 34]]
    np.testing.assert_array_equal(y.numpy()[0, 0], want)
    np.testing.assert_array_equal(i.numpy()[0, 0], want)
    assert i.dtype == tg.int64


def test_first_maximum_and_its_gradient():
    x = tg.ones(1, 1, 4, 4, requires_grad=True)
    y = F.fractional_max_pool2d(x, 2, output_size=2,
                                _random_samples=tg.zeros(1, 1, 2))
    y.sum().backward()
    g = np.zeros((4, 4))
    g[0, 0] = g[0, 2] = g[2, 0] = g[2, 2] = 1  # each window's first element
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], g)


def test_samples_drawn_per_plane_and_unbatched_input():
    tg.manual_seed(3)
    x = tg.randn(3, 9, 9)
    y = F.fractional_max_pool2d(x, 3, output_ratio=0.5)
    assert y.shape == (3, 4, 4)
    m = tg.nn.FractionalMaxPool3d(2, output_size=(2, 3, 3), return_indices=True)
    y, i = m(tg.randn(2, 2, 5, 6, 6))
    assert y.shape == i.shape == (2, 2, 2, 3, 3)


@pytest.mark.parametrize('call,err,words', [
    (lambda: F.fractional_max_pool2d(tg.zeros(1, 1, 6, 6), 2), ValueError,
     'requires specifying either an output_size or an output_ratio'),
    (lambda: F.fractional_max_pool2d(tg.zeros(1, 1, 6, 6), 2, output_size=6), RuntimeError,
     'pool height 2 too large relative to input height 6'),
    (lambda: F.fractional_max_pool3d(tg.zeros(1, 1, 6, 6, 6), 2, output_size=5), RuntimeError,
     'pool time 2 too large relative to input time 6'),
    (lambda: F.fractional_max_pool2d(tg.zeros(1, 1, 6, 6), (2, 2, 2), output_size=3),
     RuntimeError, 'kernel_size must either be a single Int or tuple of Ints'),
    (lambda: F.fractional_max_pool2d(tg.zeros(1, 1, 6, 6), 2, output_size=3,
                                     _random_samples=tg.zeros(1, 1, 2, dtype=tg.float64)),
     RuntimeError, 'expected scalar type Float but found Double'),
    (lambda: F.fractional_max_pool2d(tg.zeros(2, 1, 6, 6), 2, output_size=3,
                                     _random_samples=tg.zeros(1, 1, 2)),
     RuntimeError, '_random_samples must have shape at least [2, 1, 2]'),
    (lambda: tg.nn.FractionalMaxPool2d(2), ValueError,
     'requires specifying either an output size, or a pooling ratio'),
    (lambda: tg.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5), ValueError,
     'only one of output_size and output_ratio may be specified'),
    (lambda: tg.nn.FractionalMaxPool2d(2, output_ratio=1.0), ValueError,
     'output_ratio must be between 0 and 1'),
])
def test_errors(call, err, words):
    with pytest.raises(err) as e:
        call()
    assert words in str(e.value)


def test_empty_output_and_batch():
    x = tg.zeros(1, 2, 6, 6, requires_grad=True)
    y = F.fractional_max_pool2d(x, 2, output_size=0)
    assert y.shape == (1, 2, 0, 0)
    y.sum().backward()
    assert F.fractional_max_pool2d(tg.zeros(0, 2, 6, 6), 2, output_size=3).shape == (0, 2, 3, 3)


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
@pytest.mark.parametrize('seed', range(4))
def test_against_pytorch(seed):
    rng = np.random.default_rng(seed)
    for t in range(25):
        nd = 2 + t % 2
        dt = (np.float32, np.float64)[t // 2 % 2]
        ins = [int(v) for v in rng.integers(4, 10, nd)]
        k = [int(v) for v in rng.integers(1, 4, nd)]
        out = [int(rng.integers(1, n - kk + (1 if nd == 3 else 2))) for n, kk in zip(ins, k)]
        n, c = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        x = rng.standard_normal((n, c, *ins)).astype(dt)
        if t % 3 == 0:
            x = np.round(x)  # ties
        if t % 5 == 0:
            x.flat[rng.integers(0, x.size, 2)] = np.nan
        s = rng.random((n, c, nd)).astype(dt)
        gy = rng.standard_normal((n, c, *out)).astype(dt)
        got, want = [], []
        for lib, fn, res in ((tg, F, got), (torch, torch.nn.functional, want)):
            xt = lib.tensor(x, requires_grad=True)
            f = fn.fractional_max_pool2d if nd == 2 else fn.fractional_max_pool3d
            y, i = f(xt, k, output_size=out, _random_samples=lib.tensor(s),
                     return_indices=True)
            y.backward(lib.tensor(gy))
            res += [y.detach().numpy(), i.numpy(), xt.grad.numpy()]
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        # overlapping windows may pick one element twice: sums in any order
        np.testing.assert_allclose(got[2], want[2], rtol=1e-6)
