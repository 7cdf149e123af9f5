"""lp_pool1d/2d, channel_shuffle, rrelu, max_unpool1d/2d, multi_margin_loss,
multilabel_margin_loss and their modules against PyTorch (values,
gradients, reprs)."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

CASES = [
    ('lp_pool2d', lambda L, x: L.nn.functional.lp_pool2d(x, 2, 3, 2), (2, 3, 7, 7)),
    ('lp_pool2d p3 ceil', lambda L, x: L.nn.functional.lp_pool2d(x.abs(), 3, (2, 3), ceil_mode=True),
     (1, 2, 5, 7)),
    ('lp_pool1d', lambda L, x: L.nn.functional.lp_pool1d(x, 2, 2), (2, 3, 8)),
    ('channel_shuffle', lambda L, x: L.nn.ChannelShuffle(3)(x), (2, 6, 2, 2)),
    ('rrelu eval', lambda L, x: L.nn.functional.rrelu(x), (3, 4)),
    ('multi_margin', lambda L, x: L.nn.functional.multi_margin_loss(x, L.tensor([1, 0, 3])), (3, 4)),
    ('multi_margin p2 weight', lambda L, x: L.nn.MultiMarginLoss(
        p=2, margin=0.5, weight=L.tensor([1., 2., 3., 4.], dtype=L.float64), reduction='none')(x, L.tensor([1, 0, 3])),
     (3, 4)),
    ('multilabel_margin', lambda L, x: L.nn.functional.multilabel_margin_loss(
        x, L.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0]])), (3, 4)),
    ('multilabel_margin none', lambda L, x: L.nn.MultiLabelMarginLoss(reduction='none')(
        x, L.tensor([[0, 1, 2, 3], [2, -1, 0, 0], [1, 1, -1, 0]])), (3, 4)),
]


@needs_torch
@pytest.mark.parametrize('name,fn,shape', CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, fn, shape):
    x = np.random.RandomState(0).randn(*shape)
    a, b = torch.tensor(x, requires_grad=True), tg.tensor(x, requires_grad=True)
    ya, yb = fn(torch, a), fn(tg, b)
    assert tuple(yb.shape) == tuple(ya.shape)
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), rtol=1e-6, atol=1e-9)
    if name == 'channel_shuffle':  # PyTorch 1.13 has no derivative for it
        yb.sum().backward()
        assert b.grad.tolist() == np.ones(shape).tolist()
        return
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-6, atol=1e-9)


@needs_torch
@pytest.mark.parametrize('nd', [1, 2])
def test_max_unpool_inverts_max_pool(nd):
    shape = (2, 3, 8) if nd == 1 else (2, 3, 6, 7)
    x = np.random.RandomState(1).randn(*shape)
    outs = []
    for L in (torch, tg):
        F = L.nn.functional
        pool = F.max_pool1d if nd == 1 else F.max_pool2d
        unpool = L.nn.MaxUnpool1d(2) if nd == 1 else L.nn.MaxUnpool2d(2)
        t = L.tensor(x, requires_grad=True)
        v, i = pool(t, 2, return_indices=True)
        y = unpool(v, i, output_size=t.shape)
        y.sum().backward()
        outs.append((y.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    np.testing.assert_array_equal(outs[1][1], outs[0][1])


def test_rrelu_training_slopes_and_errors():
    x = -tg.ones(1000)
    y = tg.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    assert (y <= -0.1 + 1e-6).all() and (y >= -0.3 - 1e-6).all() and y.std().item() > 0.01
    with pytest.raises(RuntimeError, match="divisible"):
        tg.nn.functional.channel_shuffle(tg.ones(1, 5, 2, 2), 2)
    with pytest.raises(ValueError, match="p == 1"):
        tg.nn.MultiMarginLoss(p=3)
    with pytest.raises(RuntimeError, match="invalid max index"):
        tg.nn.functional.max_unpool2d(tg.ones(1, 1, 2, 2), tg.tensor([[[[0, 1], [2, 99]]]]), 2)
