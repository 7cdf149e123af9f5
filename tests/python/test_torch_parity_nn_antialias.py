"""F.interpolate(antialias=True) for bilinear and bicubic against PyTorch
1.13: downscaling and upscaling by size or scale_factor (recomputed or
not), align_corners, values and input gradients; the modes it refuses."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

pytestmark = needs_torch


def _run(L, x, **kw):
    xt = L.tensor(x).requires_grad_(True)
    y = L.nn.functional.interpolate(xt, antialias=True, **kw)
    w = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))).to(y.dtype)
    (y * w).sum().backward()
    return y.detach().numpy(), xt.grad.numpy()


@pytest.mark.parametrize('mode', ['bilinear', 'bicubic'])
@pytest.mark.parametrize('align_corners', [False, True])
@pytest.mark.parametrize('how', [dict(size=(2, 3)), dict(size=(5, 17)), dict(size=(1, 1)),
                                 dict(scale_factor=0.3), dict(scale_factor=(0.5, 0.45)),
                                 dict(scale_factor=0.3, recompute_scale_factor=True),
                                 dict(scale_factor=1.7)])
def test_interpolate_antialias(mode, align_corners, how):
    x = np.random.RandomState(5).randn(2, 3, 11, 13).astype(np.float32)
    kw = dict(mode=mode, align_corners=align_corners, **how)
    (ty, tg_), (gy, gg) = _run(torch, x, **kw), _run(tg, x, **kw)
    np.testing.assert_allclose(gy, ty, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gg, tg_, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('mode,shape', [('nearest', (1, 1, 4, 4)), ('area', (1, 1, 4, 4)),
                                        ('linear', (1, 1, 4)), ('trilinear', (1, 1, 4, 4, 4))])
def test_interpolate_antialias_other_modes_refused(mode, shape):
    with pytest.raises(ValueError, match="Anti-alias option is only supported"):
        tg.nn.functional.interpolate(tg.ones(*shape), size=2, mode=mode, antialias=True)


def test_interpolate_antialias_empty_output_refused():
    # PyTorch's message; a factor that rounds an axis down to 0
    with pytest.raises(RuntimeError, match="Input and output sizes should be greater than 0"):
        tg.nn.functional.interpolate(tg.ones(1, 1, 2, 2), scale_factor=(1.5, 0.3),
                                     mode='bilinear', antialias=True)
