"""tg.equal / Tensor.equal and Tensor.allclose against PyTorch's answers:
same shape and elements (NaN equals nothing), values of different dtypes
compared after promotion, a non-tensor argument a TypeError; all/any of
empty tensors."""
import pytest

import tensorgraph as tg

from conftest import needs_torch, torch

CASES = [
    ([1.0, 2.0], [1.0, 2.0]),
    ([1, 2], [1.0, 2.0]),
    ([1.0, float("nan")], [1.0, float("nan")]),
    ([[1.0], [2.0]], [1.0, 2.0]),
    ([1.0, 2.0], [1.0, 2.5]),
    ([], []),
]


@needs_torch
@pytest.mark.parametrize("a,b", CASES)
def test_equal_as_torch(a, b):
    want = torch.equal(torch.tensor(a), torch.tensor(b))
    assert tg.equal(tg.tensor(a), tg.tensor(b)) is want
    assert tg.tensor(a).equal(tg.tensor(b)) is want


@needs_torch
@pytest.mark.parametrize("a,b", [([1.0, 2.0], [1.0, 2.0 + 1e-7]), ([1.0], [1.1]),
                                 ([float("nan")], [float("nan")])])
def test_allclose_method_as_torch(a, b):
    want = torch.tensor(a).allclose(torch.tensor(b))
    assert tg.tensor(a).allclose(tg.tensor(b)) == want


def test_equal_needs_tensors():
    with pytest.raises(TypeError, match="must be Tensor"):
        tg.equal(tg.ones(2), 1)
    with pytest.raises(TypeError, match="must be Tensor"):
        tg.ones(2).equal([1.0, 1.0])


@needs_torch
@pytest.mark.parametrize("shape,dim", [((0,), None), ((0, 3), 0), ((3, 0), 1), ((2, 3), 1),
                                       ((2, 3), None)])
def test_all_any_empty_as_torch(shape, dim):
    """all/any over nothing: True/False, as PyTorch (a min/max could not)"""
    base = torch.tensor([[1.0, 0.0, float("nan")], [2.0, 3.0, 4.0]]) if shape == (2, 3) \
        else torch.ones(shape)
    t = tg.tensor(base.tolist()) if base.numel() else tg.ones(*shape)
    for name in ("all", "any"):
        want = getattr(base, name)() if dim is None else getattr(base, name)(dim=dim)
        got = getattr(t, name)() if dim is None else getattr(t, name)(dim=dim)
        assert got.tolist() == want.tolist(), name
