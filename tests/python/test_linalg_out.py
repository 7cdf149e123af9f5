"""out= of tensorgraph.linalg's functions as torch.linalg's: the result is
written into out and out returned (tuples of outs for the functions
returning several, as a named tuple `linalg_<name>_out` of those
tensors), outs of another shape resized (PyTorch's warning unless
empty), and PyTorch's errors, whose words vary by function: out's type,
autograd, dtype. Values are compared with PyTorch; the expected errors
are written out and checked against PyTorch too when not under the
sanitizer (conftest.py)."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, needs_torch, torch

A = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]
B = [[1.0], [2.0], [3.0]]

# name: (call(m, A, B, out), output shapes (one tensor: a shape; several: a list))
SINGLE = {
    'inv': (lambda L, a, b, o: L.inv(a, out=o), (3, 3)),
    'det': (lambda L, a, b, o: L.det(a, out=o), ()),
    'solve': (lambda L, a, b, o: L.solve(a, b, out=o), (3, 1)),
    'cholesky': (lambda L, a, b, o: L.cholesky(a, out=o), (3, 3)),
    'vector_norm': (lambda L, a, b, o: L.vector_norm(a, 3, dim=1, out=o), (3,)),
    'matrix_norm': (lambda L, a, b, o: L.matrix_norm(a, 'nuc', out=o), ()),
    'norm': (lambda L, a, b, o: L.norm(a, out=o), ()),
    'pinv': (lambda L, a, b, o: L.pinv(a, out=o), (3, 3)),
    'matrix_power': (lambda L, a, b, o: L.matrix_power(a, 3, out=o), (3, 3)),
    'matrix_rank': (lambda L, a, b, o: L.matrix_rank(a, out=o), ()),
    'cond': (lambda L, a, b, o: L.cond(a, out=o), ()),
    'svdvals': (lambda L, a, b, o: L.svdvals(a, out=o), (3,)),
    'eigvalsh': (lambda L, a, b, o: L.eigvalsh(a, out=o), (3,)),
    'cross': (lambda L, a, b, o: L.cross(a, a.flip(0), out=o), (3, 3)),
    'vecdot': (lambda L, a, b, o: L.vecdot(a, a, out=o), (3,)),
    'multi_dot': (lambda L, a, b, o: L.multi_dot([a, a, b], out=o), (3, 1)),
    'matmul': (lambda L, a, b, o: L.matmul(a, b, out=o), (3, 1)),
    'solve_triangular': (lambda L, a, b, o: L.solve_triangular(a, b, upper=True, out=o), (3, 1)),
    'tensorinv': (lambda L, a, b, o: L.tensorinv(a, 1, out=o), (3, 3)),
    'tensorsolve': (lambda L, a, b, o: L.tensorsolve(a, b[:, 0], out=o), (3,)),
    'householder_product': (lambda L, a, b, o: L.householder_product(a, b[:2, 0] / 4, out=o),
                            (3, 3)),
    'lu_solve': (lambda L, a, b, o: L.lu_solve(*L.lu_factor(a), b, out=o), (3, 1)),
}

MULTI = {
    'qr': (lambda L, a, b, o: L.qr(a, out=o), [(3, 3), (3, 3)]),
    'svd': (lambda L, a, b, o: L.svd(a, out=o), [(3, 3), (3,), (3, 3)]),
    'eigh': (lambda L, a, b, o: L.eigh(a, out=o), [(3,), (3, 3)]),
    'slogdet': (lambda L, a, b, o: L.slogdet(a, out=o), [(), ()]),
    'cholesky_ex': (lambda L, a, b, o: L.cholesky_ex(a, out=o), [(3, 3), ()]),
    'inv_ex': (lambda L, a, b, o: L.inv_ex(a, out=o), [(3, 3), ()]),
    'solve_ex': (lambda L, a, b, o: L.solve_ex(a, b, out=o), [(3, 1), ()]),
    'lu_factor': (lambda L, a, b, o: L.lu_factor(a, out=o), [(3, 3), (3,)]),
    'lu_factor_ex': (lambda L, a, b, o: L.lu_factor_ex(a, out=o), [(3, 3), (3,), ()]),
    'lu': (lambda L, a, b, o: L.lu(a, out=o), [(3, 3), (3, 3), (3, 3)]),
}
INT_OUTS = {'cholesky_ex': [1], 'inv_ex': [1], 'solve_ex': [1], 'lu_factor': [1],
            'lu_factor_ex': [1, 2]}

# the kernel PyTorch's autograd refusal names (None: composed in Python, the
# write is recorded instead)
KERNEL = {'inv': 'linalg_inv_ex', 'det': '_linalg_det', 'solve': '_linalg_solve_ex',
          'cholesky': 'linalg_cholesky_ex', 'vector_norm': 'linalg_vector_norm',
          'pinv': 'linalg_pinv', 'matrix_power': 'mm', 'svdvals': '_linalg_svd',
          'eigvalsh': '_linalg_eigh', 'cross': 'linalg_cross', 'vecdot': 'sum',
          'multi_dot': 'mm', 'matmul': 'mm', 'solve_triangular': 'linalg_solve_triangular',
          'householder_product': 'linalg_householder_product', 'lu_solve': 'linalg_lu_solve',
          'qr': 'linalg_qr', 'svd': '_linalg_svd', 'eigh': '_linalg_eigh',
          'slogdet': '_linalg_slogdet', 'cholesky_ex': 'linalg_cholesky_ex',
          'inv_ex': 'linalg_inv_ex', 'solve_ex': '_linalg_solve_ex',
          'lu_factor': 'linalg_lu_factor_ex', 'lu_factor_ex': 'linalg_lu_factor_ex',
          'lu': 'linalg_lu'}
COMPOSED = ['matrix_norm', 'norm', 'cond', 'tensorinv', 'tensorsolve']

# float32 out for a float64 result
F32_ERROR = {
    'matrix_norm': "linalg.matrix_norm expected out tensor dtype Double but got: Float",
    'norm': "linalg.norm expected out tensor dtype Double but got: Float",
    'vecdot': "linalg.vecdot: Expected out of dtypeDouble but found Float",
    'multi_dot': "multi_dot(): expected out tensor to have dtype double but got float",
    'solve_triangular': "expected scalar type Double but found Float",
}
F32_CASTS = ['pinv', 'cond', 'tensorinv', 'tensorsolve', 'householder_product', 'matrix_rank']
# int64 out for a float64 result
I64_ERROR = {
    'pinv': "linalg.pinv: Expected result to be safely castable from Double dtype, but got "
            "result with dtype Long",
    'cond': "linalg.cond: Expected result to be safely castable from Double dtype, but got "
            "result with dtype Long",
    'tensorinv': "tensorinv: Expected result to be safely castable from Double dtype, but got "
                 "result with dtype Long",
    'tensorsolve': "tensorsolve: Expected result to be safely castable from Double dtype, but "
                   "got result with dtype Long",
    'householder_product': "torch.linalg.householder_product: Expected result to be safely "
                           "castable from Double dtype, but got result with dtype Long",
    'matrix_power': "matrix_power: Expected result to be safely castable from Double dtype, "
                    "but got result with dtype Long",
    'matrix_norm': "linalg.matrix_norm expected out tensor dtype Double but got: Long",
    'norm': "linalg.norm expected out tensor dtype Double but got: Long",
    'vecdot': "linalg.vecdot: Expected out of dtypeDouble but found Long",
    'multi_dot': "multi_dot(): expected out tensor to have dtype double but got long int",
    'solve_triangular': "expected scalar type Double but found Long",
}


def _ab(m, requires_grad=False):
    a = m.tensor(A, dtype=m.float64, requires_grad=requires_grad)
    return a, m.tensor(B, dtype=m.float64)


def _empty(m, shape, dtype=None):
    return m.empty(shape, dtype=dtype or m.float64)


def _outs(m, name, shape_of=None, dtype_at=None):
    """fresh outs for `name` (shapes replaced by shape_of(i, shape); dtype
    of element i replaced by dtype_at(i))"""
    if name in SINGLE:
        shape = SINGLE[name][1]
        dt = m.int64 if name == 'matrix_rank' else None
        if dtype_at and dtype_at(0):
            dt = dtype_at(0)
        return _empty(m, shape_of(0, shape) if shape_of else shape, dt)
    outs = []
    for i, s in enumerate(MULTI[name][1]):
        dt = m.int32 if i in INT_OUTS.get(name, []) else None
        if dtype_at and dtype_at(i):
            dt = dtype_at(i)
        outs.append(_empty(m, shape_of(i, s) if shape_of else s, dt))
    return tuple(outs)


def _call(m, name, out):
    f = (SINGLE.get(name) or MULTI[name])[0]
    a, b = _ab(m)
    return f(m.linalg, a, b, out)


def _result(m, name, out):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        r = _call(m, name, out)
    return r, [str(x.message) for x in w]


def _as_list(r):
    return [r] if not isinstance(r, tuple) else list(r)


ALL = sorted(SINGLE) + sorted(MULTI)


@needs_torch
@pytest.mark.parametrize('name', ALL)
@pytest.mark.parametrize('sizes', ['exact', 'empty', 'wrong'])
def test_out_written_and_returned_as_torch(name, sizes):
    shape_of = {'exact': None, 'empty': lambda i, s: (0,), 'wrong': lambda i, s: (2, 5)}[sizes]
    got, want = {}, {}
    for m, store in ((tg, got), (torch, want)):
        out = _outs(m, name, shape_of)
        r, warned = _result(m, name, out)
        store['warned'] = len(warned)
        store['resize'] = all(w.startswith("An output with one or more elements was resized")
                              for w in warned)
        outs = _as_list(out)
        rs = _as_list(r)
        store['same'] = len(rs) == len(outs) and all(x is y for x, y in zip(rs, outs))
        store['values'] = [x.detach().numpy().copy() for x in rs]
        store['shapes'] = [tuple(x.shape) for x in rs]
        store['dtypes'] = [str(x.dtype).split('.')[-1] for x in rs]
        store['type'] = type(r).__name__
        store['r'] = r
    for k in ('warned', 'resize', 'same', 'shapes', 'dtypes', 'type'):
        assert got[k] == want[k], k
    for i, field in enumerate(getattr(got['r'], '_fields', ())):  # PyTorch's field names
        assert getattr(want['r'], field) is want['r'][i]
    assert got['same']
    assert got['warned'] == (len(_as_list(_outs(tg, name))) if sizes == 'wrong' else 0)
    for x, y in zip(got['values'], want['values']):
        if name in ('qr', 'svd', 'eigh', 'householder_product'):  # signs: compare |values|
            x, y = np.abs(x), np.abs(y)
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)


def _error(m, name, out, requires_grad=False):
    f = (SINGLE.get(name) or MULTI[name])[0]
    a, b = _ab(m, requires_grad)
    try:
        f(m.linalg, a, b, out)
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e)
    return None


def _check(name, make_out, expected, requires_grad=False):
    assert _error(tg, name, make_out(tg), requires_grad) == expected
    if torch is not None and not SANITIZED:
        assert _error(torch, name, make_out(torch), requires_grad) == expected


@pytest.mark.parametrize('name', sorted(KERNEL))
def test_autograd_refused(name):
    msg = (f"{KERNEL[name]}(): functions with out=... arguments don't support automatic "
           f"differentiation, but one of the arguments requires grad.")
    _check(name, lambda m: _outs(m, name), ('RuntimeError', msg), requires_grad=True)


@pytest.mark.parametrize('name', COMPOSED)
def test_composed_records_the_write(name):
    """PyTorch composes these in Python: an input that requires grad makes
    out's history; an out that is a leaf requiring grad is refused"""
    a, b = _ab(tg, True)
    out = _outs(tg, name)
    r = SINGLE[name][0](tg.linalg, a, b, out)
    assert r is out and out.requires_grad
    r.sum().backward()
    if torch is not None:
        ta, tb = _ab(torch, True)
        SINGLE[name][0](torch.linalg, ta, tb, _outs(torch, name)).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-8, atol=1e-10)
    leaf = lambda m: _empty(m, SINGLE[name][1]).requires_grad_()  # noqa: E731
    _check(name, leaf, ('RuntimeError', "a leaf Variable that requires grad is being used in "
                                        "an in-place operation."))


def test_no_grad_allows_inputs_that_require_grad():
    a, _ = _ab(tg, True)
    out = tg.empty(3, 3, dtype=tg.float64)
    with tg.no_grad():
        r = tg.linalg.inv(a, out=out)
    assert r is out and not out.requires_grad
    np.testing.assert_allclose((a.detach() @ out).numpy(), np.eye(3), atol=1e-12)


@pytest.mark.parametrize('name', ALL)
def test_float32_out(name):
    f32 = lambda m: _outs(m, name, dtype_at=lambda i: m.float32 if i == 0 else None)  # noqa
    if name in F32_CASTS:
        _check(name, f32, None)
        r = _call(tg, name, f32(tg))
        assert _as_list(r)[0].dtype == tg.float32
        return
    expected = F32_ERROR.get(name, "Expected out tensor to have dtype double, but got float "
                                   "instead")
    _check(name, f32, ('RuntimeError', expected))


@pytest.mark.parametrize('name', [n for n in ALL if n != 'matrix_rank'])
def test_int64_out(name):
    i64 = lambda m: _outs(m, name, dtype_at=lambda i: m.int64 if i == 0 else None)  # noqa
    expected = I64_ERROR.get(name, "Expected out tensor to have dtype double, but got long int "
                                   "instead")
    _check(name, i64, ('RuntimeError', expected))


@pytest.mark.parametrize('name', sorted(INT_OUTS))
def test_int_info_outs_want_int32(name):
    last = len(MULTI[name][1]) - 1
    i64 = lambda m: _outs(m, name, dtype_at=lambda i: m.int64 if i == last else None)  # noqa
    _check(name, i64, ('RuntimeError', "Expected out tensor to have dtype int, but got long int "
                                       "instead"))


def test_matrix_rank_out_dtypes():
    _check('matrix_rank', lambda m: m.empty((), dtype=m.bool),
           ('RuntimeError', "torch.linalg.matrix_rank: Expected result to be safely castable "
                            "from Long dtype, but got result with dtype Bool"))
    r = _call(tg, 'matrix_rank', tg.empty((), dtype=tg.float32))
    assert r.dtype == tg.float32 and r.item() == 3.0


ARGPOS = {'qr': 2, 'svd': 3, 'eigh': 2, 'slogdet': 1, 'cholesky_ex': 3, 'inv_ex': 2,
          'solve_ex': 4, 'lu_factor': 2, 'lu_factor_ex': 3, 'lu': 2}


@pytest.mark.parametrize('name', sorted(MULTI))
def test_tuple_out_errors(name):
    n = len(MULTI[name][1])
    _check(name, lambda m: _outs(m, name)[:-1],
           ('TypeError', f"expected tuple of {n} elements but got {n - 1}"))
    _check(name, lambda m: m.empty(3, 3, dtype=m.float64),
           ('TypeError', f"linalg_{name}(): argument 'out' must be tuple of Tensors, not Tensor"))
    _check(name, lambda m: (None,) + _outs(m, name)[1:],
           ('TypeError', f"expected Tensor as element 0 in argument {ARGPOS[name]}, but got "
                         f"NoneType"))
    # a list works as a tuple
    r = _call(tg, name, list(_outs(tg, name)))
    assert type(r).__name__ == f'linalg_{name}_out'


@pytest.mark.parametrize('name', ['inv', 'det', 'solve', 'cholesky', 'vector_norm', 'svdvals',
                                  'eigvalsh', 'cross', 'multi_dot', 'matmul', 'lu_solve',
                                  'tensorinv', 'tensorsolve', 'householder_product'])
def test_single_out_must_be_a_tensor(name):
    _check(name, lambda m: 3,
           ('TypeError', f"linalg_{name}(): argument 'out' must be Tensor, not int"))


def test_lstsq_out():
    a, b = _ab(tg)
    outs = tuple(tg.empty(0, dtype=tg.float64) for _ in range(3)) + (tg.empty(0),)
    outs = outs[:2] + (tg.empty((), dtype=tg.int64), tg.empty(0, dtype=tg.float64))
    r = tg.linalg.lstsq(a, b, out=outs)
    assert type(r).__name__ == 'linalg_lstsq_out' and r.solution is outs[0]
    np.testing.assert_allclose((a @ r.solution).numpy(), b.numpy(), atol=1e-12)
    assert r.rank.item() == 3
    with pytest.raises(TypeError, match="expected tuple of 4 elements but got 3"):
        tg.linalg.lstsq(a, b, out=outs[:3])
    with pytest.raises(RuntimeError, match="linalg_lstsq\\(\\): functions with out="):
        tg.linalg.lstsq(a.requires_grad_(), b, out=outs)


def test_functions_without_out_refuse_it():
    a, _ = _ab(tg)
    for f in (lambda: tg.linalg.matrix_exp(a, out=a), lambda: tg.linalg.vander(a[0], out=a)):
        with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
            f()


def test_op_table_names_long_int():
    """the op table's out= names int64 as PyTorch's c10 does ('long int')"""
    x = tg.ones(3, dtype=tg.int32)
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype int, but got "
                                           "long int instead$"):
        tg.gather(x, 0, tg.tensor([0]), out=tg.empty(1, dtype=tg.int64))
