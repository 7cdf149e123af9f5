"""numpy interop: from_numpy and Tensor.numpy() share memory whenever the
layout can be expressed as strides (always for numpy arrays of supported
dtypes with non-negative strides); tensor() and as_tensor conversions copy
as documented in docs/PYTHON.md."""
import numpy as np
import pytest

import tensorgraph as tg


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
