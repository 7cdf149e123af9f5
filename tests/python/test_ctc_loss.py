"""F.ctc_loss / nn.CTCLoss against PyTorch: padded and concatenated
targets, shorter inputs, empty targets, every reduction, zero_infinity,
an unbatched input; values and gradients."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

CASES = [
    dict(t=[[1, 2, 2], [3, 0, 0], [4, 1, 0]], tl=[3, 1, 2], il=[7, 5, 6]),
    dict(t=[1, 2, 2, 3, 4, 1], tl=[3, 1, 2], il=[7, 7, 7]),
    dict(t=[[1, 1, 1, 1], [2, 0, 0, 0], [3, 4, 0, 0]], tl=[4, 1, 0], il=[3, 7, 2]),
]


@needs_torch
@pytest.mark.parametrize('case', CASES)
@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
def test_ctc_loss_matches_torch(case, reduction):
    x = np.random.RandomState(0).randn(7, 3, 5).astype('float32')
    infeasible = case is CASES[2]  # "1 1 1 1" cannot fit in 3 frames: inf
    outs = []
    for L in (torch, tg):
        xl = L.tensor(x, requires_grad=True)
        y = L.nn.functional.ctc_loss(L.nn.functional.log_softmax(xl, 2), L.tensor(case['t']),
                                     L.tensor(case['il']), L.tensor(case['tl']),
                                     reduction=reduction, zero_infinity=infeasible)
        (y.sum() if reduction == 'none' else y).backward()
        outs.append((y.detach().numpy(), xl.grad.numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-4, atol=1e-5)


@needs_torch
def test_ctc_module_unbatched_and_infinite():
    x = np.random.RandomState(1).randn(6, 4).astype('float32')
    want = torch.nn.CTCLoss(blank=3)(torch.tensor(x).log_softmax(1), torch.tensor([1, 2]),
                                    torch.tensor(6), torch.tensor(2))
    got = tg.nn.CTCLoss(blank=3)(tg.tensor(x).log_softmax(1), tg.tensor([1, 2]), tg.tensor(6),
                                 tg.tensor(2))
    assert got.shape == () and abs(got.item() - want.item()) < 1e-5
    lp = tg.tensor(np.random.RandomState(2).randn(2, 1, 3).astype('float32')).log_softmax(2)
    assert tg.nn.functional.ctc_loss(lp, tg.tensor([[1, 1]]), [2], [2],
                                     reduction='none').tolist() == [float('inf')]


def test_ctc_errors():
    lp = tg.zeros(4, 1, 3)
    with pytest.raises(RuntimeError, match="target labels"):
        tg.nn.functional.ctc_loss(lp, tg.tensor([[0, 1]]), [4], [2])  # 0 is the blank
    with pytest.raises(RuntimeError, match="input_lengths must be in"):
        tg.nn.functional.ctc_loss(lp, tg.tensor([[1]]), [5], [1])
    with pytest.raises(ValueError, match="reduction"):
        tg.nn.functional.ctc_loss(lp, tg.tensor([[1]]), [4], [1], reduction='avg')
