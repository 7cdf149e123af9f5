"""linalg.matrix_exp, vander, tensorinv, tensorsolve, householder_product
and lstsq, composed from tensor ops (matmul, the composed inv/solve/qr/
pinv) so autograd differentiates them."""
import math
from collections import namedtuple

from . import _C
from ._creation import arange, ones_like, tensor, zeros
from ._dtype_info import finfo
from ._linalg_lu import _eye

linalg_lstsq = namedtuple('linalg_lstsq', ['solution', 'residuals', 'rank', 'singular_values'])


def _floating(A, name):
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype}")


# ---- matrix_exp ------------------------------------------------------------------------
_TAYLOR_DEGREE = 18


def matrix_exp(A):
    """exp(A) by scaling and squaring: A / 2^s with 1-norm <= 1/2 (s read
    from the data, eager), its Taylor polynomial of degree 18 (truncation
    below 1e-22 relative), squared s times"""
    _floating(A, 'linalg.matrix_exp')
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: Expected a square matrix or batch of square "
                           f"matrices, but got a tensor of size {list(A.shape)}")
    n = A.shape[-1]
    if n == 0 or A.numel() == 0:
        return A.clone()
    norm = float(A.detach().abs().sum(-2).max())  # the largest 1-norm in the batch
    s = math.ceil(math.log2(norm / 0.5)) if math.isfinite(norm) and norm > 0.5 else 0
    X = A / (2.0 ** s)
    eye = _eye(n, A).expand(*A.shape)
    # Horner: I + X (I + X/2 (I + X/3 (...)))
    result = eye
    for k in range(_TAYLOR_DEGREE, 0, -1):
        result = eye + _C.matmul(X, result) / k
    for _ in range(s):
        result = _C.matmul(result, result)
    return result


# ---- vander, tensorinv, tensorsolve ------------------------------------------------------
def vander(x, *, N=None):
    """[..., n, N]: the powers x^0 ... x^(N-1) of each element, increasing
    (N defaults to n)"""
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"linalg.vander(): argument 'x' must be Tensor, not {type(x).__name__}")
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension.")
    n = x.shape[-1]
    N = n if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = ones_like(x).unsqueeze(-1)
    powers = x.unsqueeze(-1).expand(*x.shape, N - 1)
    from ._ops_math import cumprod
    return _C.cat([ones, cumprod(powers, -1)], -1)


def _prod(shape):
    p = 1
    for d in shape:
        p *= d
    return p


def tensorinv(A, ind=2, *, out=None):
    """the inverse of A seen as a matrix of prod(shape[:ind]) rows:
    shaped shape[ind:] + shape[:ind]"""
    from ._linalg_lu import inv
    _floating(A, 'linalg.tensorinv')
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if _prod(rows) != _prod(cols):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {_prod(cols)} != {_prod(rows)}")
    inverse = inv(A.reshape(_prod(rows), _prod(cols)))
    return inverse.reshape(*(cols + rows))


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B: A's leading dims are B's, the
    rest X's (dims: A's dims moved to the end first)"""
    from ._linalg_lu import solve
    _floating(A, 'linalg.tensorsolve')
    if dims is not None:
        from ._ops_shape import movedim
        dims = [d % A.ndim for d in dims]
        A = movedim(A, dims, list(range(A.ndim - len(dims), A.ndim)))
    result_shape = tuple(A.shape[B.ndim:])
    rows = _prod(tuple(B.shape))
    if tuple(A.shape[:B.ndim]) != tuple(B.shape) or _prod(result_shape) != rows:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]"
                           ") == prod(self.shape[:other.ndim]), but got "
                           f"{_prod(result_shape)} != {_prod(tuple(A.shape[:B.ndim]))}")
    X = solve(A.reshape(rows, rows), B.reshape(rows))
    return X.reshape(*result_shape)


# ---- householder_product -------------------------------------------------------------------
def householder_product(A, tau, *, out=None):
    """the first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with
    v_i 1 at row i, zero above and A[i+1:, i] below (LAPACK's orgqr)"""
    _floating(A, 'linalg.householder_product')
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 "
                           "dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    k = tau.shape[-1]
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError("torch.linalg.householder_product: Expected batch dimensions of tau "
                           f"to be equal to input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError("torch.linalg.householder_product: tau dtype "
                           f"{tau.dtype} does not match input dtype {A.dtype}")
    rows = arange(m)
    Q = (rows.unsqueeze(1) == arange(n).unsqueeze(0)).to(A.dtype).expand(*A.shape)
    one, zero = tensor(1.0, dtype=A.dtype), tensor(0.0, dtype=A.dtype)
    for i in range(k - 1, -1, -1):
        col = A.narrow(-1, i, 1)                                       # [..., m, 1]
        v = _C.where((rows < i).unsqueeze(-1), zero, _C.where((rows == i).unsqueeze(-1),
                                                              one, col))
        t = tau.narrow(-1, i, 1).unsqueeze(-1)                         # [..., 1, 1]
        Q = Q - t * _C.matmul(v, _C.matmul(v.transpose(-2, -1), Q))
    return Q


# ---- lstsq --------------------------------------------------------------------------------
_DRIVERS = ('gels', 'gelsy', 'gelsd', 'gelss')


def lstsq(A, B, rcond=None, *, driver=None):
    """the least-squares (minimum-norm) solution of A X = B as
    (solution, residuals, rank, singular_values), PyTorch's fields for
    each driver (CPU default 'gelsy': no residuals, no singular values).
    Full-rank tall or square A: by QR; otherwise by the pseudo-inverse
    with singular values below rcond * S_max dropped"""
    from ._linalg_decomp import pinv, qr, solve_triangular, svdvals
    _floating(A, 'linalg.lstsq')
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if A.dtype != B.dtype:
        raise RuntimeError("torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {A.dtype} and other's dtype "
                           f"{B.dtype}")
    driver = 'gelsy' if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    if Bm.shape[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    import numpy as np
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(Bm.shape[:-2])))
    A = A.expand(*batch, m, n)
    Bm = Bm.expand(*batch, m, Bm.shape[-1])
    if rcond is None:
        rcond = finfo(A.dtype).eps * max(m, n)
    S = svdvals(A)
    smax = S.narrow(-1, 0, 1) if S.shape[-1] else S
    rank = _C.sum((S > smax * rcond).to(_C.int64), -1)
    full = S.shape[-1] == 0 or bool((rank == min(m, n)).all())
    if driver == 'gels' or (full and m >= n):
        Q, R = qr(A)
        X = solve_triangular(R, _C.matmul(Q.transpose(-2, -1), Bm), upper=True)
    else:
        X = _C.matmul(pinv(A, rtol=rcond), Bm)
    residuals = zeros(0, dtype=A.dtype)
    if driver != 'gelsy' and m > n and full:
        residuals = ((_C.matmul(A, X) - Bm) ** 2).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    if driver == 'gels':
        rank = zeros(0, dtype=_C.int64)
    singular_values = S if driver in ('gelsd', 'gelss') else zeros(0, dtype=A.dtype)
    return linalg_lstsq(X.squeeze(-1) if vector else X, residuals, rank, singular_values)
