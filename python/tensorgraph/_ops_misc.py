"""Small PyTorch functions composed from existing ops: ldexp, rsub,
vander, cumulative_trapezoid, mvlgamma, chain_matmul, gcd / lcm of integer
tensors (host numpy, eager only, as the bitwise ops), scalar_tensor,
result_type, can_cast, is_signed, is_same_size, and linalg.solve's
elimination (_linalg_lu)."""
import builtins
import math

import numpy as np

from . import _C
from ._creation import arange, tensor
from ._ops_math import _float, _float_dtype
from ._ops_shape import torch_type_name
from ._ops_stats import _memory_bytes

Tensor = _C.Tensor

__all__ = ['ldexp', 'rsub', 'vander', 'cumulative_trapezoid', 'mvlgamma', 'chain_matmul', 'gcd',
           'lcm', 'scalar_tensor', 'result_type', 'can_cast', 'is_signed', 'is_same_size',
           'real', 'conj', 'angle', 'is_complex', 'is_conj']


# real tensors only (tensorgraph has no complex dtype): PyTorch's complex
# helpers reduce to these
def real(input):
    """input itself: a real tensor is its own real part"""
    return input


def conj(input):
    return input


def is_complex(input):
    return False


def is_conj(input):
    return False


def angle(input):
    """pi where input < 0, else 0 (NaN stays NaN), in a floating dtype"""
    x = _float(input)
    zero = tensor(0.0, dtype=x.dtype)
    return _C.where(x < 0, zero + math.pi, _C.where(x != x, x, zero))


def ldexp(input, other):
    """input * 2**other, in a floating dtype"""
    from ._ops_math import _ranked_promotion
    # PyTorch's input * pow(2, other): the power is other's dtype when
    # floating, else the default float, and then takes part in the product
    pdt = _float_dtype(other.dtype)
    dt = _ranked_promotion(input.dtype, input.ndim == 0, pdt, other.ndim == 0)  # floating
    return input.to(dt) * _C.pow(tensor(2.0, dtype=dt), other.to(dt))


def rsub(input, other, alpha=1):
    r = other - alpha * input if alpha != 1 else other - input
    return _C._set_grad_fn_name(r, 'RsubBackward1' if not isinstance(other, _C.Tensor)
                                else 'RsubBackward0')


def vander(x, N=None, increasing=False):
    """columns x**0 .. x**(N-1) (decreasing powers unless increasing)"""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if not x.dtype.is_floating_point and x.dtype != _C.int64:
        x = x.to(_C.int64)  # PyTorch's integer vander is int64
    if x.shape[0] == 0:
        return x.new_zeros((0, n))
    if n * 256 > _memory_bytes():  # n columns, each a Tensor object until stacked
        raise RuntimeError(f"vander: {n} columns would not fit in memory")
    cols = []
    col = _C.add(x * 0, 1)
    for _ in range(n):
        cols.append(col)
        col = col * x
    if not cols:
        return x.reshape(-1, 1)[:, :0]
    out = _C.stack(cols, 1)
    return out if increasing else out.flip(1)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """running trapezoid integrals along dim (one fewer element)"""
    from ._ops_shape import _dim
    d = _dim(dim, y.ndim)
    n = y.shape[d]
    if n == 0:
        return y.narrow(d, 0, 0) * 1.0
    pair = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    if x is None:
        areas = pair * ((1.0 if dx is None else dx) / 2)
    else:
        if x.ndim == 1:
            shape = [1] * y.ndim
            shape[d] = x.shape[0]
            x = x.reshape(shape)
        h = x.narrow(d, 1, n - 1) - x.narrow(d, 0, n - 1)
        areas = h * pair / 2
    return _C.cumsum(areas, d)


def mvlgamma(input, p):
    """log of the multivariate gamma function of dimension p"""
    from ._ops_special import lgamma
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    # no domain check: PyTorch 1.13 computes the sum of lgammas anywhere
    # (log|gamma| below (p - 1) / 2, inf at its poles)
    # the halves j / 2 by the range op: a p too large fails there at once
    # instead of a Python list growing without bound
    halves = arange(p, dtype=_float_dtype(input.dtype)) / 2
    # + 0.0: PyTorch adds x to its arange (0 last), so at x = -0 the last
    # term's argument is +0 (lgamma's slope there -inf, not -0's +inf)
    x = input.unsqueeze(-1) - halves + 0.0
    return _C.sum(lgamma(x), -1) + p * (p - 1) / 4 * math.log(math.pi)


def chain_matmul(*matrices):
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    out = matrices[0]
    for m in matrices[1:]:
        out = _C.mm(out, m)
    return out


def _int_pair(name, a, b, fn):
    for t in (a, b):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument must be Tensor, not {type(t).__name__}")
    dt = result_type(a, b)  # a bool beside an integer operand takes its type
    if dt.is_floating_point or dt == _C.bool:
        raise RuntimeError(f"\"{name}_cpu\" not implemented for '{torch_type_name(dt)}'")
    if a.is_symbolic or b.is_symbolic:
        raise RuntimeError(f"{name} of integer tensors: not available inside tg.function "
                           "(computed on the host; no C kernel yet)")
    r = fn(a.to(dt).numpy(), b.to(dt).numpy())
    return tensor(np.array(r, order='C'), dtype=dt)  # 0-d stays 0-d


def gcd(input, other):
    return _int_pair('gcd', input, other, np.gcd)


def lcm(input, other):
    return _int_pair('lcm', input, other, np.lcm)


def scalar_tensor(s, *, dtype=None, requires_grad=False):
    return tensor(float(s), dtype=dtype, requires_grad=requires_grad)


def result_type(tensor1, tensor2):
    """the dtype tensor1 op tensor2 gives (numbers promote as in ops)"""
    a = tensor1 if isinstance(tensor1, Tensor) else None
    b = tensor2 if isinstance(tensor2, Tensor) else None
    if a is None:
        if b is None:
            raise TypeError("result_type(): expected at least one Tensor argument")
        a, b, tensor1, tensor2 = b, a, tensor2, tensor1
    if b is not None and a.dtype == _C.bool and b.dtype == _C.bool:
        return _C.bool
    # an empty stand-in keeps the rank class (0-dim or not) that promotion uses
    z1 = a.reshape(-1)[:0] if a.ndim else a
    z2 = (b.reshape(-1)[:0] if b.ndim else b) if b is not None else tensor2
    return _C.add(z1, z2).dtype


_KIND = {_C.bool: 0, _C.uint8: 1, _C.int32: 1, _C.int64: 1, _C.float32: 2, _C.float64: 2}


def can_cast(from_, to):
    """False only where PyTorch refuses an in-place result: a float into an
    integer or bool, an integer into bool"""
    return _KIND[from_] <= _KIND[to]


def is_signed(input):
    return input.dtype not in (_C.bool, _C.uint8)


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)
