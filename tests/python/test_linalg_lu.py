"""det, slogdet, logdet, inverse / linalg.inv, matrix_power (composed by
elimination, _linalg_lu.py): values and gradients against PyTorch."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, needs_torch, pair, torch
from conftest import grads_match as _grads_match


def grads_match(out_tg, out_torch, ins_tg, ins_torch, rtol=1e-9, atol=1e-11):
    return _grads_match(out_tg, out_torch, ins_tg, ins_torch, rtol, atol)


MATS = [np.random.RandomState(0).normal(size=(4, 4)),
        np.random.RandomState(1).normal(size=(2, 3, 5, 5)),
        np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 3.0], [4.0, 1.0, 0.0]]),  # needs pivoting
        np.array([[3.0]])]


@needs_torch
@pytest.mark.parametrize("m", range(len(MATS)))
def test_det_slogdet_logdet_against_torch(m):
    A = MATS[m]
    a, ta = pair(A)
    grads_match(tg.det(a), torch.det(ta), [a], [ta])
    a, ta = pair(A)
    s, la = tg.slogdet(a)
    ts, tla = torch.slogdet(ta)
    close(s, ts.detach().numpy())
    grads_match(la, tla, [a], [ta])
    a, ta = pair(A, requires_grad=False)
    close(tg.logdet(a), torch.logdet(ta).numpy(), 1e-10)
    close(a.det(), torch.linalg.det(ta).numpy(), 1e-10)
    close(tg.linalg.det(a), torch.linalg.det(ta).numpy(), 1e-10)


@needs_torch
def test_det_of_singular_and_empty_matrices():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert tg.det(tg.tensor(s)).item() == 0.0
    sign, la = tg.slogdet(tg.tensor(s))
    assert sign.item() == 0.0 and la.item() == -np.inf
    assert tg.logdet(tg.tensor(s)).item() == -np.inf
    close(tg.det(tg.zeros(3, 0, 0)), np.ones(3))
    assert tg.det(tg.zeros(0, 2, 2)).shape == (0,)
    with pytest.raises(RuntimeError, match="square"):
        tg.det(tg.zeros(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tg.det(tg.zeros(3))
    with pytest.raises(RuntimeError, match="floating point"):
        tg.det(tg.zeros(2, 2, dtype=tg.int64))


@needs_torch
@pytest.mark.parametrize("m", range(len(MATS)))
def test_inverse_against_torch(m):
    A = MATS[m]
    a, ta = pair(A)
    grads_match(tg.inverse(a), torch.inverse(ta), [a], [ta])
    close(tg.linalg.inv(a.detach()), torch.linalg.inv(ta.detach()).numpy(), 1e-10)
    close(a.detach().inverse(), torch.inverse(ta.detach()).numpy(), 1e-10)


def test_inverse_of_a_singular_matrix_raises():
    with pytest.raises(RuntimeError, match="singular"):
        tg.inverse(tg.tensor([[1.0, 2.0], [2.0, 4.0]]))


@needs_torch
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power_against_torch(n):
    A = np.random.RandomState(2).normal(size=(2, 3, 3))
    a, ta = pair(A)
    grads_match(tg.matrix_power(a, n), torch.matrix_power(ta, n), [a], [ta], 1e-9, 1e-10)
    close(tg.linalg.matrix_power(a.detach(), n), torch.linalg.matrix_power(ta.detach(),
                                                                           n).numpy(), 1e-9)
    assert a.detach().matrix_power(n).shape == (2, 3, 3)
    with pytest.raises(RuntimeError, match="square"):
        tg.matrix_power(tg.zeros(2, 3), n)


@needs_torch
@pytest.mark.parametrize("shapes", [((4, 4), (4,)), ((4, 4), (4, 2)), ((2, 3, 3), (2, 3)),
                                    ((2, 3, 3), (3, 5)), ((3, 3), (2, 3, 1))])
def test_solve_against_torch(shapes):
    rs = np.random.RandomState(3)
    A, B = rs.normal(size=shapes[0]), rs.normal(size=shapes[1])
    a, ta = pair(A)
    b, tb = pair(B)
    grads_match(tg.linalg.solve(a, b), torch.linalg.solve(ta, tb), [a, b], [ta, tb])
    with pytest.raises(RuntimeError, match="singular"):
        tg.linalg.solve(tg.tensor([[1.0, 2.0], [2.0, 4.0]]), tg.tensor([1.0, 1.0]))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        tg.linalg.solve(tg.zeros(3, 3), tg.zeros(2, 1))
