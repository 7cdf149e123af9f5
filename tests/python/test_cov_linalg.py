"""tg.linalg's LU family (lu_factor, lu_factor_ex, lu, lu_solve, solve_ex,
inv_ex), matrix_exp, vander, tensorinv, tensorsolve, householder_product
and lstsq against torch.linalg: values, float64 gradients, errors."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, grads_match, needs_torch, pair, torch

R = np.random.RandomState(0)
SHAPES = [(3, 3), (2, 4, 4), (4, 3), (2, 3, 5)]


@needs_torch
@pytest.mark.parametrize('shape', SHAPES)
def test_lu_factor_and_lu(shape):
    a = R.normal(size=shape)
    fields = {'lu_factor': ('LU', 'pivots'), 'lu_factor_ex': ('LU', 'pivots', 'info'),
              'lu': ('P', 'L', 'U')}
    for fn, names in fields.items():
        x, y = pair(a)
        ours, theirs = getattr(tg.linalg, fn)(x), getattr(torch.linalg, fn)(y)
        assert type(ours).__name__ == 'linalg_' + fn and ours._fields == names
        for name in names:
            o, t = getattr(ours, name), getattr(theirs, name)
            assert o.dtype == getattr(tg, str(t.dtype).split('.')[-1])
            close(o, t.detach().numpy(), rtol=1e-12, atol=1e-14)
        for name in ('LU',) if fn != 'lu' else ('L', 'U'):
            x, y = pair(a)
            grads_match(getattr(getattr(tg.linalg, fn)(x), name),
                        getattr(getattr(torch.linalg, fn)(y), name), [x], [y])


@needs_torch
@pytest.mark.parametrize('left,adjoint', [(True, False), (True, True), (False, False),
                                          (False, True)])
def test_lu_solve(left, adjoint):
    a = R.normal(size=(2, 3, 3))
    b = R.normal(size=(2, 3, 2) if left else (2, 2, 3))
    LU, piv = torch.linalg.lu_factor(torch.tensor(a))
    x, y = pair(LU.numpy())
    bx, by = pair(b)
    ours = tg.linalg.lu_solve(x, tg.tensor(piv.numpy()), bx, left=left, adjoint=adjoint)
    theirs = torch.linalg.lu_solve(y, piv, by, left=left, adjoint=adjoint)
    grads_match(ours, theirs, [x, bx], [y, by], rtol=1e-9, atol=1e-11)


@needs_torch
def test_solve_ex_and_inv_ex():
    a = R.normal(size=(2, 3, 3))
    x, y = pair(a)
    r = tg.linalg.inv_ex(x)
    grads_match(r.inverse, torch.linalg.inv_ex(y).inverse, [x], [y], rtol=1e-9)
    assert r.info.dtype == tg.int32 and r.info.shape == (2,) and not bool(r.info.any())
    for b in (R.normal(size=(2, 3, 2)), R.normal(size=(2, 3)), R.normal(size=3)):
        x, y = pair(a)
        bx, by = pair(b)
        grads_match(tg.linalg.solve_ex(x, bx).result, torch.linalg.solve_ex(y, by).result,
                    [x, bx], [y, by], rtol=1e-9)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    ours, theirs = tg.linalg.inv_ex(tg.tensor(singular)), torch.linalg.inv_ex(
        torch.tensor(singular))
    assert int(ours.info) == int(theirs.info) == 2
    close(ours.inverse, theirs.inverse.numpy())   # the same infinities
    ours = tg.linalg.lu_factor_ex(tg.tensor(singular))
    theirs = torch.linalg.lu_factor_ex(torch.tensor(singular))
    close(ours.LU, theirs.LU.numpy())
    close(ours.pivots, theirs.pivots.numpy())
    assert int(ours.info) == 2


def test_lu_errors():
    singular = tg.tensor([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(RuntimeError, match=r'U\[2,2\] is zero'):
        tg.linalg.lu_factor(singular)
    with pytest.raises(RuntimeError, match='singular'):
        tg.linalg.solve_ex(singular, tg.ones(2), check_errors=True)
    with pytest.raises(RuntimeError, match='singular'):
        tg.linalg.inv_ex(singular, check_errors=True)
    with pytest.raises(RuntimeError, match='not implemented on the CPU'):
        tg.linalg.lu_factor(tg.eye(2), pivot=False)
    with pytest.raises(RuntimeError, match='2 or more dimensions'):
        tg.linalg.lu(tg.ones(3))
    with pytest.raises(RuntimeError, match='floating point'):
        tg.linalg.lu(tg.ones(2, 2, dtype=tg.int64))
    LU, piv = tg.linalg.lu_factor(tg.eye(3))
    with pytest.raises(RuntimeError, match='Incompatible shapes'):
        tg.linalg.lu_solve(LU, piv, tg.ones(2, 1))


@needs_torch
def test_matrix_exp():
    for scale in (0.1, 1.0, 5.0):
        a = R.normal(size=(2, 4, 4)) * scale
        x, y = pair(a)
        out_t, out_p = tg.linalg.matrix_exp(x), torch.linalg.matrix_exp(y)
        rel = 1e-13 * float(np.abs(out_p.detach().numpy()).max())
        grads_match(out_t, out_p, [x], [y], rtol=1e-10, atol=rel * 100)
    close(tg.linalg.matrix_exp(tg.zeros(3, 3)), np.eye(3))
    with pytest.raises(RuntimeError, match='square'):
        tg.linalg.matrix_exp(tg.ones(2, 3))


@needs_torch
def test_vander_tensorinv_tensorsolve():
    x, y = pair(R.normal(size=(2, 3)))
    for N in (None, 2, 5):
        x, y = pair(R.normal(size=(2, 3)))
        grads_match(tg.linalg.vander(x, N=N), torch.linalg.vander(y, N=N), [x], [y])
    t = R.normal(size=(4, 6, 8, 3))
    x, y = pair(t)
    grads_match(tg.linalg.tensorinv(x, ind=2), torch.linalg.tensorinv(y, ind=2), [x], [y],
                rtol=1e-9)
    a, b = R.normal(size=(6, 2, 4, 12)), R.normal(size=(6, 4))
    for dims in (None, (1,)):
        shape_a = a if dims else a.reshape(6, 4, 2, 12)
        x, y = pair(shape_a)
        bx, by = pair(b)
        grads_match(tg.linalg.tensorsolve(x, bx, dims=dims),
                    torch.linalg.tensorsolve(y, by, dims=dims), [x, bx], [y, by], rtol=1e-9)
    with pytest.raises(RuntimeError, match='greater than 1'):
        tg.linalg.vander(tg.ones(3), N=1)
    with pytest.raises(RuntimeError, match='prod'):
        tg.linalg.tensorinv(tg.ones(2, 3, 4), ind=1)
    with pytest.raises(RuntimeError, match='strictly positive'):
        tg.linalg.tensorinv(tg.ones(2, 2), ind=0)


@needs_torch
def test_householder_product():
    for shape, k in (((5, 3), 2), ((2, 4, 4), 4), ((3, 3), 1)):
        x, y = pair(R.normal(size=shape))
        tx, ty = pair(R.normal(size=shape[:-2] + (k,)))
        grads_match(tg.linalg.householder_product(x, tx),
                    torch.linalg.householder_product(y, ty), [x, tx], [y, ty])
    # qr's Householder vectors give back Q (geqrf's layout)
    a = R.normal(size=(5, 3))
    qr_packed, tau = torch.geqrf(torch.tensor(a))
    close(tg.linalg.householder_product(tg.tensor(qr_packed.numpy()), tg.tensor(tau.numpy())),
          np.linalg.qr(a)[0] * np.sign(np.diag(np.linalg.qr(a)[1])) *
          np.sign(np.diag(qr_packed.numpy())), atol=1e-12)
    with pytest.raises(RuntimeError, match='greater than or equal'):
        tg.linalg.householder_product(tg.ones(2, 3), tg.ones(1))
    with pytest.raises(RuntimeError, match='greater than or equal'):
        tg.linalg.householder_product(tg.ones(3, 2), tg.ones(3))


@needs_torch
@pytest.mark.parametrize('m,n', [(5, 3), (3, 3), (2, 3)])
@pytest.mark.parametrize('driver', [None, 'gelsy', 'gels', 'gelsd', 'gelss'])
def test_lstsq_fields_as_torch(m, n, driver):
    if driver == 'gels' and m < n:
        pytest.skip("gels needs full column rank")
    a, b = R.normal(size=(2, m, n)), R.normal(size=(2, m, 2))
    x, y = pair(a)
    bx, by = pair(b)
    ours = tg.linalg.lstsq(x, bx, driver=driver)
    theirs = torch.linalg.lstsq(y, by, driver=driver)
    assert ours._fields == ('solution', 'residuals', 'rank', 'singular_values')
    for o, t in zip(ours[1:], theirs[1:]):
        assert tuple(o.shape) == tuple(t.shape)
        close(o, t.detach().numpy(), rtol=1e-10, atol=1e-12)
    grads_match(ours.solution, theirs.solution, [x, bx], [y, by], rtol=1e-8, atol=1e-10)


@needs_torch
def test_lstsq_rank_deficient_and_vector():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = R.normal(size=(3, 2))
    ours = tg.linalg.lstsq(tg.tensor(a), tg.tensor(b))
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b))
    close(ours.solution, theirs.solution.numpy(), atol=1e-12)
    assert int(ours.rank) == int(theirs.rank) == 1
    a, b = R.normal(size=(5, 3)), R.normal(size=5)
    ours = tg.linalg.lstsq(tg.tensor(a), tg.tensor(b))
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b))
    assert ours.solution.shape == tuple(theirs.solution.shape) == (3,)
    close(ours.solution, theirs.solution.numpy(), atol=1e-12)
    with pytest.raises(RuntimeError, match='driver'):
        tg.linalg.lstsq(tg.tensor(a), tg.tensor(b), driver='nope')
    with pytest.raises(RuntimeError, match='should match'):
        tg.linalg.lstsq(tg.ones(3, 2), tg.ones(4, 1))
