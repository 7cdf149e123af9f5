"""tensorgraph.linalg: torch.linalg's vector_norm (ord 1 and 2; the
vector_norm op, ONNX ReduceL1/ReduceL2), and det, slogdet, inv,
matrix_power (composed by elimination in _linalg_lu.py)."""
from . import _C
from ._linalg_lu import det, inv, matrix_power, slogdet  # noqa: F401


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """the ord-norm of x over dim (all elements when None); ord 1 or 2"""
    if dtype is not None:
        x = _C._cast(x, dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {x.dtype}")
    return _C._vector_norm(x, ord, dim, keepdim)
