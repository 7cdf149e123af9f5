"""x[i] op= y on a tensor autograd watches, against PyTorch: slices,
boolean masks, index lists, several in a row, gradients to x and y; a
lone view's in-place update (v = x[0]; v += 1) reaches its base, as in
PyTorch; the update of a leaf's view raises."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def _run(L):
    x = L.tensor([[1., 2.], [3., 4.], [5., 6.]], requires_grad=True)
    w = L.tensor([1., 2.], requires_grad=True)
    b = x * 2
    b[:, 1] *= 3
    b[0] -= w
    b[1:] /= 2
    b[b > 3] += w.sum()
    b[[0, 2]] *= w
    b[..., 0] += 1
    (b * b).sum().backward()
    return b.detach().numpy(), x.grad.numpy(), w.grad.numpy()


@needs_torch
def test_augmented_subscript_matches_torch():
    for t, g in zip(_run(torch), _run(tg)):
        np.testing.assert_allclose(g, t, rtol=1e-6)


def _lone(L):
    x = L.ones(3, 2, requires_grad=True)
    b = x * 2
    v = b[0]
    v += 1
    v *= x[1] * 3
    (b * b).sum().backward()
    return b.detach().numpy(), x.grad.numpy()


def test_lone_view_update_reaches_its_base():
    b, g = _lone(tg)
    assert b.tolist() == [[9.0, 9.0], [2.0, 2.0], [2.0, 2.0]]
    if torch is not None:
        for t, m in zip(_lone(torch), (b, g)):
            np.testing.assert_allclose(m, t, rtol=1e-6)
    x = tg.ones(3, 2, requires_grad=True)
    with pytest.raises(RuntimeError):
        x[0] += 1
    with tg.no_grad():
        y = x * 1
        y[0] += 5
    assert y.tolist() == [[6.0, 6.0], [1.0, 1.0], [1.0, 1.0]]
