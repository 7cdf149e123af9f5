"""Shapes that depend on values inside tg.function: nonzero (and
argwhere, as_tuple), masked_select, x[mask] and x[positions] compile to the
C nonzero op, whose count is an unknown dim until the graph runs. One
compiled function gives each input its own count; values and gradients
equal eager mode's (and PyTorch's where it is installed)."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

FNS = {
    'mask_sum': lambda x: (x[x > 0] ** 2).sum(),
    'mask_rows': lambda x: x.reshape(4, 3)[x.reshape(4, 3)[:, 0] > 0] * 2,
    'nonzero': lambda x: tg.nonzero(x.reshape(4, 3) > 0),
    'argwhere': lambda x: tg.argwhere(x.reshape(2, 6) < 0),
    'as_tuple': lambda x: tg.nonzero(x.reshape(4, 3) > 0, as_tuple=True)[1],
    'masked_select': lambda x: x.masked_select(x.abs() > 0.5).sum(),
    'positions': lambda x: x.reshape(4, 3)[(x.reshape(4, 3)[:, 1] > 0).nonzero()[:, 0]],
}


def _inputs():
    rs = np.random.RandomState(3)
    yield rs.randn(12)
    yield -np.abs(rs.randn(12))   # nothing positive: empty selections
    yield np.abs(rs.randn(12))    # everything


@pytest.mark.parametrize('name', sorted(FNS))
def test_same_as_eager_for_every_count(name):
    f = FNS[name]
    fn = tg.function(f)
    for v in _inputs():
        want = f(tg.tensor(v)).numpy()
        got = fn(tg.tensor(v)).numpy()
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert fn.trace_count == 1  # one graph for every count


@pytest.mark.parametrize('name', ['mask_sum', 'mask_rows', 'masked_select', 'positions'])
def test_gradients_same_as_eager(name):
    f = FNS[name]
    fn = tg.function(f)
    for v in _inputs():
        xa, xb = tg.tensor(v, requires_grad=True), tg.tensor(v, requires_grad=True)
        f(xa).sum().backward()
        fn(xb).sum().backward()
        np.testing.assert_array_equal(xb.grad.numpy(), xa.grad.numpy())


@needs_torch
def test_like_torch():
    v = np.random.RandomState(5).randn(12)
    for name in ('mask_sum', 'nonzero', 'argwhere', 'masked_select'):
        ft = {'mask_sum': lambda x: (x[x > 0] ** 2).sum(),
              'nonzero': lambda x: torch.nonzero(x.reshape(4, 3) > 0),
              'argwhere': lambda x: torch.argwhere(x.reshape(2, 6) < 0),
              'masked_select': lambda x: x.masked_select(x.abs() > 0.5).sum()}[name]
        np.testing.assert_allclose(tg.function(FNS[name])(tg.tensor(v)).numpy(),
                                   ft(torch.tensor(v)).numpy(), rtol=1e-12)


def test_other_tensor_indices_refused_with_a_reason():
    fn = tg.function(lambda x: x.reshape(3, 4)[x.reshape(3, 4) > 0, 0])
    with pytest.raises(RuntimeError, match="eagerly only"):
        fn(tg.randn(12))


def test_mask_shape_checked():
    fn = tg.function(lambda x: x[tg.ones(5, dtype=tg.bool) > 0])
    with pytest.raises(IndexError, match="shape of the mask"):
        fn(tg.randn(4))


def test_arange_over_traced_values():
    """arange whose bounds are values of the trace: the range_by op, its
    length known when the graph runs; one trace for every length"""
    count = tg.function(lambda m: tg.arange(m.sum()))
    scaled = tg.function(lambda x: tg.arange(0.5, x.max(), 0.5) * 2)
    for m in ([1, 0, 1], [1, 1, 1], [0, 0, 0]):
        got = count(tg.tensor(m))
        assert got.dtype == tg.int64
        np.testing.assert_array_equal(got.numpy(), np.arange(sum(m)))
    for x in ([1.0, 2.5], [3.0, 0.0]):
        want = np.arange(0.5, max(x), 0.5, dtype=np.float32) * 2
        np.testing.assert_allclose(scaled(tg.tensor(x)).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(tg.arange(0.5, tg.tensor(x).max(), 0.5).numpy() * 2, want,
                                   rtol=1e-6)  # eager
    assert count.trace_count == 1 and scaled.trace_count == 1
    with pytest.raises(RuntimeError, match="one-element"):
        tg.function(lambda x: tg.arange(x))(tg.ones(2))
