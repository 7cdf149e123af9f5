"""torch.svd_lowrank and torch.pca_lowrank: a rank-q singular value
decomposition by randomized range finding (Halko, Martinsson and Tropp,
2011, algorithm 4.4): Q an orthonormal basis of A's range sampled by a
Gaussian matrix (tensorgraph's generator) and refined by niter power
iterations, then the exact SVD of the small Q^T A. Composed of matmul, qr
and svd, so differentiable; batched over leading dims. As PyTorch's, the
transpose is factored where that keeps the small matrix small (m < n or
n > q)."""
from . import _C

__all__ = ['svd_lowrank', 'pca_lowrank']


def _basis(A, q, niter, M):
    """[..., m, q] orthonormal columns spanning (A - M)'s dominant range"""
    from ._creation import randn
    from .linalg import qr

    def times(X):
        return A.matmul(X) if M is None else A.matmul(X) - M.matmul(X)

    def times_t(X):
        return A.mT.matmul(X) if M is None else A.mT.matmul(X) - M.mT.matmul(X)

    R = randn(A.shape[-1], q, dtype=A.dtype)
    Q = qr(times(R)).Q
    for _ in range(niter):
        Q = qr(times_t(Q)).Q
        Q = qr(times(Q)).Q
    return Q


def _float_matrix(A, name):
    """A as a float matrix (integers in the default dtype, as PyTorch's
    low-rank functions compute them), with linalg's checks"""
    from ._linalg_lu_factor import _check_matrix
    if isinstance(A, _C.Tensor) and not A.dtype.is_floating_point:
        from ._ops_math import get_default_dtype
        A = A.to(get_default_dtype())
    _check_matrix(A, name)
    return A


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V): A - M ~ U diag(S) V^T with U [..., m, q], S [..., q], V
    [..., n, q]"""
    from .linalg import svd
    A = _float_matrix(A, 'svd_lowrank')
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.to(A.dtype).broadcast_to(A.shape)
    if m < n or n > q:
        # the transpose's basis: B = (A - M) Q is [m, q], V = Q V_B
        Qt = _basis(A.mT, q, niter, None if M is None else M.mT)
        B = A.matmul(Qt) if M is None else A.matmul(Qt) - M.matmul(Qt)
        U, S, Vh = svd(B, full_matrices=False)
        return U, S, Qt.matmul(Vh.mT)
    Q = _basis(A, q, niter, M)
    B = Q.mT.matmul(A) if M is None else Q.mT.matmul(A) - Q.mT.matmul(M)
    U, S, Vh = svd(B, full_matrices=False)
    return Q.matmul(U), S, Vh.mT


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the rank-q SVD of A with its columns' means removed
    (center=True): V's columns are the principal directions"""
    A = _float_matrix(A, 'pca_lowrank')
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(-2, keepdim=True)
    return svd_lowrank(A, q, niter=niter)
