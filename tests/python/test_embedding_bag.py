"""nn.EmbeddingBag / F.embedding_bag against PyTorch: 2-D bags and 1-D
input with offsets, every mode, padding_idx, per_sample_weights,
include_last_offset, empty bags; values and weight gradients."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

CASES = [
    dict(i=[[1, 2, 4], [4, 3, 9]], mode='mean'),
    dict(i=[[1, 2, 4], [4, 3, 9]], mode='max'),
    dict(i=[[1, 2, 0], [0, 0, 0]], mode='mean', padding_idx=0),
    dict(i=[1, 2, 4, 5, 4, 3, 2, 9], off=[0, 4], mode='sum'),
    dict(i=[1, 2, 4, 5, 4, 3, 2, 9], off=[0, 4, 4, 8], mode='mean', include_last_offset=True),
    dict(i=[1, 2, 4, 5], off=[0, 2], mode='sum', psw=[1.0, 2.0, 0.5, -1.0]),
    dict(i=[1, 2, 4, 5], off=[0, 0, 3], mode='max'),
]


@needs_torch
@pytest.mark.parametrize('case', CASES)
def test_embedding_bag_matches_torch(case):
    w = np.random.RandomState(0).randn(10, 3).astype('float32')
    outs = []
    for L in (torch, tg):
        wt = L.tensor(w, requires_grad=True)
        kw = {k: case[k] for k in ('padding_idx', 'include_last_offset') if k in case}
        y = L.nn.functional.embedding_bag(
            L.tensor(case['i']), wt, L.tensor(case['off']) if 'off' in case else None,
            mode=case['mode'], per_sample_weights=L.tensor(case['psw']) if 'psw' in case else None,
            **kw)
        y.sum().backward()
        outs.append((y.detach().numpy(), wt.grad.numpy()))
    assert outs[1][0].shape == outs[0][0].shape
    np.testing.assert_allclose(outs[1][0], outs[0][0], atol=1e-6)
    np.testing.assert_allclose(outs[1][1], outs[0][1], atol=1e-6)


def test_embedding_bag_module_and_errors():
    m = tg.nn.EmbeddingBag(10, 3, mode='sum', padding_idx=2)
    assert m.weight[2].tolist() == [0.0, 0.0, 0.0]
    assert m(tg.tensor([[1, 2], [3, 4]])).shape == (2, 3)
    assert repr(m) == "EmbeddingBag(10, 3, mode=sum, padding_idx=2)"
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        tg.nn.functional.embedding_bag(tg.tensor([[1]]), m.weight, mode='mean',
                                       per_sample_weights=tg.ones(1, 1))
    with pytest.raises(ValueError, match="offsets has to be None"):
        m(tg.tensor([[1]]), tg.tensor([0]))
    with pytest.raises(ValueError, match="mode"):
        tg.nn.functional.embedding_bag(tg.tensor([[1]]), m.weight, mode='median')


@pytest.mark.parametrize('mode', ['sum', 'mean', 'max'])
@pytest.mark.parametrize('inp,offsets', [([[1, 1]], None), ([1, 1], [0, 0, 2]), ([], [0])])
def test_bags_of_only_padding_give_the_weight_a_zero_gradient(mode, inp, offsets):
    """empty and all-padding bags are zeros that still reach the weight: its
    gradient is zeros, not None (PyTorch's)"""
    m = tg.nn.EmbeddingBag(5, 2, mode=mode, padding_idx=1)
    x = tg.tensor(inp, dtype=tg.int64)
    out = m(x, None if offsets is None else tg.tensor(offsets, dtype=tg.int64))
    out.sum().backward()
    assert out.shape == (1 if offsets is None else len(offsets), 2)
    assert not out.detach().numpy().any()
    assert m.weight.grad is not None and not m.weight.grad.numpy().any()
