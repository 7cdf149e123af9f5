"""nn.utils.rnn.unpad_sequence and unpack_sequence against PyTorch 1.13:
the sequences back in the caller's order, with their gradients."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

pytestmark = needs_torch

SEQS = [np.random.RandomState(i).randn(n, 3).astype(np.float32)
        for i, n in enumerate((3, 5, 2))]


def _grads(L, fn):
    xs = [L.tensor(a).requires_grad_(True) for a in SEQS]
    outs = fn(L, xs)
    sum(((o * (k + 1)) ** 2).sum() for k, o in enumerate(outs)).backward()
    return [o.detach().numpy() for o in outs], [x.grad.numpy() for x in xs]


@pytest.mark.parametrize('batch_first', [False, True])
def test_unpad_sequence(batch_first):
    def fn(L, xs):
        r = L.nn.utils.rnn
        padded = r.pad_sequence(xs, batch_first=batch_first)
        return r.unpad_sequence(padded, L.tensor([3, 5, 2]), batch_first=batch_first)
    (to, tgr), (go, ggr) = _grads(torch, fn), _grads(tg, fn)
    assert [o.shape for o in go] == [o.shape for o in to]
    for a, b in zip(go + ggr, to + tgr):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_unpack_sequence():
    def fn(L, xs):
        r = L.nn.utils.rnn
        return r.unpack_sequence(r.pack_sequence(xs, enforce_sorted=False))
    (to, tgr), (go, ggr) = _grads(torch, fn), _grads(tg, fn)
    assert [o.shape for o in go] == [(3, 3), (5, 3), (2, 3)]
    for a, b in zip(go + ggr, to + tgr):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_unpad_sequence_leaves_its_argument():
    padded = tg.zeros(4, 2, 3)
    tg.nn.utils.rnn.unpad_sequence(padded, [4, 1])
    assert tuple(padded.shape) == (4, 2, 3)
