"""Type rules of binary ops against PyTorch: bool tensors in arithmetic
and a 0-d float64 tensor next to integer ones (operators and the
functional forms alike), Python numbers in true divisions of integer
tensors, and 0-d results of the host-computed integer ops (bitwise, gcd)."""
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def _same(t_result, g_result):
    assert str(g_result.dtype).split('.')[-1] == str(t_result.dtype).split('.')[-1]
    assert tuple(g_result.shape) == tuple(t_result.shape)
    assert g_result.tolist() == pytest.approx(t_result.tolist(), nan_ok=True)


BOOL_CASES = [
    ('mul bool float', lambda L, b, i, f: L.mul(b, f)),
    ('add bool int', lambda L, b, i, f: L.add(b, i)),
    ('add bool bool', lambda L, b, i, f: L.add(b, b)),
    ('mul bool bool', lambda L, b, i, f: L.mul(b, b)),
    ('div bool bool', lambda L, b, i, f: L.div(b, b)),
    ('true_divide bool int', lambda L, b, i, f: L.true_divide(b, i)),
    ('operator bool / bool', lambda L, b, i, f: b / b),
    ('operator bool / True', lambda L, b, i, f: b / True),
    ('maximum bool int', lambda L, b, i, f: L.maximum(b, i)),
    ('pow bool 2', lambda L, b, i, f: L.pow(b, 2)),
    ('mul bool number', lambda L, b, i, f: L.mul(b, 2.5)),
    ('fmod int bool', lambda L, b, i, f: L.fmod(i, b | True)),
    ('logical_and bool int', lambda L, b, i, f: L.logical_and(b, i)),
    ('0-d float64 + int', lambda L, b, i, f: L.tensor(1.5, dtype=L.float64) + i),
    ('int * 0-d float64', lambda L, b, i, f: L.mul(i, L.tensor(0.25, dtype=L.float64))),
    ('bool + 0-d float64', lambda L, b, i, f: L.tensor(2.0, dtype=L.float64) + b),
    ('0-d float64 with float32 stays float32', lambda L, b, i, f: L.tensor(2.0, dtype=L.float64) * f),
    ('0-d int64 with int32 stays int32', lambda L, b, i, f: L.tensor(7) * i.int()),
    ('int == 0-d float64', lambda L, b, i, f: L.eq(i, L.tensor(3.0, dtype=L.float64))),
]


@needs_torch
@pytest.mark.parametrize('name,fn', BOOL_CASES, ids=[c[0] for c in BOOL_CASES])
def test_bool_arithmetic_matches_torch(name, fn):
    def args(L):
        return L.tensor([True, False, True]), L.tensor([3, 4, -2]), L.tensor([1.5, 2.0, -0.5])
    _same(fn(torch, *args(torch)), fn(tg, *args(tg)))


DIV_CASES = [
    ('uint8 / -3', lambda L, u, i: u / -3),
    ('uint8 / 300', lambda L, u, i: u / 300),
    ('-3 / uint8', lambda L, u, i: -3 / u),
    ('int32 / 2**33', lambda L, u, i: i / 2 ** 33),
    ('div(uint8, -3)', lambda L, u, i: L.div(u, -3)),
    ('true_divide(int32, 2**33)', lambda L, u, i: L.true_divide(i, 2 ** 33)),
    ('floor division keeps integers', lambda L, u, i: L.div(i, -3, rounding_mode='floor')),
    ('// keeps integers', lambda L, u, i: i // -3),
    ('comparisons wrap as torch does', lambda L, u, i: u > -1),
]


@needs_torch
@pytest.mark.parametrize('name,fn', DIV_CASES, ids=[c[0] for c in DIV_CASES])
def test_numbers_in_integer_true_division(name, fn):
    def args(L):
        return L.tensor([252, 3], dtype=L.uint8), L.tensor([5, -7], dtype=L.int32)
    _same(fn(torch, *args(torch)), fn(tg, *args(tg)))


@needs_torch
def test_host_integer_ops_keep_0d_and_yield_to_dimensioned():
    for L in (torch, tg):
        a, b = L.tensor(3), L.ones(2, 2, dtype=L.int32)
        assert tuple(L.bitwise_not(a).shape) == ()
        assert tuple(L.bitwise_not(L.tensor(True)).shape) == ()
        assert tuple(L.gcd(L.tensor(6), L.tensor(4)).shape) == ()
        assert str(L.bitwise_and(a, b).dtype).endswith('int32')
        assert str(L.gcd(a, b).dtype).endswith('int32')
    assert tg.bitwise_not(tg.tensor(3)).item() == ~3
    assert tg.gcd(tg.tensor(6), tg.tensor(4)).item() == 2


def test_bool_rules_without_torch():
    b = tg.tensor([True, False])
    assert (b / b).dtype == tg.float32
    assert tg.mul(b, tg.tensor([2.0, 3.0])).tolist() == [2.0, 0.0]
    assert tg.add(b, b).dtype == tg.bool
    assert (tg.tensor([252], dtype=tg.uint8) / -3).tolist() == [-84.0]


@needs_torch
def test_bool_extremes_and_empty_integer_division():
    for L in (torch, tg):
        b = L.tensor([[True, False], [False, False]])
        got = [b.amax().tolist(), b.amin(1).tolist(), L.maximum(b, ~b).tolist(),
               L.minimum(b, b).tolist(), b.max().tolist()]
        if L is torch:
            want = got
        else:
            assert got == want
    empty = tg.zeros(0, dtype=tg.int64)
    assert tg.fmod(empty, tg.zeros(1, dtype=tg.int64)).shape == (0,)
    assert (empty // tg.zeros(1, dtype=tg.int64)).shape == (0,)
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        tg.tensor([1]) // tg.tensor([0])
