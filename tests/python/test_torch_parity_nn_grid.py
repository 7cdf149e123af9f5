"""grid_sample's bicubic mode (4-D) and its 5-D input (trilinear and
nearest) against PyTorch 1.13: values and the gradients of the input and
the grid, every padding mode and align_corners, grids reaching outside."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

pytestmark = needs_torch


def _run(L, x, g, **kw):
    xt, gt = L.tensor(x).requires_grad_(True), L.tensor(g).requires_grad_(True)
    y = L.nn.functional.grid_sample(xt, gt, **kw)
    w = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))).to(y.dtype)
    (y * w).sum().backward()
    return y.detach().numpy(), xt.grad.numpy(), gt.grad.numpy()  # nearest: zeros


@pytest.mark.parametrize('padding_mode', ['zeros', 'border', 'reflection'])
@pytest.mark.parametrize('align_corners', [False, True])
@pytest.mark.parametrize('case', [('bicubic', (2, 3, 5, 7), (2, 4, 6, 2)),
                                  ('bilinear', (2, 3, 3, 4, 5), (2, 3, 2, 4, 3)),
                                  ('nearest', (1, 2, 4, 3, 5), (1, 2, 3, 2, 3))])
def test_grid_sample_bicubic_and_5d(case, padding_mode, align_corners):
    mode, xs, gs = case
    rs = np.random.RandomState(3)
    x = rs.randn(*xs)
    g = rs.uniform(-1.5, 1.5, size=gs)
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    want, got = _run(torch, x, g, **kw), _run(tg, x, g, **kw)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_grid_sample_5d_checks_grid():
    with pytest.raises(RuntimeError, match="grid"):
        tg.nn.functional.grid_sample(tg.ones(1, 1, 2, 3, 3), tg.zeros(1, 2, 2, 2, 2),
                                     align_corners=False)
