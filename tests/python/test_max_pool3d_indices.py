"""F.max_pool3d(return_indices=True), F.max_pool3d_with_indices and
nn.MaxPool3d(return_indices=True) against PyTorch: values, indices (first
maximum on ties, NaN as the maximum), gradients; strides, padding,
dilation, unbatched inputs; MaxUnpool3d after it; the errors. Also the
composed max pools of every rank (indices or dilation) with ceil_mode,
and windows over the padding alone."""
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


@needs_torch
def test_ceil_mode_every_rank():
    """random shapes, kernels, strides, padding and dilations with
    ceil_mode (the last window may hang over the end): the values, the
    indices and the gradients of PyTorch"""
    rs = np.random.RandomState(3)
    checked = 0
    for _ in range(150):
        nd = rs.randint(1, 4)
        shape = (2, 2) + tuple(rs.randint(1, 9, size=nd))
        k, s = tuple(rs.randint(1, 4, size=nd)), tuple(rs.randint(1, 4, size=nd))
        d, p = tuple(rs.randint(1, 3, size=nd)), tuple(rs.randint(0, kk // 2 + 1) for kk in k)
        a = rs.randn(*shape)
        pool_t = getattr(torch.nn.functional, f'max_pool{nd}d')
        pool_g = getattr(F, f'max_pool{nd}d')
        xt, xg = torch.tensor(a, requires_grad=True), tg.tensor(a, requires_grad=True)
        spans = [n + 2 * pp - dd * (kk - 1) - 1 for n, pp, dd, kk in zip(shape[2:], p, d, k)]
        if min(spans) < 0:
            continue  # no output (not asked of torch: its C++ exception aborts under the
            # sanitizers' preload)
        vt, it = pool_t(xt, k, s, p, d, True, True)
        if not np.isfinite(vt.detach().numpy()).all():
            continue  # windows over the padding alone: test_window_over_padding_alone
        vg, ig = pool_g(xg, k, s, p, d, True, True)
        np.testing.assert_array_equal(vg.detach().numpy(), vt.detach().numpy())
        np.testing.assert_array_equal(ig.numpy(), it.numpy())
        w = rs.randn(*vt.shape)
        (vt * torch.tensor(w)).sum().backward()
        (vg * tg.tensor(w)).sum().backward()
        np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
        checked += 1
    assert checked > 50


@needs_torch
def test_window_over_padding_alone():
    """a dilated window whose taps all fall in the padding: -inf and
    PyTorch's index (its first tap at or past the start, here past the
    plane), no gradient (PyTorch's writes outside the plane)"""
    a = np.arange(4.0).reshape(1, 1, 4, 1)
    vt, it = torch.nn.functional.max_pool2d(torch.tensor(a), (1, 2), (1, 2), (0, 1), (2, 2),
                                            False, True)
    xg = tg.tensor(a, requires_grad=True)
    vg, ig = F.max_pool2d(xg, (1, 2), (1, 2), (0, 1), (2, 2), False, True)
    np.testing.assert_array_equal(vg.detach().numpy(), vt.numpy())
    np.testing.assert_array_equal(ig.numpy(), it.numpy())
    vg.sum().backward()
    assert xg.grad.abs().sum().item() == 0
    v3 = F.max_pool3d(tg.tensor(a.reshape(1, 1, 1, 4, 1)), (1, 1, 2), (1, 1, 2), (0, 0, 1),
                      (1, 1, 2), False, True)[0]
    assert v3.shape == (1, 1, 1, 4, 1) and bool((v3 == -float('inf')).all())


def test_errors():
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool3d(tg.randn(1, 1, 4, 4, 4), 2, padding=2, return_indices=True)
    with pytest.raises(RuntimeError, match="Expected 4D or 5D"):
        F.max_pool3d(tg.randn(4, 4, 4), 2, return_indices=True)
    with pytest.raises(RuntimeError, match="too small"):
        F.max_pool3d(tg.randn(1, 1, 1, 4, 4), 2, return_indices=True)
