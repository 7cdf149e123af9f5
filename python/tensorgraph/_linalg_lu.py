"""Determinants and inverses of square matrices (batched over leading
dims), composed: Gaussian elimination with partial pivoting written with
tensor ops (a Python loop over the n columns), so autograd differentiates
through it. The pivot choice is discrete, which is what the true
derivative assumes away, so the gradients are those of det / inv wherever
the matrix is invertible. Cost: n steps of O(n^2) tensor work each."""
from . import _C
from ._creation import arange, tensor, zeros

Tensor = _C.Tensor


def _check_square(A, name):
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype}")


def _eye(n, like):
    """the n x n identity in like's dtype"""
    return (arange(n).unsqueeze(1) == arange(n).unsqueeze(0)).to(like.dtype)


def _swap_rows(M, k, p):
    """M with rows k and p[...] exchanged (p: per-matrix row numbers)"""
    n = M.shape[-2]
    rows = arange(n).expand(*p.shape[:-1], n) if p.ndim > 1 else arange(n)
    rows = _C.where(rows == k, p, _C.where(rows == p, zeros((), dtype=_C.int64) + k, rows))
    idx = rows.unsqueeze(-1).expand(*M.shape[:-2], n, M.shape[-1])
    return _C.gather(M, -2, idx)


def _pivot(M, k):
    """the row (>= k) of the largest |M[..., r, k]|, shaped [..., 1]"""
    col = M.narrow(-1, k, 1).narrow(-2, k, M.shape[-2] - k).squeeze(-1)
    return _C.argmax(col.abs(), -1, True) + k  # argmax has no gradient


def _lu_pivots(A):
    """(the diagonal of U, the sign of the row permutation) of A = P L U"""
    n = A.shape[-1]
    U = A
    sign = zeros(A.shape[:-2], dtype=A.dtype) + 1
    diag = []
    for k in range(n):
        p = _pivot(U, k)
        U = _swap_rows(U, k, p)
        sign = _C.where(p.squeeze(-1) != k, -sign, sign)
        piv = U.narrow(-2, k, 1).narrow(-1, k, 1)          # [..., 1, 1]
        diag.append(piv.squeeze(-1).squeeze(-1))
        if k + 1 < n:
            safe = _C.where(piv == 0, tensor(1.0, dtype=A.dtype), piv)
            below = U.narrow(-2, k + 1, n - k - 1)
            f = below.narrow(-1, k, 1) / safe              # [..., n-k-1, 1]
            below = below - f * U.narrow(-2, k, 1)
            U = _C.cat([U.narrow(-2, 0, k + 1), below], -2)
    return _C.stack(diag, -1), sign


def det(A):
    """the determinant of each square matrix in A (0 for a singular one)"""
    _check_square(A, 'linalg.det')
    if A.shape[-1] == 0:
        return zeros(A.shape[:-2], dtype=A.dtype) + 1
    d, sign = _lu_pivots(A)
    return sign * _C.prod(d, -1)


def slogdet(A):
    """(sign, log|det|) of each matrix: log|det| is a sum of logs, so it
    does not overflow where det would"""
    from .return_types import slogdet as _slogdet
    _check_square(A, 'linalg.slogdet')
    if A.shape[-1] == 0:
        one = zeros(A.shape[:-2], dtype=A.dtype) + 1
        return _slogdet(one, one * 0)
    d, sign = _lu_pivots(A)
    s = sign * _C.prod(_C.sign(d), -1)  # sign's gradient is 0
    return _slogdet(s, _C.sum(_C.log(d.abs()), -1))


def logdet(A):
    """log det A: NaN for a negative determinant, -inf for a zero one"""
    s, la = slogdet(A)
    nan = tensor(float('nan'), dtype=A.dtype)
    return _C.where(s < 0, nan, la)


def _gauss_jordan(A, B, name):
    """A^-1 B by Gauss-Jordan elimination with partial pivoting on [A | B];
    a singular A raises, as PyTorch's (eager: it reads the pivots)"""
    n = A.shape[-1]
    M = _C.cat([A, B], -1)
    for k in range(n):
        p = _pivot(M, k)
        M = _swap_rows(M, k, p)
        piv = M.narrow(-2, k, 1).narrow(-1, k, 1)
        if not piv.is_symbolic and bool((piv == 0).any()):
            raise RuntimeError(f"{name}: The diagonal element {k + 1} is zero, the "
                               "inversion could not be completed because the input matrix is "
                               "singular.")
        row = M.narrow(-2, k, 1) / piv
        f = M.narrow(-1, k, 1)                              # [..., n, 1]
        is_k = (arange(n) == k).reshape(n, 1)
        M = _C.where(is_k, row, M - f * row)
    return M.narrow(-1, n, B.shape[-1])


def inv(A):
    """the inverse of each square matrix"""
    _check_square(A, 'linalg.inv')
    n = A.shape[-1]
    return _gauss_jordan(A, _eye(n, A).expand(*A.shape), 'linalg.inv')


def solve(A, B, *, left=True):
    """X with A X = B (B a matrix or, when its shape is A's batch shape
    plus n, a batch of vectors); batch dims broadcast"""
    _check_square(A, 'linalg.solve')
    if not left:
        raise NotImplementedError("linalg.solve: left=False is not supported")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {A.dtype} and B of type {B.dtype} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({A.shape[-2]}x{A.shape[-1]} and {Bm.shape[-2]}x"
                           f"{Bm.shape[-1]})")
    import numpy as np
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(Bm.shape[:-2])))
    A = A.expand(*batch, *A.shape[-2:])
    Bm = Bm.expand(*batch, *Bm.shape[-2:])
    X = _gauss_jordan(A, Bm, 'linalg.solve')
    return X.squeeze(-1) if vector else X


def matrix_power(A, n):
    """A multiplied by itself n times (the identity for 0, powers of the
    inverse for n < 0), by repeated squaring"""
    if not isinstance(A, Tensor):
        raise TypeError(f"matrix_power(): argument 'input' must be Tensor, not "
                        f"{type(A).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {A.shape[-2] if A.ndim >= 2 else 1} by "
                           f"{A.shape[-1] if A.ndim else 1} matrices")
    if not isinstance(n, int):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        m = A.shape[-1]
        eye = (arange(m).unsqueeze(1) == arange(m).unsqueeze(0)).to(A.dtype)
        # a where that always picks the identity: connected to A with a
        # zero gradient, as PyTorch's (A * 0 would turn inf into NaN)
        return _C.where(zeros((), dtype=_C.bool) == 0, eye.expand(*A.shape), A)
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else _C.matmul(result, base)
        n >>= 1
        if n:
            base = _C.matmul(base, base)
    return result
