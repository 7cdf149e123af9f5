"""nn.functional edge cases against PyTorch: float32 avg_pool2d gradients
of even planes with 3 x 3 stride-2 windows (once taken by the 2 x 2
vector kernel), negative pads (cropping, after the positive side is
added), softmax / log_softmax with dtype= and PyTorch's implicit dim,
permute with negative dims."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch
from torch_compare import compare_with_torch

RNG = np.random.default_rng(5)


def _same(fn, a):
    compare_with_torch(fn, a, grad=(0,))


@needs_torch
@pytest.mark.parametrize('hw', [(6, 6), (8, 8), (16, 16), (8, 7)])
@pytest.mark.parametrize('kw', [dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                                dict(kernel_size=3, stride=2, ceil_mode=True),
                                dict(kernel_size=2, stride=2)])
def test_avg_pool2d_grad_float32(hw, kw):
    _same(lambda L, x: L.nn.functional.avg_pool2d(x, **kw),
          RNG.normal(size=(2, 3) + hw).astype(np.float32))


@needs_torch
@pytest.mark.parametrize('mode', ['constant', 'reflect', 'replicate'])
@pytest.mark.parametrize('pad', [(-1, 2, 1, -2), (-2, -1, 0, 0), (2, -1, -1, 0)])
def test_pad_negative_crops(mode, pad):
    _same(lambda L, x: L.nn.functional.pad(x, pad, mode=mode),
          RNG.normal(size=(2, 3, 5, 6)).astype(np.float32))


@needs_torch
def test_softmax_dtype_and_implicit_dim():
    a = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    for name in ('softmax', 'log_softmax', 'softmin'):
        _same(lambda L, x: getattr(L.nn.functional, name)(x, 1, dtype=L.float64), a)
        with pytest.warns(UserWarning, match="Implicit dimension"):
            tg_y = getattr(tg.nn.functional, name)(tg.tensor(a))
        with pytest.warns(UserWarning):
            t_y = getattr(torch.nn.functional, name)(torch.tensor(a))
        np.testing.assert_allclose(tg_y.numpy(), t_y.numpy(), rtol=1e-6)
    _same(lambda L, x: L.softmax(x, -1, dtype=L.float64), a)
    _same(lambda L, x: x.log_softmax(0, dtype=L.float64), a)


@needs_torch
def test_permute_negative_dims():
    a = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    _same(lambda L, x: x.permute(-1, 0, 1), a)
    _same(lambda L, x: L.permute(x, (2, -2, -3)), a)
    with pytest.raises(RuntimeError, match="duplicate"):
        tg.tensor(a).permute(-1, 2, 0)
