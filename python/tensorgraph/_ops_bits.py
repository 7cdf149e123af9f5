"""Bit shifts on integer tensors (<< and >>, bitwise_left_shift /
bitwise_right_shift) and index_put / index_put_. Shifts are products
with / floor divisions by powers of two, which for integers are exactly
shifts (>> of a negative value rounds towards -inf, as an arithmetic
shift does; an overflowing << wraps). Shift counts outside [0, bits)
behave as PyTorch 1.13's on x86, whose C++ shifts the hardware runs:
uint8 and int32 values shift as 32-bit ints, int64 as 64-bit ones, and
the count is taken modulo that width (a count of -1 is 31 or 63)."""
import builtins

from . import _C
from ._creation import tensor

Tensor = _C.Tensor

__all__ = ['bitwise_left_shift', 'bitwise_right_shift', 'index_put']


def _shift_operands(input, other, name):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{name}(): expected a Tensor")
    from ._ops_cover import _scalar_dtype
    if not isinstance(other, Tensor):
        other = tensor(other, dtype=None if isinstance(other, float) else
                       _scalar_dtype(other, input))
    if not isinstance(input, Tensor):
        input = tensor(input, dtype=None if isinstance(input, float) else
                       _scalar_dtype(input, other))
    from ._ops_misc import result_type  # a 0-d operand promotes only across kinds
    dt = result_type(input, other)
    if dt.is_floating_point:
        raise RuntimeError(f"\"{name}_cpu\" not implemented for "
                           f"'{'Float' if dt == _C.float32 else 'Double'}'")
    if dt == _C.bool:
        dt = _C.int64
    return input.to(dt), other.to(dt), dt


def _pow2(k):
    return _C.pow(tensor(2, dtype=_C.int64), k)


def _operands64(input, other, name):
    """the value and count as int64 tensors, the count reduced modulo the
    width the value shifts at (32 bits below int64), and the dtype"""
    a, k, dt = _shift_operands(input, other, name)
    width = 64 if dt == _C.int64 else 32
    k = _C.remainder(k.to(_C.int64), tensor(width, dtype=_C.int64))
    # two factors of at most 2**32 each: 2**63 is not an int64
    half = _C.floor_divide(k, tensor(2, dtype=_C.int64))
    return a.to(_C.int64), _pow2(half), _pow2(k - half), dt


def bitwise_left_shift(input, other):
    a, p, q, dt = _operands64(input, other, 'lshift')
    return (a * p * q).to(dt)


def bitwise_right_shift(input, other):
    a, p, q, dt = _operands64(input, other, 'rshift')
    return _C.floor_divide(_C.floor_divide(a, p), q).to(dt)


def _update(self, fn, *args, node=None):
    from ._tensor import _update as upd
    return upd(self, fn, args, {}, node)


def bitwise_left_shift_(self, other):
    return _update(self, bitwise_left_shift, other)


def bitwise_right_shift_(self, other):
    return _update(self, bitwise_right_shift, other)


def _flat_index(shape, indices):
    """the row-major position over shape[:len(indices)] of each broadcast
    index combination (bool masks become their nonzero positions)"""
    idx = []
    for i in indices:
        i = i if isinstance(i, Tensor) else tensor(i)
        if not i.is_symbolic and i.numel() and i.dtype not in (_C.bool, _C.uint8):
            n = shape[len(idx)] if len(idx) < len(shape) else 0
            vals = i.reshape(-1).tolist()  # concrete indices: checked on the host
            if builtins.max(vals) >= n or builtins.min(vals) < -n:
                raise IndexError(f"index out of range in index_put: dim {len(idx)} has size {n}")
        if i.dtype == _C.bool or i.dtype == _C.uint8:
            from ._ops_shape import nonzero
            idx.extend(nonzero(i).unbind(1))
        elif i.dtype != _C.int64:  # PyTorch 1.13 refuses int32 too
            raise IndexError("tensors used as indices must be long, byte or bool tensors")
        else:
            idx.append(i.to(_C.int64))
    if len(idx) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} "
                         f"(got {len(idx)})")
    from ._ops_shape import broadcast_tensors
    idx = broadcast_tensors(*idx)
    lin = None
    for d, i in enumerate(idx):
        n = shape[d]
        i = _C.where(i < 0, i + n, i)
        lin = i if lin is None else lin * n + i
    return lin, len(idx)


def index_put(input, indices, values, accumulate=False):
    """input with values written at input[indices] (a tuple of index
    tensors); accumulate=True adds them, summing repeated positions"""
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put(): indices must be a tuple of Tensors")
    values = values if isinstance(values, Tensor) else tensor(values, dtype=input.dtype)
    if values.dtype != input.dtype:
        from ._indexing import check_index_put_dtypes
        check_index_put_dtypes(input, values, tuple(indices))
    if not accumulate:
        out = input.clone()
        out[tuple(indices)] = values
        return out
    lin, k = _flat_index(input.shape, indices)
    rest = tuple(input.shape[k:])
    flat = input.reshape((-1,) + rest)
    src = values.to(input.dtype).expand(*(tuple(lin.shape) + rest)).reshape((-1,) + rest)
    from ._ops_shape import index_add
    return index_add(flat, 0, lin.reshape(-1), src).reshape(input.shape)


def index_put_(self, indices, values, accumulate=False):
    return _update(self, index_put, indices, values, accumulate, node='IndexPutBackward0')
