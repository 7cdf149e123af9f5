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


def test_integer_tensor_of_one_element_is_one_size():
    """PyTorch's sizes take an integer (or bool) tensor of one element as
    one int, at any rank; dims do not take a tensor"""
    for t in (tg.tensor(3), tg.tensor([3])):
        assert tg.zeros(t).shape == (3,) and tg.ones(2).new_zeros(t).shape == (3,)
        assert tg.ones(()).expand(t).shape == (3,) and tg.ones(()).broadcast_to(t).shape == (3,)
        assert tg.ones(()).repeat(t).shape == (3,)
        assert tg.ones(3).view(t).shape == (3,) and tg.ones(3).reshape(t).shape == (3,)
    assert tg.ones(6).view(tg.tensor(2), 3).shape == (2, 3)
    assert tg.ones(()).expand(tg.tensor(True)).shape == (1,)
    assert tg.tensor(True).__index__() == 1 and tg.tensor([[4]]).__index__() == 4
    for bad in (tg.tensor(3.0), tg.tensor([2, 3])):
        with pytest.raises(TypeError, match="only integer tensors of a single element"):
            bad.__index__()
    with pytest.raises(TypeError):
        tg.ones(()).expand(tg.tensor(3.0))
    with pytest.raises(TypeError, match="dim must be an int or a sequence"):
        tg.ones(2, 3).sum(tg.tensor(1))


def test_broadcast_shapes_gives_a_size():
    for shapes, want in ((((2, 1), (3,)), (2, 3)), ((), ()), ((4,), (4,))):
        s = tg.broadcast_shapes(*shapes)
        assert type(s) is tg.Size and s == want
