"""The functions of _ops_cover (aliases, erfc/exp2/xlogy/sinc, fmax/fmin,
copysign, heaviside, cummax/cummin, logcumsumexp, splits, trapezoid,
logspace, normal, bitwise ops of integers): values and gradients against
PyTorch (skipped without it), and the errors PyTorch raises."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, grads_match, needs_torch, pair, torch

NAN, INF = float('nan'), float('inf')


def test_aliases_are_the_ops():
    a, b = tg.tensor([1., 2., 3.]), tg.tensor([2., 2., 2.])
    for name, op in (('not_equal', '__ne__'), ('greater', '__gt__'), ('greater_equal', '__ge__'),
                     ('less', '__lt__'), ('less_equal', '__le__')):
        assert getattr(tg, name)(a, b).tolist() == getattr(a, op)(b).tolist()
        assert getattr(a, name)(b).tolist() == getattr(a, op)(b).tolist()
    x = tg.arange(6).reshape(2, 3)
    assert tg.ravel(x.t()).tolist() == [0, 3, 1, 4, 2, 5]
    assert x.t().ravel().tolist() == [0, 3, 1, 4, 2, 5]
    assert tg.swapdims(x, 0, 1).shape == (3, 2) and x.swapdims(1, 0).shape == (3, 2)
    assert tg.concatenate([x, x], 1).shape == (2, 6)
    m = tg.tensor([True, False, True]).reshape(3, 1)
    assert tg.masked_fill(tg.zeros(3, 2), m, 5.).tolist() == [[5, 5], [0, 0], [5, 5]]


# ---- elementwise math ---------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_erfc_against_torch_far_into_the_tail(dtype):
    x = np.array([-30, -3, -1, -0.5, 0, 1e-3, 0.5, 0.99, 1, 1.01, 2, 3.5, 5, 9, 12, 26, INF,
                  -INF, NAN])
    a, ta = pair(x, dtype, requires_grad=False)
    got, want = tg.erfc(a), torch.erfc(ta)
    assert got.dtype == a.dtype
    rtol = 1e-13 if dtype == 'float64' else 2e-6
    close(got, want.numpy(), rtol, 0 if dtype == 'float64' else 1e-37)
    close(a.erfc(), want.numpy(), rtol, 1e-37)


@needs_torch
def test_erfc_gradient_and_empty():
    a, ta = pair(np.linspace(-4, 6, 21).reshape(3, 7))
    grads_match(tg.erfc(a), torch.erfc(ta), [a], [ta])
    assert tg.erfc(tg.zeros(0, 3)).shape == (0, 3)
    assert tg.erfc(tg.tensor([0, 1])).dtype == tg.float32  # integers: the default float


@needs_torch
def test_exp2_sinc_values_and_gradients():
    x = np.array([[-3.0, -0.5, 0.0], [0.25, 1.0, 7.5]])
    a, ta = pair(x)
    grads_match(tg.exp2(a), torch.exp2(ta), [a], [ta])
    a, ta = pair(x)
    grads_match(tg.sinc(a), torch.sinc(ta), [a], [ta])
    assert tg.exp2(tg.tensor([3])).tolist() == [8.0]
    assert tg.sinc(tg.tensor([NAN])).isnan().all()
    close(tg.tensor([1.0, 2.0]).exp2(), [2.0, 4.0])


@needs_torch
def test_xlogy_zeros_nans_broadcast_and_gradients():
    x = np.array([[0.0, 0.0, 1.0, 2.5], [0.0, 3.0, -1.0, 0.5]])
    y = np.array([0.0, NAN, 2.0, 0.5])
    a, ta = pair(x, requires_grad=False)
    b, tb = pair(y, requires_grad=False)
    close(tg.xlogy(a, b), torch.xlogy(ta, tb).numpy(), 1e-12, 0)
    x = np.array([[0.0, 1.5, 2.0, 0.0], [0.5, 0.0, 4.0, 3.0]])
    y = np.array([0.0, 0.7, 0.25, -1.0])  # (0, 0): NaN for y, as PyTorch
    a, ta = pair(x)
    b, tb = pair(y)
    grads_match(tg.xlogy(a, b), torch.xlogy(ta, tb), [a, b], [ta, tb])
    close(tg.xlogy(2, tg.tensor([3])), torch.xlogy(2, torch.tensor([3])).numpy())
    close(tg.tensor([2.0]).xlogy(3.0), [2 * np.log(3.0)])


@needs_torch
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_ignore_nan(name):
    x = np.array([[1.0, NAN, NAN, -2.0], [INF, 0.5, 3.0, -INF]])
    y = np.array([2.0, 1.0, NAN, -3.0])
    a, ta = pair(x, requires_grad=False)
    b, tb = pair(y, requires_grad=False)
    close(getattr(tg, name)(a, b), getattr(torch, name)(ta, tb).numpy())
    a, ta = pair(np.array([[1.0, 4.0], [-1.0, 5.0]]))
    b, tb = pair(np.array([2.0, 3.0]))
    grads_match(getattr(tg, name)(a, b), getattr(torch, name)(ta, tb), [a, b], [ta, tb])
    i, j = tg.tensor([1, 5]), tg.tensor([3, 2])
    assert getattr(i, name)(j).tolist() == getattr(torch, name)(
        torch.tensor([1, 5]), torch.tensor([3, 2])).tolist()


@needs_torch
def test_copysign_and_heaviside():
    x = np.array([[1.0, -2.0, 0.0], [3.0, -0.5, 4.0]])
    y = np.array([-1.0, -0.0, 0.0])
    a, ta = pair(x)
    b, tb = pair(y, requires_grad=False)
    grads_match(tg.copysign(a, b), torch.copysign(ta, tb), [a], [ta])
    got = tg.copysign(tg.tensor([1.0, 1.0]), tg.tensor([-0.0, 0.0]))
    assert np.signbit(got.numpy()).tolist() == [True, False]
    assert tg.copysign(tg.tensor([1, -2]), -1).tolist() == [-1.0, -2.0]
    v = np.array([-1.0, 0.0, 2.0, NAN, 0.0])
    close(tg.heaviside(tg.tensor(v, dtype=tg.float32), tg.tensor(0.5)),
          torch.heaviside(torch.tensor(v, dtype=torch.float32), torch.tensor(0.5)).numpy())
    assert tg.tensor([0, 3]).heaviside(tg.tensor([7, 7])).tolist() == [7, 1]
    with pytest.raises(RuntimeError, match="different dtypes"):
        tg.heaviside(tg.tensor([1.0]), tg.tensor([1]))


# ---- scans --------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_values_indices_nan_and_ties(name):
    rows = [[1.0, NAN, 3.0, 3.0, NAN, 5.0], [3.0, 1.0, 1.0, 2.0, 1.0, 0.0],
            [2.0, 2.0, 2.0, -INF, INF, 2.0]]
    for r in rows:
        got = getattr(tg, name)(tg.tensor(r), 0)
        want = getattr(torch, name)(torch.tensor(r), 0)
        close(got.values, want.values.numpy())
        assert got.indices.tolist() == want.indices.tolist(), r
    x = np.random.RandomState(2).randint(0, 4, (3, 5, 4))
    for dim in (0, 1, -1):
        got = getattr(tg.tensor(x), name)(dim)
        want = getattr(torch, name)(torch.tensor(x), dim)
        assert got.values.tolist() == want.values.tolist()
        assert got.indices.tolist() == want.indices.tolist()
    # the gradient goes to the index chosen, as PyTorch's
    a, ta = pair(np.array([[1.0, 3.0, 3.0, 2.0, 5.0], [0.0, -1.0, 4.0, 4.0, 1.0]]))
    grads_match(getattr(tg, name)(a, 1).values, getattr(torch, name)(ta, 1).values, [a], [ta])
    e = getattr(tg, name)(tg.zeros(0, 3), 0)
    assert e.values.shape == (0, 3) and e.indices.dtype == tg.int64
    z = getattr(tg, name)(tg.tensor(2.5), 0)
    assert z.values.item() == 2.5 and z.indices.item() == 0


@needs_torch
def test_logcumsumexp_no_underflow_and_gradient():
    x = np.array([[-1000.0, 0.0, 1000.0, -INF, 2.0], [-INF, -INF, 1.0, 1.0, NAN]])
    a, ta = pair(x, requires_grad=False)
    close(tg.logcumsumexp(a, 1), torch.logcumsumexp(ta, 1).numpy(), 1e-12, 0)
    a, ta = pair(np.random.RandomState(3).normal(0, 3, (4, 6)))
    grads_match(tg.logcumsumexp(a, 0), torch.logcumsumexp(ta, 0), [a], [ta])
    a, ta = pair(np.random.RandomState(4).normal(0, 3, (2, 9)))
    grads_match(a.logcumsumexp(-1), torch.logcumsumexp(ta, -1), [a], [ta])
    assert tg.logcumsumexp(tg.zeros(2, 0), 1).shape == (2, 0)
    with pytest.raises(RuntimeError, match="not implemented for"):
        tg.logcumsumexp(tg.tensor([1, 2]), 0)


@needs_torch
def test_msort_diagflat():
    x = np.random.RandomState(5).normal(size=(4, 3))
    close(tg.msort(tg.tensor(x)), torch.msort(torch.tensor(x)).numpy())
    close(tg.tensor(x).msort(), torch.msort(torch.tensor(x)).numpy())
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    for off in (0, 1, -2):
        close(tg.diagflat(tg.tensor(m), off), torch.diagflat(torch.tensor(m), off).numpy())
    a, ta = pair(m)
    grads_match(a.diagflat(1), ta.diagflat(1), [a], [ta])


# ---- splits, trapezoid, creation ----------------------------------------------------
@needs_torch
@pytest.mark.parametrize("name,shape", [("hsplit", (4, 6, 2)), ("hsplit", (6,)),
                                        ("vsplit", (6, 4)), ("dsplit", (2, 3, 6))])
def test_hsplit_vsplit_dsplit(name, shape):
    x = np.arange(np.prod(shape)).reshape(shape)
    for arg in (3, [1, 4], [2, 100]):
        got = getattr(tg, name)(tg.tensor(x), arg)
        want = getattr(torch, name)(torch.tensor(x), arg)
        assert [g.tolist() for g in got] == [w.tolist() for w in want]
    with pytest.raises(RuntimeError, match="not divisible"):
        getattr(tg.tensor(x), name)(4)


def test_split_dimension_errors():
    with pytest.raises(RuntimeError, match="at least 2"):
        tg.vsplit(tg.zeros(4), 2)
    with pytest.raises(RuntimeError, match="at least 3"):
        tg.dsplit(tg.zeros(4, 4), 2)
    with pytest.raises(RuntimeError, match="at least 1"):
        tg.hsplit(tg.tensor(1.0), 1)


@needs_torch
def test_trapezoid_against_torch():
    y = np.random.RandomState(6).normal(size=(3, 5))
    a, ta = pair(y)
    grads_match(tg.trapezoid(a), torch.trapezoid(ta), [a], [ta])
    close(tg.trapezoid(tg.tensor(y), dx=0.5, dim=0), torch.trapezoid(torch.tensor(y), dx=0.5,
                                                                       dim=0).numpy())
    xs = np.array([0.0, 0.5, 2.0, 2.5, 4.0])
    a, ta = pair(y)
    b, tb = pair(xs)
    grads_match(tg.trapezoid(a, b), torch.trapezoid(ta, tb), [a, b], [ta, tb])
    x2 = np.cumsum(np.random.RandomState(7).uniform(size=(3, 5)), 1)
    close(tg.trapz(tg.tensor(y), tg.tensor(x2)), torch.trapz(torch.tensor(y),
                                                               torch.tensor(x2)).numpy())
    close(tg.trapezoid(tg.zeros(3, 0)), np.zeros(3))
    with pytest.raises(RuntimeError, match="one `x` value"):
        tg.trapezoid(tg.tensor(y), tg.tensor([1.0, 2.0]))


@needs_torch
def test_logspace_randint_like_is_nonzero():
    for args, kw in (((0, 2, 3), {}), ((-1, 1, 5), {'base': 2}), ((1, 0, 4), {}),
                     ((0, 3, 1), {}), ((0, 3, 0), {})):
        close(tg.logspace(*args, **kw), torch.logspace(*args, **kw).numpy())
    assert tg.logspace(0, 1, 2, dtype=tg.float64).dtype == tg.float64
    with pytest.raises(RuntimeError, match="non-negative"):
        tg.logspace(0, 1, -1)
    r = tg.randint_like(tg.zeros(200, dtype=tg.int32), 3, 6)
    assert r.dtype == tg.int32 and r.shape == (200,)
    assert set(r.tolist()) == {3, 4, 5}
    assert set(tg.randint_like(tg.zeros(100), 2).tolist()) == {0.0, 1.0}
    assert tg.is_nonzero(tg.tensor([1.5])) and not tg.is_nonzero(tg.tensor(0))
    assert tg.tensor([[True]]).is_nonzero()
    with pytest.raises(RuntimeError, match="more than one value"):
        tg.is_nonzero(tg.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="no values"):
        tg.is_nonzero(tg.zeros(0))


def test_normal_forms_statistics_and_errors():
    tg.manual_seed(3)
    s = tg.normal(2.0, 3.0, (20000,))
    assert s.shape == (20000,) and s.dtype == tg.float32
    assert abs(s.mean().item() - 2.0) < 0.1 and abs(s.std().item() - 3.0) < 0.1
    m = tg.tensor([[-100.0], [100.0]], requires_grad=True)
    s = tg.normal(m, tg.full((2, 5000), 0.5))
    assert s.shape == (2, 5000) and not s.requires_grad  # as PyTorch's: no gradient
    assert abs(s[0].mean().item() + 100) < 0.05 and abs(s[1].std().item() - 0.5) < 0.05
    s = tg.normal(tg.zeros(4, dtype=tg.float64))
    assert s.dtype == tg.float64 and s.shape == (4,)
    assert tg.normal(1.0, tg.zeros(3)).tolist() == [1.0, 1.0, 1.0]
    tg.manual_seed(9)
    a = tg.normal(0.0, 1.0, (5,))
    tg.manual_seed(9)
    assert tg.normal(0.0, 1.0, (5,)).tolist() == a.tolist()
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        tg.normal(0.0, -1.0, (3,))
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        tg.normal(tg.zeros(2), tg.tensor([1.0, -1.0]))
    with pytest.raises(TypeError, match="size"):
        tg.normal(0.0, 1.0)


# ---- bitwise ------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("dt", ["int32", "int64", "uint8"])
def test_bitwise_ops_of_integers_against_torch(dt):
    rs = np.random.RandomState(8)
    lo = 0 if dt == 'uint8' else -1000
    x, y = rs.randint(lo, 255, (3, 4)), rs.randint(lo, 255, (4,))
    a, b = tg.tensor(x, dtype=getattr(tg, dt)), tg.tensor(y, dtype=getattr(tg, dt))
    ta, tb = torch.tensor(x, dtype=getattr(torch, dt)), torch.tensor(y, dtype=getattr(torch, dt))
    for name, op in (('bitwise_and', '__and__'), ('bitwise_or', '__or__'),
                     ('bitwise_xor', '__xor__')):
        want = getattr(torch, name)(ta, tb)
        for got in (getattr(tg, name)(a, b), getattr(a, op)(b), getattr(a, name)(b),
                    getattr(a, op)(5) if False else getattr(tg, name)(a, b)):
            assert got.dtype == a.dtype and got.tolist() == want.tolist()
        assert getattr(a, op)(6).tolist() == getattr(ta, op)(6).tolist()
        assert getattr(b, '__r' + op[2:])(6).tolist() == getattr(tb, '__r' + op[2:])(6).tolist()
    assert (~a).tolist() == (~ta).tolist() and tg.bitwise_not(a).tolist() == (~ta).tolist()
    c = a.clone()
    c.bitwise_and_(b)
    assert c.tolist() == (ta & tb).tolist()


@needs_torch
def test_bitwise_mixed_types_bools_and_errors():
    i32, i64 = tg.tensor([5, -3], dtype=tg.int32), tg.tensor([3, 6])
    got = i32 & i64
    assert got.dtype == tg.int64 and got.tolist() == [1, 4]
    assert (tg.tensor([True, False]) | tg.tensor([2, 0])).tolist() == [3, 0]
    assert (tg.tensor([True, False]) ^ tg.tensor([True, True])).tolist() == [False, True]
    assert tg.bitwise_not(tg.tensor([True, False])).tolist() == [False, True]
    assert (tg.zeros(0, dtype=tg.int64) & tg.zeros(0, dtype=tg.int64)).shape == (0,)
    with pytest.raises(RuntimeError, match="floating-point"):
        tg.bitwise_and(tg.tensor([1.0]), tg.tensor([1]))
    with pytest.raises(RuntimeError, match="floating-point"):
        tg.tensor([1]) | 1.5
    with pytest.raises(RuntimeError, match="floating-point"):
        tg.bitwise_not(tg.tensor([1.0]))
