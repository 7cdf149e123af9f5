"""out= of the op table's functions as PyTorch's: the result written into
out and out returned, dtype casts where PyTorch allows them, resizing
(with its warning unless out was empty), and its refusals (autograd, a
dtype the result cannot be cast to); nonzero of a 0-d tensor."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, needs_torch, torch

CASES = {
    'add': lambda L, out: L.add(L.tensor([1., 2.]), L.tensor([3., 4.]), out=out),
    'mul_scalar': lambda L, out: L.mul(L.tensor([1., 2.]), 2, out=out),
    'exp': lambda L, out: L.exp(L.tensor([0., 1.]), out=out),
    'matmul': lambda L, out: L.matmul(L.eye(2), L.tensor([[1., 2.], [3., 4.]]), out=out),
    'gather': lambda L, out: L.gather(L.tensor([[1., 2.], [3., 4.]]), 1, L.tensor([[1], [0]]),
                                      out=out),
}
OUTS = {
    'same': lambda L, shape: L.zeros(shape),
    'float64': lambda L, shape: L.zeros(shape, dtype=L.float64),
    'empty': lambda L, shape: L.zeros(0),
    'larger': lambda L, shape: L.zeros(9),
}


@pytest.mark.skipif(SANITIZED, reason="PyTorch's errors abort under the sanitizers")
@needs_torch
@pytest.mark.parametrize('kind', sorted(OUTS))
@pytest.mark.parametrize('case', sorted(CASES))
def test_out_as_torch(case, kind):
    if kind == 'float64' and case in ('matmul', 'gather'):  # these keep the dtype
        for L in (tg, torch):
            with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, "
                                                   "but got double instead"):
                CASES[case](L, OUTS[kind](L, tuple(CASES[case](L, None).shape)))
        return
    results = []
    for L in (tg, torch):
        shape = tuple(CASES[case](L, None).shape)
        out = OUTS[kind](L, shape)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            r = CASES[case](L, out)
        assert r is out
        results.append((out.numpy().copy(), str(out.dtype).split('.')[-1],
                        any('resized' in str(x.message) for x in w)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1:] == results[1][1:]


@pytest.mark.skipif(SANITIZED, reason="PyTorch's errors abort under the sanitizers")
@needs_torch
def test_out_refusals_as_torch():
    for L in (tg, torch):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
            L.add(L.tensor([1.]), L.tensor([2.]), out=L.zeros(1, dtype=L.int64))
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            L.mul(L.tensor([1.], requires_grad=True), 2, out=L.zeros(1))
    assert tg.add(tg.ones(2), 1, out=None).tolist() == [2., 2.]


@needs_torch
def test_nonzero_of_0d():
    for v in (1., 0.):
        for f in (lambda L, t: L.nonzero(t), lambda L, t: t.nonzero(), lambda L, t: L.argwhere(t)):
            assert tuple(f(tg, tg.tensor(v)).shape) == tuple(f(torch, torch.tensor(v)).shape)
        a = tg.nonzero(tg.tensor(v), as_tuple=True)
        b = torch.nonzero(torch.tensor(v), as_tuple=True)
        assert [x.tolist() for x in a] == [x.tolist() for x in b]


def test_cat_writes_out():
    """cat is written in Python around the C op: its out= is written too"""
    y = tg.empty(0)
    assert tg.cat([tg.ones(2), tg.zeros(1)], out=y) is y
    assert y.tolist() == [1.0, 1.0, 0.0]
    z = tg.empty(3, dtype=tg.float64)
    tg.cat([tg.ones(1), tg.ones(2)], 0, out=z)
    assert z.dtype == tg.float64 and z.tolist() == [1.0, 1.0, 1.0]
