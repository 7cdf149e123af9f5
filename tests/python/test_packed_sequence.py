"""Packed sequences against PyTorch: pack_padded_sequence (sorted or
not), pad_packed_sequence (total_length), pack_sequence, and RNN / GRU /
LSTM over a PackedSequence (bidirectional, two layers, initial states):
outputs, final states in the caller's batch order and the gradients of
the input and the weights. Also ModuleList.insert/del/pop."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def _run(L, cls, lens, enforce_sorted, bidirectional):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(3, 4, num_layers=2, bidirectional=bidirectional,
                                batch_first=True)
    m = tm
    if L is tg:
        m = getattr(tg.nn, cls)(3, 4, num_layers=2, bidirectional=bidirectional,
                                batch_first=True)
        m.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(1)
    x = L.tensor(rng.normal(size=(len(lens), max(lens), 3)).astype(np.float32))
    x.requires_grad_(True)
    n_dir = 2 if bidirectional else 1
    h0 = L.tensor(rng.normal(size=(2 * n_dir, len(lens), 4)).astype(np.float32))
    packed = L.nn.utils.rnn.pack_padded_sequence(x, L.tensor(lens), batch_first=True,
                                                 enforce_sorted=enforce_sorted)
    out, state = m(packed, (h0, h0 * 0.5) if cls == 'LSTM' else h0)
    padded, out_lens = L.nn.utils.rnn.pad_packed_sequence(out, batch_first=True,
                                                          total_length=max(lens) + 1)
    h = state[0] if cls == 'LSTM' else state
    w = L.tensor(np.cos(np.arange(padded.numel())).reshape(tuple(padded.shape))
                 .astype(np.float32))
    ((padded * w).sum() + (h * 1.5).sum()).backward()
    grads = [x.grad] + [p.grad for _, p in sorted(m.named_parameters())]
    return [padded, out_lens, h, out.data, out.batch_sizes] + grads


@needs_torch
@pytest.mark.parametrize('cls', ['RNN', 'GRU', 'LSTM'])
@pytest.mark.parametrize('lens,enforce_sorted', [([5, 3, 2], True), ([2, 5, 1, 3], False)])
@pytest.mark.parametrize('bidirectional', [False, True])
def test_rnn_over_packed_sequence(cls, lens, enforce_sorted, bidirectional):
    t = _run(torch, cls, lens, enforce_sorted, bidirectional)
    g = _run(tg, cls, lens, enforce_sorted, bidirectional)
    for a, b in zip(t, g):
        assert tuple(b.shape) == tuple(a.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)


@needs_torch
def test_pack_and_pad_round_trip():
    seqs = [[1., 2.], [3.], [4., 5., 6.]]
    t = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    g = tg.nn.utils.rnn.pack_sequence([tg.tensor(s) for s in seqs], enforce_sorted=False)
    for a, b in zip(t, g):
        assert b.tolist() == a.tolist()
    tp, tl = torch.nn.utils.rnn.pad_packed_sequence(t, padding_value=-1.0)
    gp, gl = tg.nn.utils.rnn.pad_packed_sequence(g, padding_value=-1.0)
    assert gp.tolist() == tp.tolist() and gl.tolist() == tl.tolist()
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        tg.nn.utils.rnn.pack_padded_sequence(tg.ones(3, 2, 1), [1, 3])
    with pytest.raises(RuntimeError, match="greater than 0"):
        tg.nn.utils.rnn.pack_padded_sequence(tg.ones(3, 2, 1), [3, 0])
    with pytest.raises(ValueError, match="total_length"):
        tg.nn.utils.rnn.pad_packed_sequence(g, total_length=2)


def test_module_list_insert_delete_pop():
    ml = tg.nn.ModuleList([tg.nn.Linear(2, 2), tg.nn.ReLU()])
    ml.insert(0, tg.nn.Sigmoid())
    ml += [tg.nn.Tanh()]
    assert [type(m).__name__ for m in ml] == ['Sigmoid', 'Linear', 'ReLU', 'Tanh']
    del ml[1]
    assert type(ml.pop(0)).__name__ == 'Sigmoid'
    assert [type(m).__name__ for m in ml] == ['ReLU', 'Tanh']
    assert [n for n, _ in ml.named_children()] == ['0', '1']
