"""Elementwise functions against PyTorch at their edges: fmax/fmin's
gradient on ties (to input), bool tensors with int scalars in the bitwise
ops and shifts (int64, not a bool scalar), ldexp's type promotion,
logit's gradient at 0, 1 and outside [0, 1], angle/conj/real of real
tensors, shift counts outside the type's width."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch
from torch_compare import compare_with_torch as _both


@needs_torch
@pytest.mark.parametrize('fn', ['fmax', 'fmin'])
def test_fmax_fmin_ties_and_nans(fn):
    a = np.array([1.0, 2.0, np.nan, 3.0, np.nan, -1.0], np.float32)
    b = np.array([1.0, 0.5, 4.0, np.nan, np.nan, -1.0], np.float32)
    _both(lambda L, x, y: getattr(L, fn)(x, y), a, b, grad=(0, 1))
    _both(lambda L, x, y: getattr(L, fn)(x, y), a, b.astype(np.float64), grad=(0, 1))


@needs_torch
def test_bool_tensor_with_int_scalars():
    b = np.array([True, False, True])
    for name in ('bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_left_shift',
                 'bitwise_right_shift'):
        _both(lambda L, x: getattr(L, name)(x, 2), b)
        _both(lambda L, x: getattr(L, name)(x, True), b) if 'shift' not in name else None


@needs_torch
@pytest.mark.parametrize('dt', ['uint8', 'int32', 'int64'])
def test_shift_counts_outside_the_width(dt):
    """PyTorch 1.13 on x86: the count modulo 32 (uint8, int32) or 64
    (int64), the value shifted at that width, wrapping"""
    vals = [5, 100, 1, 200] if dt == 'uint8' else [5, 100, 1, -3, 2**30 + 7]
    x, t = tg.tensor(vals, dtype=getattr(tg, dt)), torch.tensor(vals, dtype=getattr(torch, dt))
    for k in [-65, -33, -1, 7, 8, 9, 31, 32, 33, 63, 64, 65]:
        if dt == 'uint8' and k < 0:
            continue  # not a uint8 count
        ck = [k, k + 1, k + 2, k + 3, k][:len(vals)]
        for kk, tk in ((k, k), (tg.tensor(ck), torch.tensor(ck))):
            assert (x << kk).tolist() == (t << tk).tolist(), (k, '<<')
            assert (x >> kk).tolist() == (t >> tk).tolist(), (k, '>>')


@needs_torch
def test_ldexp_promotes():
    _both(lambda L, x, e: L.ldexp(x, e), np.array([1.5, -2.0], np.float32),
          np.array([2.0, -1.0], np.float64))
    _both(lambda L, x, e: L.ldexp(x, e), np.array([3, 1]), np.array([2, 1]))


@needs_torch
def test_logit_gradient_edges():
    x = np.array([-0.5, 0.0, 0.3, 1.0, 2.0, np.nan], np.float32)
    _both(lambda L, t: L.logit(t), x, grad=(0,))
    _both(lambda L, t: L.logit(t, eps=0.1), x, grad=(0,))


@needs_torch
def test_real_tensor_complex_helpers():
    x = np.array([-2.5, 0.0, 1.0, np.inf, -np.inf, np.nan], np.float32)
    _both(lambda L, t: L.angle(t), x)
    _both(lambda L, t: L.angle(t), np.array([-3, 0, 2]))
    _both(lambda L, t: L.conj(t) + L.real(t), x)
    assert not tg.is_complex(tg.tensor(x))
    assert tg.tensor(x).real.shape == (6,)


@needs_torch
def test_inplace_takes_a_wider_float_but_not_a_higher_kind():
    def run(L):
        a = L.ones(3)
        b = L.tensor([0.1, 0.2, 0.3], dtype=L.float64, requires_grad=True)
        c = a * 1
        c += b
        c.add_(b, alpha=2)
        c.sub_(b)
        c *= b
        c /= b + 1
        c.sum().backward()
        return c.dtype, c.detach().numpy(), b.grad.numpy()
    (tdt, tv, tgr), (gdt, gv, ggr) = run(torch), run(tg)
    assert str(gdt).split('.')[-1] == str(tdt).split('.')[-1] == 'float32'
    np.testing.assert_allclose(gv, tv, rtol=1e-6)
    np.testing.assert_allclose(ggr, tgr, rtol=1e-6)
    for bad in (lambda: tg.tensor([1, 2]).add_(tg.tensor([1.5, 1.0])),
                lambda: tg.tensor([1, 2]).__iadd__(1.5),
                lambda: tg.tensor([True]).add_(tg.tensor([1]))):
        with pytest.raises(RuntimeError, match="can't be cast"):
            bad()
