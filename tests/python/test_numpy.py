"""numpy interop: from_numpy and Tensor.numpy() share memory whenever the
layout can be expressed as strides (always for numpy arrays of supported
dtypes with non-negative strides); tensor() and as_tensor conversions copy
as documented in docs/PYTHON.md."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tg.from_numpy(a)
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t.add_(1)
    assert a[1, 2] == 6
    assert t.data_ptr() == a.ctypes.data


def test_from_numpy_keeps_the_array_alive():
    t = tg.from_numpy(np.arange(5, dtype=np.int64) * 2)
    import gc
    gc.collect()
    assert t.tolist() == [0, 2, 4, 6, 8]


def test_from_numpy_strided_and_dtypes():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)[::2, 1::3]
    t = tg.from_numpy(a)
    assert not t.is_contiguous() and t.tolist() == a.tolist()
    for dt in (np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_):
        x = np.ones(3, dtype=dt)
        assert tg.from_numpy(x).numpy().dtype == dt
    b = np.broadcast_to(np.arange(3, dtype=np.int32), (2, 3))
    assert tg.from_numpy(b).tolist() == [[0, 1, 2], [0, 1, 2]]


def test_from_numpy_refuses_what_it_cannot_share():
    with pytest.raises(ValueError, match="negative"):
        tg.from_numpy(np.arange(4.0)[::-1])
    with pytest.raises(ValueError, match="dtype"):
        tg.from_numpy(np.ones(2, dtype=np.float16))
    with pytest.raises(ValueError, match="dtype"):
        tg.from_numpy(np.ones(2, dtype=np.complex64))


def test_numpy_view_of_tensor():
    t = tg.arange(12.0).reshape(3, 4)
    n = t.numpy()
    n[2, 3] = -1
    assert t[2, 3].item() == -1
    v = t.T
    nv = v.numpy()  # strided view, no copy
    assert nv.shape == (4, 3) and nv[3, 2] == -1 and np.shares_memory(nv, n)
    assert np.asarray(t).shape == (3, 4)
    assert np.array(t, dtype=np.float64).dtype == np.float64
    assert tg.tensor([True, False]).numpy().dtype == np.bool_
    assert tg.tensor(5).numpy().shape == ()
    with pytest.raises(RuntimeError, match="requires grad"):
        tg.ones(2, requires_grad=True).numpy()
    assert tg.ones(2, requires_grad=True).detach().numpy().tolist() == [1.0, 1.0]


def test_tensor_and_as_tensor_copy_rules():
    a = np.ones(3, dtype=np.float32)
    t = tg.tensor(a)          # always a copy
    a[0] = 5
    assert t[0].item() == 1
    s = tg.as_tensor(a)       # shares when the dtype matches
    a[1] = 7
    assert s[1].item() == 7
    c = tg.as_tensor(a, dtype=tg.float64)  # converts: a copy
    a[2] = 9
    assert c[2].item() == 1
    assert tg.tensor([1, 2]).dtype == tg.int64 and tg.tensor([1.0]).dtype == tg.float32


def test_numpy_operands():
    t = tg.ones(3)
    r = np.ones(3) + t  # numpy computes with our buffer
    assert isinstance(r, np.ndarray) or isinstance(r, tg.Tensor)


def test_dlpack_with_numpy_shares_memory_both_ways():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]  # strided: still shared
    t = tg.from_dlpack(a)
    assert t.shape == (3, 2) and t.stride() == (4, 2) and t.dtype == tg.float64
    t[0, 0] = 100.0
    assert a[0, 0] == 100.0
    del a  # the tensor keeps the array's memory alive
    assert t.tolist() == [[100.0, 2.0], [4.0, 6.0], [8.0, 10.0]]
    u = tg.zeros(2, 3, dtype=tg.int32)
    b = np.from_dlpack(u)
    assert b.dtype == np.int32 and b.shape == (2, 3)
    u[1, 1] = -5
    assert b[1, 1] == -5
    del u
    assert b.sum() == -5  # and the array keeps the tensor's
    assert tg.ones(1).__dlpack_device__() == (1, 0)


def test_dlpack_errors():
    with pytest.raises(RuntimeError, match="require gradient"):
        tg.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError, match="stream"):
        tg.ones(2).__dlpack__(stream=1)
    capsule = tg.ones(2).__dlpack__()
    assert tg.from_dlpack(capsule).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError):
        tg.from_dlpack(capsule)  # a capsule is consumed once
    with pytest.raises(BufferError, match="dtype"):
        tg.from_dlpack(np.zeros(3, dtype=np.float16))
    tg.ones(3).__dlpack__()  # never consumed: its destructor frees it


@needs_torch
def test_dlpack_with_torch():
    x = torch.arange(6, dtype=torch.int64).reshape(2, 3).t()
    y = tg.from_dlpack(x)
    assert y.shape == (3, 2) and y.stride() == (1, 3) and y.dtype == tg.int64
    y[0, 0] = 42
    assert x[0, 0].item() == 42
    z = torch.from_dlpack(tg.arange(4.0).reshape(2, 2)[:, 1])
    assert z.tolist() == [1.0, 3.0] and z.stride() == (2,)
    w = tg.ones(3)
    v = torch.utils.dlpack.from_dlpack(w.__dlpack__())
    v.mul_(2)
    assert w.tolist() == [2.0, 2.0, 2.0]
