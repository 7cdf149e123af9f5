"""as_strided against PyTorch: values, strides and storage offsets of the
view (from a contiguous tensor, a slice and a transposed one), writes
through it, gradients (overlapping windows, an expanded input, double
backward), the in-place and copy forms, its errors, and its refusal in
tg.function."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, needs_torch, torch


def _both(fn):
    return fn(torch), fn(tg)


def _same(a, b):
    np.testing.assert_allclose(np.array(b.tolist()), np.array(a.tolist()), rtol=1e-12, atol=1e-12)


CASES = [
    # (make input, size, stride, storage_offset)
    (lambda m: m.arange(12., dtype=m.float64), (4, 3), (2, 1), None),
    (lambda m: m.arange(12., dtype=m.float64), (3, 2), (0, 5), 1),
    (lambda m: m.arange(12., dtype=m.float64)[3:], (2, 2), (4, 1), 4),
    (lambda m: m.arange(12., dtype=m.float64).reshape(3, 4).t(), (2, 3), (1, 4), 0),
    (lambda m: m.arange(12., dtype=m.float64).reshape(3, 4)[:, 1:], (2, 2), (4, 1), 2),
    (lambda m: m.arange(6, dtype=m.int64), (2, 2), (1, 1), 0),
    (lambda m: m.arange(4., dtype=m.float64), (), (), 3),
    (lambda m: m.arange(4., dtype=m.float64), (0, 5), (1, 1), 2),
]


@needs_torch
@pytest.mark.parametrize('case', range(len(CASES)))
def test_values_like_torch(case):
    make, size, stride, off = CASES[case]
    a, b = _both(lambda m: make(m).as_strided(size, stride, off))
    assert tuple(b.shape) == tuple(a.shape) and b.stride() == a.stride()
    assert b.storage_offset() == a.storage_offset()
    _same(a, b)
    a, b = _both(lambda m: m.as_strided(make(m), size, stride, off))
    _same(a, b)


@needs_torch
def test_writes_reach_the_input():
    def run(m):
        x = m.zeros(9, dtype=m.float64)
        x.as_strided((3,), (4,), 0).fill_(1.0)
        x.as_strided((2, 2), (1, 1), 5).add_(2.0)  # overlapping: 6 gets both adds
        return x
    a, b = _both(run)
    _same(a, b)


@needs_torch
@pytest.mark.parametrize('size,stride,off', [((3, 2), (1, 1), 0), ((2, 3), (2, 1), 1),
                                             ((2, 2, 2), (2, 0, 1), 0)])
def test_gradients_like_torch(size, stride, off):
    w = np.random.RandomState(0).uniform(-1, 1, size)

    def run(m):
        x = m.tensor(np.linspace(-1, 1, 7), dtype=m.float64, requires_grad=True)
        y = x.as_strided(size, stride, off)
        (y * y * m.tensor(w)).sum().backward()
        return x.grad
    a, b = _both(run)
    _same(a, b)


@needs_torch
def test_expanded_input_divides_by_its_overlap():
    def run(m):
        r = m.tensor([[1.0, 2.0, 3.0]], dtype=m.float64, requires_grad=True)
        e = r.expand(4, 3)
        (e.as_strided((3,), (1,), 0) * m.tensor([5.0, 7.0, 11.0], dtype=m.float64)).sum().backward()
        return r.grad
    a, b = _both(run)
    _same(a, b)


@needs_torch
def test_double_backward_like_torch():
    def run(m):
        x = m.tensor(np.linspace(0.1, 1, 6), dtype=m.float64, requires_grad=True)
        y = x.as_strided((2, 3), (2, 1), 0)
        g, = m.autograd.grad((y ** 3).sum(), x, create_graph=True)
        g2, = m.autograd.grad((g * g).sum(), x)
        return g2
    a, b = _both(run)
    _same(a, b)


@needs_torch
def test_inplace_and_copy_forms():
    def run(m):
        t = m.arange(6., dtype=m.float64).reshape(2, 3)
        t.as_strided_((3,), (2,))
        c = m.as_strided_copy(m.arange(5., dtype=m.float64), (2, 2), (1, 2))
        return t, c, c.is_contiguous()
    (ta, ca, ka), (tb, cb, kb) = _both(run)
    _same(ta, tb)
    _same(ca, cb)
    assert ka == kb


@needs_torch
@pytest.mark.parametrize('args', [((2,), (1, 1)), ((2,), (-1,), 3), ((-1,), (1,))])
def test_errors_like_torch(args):
    # torch's C++ errors abort a process run under the sanitizers
    for m in (tg,) if SANITIZED else (torch, tg):
        with pytest.raises(RuntimeError):
            m.arange(6.).as_strided(*args)


def test_out_of_bounds_is_refused():
    x = tg.arange(6.)
    with pytest.raises(RuntimeError, match="outside the input's memory"):
        x.as_strided((4,), (2,))
    with pytest.raises(RuntimeError, match="outside the input's memory"):
        x[2:].as_strided((2,), (1,), 0)  # before the slice: PyTorch allows, refused here


def test_refused_in_function():
    """a graph's values have no layout, so the positions would not be
    eager mode's: refused there, not read another way"""
    fn = tg.function(lambda x: x.as_strided((3, 4), (2, 1), 1).sum())
    with pytest.raises(NotImplementedError, match="eager mode only"):
        fn(tg.arange(12.))
