"""group_norm / instance_norm, interpolate / Upsample and einsum against
PyTorch: outputs and gradients (float64), in eager mode and through
tg.function (graph mode)."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch

pytestmark = needs_torch


def both(fn_tg, fn_torch, *arrays, rtol=1e-10, atol=1e-12):
    """fn on tensors made from arrays, in tensorgraph and PyTorch: outputs and
    the gradients of (output * r).sum() w.r.t. every input"""
    xs = [tg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, yt = fn_tg(*xs), fn_torch(*ts)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=atol)
    r = np.random.rand(*yt.shape)
    (y * tg.tensor(r)).sum().backward()
    (yt * torch.tensor(r)).sum().backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)
    # graph mode: the same function traced
    g = tg.function(fn_tg)(*[tg.tensor(a) for a in arrays])
    np.testing.assert_allclose(g.numpy(), yt.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("shape,groups,affine", [((2, 6, 4, 3), 3, True), ((3, 4, 5), 2, False),
                                                 ((4, 6), 3, True), ((2, 4, 2, 3, 2), 4, True)])
def test_group_norm(shape, groups, affine):
    x = np.random.randn(*shape)
    C = shape[1]
    args = [x] + ([np.random.rand(C) + 0.5, np.random.randn(C)] if affine else [])
    both(lambda x, *wb: F.group_norm(x, groups, *wb, eps=1e-5),
         lambda x, *wb: torch.nn.functional.group_norm(x, groups, *wb, eps=1e-5), *args)


@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 4, 5), (1, 2, 3, 2, 2)])
def test_instance_norm(shape):
    x, C = np.random.randn(*shape), shape[1]
    w, b = np.random.rand(C) + 0.5, np.random.randn(C)
    both(lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
         lambda x, w, b: torch.nn.functional.instance_norm(x, weight=w, bias=b), x, w, b)
    both(F.instance_norm, torch.nn.functional.instance_norm, x)


def test_norm_modules():
    x = np.random.randn(2, 6, 5, 5).astype(np.float32)
    for ours, theirs in ((nn.GroupNorm(3, 6), torch.nn.GroupNorm(3, 6)),
                         (nn.InstanceNorm2d(6, affine=True), torch.nn.InstanceNorm2d(6, affine=True)),
                         (nn.InstanceNorm2d(6), torch.nn.InstanceNorm2d(6))):
        np.testing.assert_allclose(ours(tg.tensor(x)).detach().numpy(),
                                   theirs(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    y = nn.InstanceNorm1d(3)(tg.tensor(x[0, :3, 0]))  # unbatched [C, L]
    np.testing.assert_allclose(y.numpy(), torch.nn.InstanceNorm1d(3)(torch.tensor(x[0, :3, 0])).numpy(),
                               rtol=1e-4, atol=1e-5)
    # running statistics as PyTorch's: moved in training, used in eval
    ours, theirs = nn.InstanceNorm2d(3, affine=True, track_running_stats=True), \
        torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    for _ in range(2):
        batch = np.random.rand(2, 3, 4, 5).astype(np.float32)
        np.testing.assert_allclose(ours(tg.tensor(batch)).detach().numpy(),
                                   theirs(torch.tensor(batch)).detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
    for name in ('running_mean', 'running_var'):
        np.testing.assert_allclose(getattr(ours, name).numpy(), getattr(theirs, name).numpy(),
                                   rtol=1e-5)
    ours.eval(), theirs.eval()
    batch = np.random.rand(2, 3, 4, 5).astype(np.float32)
    np.testing.assert_allclose(ours(tg.tensor(batch)).detach().numpy(),
                               theirs(torch.tensor(batch)).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert set(ours.state_dict()) == set(theirs.state_dict())
    with pytest.raises((RuntimeError, ValueError), match="divisible"):
        F.group_norm(tg.tensor(x), 4)


INTERP = [
    ((1, 2, 4, 5), dict(size=(7, 3), mode="bilinear", align_corners=False)),
    ((1, 2, 4, 5), dict(size=(7, 9), mode="bilinear", align_corners=True)),
    ((2, 1, 3, 4), dict(scale_factor=2, mode="bilinear")),
    ((2, 1, 5, 7), dict(scale_factor=(1.7, 0.6), mode="bilinear")),
    ((2, 1, 5, 7), dict(scale_factor=0.5, mode="bilinear", align_corners=True)),
    ((1, 2, 1, 1), dict(size=(3, 2), mode="bilinear")),
    ((1, 2, 4, 5), dict(size=(8, 15), mode="nearest")),
    ((1, 2, 6, 9), dict(size=(4, 5), mode="nearest")),
    ((1, 2, 5, 7), dict(scale_factor=(0.6, 1.3), mode="nearest")),
    ((1, 2, 5, 7), dict(scale_factor=(2.5, 1.5), mode="nearest-exact")),
    ((1, 2, 5, 7), dict(scale_factor=1.5, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 6), dict(size=11, mode="linear")),
    ((2, 3, 6), dict(scale_factor=0.5, mode="nearest")),
    ((1, 1, 2, 3, 4), dict(size=(3, 5, 2), mode="trilinear", align_corners=False)),
    ((1, 1, 2, 3, 4), dict(scale_factor=2, mode="nearest")),
    ((1, 2, 4, 5), dict(size=(7, 3), mode="bicubic", align_corners=False)),
    ((2, 1, 5, 4), dict(scale_factor=(1.5, 0.5), mode="bicubic", align_corners=True)),
    ((1, 1, 3, 3), dict(scale_factor=3, mode="bicubic")),
]


@pytest.mark.parametrize("shape,kw", INTERP)
def test_interpolate(shape, kw):
    x = np.random.randn(*shape)
    both(lambda x: F.interpolate(x, **kw), lambda x: torch.nn.functional.interpolate(x, **kw), x)


def test_interpolate_float32_and_upsample():
    x = np.random.randn(2, 3, 5, 6).astype(np.float32)
    for kw in (dict(scale_factor=2), dict(size=(9, 4), mode="bilinear"),
               dict(scale_factor=1.5, mode="bilinear", align_corners=True)):
        ours, theirs = nn.Upsample(**kw)(tg.tensor(x)), torch.nn.Upsample(**kw)(torch.tensor(x))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    for name in ("upsample_nearest", "upsample_bilinear"):
        np.testing.assert_allclose(getattr(F, name)(tg.tensor(x), scale_factor=2).numpy(),
                                   getattr(torch.nn.functional, name)(torch.tensor(x),
                                                                      scale_factor=2).numpy(),
                                   rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nn.UpsamplingBilinear2d(scale_factor=2)(tg.tensor(x)).numpy(),
                               torch.nn.UpsamplingBilinear2d(scale_factor=2)(torch.tensor(x)).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_interpolate_errors():
    x = tg.zeros(1, 1, 4, 4)
    with pytest.raises(NotImplementedError, match="area"):
        F.interpolate(x, scale_factor=2, mode="lanczos")
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(x, scale_factor=2, mode="nearest", align_corners=True)
    with pytest.raises(ValueError, match="only one"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(NotImplementedError, match="needs 3D"):
        F.interpolate(x, size=3, mode="linear")


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("bii->b", [(2, 3, 3)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->", [(5,), (5,)]),
    ("ijk->", [(2, 3, 4)]),
    ("ijk->kj", [(2, 3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij,ij->ij", [(3, 4), (1, 4)]),
    ("BIJ,BJK->BIK", [(2, 3, 4), (2, 4, 2)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum(eq, shapes):
    arrays = [np.random.randn(*s) for s in shapes]
    both(lambda *xs: tg.einsum(eq, *xs), lambda *ts: torch.einsum(eq, *ts), *arrays)


def test_einsum_list_and_errors():
    a, b = np.random.randn(2, 3), np.random.randn(3, 2)
    np.testing.assert_allclose(tg.einsum("ij,jk->ik", [tg.tensor(a), tg.tensor(b)]).numpy(), a @ b)
    with pytest.raises((RuntimeError, ValueError), match="operand terms"):
        tg.einsum("ij,jk->ik", tg.tensor(a))
    with pytest.raises((RuntimeError, ValueError), match="invalid subscript"):
        tg.einsum("i#->i", tg.tensor(a))


def test_einsum_sublist_form():
    # torch.einsum(op1, sublist1, op2, sublist2, ..., [out]): 0-25 are 'A'-'Z',
    # 26-51 'a'-'z', Ellipsis '...'
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    A, B = tg.tensor(a), tg.tensor(b)
    np.testing.assert_allclose(tg.einsum(A, [0, 1], B, [1, 2], [0, 2]).numpy(), a @ b)
    np.testing.assert_allclose(tg.einsum(A, [0, 30], B, [30, 51]).numpy(), a @ b)
    np.testing.assert_allclose(tg.einsum(A, [Ellipsis, 1], [Ellipsis]).numpy(), a.sum(1))
    np.testing.assert_allclose(tg.einsum(A, [0, 1], [1, 0]).numpy(), a.T)
    with pytest.raises(ValueError, match=r"range \[0, 52\)"):
        tg.einsum(A, [52])
    with pytest.raises(ValueError, match="at least one operand"):
        tg.einsum(A)
