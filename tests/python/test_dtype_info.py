"""finfo / iinfo, dtype.is_signed / is_complex and the legacy typed
constructors (FloatTensor, LongTensor, ...), against PyTorch's."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import torch


def test_finfo_iinfo():
    f = tg.finfo(tg.float32)
    assert f.eps == float(np.finfo(np.float32).eps) and f.bits == 32 and f.dtype == 'float32'
    assert f.max == float(np.finfo(np.float32).max) and f.min == -f.max
    assert f.tiny == f.smallest_normal == float(np.finfo(np.float32).tiny)
    assert tg.finfo().eps == f.eps and tg.finfo(tg.float64).eps == 2.0 ** -52
    assert tg.iinfo(tg.int32).max == 2 ** 31 - 1 and tg.iinfo(tg.uint8).min == 0
    assert tg.iinfo(tg.int64).bits == 64
    with pytest.raises(TypeError, match="requires a floating point input type"):
        tg.finfo(tg.int32)
    with pytest.raises(TypeError, match="requires an integer input type"):
        tg.iinfo(tg.float32)
    with pytest.raises(TypeError, match="not supported by iinfo"):
        tg.iinfo(tg.bool)
    if torch is not None:
        for name in ('float32', 'float64'):
            a, b = tg.finfo(getattr(tg, name)), torch.finfo(getattr(torch, name))
            for k in ('bits', 'eps', 'max', 'min', 'tiny', 'resolution', 'dtype'):
                assert getattr(a, k) == getattr(b, k), (name, k)
        for name in ('int32', 'int64', 'uint8'):
            a, b = tg.iinfo(getattr(tg, name)), torch.iinfo(getattr(torch, name))
            assert (a.bits, a.max, a.min, a.dtype) == (b.bits, b.max, b.min, b.dtype)


def test_dtype_flags():
    assert tg.float32.is_signed and tg.int64.is_signed
    assert not tg.uint8.is_signed and not tg.bool.is_signed
    assert not tg.float64.is_complex
    if torch is not None:
        for name in ('float32', 'float64', 'int32', 'int64', 'uint8', 'bool'):
            assert getattr(tg, name).is_signed == getattr(torch, name).is_signed


def test_legacy_typed_constructors():
    assert tg.FloatTensor(2, 3).shape == (2, 3) and tg.FloatTensor(2, 3).dtype == tg.float32
    assert tg.FloatTensor([1, 2]).tolist() == [1.0, 2.0]
    assert tg.LongTensor([1.7]).tolist() == [1] and tg.LongTensor([1]).dtype == tg.int64
    assert tg.DoubleTensor(tg.Size([2])).shape == (2,) and tg.FloatTensor().shape == (0,)
    assert tg.ByteTensor([1]).dtype == tg.uint8 and tg.BoolTensor([1]).dtype == tg.bool
    assert tg.IntTensor([1]).dtype == tg.int32
    assert isinstance(tg.ones(1), tg.FloatTensor) and not isinstance(tg.ones(1), tg.LongTensor)
    x = tg.tensor([1, 2])
    assert tg.LongTensor(x) is x
    with pytest.raises(TypeError):
        tg.FloatTensor(x)
    if torch is not None:
        assert tg.LongTensor([1.7, 2.2]).tolist() == torch.LongTensor([1.7, 2.2]).tolist()
