"""LU factorization with partial pivoting (linalg.lu_factor, lu_factor_ex,
lu, lu_solve, and solve_ex / inv_ex on top of it), composed from tensor
ops column by column so autograd differentiates through it (the pivot
choice is discrete, as the true derivative assumes). LAPACK's layout:
LU packs the unit lower L below the diagonal and U on and above it,
pivots are 1-based int32 row swaps applied in order; rectangular and
batched inputs work. Meant for small matrices (n steps of O(m n) work)."""
from collections import namedtuple

from . import _C
from ._creation import arange, tensor, zeros
from ._linalg_lu import _check_square, _eye, _swap_rows

linalg_lu_factor = namedtuple('linalg_lu_factor', ['LU', 'pivots'])
linalg_lu_factor_ex = namedtuple('linalg_lu_factor_ex', ['LU', 'pivots', 'info'])
linalg_lu = namedtuple('linalg_lu', ['P', 'L', 'U'])
linalg_solve_ex = namedtuple('linalg_solve_ex', ['result', 'info'])
linalg_inv_ex = namedtuple('linalg_inv_ex', ['inverse', 'info'])


def _check_matrix(A, name):
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype}")


def _pivot_rows(M, j):
    """the row (>= j) of the largest |M[..., r, j]| (the first on ties, as
    LAPACK's idamax), shaped [..., 1]"""
    col = M.narrow(-1, j, 1).narrow(-2, j, M.shape[-2] - j).squeeze(-1)
    return _C.argmax(col.abs(), -1, True) + j


def _factor(A, name, pivot):
    """(LU, pivots [..., k] 0-based, info [...] int32)"""
    _check_matrix(A, name)
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    M = A
    pivots = []
    info = zeros(tuple(A.shape[:-2]), dtype=_C.int32)
    one = tensor(1.0, dtype=A.dtype)
    for j in range(k):
        p = _pivot_rows(M, j)
        M = _swap_rows(M, j, p)
        pivots.append(p)
        piv = M.narrow(-2, j, 1).narrow(-1, j, 1)                   # [..., 1, 1]
        zero_pivot = (piv == 0).squeeze(-1).squeeze(-1)
        info = _C.where(zero_pivot & (info == 0), zeros((), dtype=_C.int32) + (j + 1), info)
        if j + 1 == m:
            break
        below = M.narrow(-2, j + 1, m - j - 1)
        # a zero pivot means a zero column below it (the largest is 0):
        # dividing by 1 there leaves it, as LAPACK's getrf
        l_col = below.narrow(-1, j, 1) / _C.where(piv == 0, one, piv)
        parts = [below.narrow(-1, 0, j)] if j else []
        parts.append(l_col)
        if j + 1 < n:
            u_row = M.narrow(-2, j, 1).narrow(-1, j + 1, n - j - 1)
            parts.append(below.narrow(-1, j + 1, n - j - 1) - l_col * u_row)
        M = _C.cat([M.narrow(-2, 0, j + 1), _C.cat(parts, -1)], -2)
    if not pivots:
        piv_t = zeros(tuple(A.shape[:-2]) + (0,), dtype=_C.int64)
    else:
        piv_t = _C.cat(pivots, -1)
    return M, piv_t, info


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): info 0, or the 1-based index of U's first zero
    diagonal element"""
    LU, piv, info = _factor(A, 'linalg.lu_factor_ex', pivot)
    if check_errors and bool((info > 0).any()):
        raise RuntimeError(f"linalg.lu_factor_ex: U[{int(info.max())},{int(info.max())}] is "
                           "zero and using it on lu_solve would result in a division by zero.")
    return linalg_lu_factor_ex(LU, (piv + 1).to(_C.int32), info)


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots); a singular A raises, as PyTorch's"""
    LU, piv, info = _factor(A, 'linalg.lu_factor', pivot)
    if bool((info > 0).any()):
        bad = int(info[info > 0][0]) if info.ndim else int(info)
        raise RuntimeError(
            f"torch.linalg.lu_factor: U[{bad},{bad}] is zero and using it on lu_solve would "
            "result in a division by zero. If you still want to perform the factorization, "
            "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return linalg_lu_factor(LU, (piv + 1).to(_C.int32))


def _permutation(pivots, m, dtype):
    """P (m x m) with A = P L U from 1-based row swaps: the identity's
    rows swapped in order gives P^T"""
    rows = _eye(m, zeros((), dtype=dtype)).expand(*pivots.shape[:-1], m, m)
    for j in range(pivots.shape[-1]):
        p = pivots.narrow(-1, j, 1).to(_C.int64) - 1
        rows = _swap_rows(rows, j, p)
    return rows.transpose(-2, -1)


def _unpack(LU):
    """(L unit lower m x k, U upper k x n) from the packed factor"""
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L = (LU.narrow(-1, 0, k).tril(-1) + _eye_rect(m, k, LU))
    U = LU.narrow(-2, 0, k).triu()
    return L, U


def _eye_rect(m, k, like):
    return (arange(m).unsqueeze(1) == arange(k).unsqueeze(0)).to(like.dtype)


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U; L m x k unit lower, U k x n, k = min(m, n)"""
    LU, piv, _ = _factor(A, 'linalg.lu', pivot)
    L, U = _unpack(LU)
    P = _permutation(piv + 1, A.shape[-2], A.dtype)
    return linalg_lu(P, L, U)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from lu_factor's output (torch.lu_unpack)"""
    empty = zeros(0, dtype=LU_data.dtype)
    L, U = _unpack(LU_data) if unpack_data else (empty, empty)
    P = _permutation(LU_pivots, LU_data.shape[-2], LU_data.dtype) if unpack_pivots else empty
    return namedtuple('lu_unpack', ['P', 'L', 'U'])(P, L, U)


def _apply_swaps(B, pivots, reverse):
    """P^T B (the swaps in order) or P B (in reverse order)"""
    k = pivots.shape[-1]
    batch = tuple(_broadcast(tuple(pivots.shape[:-1]), tuple(B.shape[:-2])))
    B = B.expand(*batch, *B.shape[-2:])
    pivots = pivots.expand(*batch, k)
    for j in (range(k - 1, -1, -1) if reverse else range(k)):
        B = _swap_rows(B, j, pivots.narrow(-1, j, 1).to(_C.int64) - 1)
    return B


def _broadcast(*shapes):
    import numpy as np
    return np.broadcast_shapes(*shapes)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (adjoint: A^H X = B; left=False: X A = B) from A's
    lu_factor"""
    from ._linalg_decomp import solve_triangular
    _check_square(LU, 'linalg.lu_solve')
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: Expected B to have at least 2 dimensions, but "
                           f"it has {B.ndim} dimensions instead")
    if LU.dtype != B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {LU.dtype} and B of type {B.dtype} instead")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    if pivots.shape[-1] != n:
        raise RuntimeError("linalg.lu_solve: Expected LU.size(-1) == pivots.size(-1)")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return lu_solve(LU, pivots, B.mT, left=True, adjoint=not adjoint).mT
    L, U = _unpack(LU)
    if not adjoint:   # P L U X = B
        Y = _apply_swaps(B, pivots, reverse=False)
        Y = solve_triangular(L, Y, upper=False, unitriangular=True)
        return solve_triangular(U, Y, upper=True)
    # U^T L^T P^T X = B
    Y = solve_triangular(U.mT, B, upper=False)
    Y = solve_triangular(L.mT, Y, upper=True, unitriangular=True)
    return _apply_swaps(Y, pivots, reverse=True)


def _vector_rhs(A, B):
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(X, info): linalg.solve through lu_factor_ex; a singular A gives
    info > 0 (and infinities in X) rather than an error"""
    _check_square(A, 'linalg.solve_ex')
    LU, piv, info = lu_factor_ex(A)
    if check_errors and bool((info > 0).any()):
        raise RuntimeError("linalg.solve_ex: The solver failed because the input matrix is "
                           "singular.")
    vector = _vector_rhs(A, B)
    Bm = B.unsqueeze(-1) if vector else B
    if vector and not left:
        Bm = B.unsqueeze(-2)
    X = lu_solve(LU, piv, Bm, left=left)
    if vector:
        X = X.squeeze(-1) if left else X.squeeze(-2)
    return linalg_solve_ex(X, info)


def inv_ex(A, *, check_errors=False, out=None):
    """(A^-1, info) through lu_factor_ex"""
    _check_square(A, 'linalg.inv_ex')
    LU, piv, info = lu_factor_ex(A)
    if check_errors and bool((info > 0).any()):
        raise RuntimeError("linalg.inv_ex: The diagonal element "
                           f"{int(info.max())} is zero, the inversion could not be completed "
                           "because the input matrix is singular.")
    n = A.shape[-1]
    eye = _eye(n, A).expand(*A.shape)
    return linalg_inv_ex(lu_solve(LU, piv, eye), info)
