"""nn.utils.parametrizations: orthogonal (maps matrix_exp, cayley and
householder, with or without the trivialization's base) and spectral_norm
(power iteration on buffers _u, _v), registered with parametrize, with
PyTorch's algorithms so the same weights give the same results."""
import tensorgraph as tg

from ... import _C
from ..._creation import zeros, zeros_like
from ..._ops_math import eye
from ..._dtype_info import finfo
from ..._grad_mode import no_grad
from ... import linalg
from .. import functional as F
from ..module import Module
from . import parametrize

__all__ = ['orthogonal', 'spectral_norm']

_MAPS = ('matrix_exp', 'cayley', 'householder')


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    tol = 10.0 * n * finfo(Q.dtype).eps
    return bool(tg.isclose(Q.mT @ Q, eye(k, dtype=Q.dtype), rtol=1e-5, atol=tol).all())


def _make_orthogonal(A):
    """the Q of A = QR with R's diagonal made positive"""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer('base', None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ('matrix_exp', 'cayley'):
            X = X.tril()
            if n != k:   # embedded in a square matrix
                X = _C.cat([X, zeros(*X.shape[:-2], n, n - k, dtype=X.dtype)], -1)
            A = X - X.mT   # skew-symmetric
            if self.orthogonal_map == 'matrix_exp':
                Q = linalg.matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype)
                Q = linalg.solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = linalg.householder_product(A, tau)
            # the diagonal of X (+-1) picks each column's sign; no gradient
            Q = Q * X.diagonal(dim1=-2, dim2=-1).detach().int().to(Q.dtype).unsqueeze(-2)
        if 'base' in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if tuple(Q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {tuple(Q.shape)}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if 'base' not in self._buffers:
            if self.orthogonal_map in ('matrix_exp', 'cayley'):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            # householder: geqrf's reflectors, the diagonal the signs of R's
            # (flipped where no reflection was made: forward's tau is 2 there)
            A, tau = _geqrf(Q)
            d = A.diagonal(dim1=-2, dim2=-1)
            signs = _C.where(tau == 0, -d.sign(), d.sign())
            A = A - d.diag_embed() + signs.diag_embed() if n == k else \
                A - _pad_diag(d, n, k) + _pad_diag(signs, n, k)
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:   # completed to an n x n orthogonal matrix by random columns
            from ..._creation import randn
            N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(_C.cat([Q, N], -1))
        self.base = Q
        # -Id: the Householder map of it is the identity (and exp/cayley's 0)
        return zeros_like(Q_init) + _neg_eye(Q_init.shape, Q_init.dtype)


def _pad_diag(d, n, k):
    """an n x k matrix with d on its diagonal"""
    square = d.diag_embed()
    return _C.cat([square, zeros(*tuple(d.shape[:-1]), n - k, k, dtype=d.dtype)], -2)


def _neg_eye(shape, dtype):
    from ..._creation import arange
    rows = arange(shape[-2]).unsqueeze(1)
    cols = arange(shape[-1]).unsqueeze(0)
    return -((rows == cols).to(dtype))


def _geqrf(Q):
    """LAPACK's geqrf of a tall matrix (batched): R on and above the
    diagonal, the reflectors' tails below, and tau (dlarfg's choices:
    beta = -sign(alpha) |x|, no reflection where the tail is zero)"""
    k = Q.shape[-1]
    A = Q
    taus = []
    for j in range(k):
        col = A[..., j:, j]
        alpha, tail = col[..., :1], col[..., 1:]
        tail_norm = linalg.vector_norm(tail, dim=-1, keepdim=True)
        norm = linalg.vector_norm(col, dim=-1, keepdim=True)
        sign = _C.where(alpha < 0, alpha * 0 - 1, alpha * 0 + 1)
        skip = tail_norm == 0
        beta = _C.where(skip, alpha, -sign * norm)
        safe = _C.where(skip, alpha * 0 + 1, alpha - beta)
        v = _C.cat([alpha * 0 + 1, tail / safe], -1)                     # [..., m - j]
        tau = _C.where(skip, alpha * 0, (beta - alpha) / _C.where(skip, alpha * 0 + 1, beta))
        # H = I - tau v v^T on the columns after j (the ones before hold
        # earlier reflectors); column j: beta on the diagonal, v's tail below
        block = A[..., j:, j + 1:]
        w = (v.unsqueeze(-1) * block).sum(-2, keepdim=True)
        block = block - tau.unsqueeze(-1) * v.unsqueeze(-1) * w
        block = _C.cat([A[..., j:, :j], _C.cat([beta, v[..., 1:]], -1).unsqueeze(-1), block],
                       -1)
        A = _C.cat([A[..., :j, :], block], -2)
        taus.append(tau)
    return A, _C.cat(taus, -1)


def orthogonal(module, name='weight', orthogonal_map=None, *, use_trivialization=True):
    """module.name (at least 2-D) parametrized as an orthogonal matrix
    (batches of them); default map matrix_exp for square matrices,
    householder otherwise"""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = 'matrix_exp' if weight.shape[-2] == weight.shape[-1] \
            else 'householder'
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            from ..._creation import randn
            self.register_buffer('_u', F.normalize(randn(h, dtype=weight.dtype), dim=0,
                                                   eps=self.eps))
            self.register_buffer('_v', F.normalize(randn(w, dtype=weight.dtype), dim=0,
                                                   eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            from ..._ops_shape import movedim
            weight = movedim(weight, self.dim, 0)
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            W = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u = F.normalize(W @ self._v, dim=0, eps=self.eps)
                self._v = F.normalize(W.T @ self._u, dim=0, eps=self.eps)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (weight_mat @ v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """module.name divided by its largest singular value (estimated by
    power iteration, one step per training forward)"""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d,
                                       ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
