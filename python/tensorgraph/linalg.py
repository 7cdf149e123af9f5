"""tensorgraph.linalg: torch.linalg's norms (vector_norm: ord 1 and 2 by
the vector_norm op, ONNX ReduceL1/ReduceL2; inf, -inf, 0 and other p
composed; matrix_norm: 'fro', 1, -1, inf, -inf; norm choosing between
them), and det, slogdet, inv, solve, matrix_power (composed by
elimination in _linalg_lu.py); matmul, diagonal, cross (dim -1), vecdot
and multi_dot (1-D ends as vectors, as PyTorch's); cholesky,
cholesky_ex, solve_triangular, qr, eigh, eigvalsh, svd, svdvals, pinv
and matrix_rank (composed in _linalg_decomp.py), matrix norms 'nuc', 2
and -2 and cond from the singular values. Every function PyTorch gives
out= takes it, with PyTorch's checks (_linalg_out.py)."""
import math

from . import _C
from .autograd import Function
from ._creation import ones_like, zeros_like
from ._linalg_lu import det, inv, matrix_power, slogdet, solve  # noqa: F401
from ._linalg_decomp import (LinAlgError, cholesky, cholesky_ex, eigh, eigvalsh,  # noqa: F401
                             matrix_rank, pinv, qr, solve_triangular, svd, svdvals)
from ._linalg_lu_factor import inv_ex, lu, lu_factor, lu_factor_ex, lu_solve, solve_ex  # noqa
from ._linalg_more import (householder_product, lstsq, matrix_exp, tensorinv,  # noqa: F401
                           tensorsolve, vander)


def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """the ord-norm of x over dim (all elements when None): sum(|x|^ord)^(1/ord),
    inf / -inf the largest / smallest |x|, 0 the count of non-zeros"""
    return _C._set_grad_fn_name(_vector_norm(x, ord, dim, keepdim, dtype),
                                'LinalgVectorNormBackward0')


def _check_identity(x, ord, dim, dims):
    if x.numel() != 0:
        return
    if dim is None:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty "
                           "tensor because the operation does not have an identity")
    for d in dims:
        if x.shape[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on the "
                               f"dimension {d} because this dimension is empty and the "
                               "operation does not have an identity")


def _vector_norm(x, ord, dim, keepdim, dtype):
    if dtype is not None:
        x = _C._cast(x, dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {x.dtype}")
    if ord in (1, 2):
        return _C._vector_norm(x, ord, dim, keepdim)
    dims = _dims(dim, x.ndim)
    if ord < 0 or ord == math.inf:  # no identity: over no elements, refused as PyTorch
        _check_identity(x, ord, dim, dims)
    if ord == math.inf or ord == -math.inf:
        a = x.abs()
        return a.amax(dims, keepdim) if ord > 0 else a.amin(dims, keepdim)
    if ord == 0:  # traced: a zero gradient (custom Functions have no backward there)
        return _count_nonzero(x, dims, keepdim) if _C._is_symbolic(x) else \
            _NonzeroCount.apply(x, dims, keepdim)
    # zeros (of x, or a whole sum) through ones, so that their gradient is
    # PyTorch's 0 rather than 0 * inf
    s = _pow_nonzero(x.abs(), float(ord)).sum(dims, keepdim)
    return _pow_nonzero(s, 1.0 / ord)


def _count_nonzero(x, dims, keepdim):
    """the 0-norm: the count of non-zeros (NaN counts), as |sign(x)| summed"""
    return _C.where(x != x, ones_like(x), x.sign().abs()).sum(dims, keepdim)


class _NonzeroCount(Function):
    """the 0-norm eagerly: PyTorch's result requires grad but its backward
    gives x no gradient (x.grad stays None)"""
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        return _count_nonzero(x, dims, keepdim)

    @staticmethod
    def backward(ctx, grad):
        return None, None, None


def _pow_nonzero(a, p):
    """a ** p for a >= 0; where a is 0, 0 ** p (0, or inf for p < 0: a sum
    with a zero then gives a norm of 0) as a constant, so that its gradient
    is PyTorch's 0 rather than 0 * inf"""
    zero = a == 0
    at_zero = zeros_like(a) if p > 0 else zeros_like(a) + math.inf
    return _C.where(zero, at_zero, _C.where(zero, ones_like(a), a) ** p)


def matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro' (the 2-norm of the entries), 'nuc' (the sum of the singular
    values), 2 / -2 (the largest / smallest one), 1 / -1 (the largest /
    smallest column sum of |A|), inf / -inf (the same over rows) over the
    two dims"""
    if dtype is not None:
        A = _C._cast(A, dtype)
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions.")
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    from ._ops_shape import _dims
    d0, d1 = _dims(dim, A.ndim)  # IndexError out of range; duplicates refused
    if ord == 'fro':
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ('nuc', 2, -2):  # of the singular values: their sum, largest, smallest
        rest = [d for d in range(A.ndim) if d not in (d0, d1)]
        sv = svdvals(A.permute(*rest, d0, d1))
        r = sv.sum(-1) if ord == 'nuc' else sv.amax(-1) if ord == 2 else sv.amin(-1)
        return r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1)) if keepdim else r
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # 1: sum over rows (d0), extreme over columns (d1); inf: the other way
    summed, other = (d0, d1) if abs(ord) == 1 else (d1, d0)
    s = A.abs().sum(summed, keepdim=True)
    r = s.amax(other, keepdim=True) if ord > 0 else s.amin(other, keepdim=True)
    return r if keepdim else r.squeeze((max(d0, d1))).squeeze(min(d0, d1))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a vector norm over one dim (or all, flattened, when
    ord is None), a matrix norm over two dims or of a 2-D input"""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, 'fro', dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim == 1:
            return vector_norm(A, ord, None, keepdim, dtype=dtype)
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A.ndim}D.")
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if len(dim) == 1:
        return vector_norm(A, ord, dim, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                       f"Got {list(dim)}")


def matmul(input, other):
    return _C.matmul(input, other)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


def cross(input, other, *, dim=-1):
    """the 3-vector cross product along dim (-1 by default, unlike torch.cross)"""
    from ._ops_more import cross as _cross
    return _cross(input, other, dim)


def vecdot(x, y, *, dim=-1):
    """sum(x * y) over dim, broadcast (real tensors: no conjugate)"""
    return _C.sum(x * y, dim, False)


def multi_dot(tensors):
    """tensors[0] @ tensors[1] @ ...: the first may be 1-D (a row), the
    last 1-D (a column), the others 2-D"""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, len(ts) - 1))
        if not ok:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D"
                               + (" or 1D" if i in (0, len(ts) - 1) else "") +
                               f" but got {t.ndim}D")
    out = ts[0].unsqueeze(0) if ts[0].ndim == 1 else ts[0]
    for t in ts[1:]:
        out = _C.matmul(out, t.unsqueeze(1) if t.ndim == 1 else t)
    if ts[0].ndim == 1:
        out = out.squeeze(0)
    if ts[-1].ndim == 1:
        out = out.squeeze(-1)
    return out


def cond(A, p=None):
    """the condition number: largest over smallest singular value (p None,
    2; -2 the inverse), else norm(A, p) * norm(inv(A), p)"""
    if p in (None, 2, -2):
        sv = svdvals(A)
        big, small = sv.amax(-1), sv.amin(-1)
        return big / small if p != -2 else small / big
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def _take_out():
    """every function here takes PyTorch's out= (_linalg_out.py)"""
    from ._linalg_out import SPECS, with_out
    g = globals()
    for name in SPECS:
        g[name] = with_out(g[name], name)


_take_out()
del _take_out
