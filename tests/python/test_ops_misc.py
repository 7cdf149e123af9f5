"""_ops_misc: ldexp, rsub, vander, cumulative_trapezoid, mvlgamma,
chain_matmul, gcd/lcm, scalar_tensor, result_type, can_cast, is_signed,
is_same_size, against PyTorch."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, needs_torch, torch


@needs_torch
def test_ldexp_rsub_vander_against_torch():
    x, e = np.array([1.5, -2.0, 0.25]), np.array([3, -1, 0])
    close(tg.ldexp(tg.tensor(x), tg.tensor(e)), torch.ldexp(torch.tensor(x),
                                                             torch.tensor(e)).numpy())
    assert tg.ldexp(tg.tensor([1]), tg.tensor([3])).tolist() == [8.0]
    a = tg.tensor(x, requires_grad=True)
    tg.ldexp(a, tg.tensor(e)).sum().backward()
    close(a.grad, 2.0 ** e)
    close(tg.rsub(tg.tensor(x), 3, alpha=2), torch.rsub(torch.tensor(x), 3, alpha=2).numpy())
    for args, kw in (((), {}), ((), {'N': 5}), ((), {'increasing': True}), ((), {'N': 0})):
        for v in (np.array([1, 2, 3]), np.array([0.5, -1.0, 2.0, 3.0])):
            got = tg.vander(tg.tensor(v), *args, **kw)
            want = torch.vander(torch.tensor(v), *args, **kw)
            assert got.shape == tuple(want.shape)
            close(got, want.numpy())
            assert (got.dtype == tg.int64) == (want.dtype == torch.int64)


@needs_torch
def test_cumulative_trapezoid_mvlgamma_chain_matmul():
    y = np.random.RandomState(0).normal(size=(3, 6))
    close(tg.cumulative_trapezoid(tg.tensor(y)), torch.cumulative_trapezoid(
        torch.tensor(y)).numpy())
    close(tg.cumulative_trapezoid(tg.tensor(y), dx=0.5, dim=0),
          torch.cumulative_trapezoid(torch.tensor(y), dx=0.5, dim=0).numpy())
    xs = np.cumsum(np.random.RandomState(1).uniform(size=6))
    close(tg.cumulative_trapezoid(tg.tensor(y), tg.tensor(xs)),
          torch.cumulative_trapezoid(torch.tensor(y), torch.tensor(xs)).numpy())
    v = np.array([2.5, 3.0, 7.25])
    for p in (1, 2, 4):
        close(tg.mvlgamma(tg.tensor(v, dtype=tg.float64), p),
              torch.mvlgamma(torch.tensor(v), p).numpy(), 1e-12)
    # below (p - 1) / 2 PyTorch 1.13 computes too (no domain check)
    close(tg.mvlgamma(tg.tensor([1.0, -0.3], dtype=tg.float64), 3),
          torch.mvlgamma(torch.tensor([1.0, -0.3], dtype=torch.float64), 3).numpy(), 1e-12)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        tg.mvlgamma(tg.tensor([1.0]), 0)
    ms = [np.random.RandomState(i).normal(size=s) for i, s in enumerate([(2, 3), (3, 4), (4, 2)])]
    close(tg.chain_matmul(*[tg.tensor(m) for m in ms]),
          torch.chain_matmul(*[torch.tensor(m) for m in ms]).numpy(), 1e-10)


@needs_torch
def test_gcd_lcm_and_dtype_queries():
    a, b = np.array([12, -18, 0, 7, 0]), np.array([8, 12, 0, -21, 5])
    for name in ('gcd', 'lcm'):
        got = getattr(tg, name)(tg.tensor(a), tg.tensor(b))
        assert got.tolist() == getattr(torch, name)(torch.tensor(a), torch.tensor(b)).tolist()
        with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
            getattr(tg, name)(tg.tensor([1.0]), tg.tensor([2.0]))
        with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
            getattr(tg, name)(tg.tensor([True]), tg.tensor([False]))
        # a bool operand beside an integer one takes the integer type, as in PyTorch
        for dt in ('int32', 'int64', 'uint8'):
            x = tg.tensor([4, 0, 6], dtype=getattr(tg, dt))
            t = torch.tensor([4, 0, 6], dtype=getattr(torch, dt))
            for g, w in ((getattr(tg, name)(x, tg.tensor([True, False, True])),
                          getattr(torch, name)(t, torch.tensor([True, False, True]))),
                         (getattr(tg, name)(tg.tensor(True), x),
                          getattr(torch, name)(torch.tensor(True), t))):
                assert g.tolist() == w.tolist() and g.dtype == getattr(tg, dt)
    assert tg.tensor([4]).gcd(tg.tensor([6])).tolist() == [2]
    assert tg.scalar_tensor(3).dtype == tg.float32 and tg.scalar_tensor(3).shape == ()
    pairs = [(tg.tensor([1]), 1.0, torch.tensor([1]), 1.0),
             (tg.tensor([1], dtype=tg.int32), tg.tensor([1]), torch.tensor([1], dtype=torch.int32),
              torch.tensor([1])),
             (tg.tensor([1.0]), tg.tensor(1.0, dtype=tg.float64), torch.tensor([1.0]),
              torch.tensor(1.0, dtype=torch.float64)),
             (tg.tensor([True]), tg.tensor([False]), torch.tensor([True]), torch.tensor([False])),
             (2, tg.tensor([1], dtype=tg.uint8), 2, torch.tensor([1], dtype=torch.uint8))]
    for a1, a2, t1, t2 in pairs:
        assert str(tg.result_type(a1, a2)).split('.')[-1] == \
            str(torch.result_type(t1, t2)).split('.')[-1]
    dts = ['bool', 'uint8', 'int32', 'int64', 'float32', 'float64']
    for f in dts:
        for t in dts:
            assert tg.can_cast(getattr(tg, f), getattr(tg, t)) == \
                torch.can_cast(getattr(torch, f), getattr(torch, t)), (f, t)
    assert tg.is_signed(tg.tensor([1])) and not tg.is_signed(tg.tensor([1], dtype=tg.uint8))
    assert tg.is_same_size(tg.zeros(2, 3), tg.ones(2, 3))
    assert not tg.zeros(2, 3).is_same_size(tg.ones(3, 2))
