"""out= of functions composed in Python that used to accept and ignore it
(torch.cholesky, cholesky_solve, cholesky_inverse, inverse, matrix_power,
var, std, tensordot, eye, the special functions i0 i1 i0e i1e erfcx
log_ndtr ndtri zeta polygamma gammainc gammaincc): the result is written
into out and out returned, resized with PyTorch's warning, refused when
autograd would record, as the op table's out= (compared with PyTorch);
and tensordot of a full contraction (a 0-d result), which failed."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

A = [[4.0, 1.0], [1.0, 3.0]]


def _a(m, requires_grad=False):
    return m.tensor(A, dtype=m.float64, requires_grad=requires_grad)


CALLS = {
    'cholesky': lambda m, a, o: m.cholesky(a, out=o),
    'cholesky_solve': lambda m, a, o: m.cholesky_solve(a, a, out=o),
    'cholesky_inverse': lambda m, a, o: m.cholesky_inverse(a, out=o),
    'inverse': lambda m, a, o: m.inverse(a, out=o),
    'matrix_power': lambda m, a, o: m.matrix_power(a, 3, out=o),
    'var': lambda m, a, o: m.var(a, 0, out=o),
    'std': lambda m, a, o: m.std(a, 1, out=o),
    'tensordot': lambda m, a, o: m.tensordot(a, a, 1, out=o),
    'tensordot full': lambda m, a, o: m.tensordot(a, a, 2, out=o),
    'i0': lambda m, a, o: m.i0(a, out=o),
    'polygamma': lambda m, a, o: m.polygamma(1, a, out=o),
    'special.i0': lambda m, a, o: m.special.i0(a, out=o),
    'special.i1': lambda m, a, o: m.special.i1(a, out=o),
    'special.i0e': lambda m, a, o: m.special.i0e(a, out=o),
    'special.i1e': lambda m, a, o: m.special.i1e(a, out=o),
    'special.erfcx': lambda m, a, o: m.special.erfcx(a, out=o),
    'special.log_ndtr': lambda m, a, o: m.special.log_ndtr(a, out=o),
    'special.ndtri': lambda m, a, o: m.special.ndtri(a / 10, out=o),
    'special.zeta': lambda m, a, o: m.special.zeta(a + 1, a, out=o),
    'special.polygamma': lambda m, a, o: m.special.polygamma(2, a, out=o),
    'special.gammainc': lambda m, a, o: m.special.gammainc(a, a, out=o),
    'special.gammaincc': lambda m, a, o: m.special.gammaincc(a, a, out=o),
}


def _run(m, name, out):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        r = CALLS[name](m, _a(m), out)
    return r, [str(x.message) for x in w if str(x.message).startswith('An output with')]


@needs_torch
@pytest.mark.parametrize('name', sorted(CALLS))
@pytest.mark.parametrize('size', ['empty', 'wrong'])
def test_out_written_as_torch(name, size):
    got = []
    for m in (tg, torch):
        out = m.empty((0,) if size == 'empty' else (3, 3), dtype=m.float64)
        r, warned = _run(m, name, out)
        assert r is out
        got.append((r.numpy().copy(), tuple(r.shape), len(warned)))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-9, atol=1e-12)
    assert got[0][1:] == got[1][1:]
    assert got[0][2] == (1 if size == 'wrong' else 0)


@pytest.mark.parametrize('name', ['cholesky', 'cholesky_solve', 'inverse', 'var', 'tensordot',
                                  'i0', 'special.erfcx', 'special.zeta'])
def test_autograd_refused(name):
    out = tg.empty(0, dtype=tg.float64)
    with pytest.raises(RuntimeError, match=r"\(\): functions with out=\.\.\. arguments don't "
                                           r"support automatic differentiation, but one of "
                                           r"the arguments requires grad\.$"):
        CALLS[name](tg, _a(tg, True), out)
    with tg.no_grad():
        assert CALLS[name](tg, _a(tg, True), out) is out


def test_out_must_be_a_tensor():
    with pytest.raises(TypeError, match=r"argument 'out' must be Tensor, not int"):
        tg.cholesky(_a(tg), out=3)
    with pytest.raises(TypeError, match=r"argument 'out' must be Tensor, not list"):
        tg.special.i0(_a(tg), out=[])


def test_dtype_of_out():
    with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired "
                                           "output type Long"):
        tg.special.i0(_a(tg), out=tg.empty(0, dtype=tg.int64))
    o = tg.empty(0, dtype=tg.float32)
    assert tg.var(_a(tg), 0, out=o) is o and o.dtype == tg.float32


@needs_torch
@pytest.mark.parametrize('dtype', ['int64', 'float64', 'bool'])
def test_eye_takes_out_dtype(dtype):
    got = []
    for m in (tg, torch):
        o = m.empty(0, dtype=getattr(m, dtype))
        assert m.eye(2, 3, out=o) is o
        got.append((o.numpy().tolist(), str(o.dtype).split('.')[-1]))
    assert got[0] == got[1]


def test_tensordot_full_contraction():
    a = _a(tg)
    r = tg.tensordot(a, a)
    assert r.shape == () and r.item() == 27.0
    assert tg.tensordot(tg.tensor(2.0), tg.tensor(3.0), 0).item() == 6.0


LEGACY = {  # torch.qr / svd / triangular_solve: tuples of outs, linalg's checks
    'qr': (lambda m, a, o: m.qr(a, out=o), 2, 'linalg_qr', 2),
    'svd': (lambda m, a, o: m.svd(a, out=o), 3, '_linalg_svd', 3),
    'triangular_solve': (lambda m, a, o: m.triangular_solve(a, a, out=o), 2,
                         'triangular_solve', 5),
}


@pytest.mark.parametrize('name', sorted(LEGACY))
def test_legacy_tuple_outs(name):
    call, n, kernel, argpos = LEGACY[name]
    outs = tuple(tg.empty(0, dtype=tg.float64) for _ in range(n))
    r = call(tg, _a(tg), outs)
    assert type(r).__name__ == f'{name}_out' and all(x is y for x, y in zip(r, outs))
    if torch is not None:
        want = call(torch, _a(torch), tuple(torch.empty(0, dtype=torch.float64)
                                           for _ in range(n)))
        for x, y in zip(r, want):
            np.testing.assert_allclose(np.abs(x.numpy()), np.abs(y.numpy()), atol=1e-12)
    with pytest.raises(TypeError, match=f"^expected tuple of {n} elements but got {n - 1}$"):
        call(tg, _a(tg), outs[:-1])
    with pytest.raises(TypeError, match=f"^{name}\\(\\): argument 'out' must be tuple of "
                                        f"Tensors, not Tensor$"):
        call(tg, _a(tg), outs[0])
    with pytest.raises(TypeError, match=f"^expected Tensor as element 0 in argument {argpos}, "
                                        f"but got NoneType$"):
        call(tg, _a(tg), (None,) + outs[1:])
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype double, but got "
                                           "float instead$"):
        call(tg, _a(tg), (tg.empty(0),) + outs[1:])
    with pytest.raises(RuntimeError, match=f"^{kernel}\\(\\): functions with out=\\.\\.\\. "):
        call(tg, _a(tg, True), outs)


def test_inverse_and_matrix_power_out_names():
    with pytest.raises(TypeError, match=r"^inverse\(\): argument 'out' must be Tensor, not int$"):
        tg.inverse(_a(tg), out=3)
    with pytest.raises(TypeError, match=r"^matrix_power\(\): argument 'out' must be Tensor"):
        tg.matrix_power(_a(tg), 2, out=3)
