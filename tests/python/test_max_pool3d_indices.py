"""F.max_pool3d(return_indices=True), F.max_pool3d_with_indices and
nn.MaxPool3d(return_indices=True) against PyTorch: values, indices (first
maximum on ties, NaN as the maximum), gradients; strides, padding,
dilation, unbatched inputs; MaxUnpool3d after it; the errors."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch

CASES = [((2, 3, 5, 6, 7), dict(kernel_size=2)),
         ((1, 2, 5, 5, 5), dict(kernel_size=3, stride=2, padding=1)),
         ((2, 4, 6, 5), dict(kernel_size=(2, 3, 2), stride=(1, 2, 1), dilation=(1, 1, 2))),
         ((1, 1, 4, 4, 4), dict(kernel_size=2, stride=1))]


@needs_torch
@pytest.mark.parametrize('case', range(len(CASES)))
@pytest.mark.parametrize('nan', [False, True])
def test_like_torch(case, nan):
    shape, kw = CASES[case]
    rs = np.random.RandomState(case)
    a = rs.randn(*shape)
    a.flat[5] = a.flat[6] = 2.5  # a tie, in one window for most shapes
    if nan:
        a.flat[3] = np.nan
    xt = torch.tensor(a, requires_grad=True)
    xg = tg.tensor(a, requires_grad=True)
    vt, it = torch.nn.functional.max_pool3d(xt, return_indices=True, **kw)
    vg, ig = F.max_pool3d(xg, return_indices=True, **kw)
    np.testing.assert_array_equal(np.array(vg.tolist()), vt.detach().numpy())
    np.testing.assert_array_equal(np.array(ig.tolist()), it.numpy())
    assert ig.dtype == tg.int64
    w = rs.randn(*vt.shape)
    (torch.nan_to_num(vt) * torch.tensor(w)).sum().backward()
    (tg.nan_to_num(vg) * tg.tensor(w)).sum().backward()
    np.testing.assert_allclose(np.array(xg.grad.tolist()), xt.grad.numpy(), rtol=1e-12)
    v2, i2 = F.max_pool3d_with_indices(tg.tensor(a), **kw)
    np.testing.assert_array_equal(np.array(i2.tolist()), it.numpy())


def test_module_and_unpool():
    x = tg.randn(1, 2, 4, 4, 4)
    v, i = tg.nn.MaxPool3d(2, return_indices=True)(x)
    back = tg.nn.MaxUnpool3d(2)(v, i)
    assert tuple(back.shape) == (1, 2, 4, 4, 4)
    # every pooled maximum is back at its place, the rest is zero
    np.testing.assert_array_equal(np.array(F.max_pool3d(back, 2).tolist()), np.array(v.tolist()))
    assert (back != 0).sum().item() == v.numel()
    # without indices the C kernel gives the same values
    np.testing.assert_array_equal(np.array(F.max_pool3d(x, 2).tolist()), np.array(v.tolist()))


def test_errors():
    with pytest.raises(NotImplementedError, match="ceil_mode"):
        F.max_pool3d(tg.randn(1, 1, 4, 4, 4), 2, ceil_mode=True, return_indices=True)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool3d(tg.randn(1, 1, 4, 4, 4), 2, padding=2, return_indices=True)
    with pytest.raises(RuntimeError, match="Expected 4D or 5D"):
        F.max_pool3d(tg.randn(4, 4, 4), 2, return_indices=True)
    with pytest.raises(RuntimeError, match="too small"):
        F.max_pool3d(tg.randn(1, 1, 1, 4, 4), 2, return_indices=True)
