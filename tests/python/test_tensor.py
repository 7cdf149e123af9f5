"""Tensors: creation, attributes, dtypes and PyTorch's promotion with Python
scalars, conversions, printing, and the errors bad arguments raise."""
import math

import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, needs_torch, torch


def test_creation_and_attributes():
    t = tg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3) and t.dtype == tg.float32 and t.ndim == 2
    assert t.numel() == 6 and t.dim() == 2 and t.size() == (2, 3) and t.size(-1) == 3
    assert t.stride() == (3, 1) and t.is_contiguous() and t.device == "cpu"
    assert t.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert tg.tensor(3).dtype == tg.int64 and tg.tensor(3).item() == 3
    assert tg.tensor(True).dtype == tg.bool and tg.tensor([True]).tolist() == [True]
    assert tg.tensor(2.5).item() == 2.5 and tg.tensor(2.5).shape == ()
    assert tg.tensor(np.zeros(3, np.float64)).dtype == tg.float64
    assert tg.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert tg.ones((2,), dtype=tg.int32).tolist() == [1, 1]
    assert tg.full((2,), 7).dtype == tg.int64 and tg.full((2,), 7.5).tolist() == [7.5, 7.5]
    assert tg.arange(5).tolist() == [0, 1, 2, 3, 4] and tg.arange(5).dtype == tg.int64
    assert tg.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert tg.zeros_like(t).shape == (2, 3) and tg.ones_like(t).sum().item() == 6
    close(tg.linspace(0, 1, 5), [0, 0.25, 0.5, 0.75, 1])
    assert tg.Tensor(2, 3).shape == (2, 3) and tg.Tensor([1, 2]).dtype == tg.float32


def test_random_is_seeded():
    tg.manual_seed(5)
    a = tg.randn(4, 3)
    tg.manual_seed(5)
    b = tg.randn(4, 3)
    assert a.tolist() == b.tolist()
    g = tg.Generator().manual_seed(1)
    u = tg.rand(1000, generator=g)
    assert 0 <= u.min().item() and u.max().item() < 1
    assert abs(u.mean().item() - 0.5) < 0.05
    p = tg.randperm(10)
    assert sorted(p.tolist()) == list(range(10))
    r = tg.randint(0, 5, (100,))
    assert r.dtype == tg.int64 and 0 <= r.min().item() and r.max().item() < 5


def test_dtypes():
    assert tg.float is tg.float32 and tg.long is tg.int64 and tg.double is tg.float64
    assert tg.float32.is_floating_point and not tg.int64.is_floating_point
    assert tg.promote_types(tg.int32, tg.float32) is tg.float32
    assert repr(tg.float32) == "tensorgraph.float32"
    x = tg.ones(2)
    assert x.long().dtype == tg.int64 and x.double().dtype == tg.float64
    assert x.to(tg.int32).dtype == tg.int32 and x.to(x) is x and x.bool().dtype == tg.bool


def test_scalar_promotion_like_pytorch():
    i = tg.tensor([1, 2], dtype=tg.int32)
    f = tg.tensor([1.0, 2.0])
    d = tg.tensor([1.0], dtype=tg.float64)
    b = tg.tensor([True, False])
    assert (i + 1).dtype == tg.int32            # int scalar keeps the int dtype
    assert (i + 1.5).dtype == tg.float32        # float scalar: default float dtype
    assert (f + 1.5).dtype == tg.float32 and (d * 2).dtype == tg.float64
    assert (b + 1).dtype == tg.int64 and (b + True).dtype == tg.bool
    assert (i / 2).dtype == tg.float32          # true division of ints
    assert (i + f).dtype == tg.float32 and (i + d).dtype == tg.float64
    assert (i > 1.5).tolist() == [False, True]  # compared as floats
    assert (2 ** f).tolist() == [2.0, 4.0] and (1 - f).tolist() == [0.0, -1.0]
    assert (7 // tg.tensor([2, 3])).tolist() == [3, 2]
    assert (tg.tensor([-7, 7]) % 3).tolist() == [2, 1]   # the sign of the divisor


@needs_torch
def test_promotion_matches_torch():
    names = {tg.float32: torch.float32, tg.float64: torch.float64, tg.int32: torch.int32,
             tg.int64: torch.int64, tg.uint8: torch.uint8, tg.bool: torch.bool}
    for dt, tdt in names.items():
        for s in (True, 2, 2.5):
            a = tg.ones(2, dtype=dt)
            ta = torch.ones(2, dtype=tdt)
            assert names[(a + s).dtype] == (ta + s).dtype, (dt, s)
            assert names[(a * s).dtype] == (ta * s).dtype, (dt, s)


def test_broadcasting():
    a = tg.arange(6.0).reshape(2, 3)
    b = tg.tensor([10.0, 20.0, 30.0])
    close(a + b, np.arange(6.0).reshape(2, 3) + [10, 20, 30])
    close(a[:, None, :] * b[None, :, None], np.arange(6.0).reshape(2, 1, 3) *
          np.array([10.0, 20, 30]).reshape(1, 3, 1))
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 1$"):
        a + tg.ones(4)


def test_conversions_and_printing():
    t = tg.tensor([[1.5, -2.0]])
    assert float(t[0, 0]) == 1.5 and int(tg.tensor([3])) == 3 and bool(tg.tensor(1))
    assert f"{tg.tensor(0.12345):.2f}" == "0.12"
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(tg.ones(2))
    with pytest.raises(ValueError, match="one element"):
        float(tg.ones(2))
    with pytest.raises(ValueError, match="converted"):
        tg.ones(2).item()
    assert repr(t) == "tensor([[ 1.5000, -2.0000]])"
    assert "requires_grad" not in repr(t) and "grad_fn" in repr(tg.ones(1, requires_grad=True) * 2)
    assert [r.tolist() for r in tg.arange(4).reshape(2, 2)] == [[0, 1], [2, 3]]
    assert len(tg.zeros(5, 2)) == 5
    assert tg.ones(3).tolist() == [1.0, 1.0, 1.0] and tg.ones(2, dtype=tg.bool).tolist() == [True] * 2


def test_bad_arguments_raise_not_crash():
    x = tg.ones(2, 3)
    with pytest.raises(TypeError):
        tg.add(x, "a")
    with pytest.raises(TypeError):
        tg.add(x)
    with pytest.raises(TypeError):
        tg.add(x, x, x)
    with pytest.raises(TypeError, match="unexpected keyword"):
        tg.sum(x, axis_typo=1)
    with pytest.raises(TypeError, match="multiple values"):
        tg.sum(x, 0, dim=1)
    with pytest.raises(TypeError, match="dtype"):
        tg.zeros(2, dtype="float32")
    with pytest.raises(TypeError):
        x.sum(dim="a")
    with pytest.raises(IndexError):
        x.sum(dim=5)
    with pytest.raises(IndexError):
        x.transpose(0, 7)
    with pytest.raises(RuntimeError):
        x.view(4, 4)
    with pytest.raises(RuntimeError):
        tg.matmul(x, x)
    with pytest.raises(ValueError):
        tg.cross_entropy(x, tg.tensor([0, 1]), reduction="avg")
    with pytest.raises(TypeError):
        tg.cat(x)
    with pytest.raises(TypeError):
        tg.conv2d(x, None)
    with pytest.raises((RuntimeError, ValueError)):
        tg.zeros(-1)
    with pytest.raises(ValueError, match="dims"):
        tg.zeros(*([1] * 9))
    with pytest.raises(IndexError):
        tg.embedding(tg.tensor([5]), tg.ones(3, 2))
    assert math.isnan(tg.tensor(float("nan")).item())


@needs_torch
def test_format_and_broadcast_tensors_as_torch():
    """format() of a tensor: a 0-d one as its number, others as str() for
    an empty spec and TypeError for any other; broadcast_tensors of 0-d
    tensors"""
    for v in ([0.5], [[1.0, 2.0]]):
        assert f"{tg.tensor(v)}" == f"{torch.tensor(v)}"
        with pytest.raises(TypeError, match="unsupported format string"):
            format(tg.tensor(v), ".2f")
    assert format(tg.tensor(1.25), ".3f") == format(torch.tensor(1.25), ".3f")
    ours = tg.broadcast_tensors(tg.tensor(1.0), tg.tensor(2.0))
    assert [t.shape for t in ours] == [(), ()]
    assert [t.item() for t in ours] == [1.0, 2.0]
