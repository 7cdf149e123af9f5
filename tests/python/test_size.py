"""tg.Size, the type of Tensor.shape and Tensor.size(), as torch.Size."""
import pickle

import pytest

import tensorgraph as tg
from conftest import torch


def test_shape_and_size_are_sizes_equal_to_tuples():
    x = tg.zeros(2, 3)
    for s in (x.shape, x.size()):
        assert type(s) is tg.Size and isinstance(s, tuple)
        assert s == (2, 3) and s == tg.Size([2, 3]) and hash(s) == hash((2, 3))
    assert x.size(1) == 3 and x.size(-2) == 2 and x.size(dim=0) == 2
    assert type(x.shape[1:]) is tg.Size and type(x.shape[0]) is int
    assert type(x.shape + (4,)) is tg.Size and x.shape + (4,) == (2, 3, 4)
    assert type((1,) + x.shape) is tg.Size
    assert x.shape.numel() == 6 and tg.Size().numel() == 1 and tg.Size() == ()
    assert repr(x.shape) == "tensorgraph.Size([2, 3])"
    assert pickle.loads(pickle.dumps(x.shape)) == x.shape
    assert tg.ones(tg.Size([2, 3])).shape == (2, 3)
    assert tg.zeros(2).reshape(tg.Size([1, 2])).shape == (1, 2)
    assert tg.Size([tg.tensor(3)]) == (3,)  # __index__
    with pytest.raises(TypeError, match="item 0 is 'float'"):
        tg.Size([2.5])
    if torch is not None:
        assert x.shape == torch.zeros(2, 3).shape
        assert tuple(x.shape[1:]) == tuple(torch.zeros(2, 3).shape[1:])
