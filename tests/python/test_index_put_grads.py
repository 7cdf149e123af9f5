"""Gradients of x[idx] = v and index_put(_) with repeated positions, as
PyTorch's index_put: the last write wins in the forward; x's gradient is
zero at every written position; each element of v takes the gradient of
the position it was written to, overwritten or not (PyTorch's rule for
values is grad[indices]), summed over broadcasting; with accumulate=True
every element of v adds to its position and takes its gradient. Values,
first and second derivatives are compared with PyTorch (and written out
for the first case, so the rule is checked without it too)."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def _weights(m, shape):
    return (m.arange(1.0, float(np.prod(shape)) + 1, dtype=m.float64) ** 1.5).reshape(shape)


def _run(m, xshape, idx, vshape, how, create_graph=False):
    x = m.arange(float(np.prod(xshape)), dtype=m.float64).reshape(xshape).requires_grad_()
    v = (m.arange(float(np.prod(vshape)), dtype=m.float64) + 10).reshape(vshape)
    v.requires_grad_()
    y = x * 1
    index = idx(m)
    if how == 'setitem':
        y[index] = v * v if create_graph else v
    elif how == 'setitem_add':
        y[index] += v
    elif how.startswith('index_put'):
        y.index_put_(index if isinstance(index, tuple) else (index,),
                     v * v if create_graph else v, accumulate=how.endswith('acc'))
    else:
        y = m.index_put(y, index if isinstance(index, tuple) else (index,),
                        v * v if create_graph else v, accumulate=how.endswith('acc'))
    loss = (y * _weights(m, y.shape)).sum()
    if not create_graph:
        loss.backward()
        return [y.detach().numpy().copy(), x.grad.numpy().copy(), v.grad.numpy().copy()]
    gx, gv = m.autograd.grad(loss, (x, v), create_graph=True)
    (gv * gv).sum().backward()
    return [y.detach().numpy().copy(), gx.detach().numpy().copy(), gv.detach().numpy().copy(),
            v.grad.numpy().copy()]


def _t(*a):
    return lambda m: m.tensor(list(a))


CASES = {
    'repeated 1-d': ((5,), _t(0, 2, 0, 0), (4,)),
    'repeated rows': ((3, 3), _t(1, 1), (2, 3)),
    'repeated, value broadcast': ((5,), _t(1, 1, 2), (1,)),
    'repeated, row broadcast': ((4, 3), _t(3, 0, 3), (3,)),
    'two index tensors': ((3, 4), lambda m: (m.tensor([0, 2, 0]), m.tensor([1, 3, 1])), (3,)),
    'index with a slice': ((3, 4), lambda m: (slice(None), m.tensor([2, 2, 0])), (3, 3)),
    'bool mask': ((5,), lambda m: m.tensor([True, False, True, False, True]), (3,)),
    'no repeats': ((5,), _t(4, 1), (2,)),
    'negative repeats': ((5,), _t(-1, 4, -1), (3,)),
}
HOWS = ['setitem', 'setitem_add', 'index_put_', 'index_put_acc', 'fn_index_put', 'fn_index_put_acc']


def _applicable(case, how):
    idx = CASES[case][1]
    if 'index_put' in how and case == 'index with a slice':
        return False  # index_put takes index tensors only
    return True


PARAMS = [(c, h) for c in CASES for h in HOWS if _applicable(c, h)]


@needs_torch
@pytest.mark.parametrize('case,how', PARAMS, ids=[f'{c}-{h}' for c, h in PARAMS])
def test_index_put_grads_as_torch(case, how):
    xshape, idx, vshape = CASES[case]
    got = _run(tg, xshape, idx, vshape, how)
    want = _run(torch, xshape, idx, vshape, how)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)


@needs_torch
@pytest.mark.parametrize('case', ['repeated 1-d', 'repeated rows', 'repeated, value broadcast'])
@pytest.mark.parametrize('how', ['setitem', 'index_put_acc'])
def test_second_derivatives_as_torch(case, how):
    xshape, idx, vshape = CASES[case]
    got = _run(tg, xshape, idx, vshape, how, create_graph=True)
    want = _run(torch, xshape, idx, vshape, how, create_graph=True)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)


def test_repeated_setitem_rule_written_out():
    """PyTorch 1.13's numbers: every repeated write of v takes its
    position's gradient, x none there"""
    y, gx, gv = _run(tg, (5,), _t(0, 2, 0, 0), (4,), 'setitem')
    w = _weights(tg, (5,)).numpy()
    assert y.tolist() == [13.0, 1.0, 11.0, 3.0, 4.0]  # the last write wins
    np.testing.assert_array_equal(gx, [0.0, w[1], 0.0, w[3], w[4]])
    np.testing.assert_array_equal(gv, [w[0], w[2], w[0], w[0]])
    y, gx, gv = _run(tg, (5,), _t(0, 2, 0, 0), (4,), 'index_put_acc')
    assert y.tolist() == [0.0 + 10 + 12 + 13, 1.0, 2.0 + 11, 3.0, 4.0]
    np.testing.assert_array_equal(gx, w)
    np.testing.assert_array_equal(gv, [w[0], w[2], w[0], w[0]])


def test_setitem_other_dtypes_and_untracked():
    x = tg.zeros(4, dtype=tg.int64)
    x[tg.tensor([1, 1, 3])] = tg.tensor([5, 6, 7])
    assert x.tolist() == [0, 6, 0, 7]
    b = tg.zeros(3, dtype=tg.bool)
    b[tg.tensor([2, 2])] = True
    assert b.tolist() == [False, False, True]
    t = tg.zeros(3, 2).t()  # not contiguous: written through
    t[tg.tensor([1, 1])] = tg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.tolist() == [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0]]


def test_setitem_errors_unchanged():
    x = tg.zeros(4)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[2\] cannot "
                                           r"be broadcast to indexing result of shape \[3\]"):
        x[tg.tensor([0, 1, 1])] = tg.ones(2)
    with pytest.raises(IndexError):
        x[tg.tensor([0, 4])] = 1.0
    leaf = tg.zeros(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf[tg.tensor([0, 0])] = 1.0
