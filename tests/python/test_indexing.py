"""Indexing and assignment against PyTorch (numpy where the rules agree):
basic indices as views, advanced indices (several per subscript,
broadcast together, placed where PyTorch places them), bool masks,
assignment with broadcast values, gradients through both, and errors."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, needs_torch, torch

A = np.arange(6 * 3 * 4 * 5, dtype=np.float32).reshape(6, 3, 4, 5)
MASK63 = (np.arange(18).reshape(6, 3) % 4) == 1
MASK6 = np.array([True, False, True, False, False, True])

S = slice(None)
CASES = [
    (1,), (-1, S, 2), (S, None, slice(1, 3), Ellipsis), (slice(1, None, 2), 0),
    ([0, 2],), ([-1, 0],), ([[0, 1], [2, 3]],), (S, [0, 2], S, [1, 4]),
    ([0, 1], S, [0, 1]), ([[0], [1]], 0, [0, 1]), (0, S, [0, 1]),
    (S, [0, 1], S, 0), ([0], None, [0]), (S, [0, 1], [1, 2]), (None, [0, 1], [1, 2]),
    (Ellipsis, [0, 1]), (Ellipsis, [1, 2], [0, -1]), (True,), (False,),
    (S, None, [0, 1], None, [1, 2]), (MASK63,), (MASK6,), (MASK6, [1, 2, 0]),
    (slice(1, None, 2), [[-1, 0]], S, [[1], [2]]), (S, [2, 0], [[1], [3]], S),
    ([], ), (np.array([], dtype=np.int64), 0),
]


def torch_index(idx):
    return tuple(torch.tensor(e) if isinstance(e, np.ndarray) else e for e in idx)


@needs_torch
@pytest.mark.parametrize("idx", CASES, ids=[str(i) for i in range(len(CASES))])
def test_getitem_matches_torch(idx):
    want = torch.tensor(A)[torch_index(idx)].numpy()
    got = tg.tensor(A)[idx].numpy()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    # tensors as indices give the same as lists and arrays
    as_tensors = tuple(tg.tensor(e) if isinstance(e, (list, np.ndarray)) and len(e) else e
                       for e in idx)
    np.testing.assert_array_equal(tg.tensor(A)[as_tensors].numpy(), want)


@needs_torch
@pytest.mark.parametrize("idx", CASES, ids=[str(i) for i in range(len(CASES))])
def test_setitem_matches_torch(idx):
    t, x = torch.tensor(A), tg.tensor(A)
    shape = t[torch_index(idx)].shape
    value = -1 - np.arange(shape[-1] if shape else 1, dtype=np.float32)  # broadcasts
    if not shape:
        value = value.reshape(())
    t[torch_index(idx)] = torch.tensor(value)
    x[idx] = tg.tensor(value)
    np.testing.assert_array_equal(x.numpy(), t.numpy())
    x2 = tg.tensor(A)
    x2[idx] = 5  # a Python number
    t2 = torch.tensor(A)
    t2[torch_index(idx)] = 5
    np.testing.assert_array_equal(x2.numpy(), t2.numpy())


def test_basic_indices_are_views():
    x = tg.zeros(3, 4)
    v = x[1:, ::2]
    v[0, 1] = 5.0
    assert x[1, 2].item() == 5.0
    x[0] = tg.tensor([1.0, 2.0, 3.0, 4.0])
    assert x[0].tolist() == [1.0, 2.0, 3.0, 4.0]
    a = x[[0, 2]]  # an advanced index copies
    a.fill_(9)
    assert x[0, 0].item() == 1.0


def test_gradients_through_advanced_indices():
    x = tg.tensor(A[:2, :3, :4, 0].astype(np.float64), requires_grad=True)
    y = x[[0, 1, 1], :, [3, 0, 0]]  # repeated positions accumulate
    (y * tg.arange(9, dtype=tg.float64).reshape(3, 3)).sum().backward()
    g = np.zeros((2, 3, 4))
    w = np.arange(9.0).reshape(3, 3)
    for j, (i, k) in enumerate(zip([0, 1, 1], [3, 0, 0])):
        g[i, :, k] += w[j]
    close(x.grad, g)


def test_assignment_gradients_to_value_and_target():
    x = tg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    v = tg.tensor([10.0, 20.0], requires_grad=True)
    y = x * 2
    y[[3, 0]] = v
    y[1:2] = v[0] * 3
    (y * tg.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    close(x.grad, [0, 0, 6, 0])
    close(v.grad, [4 + 6, 1])


def test_index_errors():
    x = tg.tensor(A)
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 6]]
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, [-4]]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0, [0]]
    with pytest.raises(IndexError, match="broadcast"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="mask"):
        x[np.ones(5, dtype=bool)]
    with pytest.raises(IndexError, match="long, byte or bool"):  # 1.13's words
        x[tg.tensor([0.5])]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., [0], ...]
    with pytest.raises(RuntimeError, match="shape mismatch"):
        x[[0, 1]] = tg.ones(3)
    with pytest.raises(TypeError, match="string"):  # PyTorch's type (test_misuse.py)
        x["a"]
