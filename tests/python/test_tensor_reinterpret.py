"""Tensor.view(dtype) and Tensor.resize_ (_tensor_reinterpret.py), against
PyTorch where it is installed."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import torch


def test_view_dtype_same_size_shares_memory_and_bits():
    x = tg.tensor([1.0, -2.0, 0.5])
    i = x.view(tg.int32)
    assert i.dtype == tg.int32 and i.shape == (3,)
    assert i.tolist() == np.array([1.0, -2.0, 0.5], np.float32).view(np.int32).tolist()
    i[0] = 0  # writes through: the same storage
    assert x.tolist() == [0.0, -2.0, 0.5]
    x.add_(1)
    assert i[2].item() == int(np.array([1.5], np.float32).view(np.int32)[0])
    t = tg.arange(6.0).reshape(2, 3).t()  # same size: any layout
    assert t.view(tg.int32).shape == (3, 2)
    assert tg.tensor([True, False]).view(tg.uint8).tolist() == [1, 0]
    g = tg.tensor([1.0, 2.0], requires_grad=True)
    assert not g.view(tg.int32).requires_grad and not g.view(tg.float32).requires_grad
    assert tg.arange(6.0).view(2, 3).shape == (2, 3) and tg.arange(6.0).view((3, 2)).shape == (3, 2)
    if torch is not None:
        assert x.view(tg.int32).tolist() == torch.tensor(x.tolist()).view(torch.int32).tolist()


def test_view_dtype_other_sizes_scale_the_last_dim_and_errors():
    d = tg.tensor([1.0, 2.0], dtype=tg.float64)
    assert d.view(tg.int64).tolist() == [4607182418800017408, 4611686018427387904]
    assert d.view(tg.float32).shape == (4,)
    assert tg.arange(8, dtype=tg.uint8).reshape(2, 4).view(tg.float32).shape == (2, 1)
    assert tg.zeros(0, 2).view(tg.int64).shape == (0, 1)
    with pytest.raises(RuntimeError, match=r"self.size\(-1\) must be divisible by 2"):
        tg.zeros(3).view(tg.int64)
    with pytest.raises(RuntimeError, match=r"self.dim\(\) cannot be 0"):
        tg.tensor(1.0).view(tg.int64)
    with pytest.raises(RuntimeError, match=r"self.stride\(-1\) must be 1"):
        tg.arange(8.0).reshape(2, 4)[:, ::2].view(tg.int64)
    if torch is not None:
        a = np.arange(8, dtype=np.uint8).reshape(2, 4)
        np.testing.assert_array_equal(tg.tensor(a).view(tg.float32).numpy(),
                                      torch.tensor(a).view(torch.float32).numpy())


def test_resize_in_place_over_the_same_storage():
    y = tg.arange(6.0)
    assert y.resize_(2, 3) is y and y.shape == (2, 3)
    assert y.tolist() == [[0, 1, 2], [3, 4, 5]]
    y.resize_(4)
    assert y.tolist() == [0, 1, 2, 3]
    y.resize_((2, 2))
    assert y.tolist() == [[0, 1], [2, 3]]
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        tg.tensor([1.0, 2.0], requires_grad=True).resize_(1)
    with pytest.raises(RuntimeError, match="not supported"):
        tg.zeros(2).resize_(3)
    if torch is not None:
        t = torch.arange(6.0)
        t.resize_(2, 3)
        assert tg.arange(6.0).resize_(2, 3).tolist() == t.tolist()
