"""affine_grid and grid_sample (nn/functional_grid.py) against PyTorch:
values, gradients for the input and the grid, every padding mode and
align_corners, inside tg.function, and the errors."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

F = tg.nn.functional


@needs_torch
@pytest.mark.parametrize('size', [(2, 3, 4, 6), (2, 3, 1, 5), (2, 3, 3, 4, 5)])
@pytest.mark.parametrize('align_corners', [False, True])
def test_affine_grid(size, align_corners):
    nd = len(size) - 2
    theta = np.random.RandomState(0).randn(2, nd, nd + 1).astype('float32')
    a = torch.tensor(theta, requires_grad=True)
    b = tg.tensor(theta, requires_grad=True)
    ya = torch.nn.functional.affine_grid(a, size, align_corners=align_corners)
    yb = F.affine_grid(b, size, align_corners=align_corners)
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), atol=1e-6)
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-5)


@needs_torch
@pytest.mark.parametrize('mode', ['bilinear', 'nearest'])
@pytest.mark.parametrize('padding_mode', ['zeros', 'border', 'reflection'])
@pytest.mark.parametrize('align_corners', [False, True])
def test_grid_sample(mode, padding_mode, align_corners):
    rs = np.random.RandomState(1)
    x = rs.randn(2, 3, 5, 7).astype('float64')
    g = rs.uniform(-1.4, 1.4, size=(2, 4, 6, 2)).astype('float64')
    w = rs.randn(2, 3, 4, 6)
    xa, ga = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    xb, gb = tg.tensor(x, requires_grad=True), tg.tensor(g, requires_grad=True)
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    ya = torch.nn.functional.grid_sample(xa, ga, **kw)
    yb = F.grid_sample(xb, gb, **kw)
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), atol=1e-12)
    ya.backward(torch.tensor(w))
    yb.backward(tg.tensor(w))
    np.testing.assert_allclose(xb.grad.numpy(), xa.grad.numpy(), atol=1e-12)
    if mode == 'bilinear':
        np.testing.assert_allclose(gb.grad.numpy(), ga.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_grid_sample_in_function_and_identity():
    x = tg.randn(1, 2, 4, 5)
    theta = tg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    grid = F.affine_grid(theta, (1, 2, 4, 5), align_corners=False)
    assert np.allclose(F.grid_sample(x, grid, align_corners=False).numpy(), x.numpy(), atol=1e-6)
    f = tg.function(lambda x, g: F.grid_sample(x, g, padding_mode='border'))
    assert np.allclose(f(x, grid).numpy(), x.numpy(), atol=1e-6)


def test_grid_sample_errors():
    x, g = tg.ones(1, 1, 3, 3), tg.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError, match="mode"):
        F.grid_sample(x, g, mode='cubic')
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(x, g, padding_mode='wrap')
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D"):
        F.grid_sample(tg.ones(1, 1, 2, 3, 3), tg.zeros(1, 2, 2, 2, 3), mode='bicubic')
    with pytest.raises(RuntimeError, match="grid"):
        F.grid_sample(x, tg.zeros(1, 2, 2, 3))
    with pytest.raises(ValueError, match="affine matrices"):
        F.affine_grid(tg.zeros(1, 3, 3), (1, 1, 4, 4))
    with pytest.raises(NotImplementedError, match="4D and 5D"):
        F.affine_grid(tg.zeros(1, 2, 3), (1, 1, 4))
