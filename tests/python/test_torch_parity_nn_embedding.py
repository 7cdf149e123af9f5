"""Embedding and EmbeddingBag options against PyTorch 1.13: scale_grad_by_freq
(each row's gradient divided by its count in the input), sparse=True
(accepted; the gradient is dense, with PyTorch's values), and the argument
errors that go with them."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

pytestmark = needs_torch

IDX = np.array([[0, 2, 2, 5], [6, 2, 1, 0]])


def _weight_grad(L, w, idx, **kw):
    wt = L.tensor(w).requires_grad_(True)
    y = L.nn.functional.embedding(L.tensor(idx), wt, **kw)
    cw = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))).to(y.dtype)
    (y * cw).sum().backward()
    g = wt.grad
    if getattr(g, 'is_sparse', False):
        g = g.to_dense()
    return y.detach().numpy(), g.numpy()


@pytest.mark.parametrize('kw', [dict(scale_grad_by_freq=True),
                                dict(scale_grad_by_freq=True, padding_idx=2),
                                dict(scale_grad_by_freq=True, max_norm=1.0),
                                dict(sparse=True), dict(sparse=True, padding_idx=-1)])
def test_embedding_grad_options(kw):
    w = np.random.RandomState(0).randn(7, 4).astype(np.float32)
    (ty, tgr), (gy, ggr) = (_weight_grad(L, w, IDX, **kw) for L in (torch, tg))
    np.testing.assert_allclose(gy, ty, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ggr, tgr, rtol=1e-4, atol=1e-5)


def test_embedding_module_scale_grad_by_freq():
    m = tg.nn.Embedding(7, 3, scale_grad_by_freq=True)
    m(tg.tensor([1, 1, 1, 4])).sum().backward()
    g = m.weight.grad.numpy()
    np.testing.assert_allclose(g[1], 1.0)  # three lookups of 1/3
    np.testing.assert_allclose(g[4], 1.0)
    np.testing.assert_allclose(g[0], 0.0)
    assert repr(m) == 'Embedding(7, 3, scale_grad_by_freq=True)'


def test_embedding_scale_grad_by_freq_sparse_refused():
    w = tg.randn(5, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match='scale_grad_by_freq not supported with sparse'):
        tg.nn.functional.embedding(tg.tensor([1]), w, scale_grad_by_freq=True, sparse=True)


@pytest.mark.parametrize('mode', ['sum', 'mean'])
def test_embedding_bag_scale_grad_by_freq(mode):
    # PyTorch 1.13's CPU embedding_bag divides by the wrong index's count
    # (pytorch/pytorch#190063), so the reference is its embedding + reduction
    w = np.random.RandomState(1).randn(7, 4).astype(np.float32)
    idx = np.array([1, 2, 2, 5, 2, 3, 1, 6])
    grads = []
    for L in (torch, tg):
        wt = L.tensor(w).requires_grad_(True)
        if L is torch:
            rows = torch.nn.functional.embedding(torch.tensor(idx), wt, scale_grad_by_freq=True)
            red = (lambda r: r.sum(0)) if mode == 'sum' else (lambda r: r.mean(0))
            y = torch.stack([red(rows[0:3]), red(rows[3:5]), red(rows[5:8])])
        else:
            y = tg.nn.functional.embedding_bag(tg.tensor(idx), wt, tg.tensor([0, 3, 5]),
                                               mode=mode, scale_grad_by_freq=True)
        (y * L.tensor(np.cos(np.arange(12)).reshape(3, 4)).float()).sum().backward()
        grads.append(wt.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)


def test_embedding_bag_max_scale_grad_by_freq_refused():
    with pytest.raises(ValueError, match='max mode does not support scaling'):
        tg.nn.functional.embedding_bag(tg.tensor([1, 2]), tg.randn(4, 2), tg.tensor([0]),
                                       mode='max', scale_grad_by_freq=True)


def test_embedding_bag_max_gradient_goes_to_the_first_tie():
    idx, offs = np.array([1, 1, 2, 3, 3]), np.array([0, 3])
    grads = []
    for L in (torch, tg):
        w = L.tensor(np.ones((4, 3), np.float32)).requires_grad_(True)
        y = L.nn.functional.embedding_bag(L.tensor(idx), w, L.tensor(offs), mode='max')
        y.sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def test_embedding_scale_grad_by_freq_in_function():
    m = tg.nn.Embedding(6, 2, scale_grad_by_freq=True)
    idx = tg.tensor([[1, 1, 4], [1, 0, 4]])
    m(idx).pow(2).sum().backward()
    eager = m.weight.grad.numpy().copy()
    m.weight.grad = None
    tg.function(lambda i: m(i).pow(2).sum())(idx).backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), eager, rtol=1e-6)
