"""Index dtypes as PyTorch 1.13 takes them (int64 everywhere; int32 only
for index_select, index_add and embedding; uint8 in a subscript is a
mask) with its exception types, and uint8 arithmetic wrapping modulo 256
(negation included)."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, needs_torch, torch

CASES = {
    'getitem': lambda L, x, i: x[i],
    'setitem': lambda L, x, i: x.clone().__setitem__(i, 1.0),
    'index_put': lambda L, x, i: x.clone().index_put_((i,), L.tensor(1.)),
    'index_put_acc': lambda L, x, i: x.clone().index_put_((i,), L.tensor(1.), accumulate=True),
    'index_select': lambda L, x, i: L.index_select(x, 0, i),
    'gather': lambda L, x, i: L.gather(x, 0, i.reshape(1, 2)),
    'gather_method': lambda L, x, i: x.gather(0, i.reshape(1, 2)),
    'scatter': lambda L, x, i: L.zeros(2, 3).scatter(0, i.reshape(1, 2), L.ones(1, 2)),
    'scatter_add': lambda L, x, i: L.zeros(2, 3).scatter_add(0, i.reshape(1, 2), L.ones(1, 2)),
    'take': lambda L, x, i: L.take(x, i),
    'put': lambda L, x, i: x.put(i, L.ones(2)),
    'index_add': lambda L, x, i: x.clone().index_add_(0, i, L.ones(2, 3)),
    'index_fill': lambda L, x, i: x.clone().index_fill_(0, i, 1.),
    'index_copy': lambda L, x, i: x.clone().index_copy_(0, i, L.ones(2, 3)),
    'take_along_dim': lambda L, x, i: L.take_along_dim(x, i.reshape(1, 2), 1),
    'embedding': lambda L, x, i: L.nn.functional.embedding(i, x),
}


def _outcome(L, case, dtype):
    x = L.arange(6.).reshape(2, 3)
    i = L.tensor([1, 0]).to(getattr(L, dtype))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            r = CASES[case](L, x, i)
    except (IndexError, RuntimeError) as e:
        return type(e).__name__, str(e).split('\n')[0] if 'Expected tensor for argument' \
            not in str(e) else 'embedding dtype'
    return 'ok', None if r is None else (tuple(r.shape), r.tolist())


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="drives PyTorch into its C++ error paths")
@pytest.mark.parametrize('dtype', ['int32', 'int64', 'uint8', 'bool'])
@pytest.mark.parametrize('case', sorted(CASES))
def test_index_dtype_accepted_or_refused_as_torch(case, dtype):
    got, want = _outcome(tg, case, dtype), _outcome(torch, case, dtype)
    assert got[0] == want[0], (got, want)
    if want[0] == 'ok':
        assert got == want
    elif case not in ('index_select', 'embedding'):  # same exception, own words there
        assert got[1] == want[1]


def test_int32_subscript_refused_but_0d_and_numpy_int32_accepted():
    x = tg.arange(6.).reshape(2, 3)
    with pytest.raises(IndexError, match="must be long, byte or bool"):
        x[tg.tensor([0, 1], dtype=tg.int32)]
    with pytest.raises(IndexError, match="must be long, byte or bool"):
        x[0, tg.tensor([0, 1], dtype=tg.int32)] = 2.
    assert x[tg.tensor(1, dtype=tg.int32)].tolist() == [3., 4., 5.]
    assert x[np.array([1, 0], dtype=np.int32)].tolist() == [[3., 4., 5.], [0., 1., 2.]]


def test_uint8_subscript_is_a_mask_with_warning():
    x = tg.arange(6.).reshape(2, 3)
    with pytest.warns(UserWarning, match="uint8 is now deprecated"):
        r = x[:, tg.tensor([1, 0, 1], dtype=tg.uint8)]
    assert r.tolist() == [[0., 2.], [3., 5.]]
    with pytest.warns(UserWarning):
        x[tg.tensor([0, 1], dtype=tg.uint8)] = -1.
    assert x.tolist() == [[0., 1., 2.], [-1., -1., -1.]]


U8 = [0, 1, 127, 128, 200, 255]
U8_OPS = {
    'neg': lambda L, u: -u, 'neg_fn': lambda L, u: L.neg(u), 'neg_': lambda L, u: u.clone().neg_(),
    'add': lambda L, u: u + u, 'sub': lambda L, u: u - u.flip(0), 'mul': lambda L, u: u * u,
    'mul_scalar': lambda L, u: u * 3, 'add_scalar': lambda L, u: u + 100,
    'sub_scalar': lambda L, u: u - 300, 'rsub': lambda L, u: 1 - u,
    'pow': lambda L, u: u ** 2, 'sub_alpha': lambda L, u: L.sub(u, u.flip(0), alpha=2),
}


@needs_torch
@pytest.mark.parametrize('op', sorted(U8_OPS))
def test_uint8_arithmetic_wraps_as_torch(op):
    a = U8_OPS[op](tg, tg.tensor(U8, dtype=tg.uint8))
    b = U8_OPS[op](torch, torch.tensor(U8, dtype=torch.uint8))
    assert str(a.dtype).split('.')[-1] == str(b.dtype).split('.')[-1]
    assert a.tolist() == b.tolist()
