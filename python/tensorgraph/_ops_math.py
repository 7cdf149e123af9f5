"""PyTorch's elementwise math functions that compose existing ops:
lerp, addcmul/addcdiv, trunc/frac, logaddexp, hypot, atan2, isclose,
floor_divide, clamp with tensor bounds, cumprod/diff, logit, eye; and
square (the C op) taking bool inputs as PyTorch does."""
import builtins
import math

import numpy as np

from . import _C
from ._creation import _dt, arange, tensor, zeros
from ._grad_mode import no_grad as _no_grad

Tensor = _C.Tensor

__all__ = ['isreal', 'lerp', 'addcmul',
           'addcdiv', 'square', 'trunc', 'fix', 'frac',
           'logaddexp', 'logaddexp2', 'hypot', 'atan2', 'arctan2', 'isclose', 'floor_divide',
           'div', 'divide',
           'clamp', 'clip', 'clamp_min', 'clamp_max', 'cumprod', 'diff', 'logit', 'eye',
           'get_default_dtype', 'set_default_dtype', 'is_complex', 'deg2rad', 'rad2deg',
           'float_power', 'signbit',
           'sgn', 'positive', 'absolute', 'round']


def _t(x, like=None):
    """a Python number as a 0-d tensor typed next to `like`"""
    if isinstance(x, Tensor):
        return x
    if like is not None and isinstance(x, (int, float, bool)):
        return _C.add(zeros((), dtype=like.dtype), x) if not isinstance(x, builtins.bool) \
            else tensor(x)
    return tensor(x)


def _float_dtype(dt):
    """the dtype PyTorch's floating-point functions compute an input of
    dtype dt in: dt when floating, else (integers, bools) the default float"""
    return dt if dt.is_floating_point else _C._get_default_dtype()


def _float(x):
    """x converted to _float_dtype (integer and bool inputs only)"""
    return x if x.dtype.is_floating_point else x.to(_float_dtype(x.dtype))


_CATEGORY = {_C.bool: 0, _C.uint8: 1, _C.int32: 1, _C.int64: 1, _C.float32: 2, _C.float64: 2}


def _result_dtype(a, b):
    """PyTorch's result type of two tensors: a 0-d tensor next to a
    dimensioned one decides the dtype only when its category (bool <
    integer < floating point) is higher (float32 with a 0-d float64 is
    float32, int32 with a 0-d float64 float64)"""
    return _ranked_promotion(a.dtype, a.ndim == 0, b.dtype, b.ndim == 0)


def _ranked_promotion(da, a0, db, b0):
    """_result_dtype of a dtype da (0-d when a0) and db (0-d when b0)"""
    if a0 != b0:
        dim, zero = (db, da) if a0 else (da, db)
        return zero if _CATEGORY[zero] > _CATEGORY[dim] else dim
    return _C.promote_types(da, db)


def _float_pair(a, b, name=None):
    """a and b converted to the dtype a floating-point binary function
    computes in: their result type, the default float for integers (with
    a name: both must be tensors, PyTorch's TypeError otherwise)"""
    if name is not None:
        for i, t in enumerate((a, b)):
            if not isinstance(t, Tensor):
                raise TypeError(f"{name}(): argument '{('input', 'other')[i]}' (position "
                                f"{i + 1}) must be Tensor, not {type(t).__name__}")
    dt = _float_dtype(_result_dtype(a, b))
    return a.to(dt), b.to(dt)


# the tests of values are C ops (their table rows); imported here for isclose
isnan, isinf, isfinite = _C.isnan, _C.isinf, _C.isfinite


def isreal(input):
    return _C.logical_not(zeros(input.shape, dtype=_C.bool))


def is_complex(input):
    return False


def signbit(input):
    if not input.dtype.is_floating_point:
        return input < 0
    # -0.0 has its sign bit set: 1 / -0.0 is -inf
    return (input < 0) | ((input == 0) & (1.0 / input < 0))


def lerp(input, end, weight):
    """input + weight * (end - input), computed from the nearer end as
    PyTorch does (exact at weight 0 and 1)"""
    w = _t(weight, input)
    d = end - input
    return _C._set_grad_fn_name(_C.where(w.abs() < 0.5, input + w * d, end - d * (1 - w)),
                                'LerpBackward1' if isinstance(weight, Tensor) else 'LerpBackward0')


def addcmul(input, tensor1, tensor2, *, value=1):
    return input + value * (tensor1 * tensor2) if value != 1 else input + tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value=1):
    if not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 "
                           "and tensor2. ")
    q = tensor1 / tensor2
    return input + value * q if value != 1 else input + q


def square(input):
    # the C op has no bool rows; PyTorch squares bools as int64
    if input.dtype == _C.bool:
        input = input.to(_C.int64)
    return _C.square(input)


def trunc(input):
    """rounding toward zero (exact; gradient 0, as PyTorch's)"""
    if not input.dtype.is_floating_point:
        return input.clone()
    return _C.where(input >= 0, input.floor(), input.ceil())


fix = trunc


def round(input, *, decimals=0):  # noqa: A001  (PyTorch's name)
    """to the nearest integer, halves to even; with decimals, to that many
    decimal places (scaled by 10**decimals, rounded, scaled back, as
    PyTorch)"""
    if decimals == 0 or not input.dtype.is_floating_point:
        return _C.round(input)
    scale = tensor(10.0 ** builtins.abs(decimals), dtype=input.dtype)
    if decimals > 0:
        return _C.round(input * scale) / scale
    return _C.round(input / scale) * scale


def frac(input):
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"frac_cpu\" not implemented for '{input.dtype}'")
    return input - trunc(input)


def logaddexp(input, other):
    """log(exp(a) + exp(b)) without overflow: the larger plus
    log1p(exp(-|a - b|)), as the larger plus softplus of the difference in
    each branch, so that both derivatives are smooth through a tie (the
    second is sigmoid' there, as PyTorch's; max and |a - b| gave 0)"""
    a, b = _float_pair(input, other, 'logaddexp')
    r = _C.where(a >= b, a + _C.softplus(b - a), b + _C.softplus(a - b))
    # equal infinities: a - b is NaN, the answer is that infinity
    return _C.where((a == b) & (a.abs() == math.inf), a, r)


def logaddexp2(input, other):
    ln2 = math.log(2.0)
    a, b = _float_pair(input, other, 'logaddexp2')
    return logaddexp(a * ln2, b * ln2) / ln2


def hypot(input, other):
    """sqrt(a^2 + b^2) scaled by the larger magnitude (no overflow or
    underflow in the squares)"""
    a, b = _float_pair(input, other, 'hypot')
    # m sqrt((a/m)^2 + (b/m)^2) is sqrt(a^2 + b^2) for any m > 0: m, the
    # larger magnitude, is held constant, so the derivatives are those of
    # sqrt(a^2 + b^2) (b / h, and 1 / |a| as the second at b = 0; NaN at
    # the origin, as PyTorch's), not of the abs and max that chose m
    m = _C.maximum(a.abs(), b.abs()).detach()
    safe = _C.where(m == 0, _C.add(zeros((), dtype=m.dtype), 1), m)
    ra, rb = a / safe, b / safe
    h = safe * _C.sqrt(ra * ra + rb * rb)
    return _C.where(m == math.inf, m, h)


def _atan2_forward(ctx, y, x):
    ctx.save_for_backward(y, x)
    if y.is_symbolic or x.is_symbolic:
        raise RuntimeError("atan2: not available inside tg.function (no C op yet)")
    yb, xb = np.broadcast_arrays(y.detach().numpy(), x.detach().numpy())
    return tensor(np.arctan2(yb, xb), dtype=y.dtype)


def _atan2_backward(ctx, g):
    y, x = ctx.saved_tensors
    d = x * x + y * y
    gy, gx = g * x / d, -g * y / d
    return gy.sum_to_size(tuple(y.shape)), gx.sum_to_size(tuple(x.shape))


_Atan2 = None


def atan2(input, other):
    """the angle of (other, input) in (-pi, pi]; computed on the host
    (eager mode only) until a C op exists, gradient composed"""
    global _Atan2
    if _Atan2 is None:
        from .autograd import Function
        _Atan2 = type('Atan2', (Function,), {'forward': staticmethod(_atan2_forward),
                                             'backward': staticmethod(_atan2_backward)})
    return _C._set_grad_fn_name(_Atan2.apply(*_float_pair(input, other, 'atan2')), 'Atan2Backward0')


arctan2 = atan2


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input.dtype != other.dtype:
        from ._ops_shape import torch_type_name
        raise RuntimeError(f"{torch_type_name(input.dtype)} did not match "
                           f"{torch_type_name(other.dtype)}")
    # bool too: False and True are 1 apart, close under a tolerance of 1
    # (PyTorch compares them as numbers, in the default dtype)
    a, b = input.to(_C.float64), other.to(_C.float64)
    eq = a == b
    close = (a - b).abs() <= atol + rtol * b.abs()
    close = close & isfinite(a) & isfinite(b)
    r = eq | close
    if equal_nan:
        r = r | (isnan(a) & isnan(b))
    return r


floor_divide = _C.floor_divide  # exact for integers; floats rounded as PyTorch


def div(input, other, *, rounding_mode=None):
    """true division, or the quotient rounded down ('floor') or toward
    zero ('trunc'), integers exactly, as torch.div"""
    if rounding_mode is None:
        return _C.div(input, other)
    if rounding_mode == 'floor':  # PyTorch's node for a rounding mode: DivBackward2
        return _C._set_grad_fn_name(_C.floor_divide(input, other), 'DivBackward2')
    if rounding_mode == 'trunc':
        return _C._set_grad_fn_name(_C._trunc_divide(input, other), 'DivBackward2')
    raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                       f"but found '{rounding_mode}'")


divide = div


def clamp(input, min=None, max=None):  # noqa: A002  (PyTorch's names)
    """clamp with number or tensor bounds (tensors: maximum then minimum,
    so min > max gives max, as in PyTorch)"""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    min, max = _clamp_overload(min, max)
    if not isinstance(min, Tensor) and not isinstance(max, Tensor):
        # number bounds promote as in any op: an integer tensor clamped
        # to float bounds gives floats, a bool one clamped to ints int64
        dt = input.dtype
        for bound in (min, max):
            if bound is not None:
                dt = _C.promote_types(dt, _C.add(input.reshape(-1)[:0], bound).dtype)
        return _C.clamp(input if dt == input.dtype else input.to(dt), min, max)
    # PyTorch's clamp with tensor bounds: the input's gradient wherever it
    # is kept, ties included (min <= x <= max), a bound's where it replaces
    # x; a NaN input or bound gives NaN; min > max gives max
    out = input
    for bound, outside in ((min, _C.lt), (max, _C.gt)):
        if bound is not None:
            b = _t(bound, input)
            take = outside(out, b)
            if b.dtype.is_floating_point:
                take = take | _C.isnan(b)
            out = _C.where(take, b, out)
    return out


clip = clamp


def _clamp_overload(lo, hi):
    """PyTorch's two forms: (Tensor min, Tensor max) or (Number min,
    Number max). A tensor beside a number binds as a number when it is
    0-d and does not require grad (its value: the number form's dtype
    promotion) and is refused otherwise"""
    if lo is None or hi is None or isinstance(lo, Tensor) == isinstance(hi, Tensor):
        return lo, hi
    t = lo if isinstance(lo, Tensor) else hi
    if t.dim() != 0 or t.requires_grad:
        names = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__
                          for v in (lo, hi))
        raise TypeError(f"clamp() received an invalid combination of arguments - got "
                        f"(Tensor, {names}), but expected one of:\n"
                        " * (Tensor input, Tensor min, Tensor max)\n"
                        " * (Tensor input, Number min, Number max)")
    return (lo.item() if lo is t else lo), (hi.item() if hi is t else hi)


def clamp_min(input, min):  # noqa: A002
    return clamp(input, min, None)


def clamp_max(input, max):  # noqa: A002
    return clamp(input, None, max)


def _scan(x, d, combine, identity=None):
    """inclusive scan of combine along d by doubling: log2(n) steps, each
    combining every element with the one `shift` before it; the first
    `shift` elements with `identity` (a constant), or with themselves when
    none is given (combine is then idempotent: max, min)"""
    n = x.shape[d]
    y, shift = x, 1
    while shift < n:
        if identity is None:
            pad = y.narrow(d, 0, shift)
        else:
            shape = list(x.shape)
            shape[d] = shift
            pad = _C.add(zeros(shape, dtype=x.dtype), identity)
        y = combine(y, _C.cat([pad, y.narrow(d, 0, n - shift)], d))
        shift *= 2
    return y


def cumprod(input, dim, *, dtype=None):
    """running products along dim: a doubling scan (log2(n) products of
    shifted copies), differentiable through zeros too"""
    if dtype is not None:
        input = input.to(dtype)
    elif not input.dtype.is_floating_point:
        input = input.to(_C.int64)  # PyTorch accumulates integers as int64
    from ._ops_shape import _dim
    d = _dim(dim, input.ndim)
    if input.ndim == 0:
        return input.clone()
    y = _scan(input, d, lambda a, b: a * b, 1)
    if input.dtype.is_floating_point and input.numel() > 0:
        y = y + _cumprod_nan_slopes(input, d)
    return _C._set_grad_fn_name(y, 'CumprodBackward0') if y is not input else input.clone()


def _cumprod_nan_slopes(x, d):
    """0, with slope NaN where PyTorch's cumprod gradient is NaN through a
    NaN input and the product composition's is not. PyTorch's formula, per
    slice with k its first zero (k = n without one): before k the
    reversed cumsum of grad * output divided by x, NaN everywhere once a
    NaN precedes k; at k a product over all the other elements, NaN if any
    is. sqrt(x - x) has value 0 and slope inf * (1 - 1) = NaN"""
    nan, zero = x != x, x == 0
    zeros_so_far = _C.cumsum(zero.to(_C.int64), d)
    before_k = zeros_so_far == 0
    at_k = zero & (zeros_so_far == 1)
    nan_before_k = _C.amax((nan & before_k).to(_C.int64), d, True) > 0
    any_nan = _C.amax(nan.to(_C.int64), d, True) > 0
    taint = ((before_k | at_k) & nan_before_k) | (at_k & any_nan)
    # x - x is +0 where x is finite, NaN at a NaN (whose output is NaN
    # already); keep the infinities out (their output may be finite)
    keep = taint & (x.abs() != math.inf)
    return _C.sqrt(_C.where(keep, x - x, zeros((), dtype=x.dtype)))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward differences along dim (bool: xor)"""
    from ._ops_shape import _dim
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = _dim(dim, input.ndim)
    parts = [p for p in (prepend, input, append) if p is not None]
    if len(parts) > 1:
        parts = [p if p.ndim else p.expand(*input.shape[:d], 1, *input.shape[d + 1:])
                 for p in parts]
        input = _C.cat(parts, d)
    for _ in range(n):
        m = input.shape[d]
        if m == 0:
            break
        hi, lo = input.narrow(d, 1, m - 1), input.narrow(d, 0, m - 1)
        input = _C.logical_xor(hi, lo) if input.dtype == _C.bool else hi - lo
    return input


def logit(input, eps=None):
    x = _float(input)
    if isinstance(eps, Tensor):  # a one-element tensor is a number here, as in PyTorch
        eps = float(eps)
    if eps is not None and eps >= 0:  # PyTorch's kernels take a negative eps as none
        return _logit_eps(x, eps)
    # log x - log(1 - x): the slope 1/x + 1/(1 - x) is inf at 0 and 1, as
    # PyTorch's; outside [0, 1] the value and (x * NaN) the slope are NaN
    r = _C.log(x) - _C.log1p(-x)
    outside = (x < 0) | (x > 1)
    zero = zeros((), dtype=x.dtype)
    return _C.where(outside, x * _C.where(outside, zero + math.nan, zero), r)


def _logit_eps(x, eps):
    """PyTorch's kernel: x below eps reads eps, else above 1 - eps reads
    1 - eps (in that order, which decides eps > 0.5); the slope is 0 where
    x was moved (NaN stays NaN and keeps its slope)"""
    lo, hi = tensor(eps, dtype=x.dtype), tensor(1 - eps, dtype=x.dtype)
    moved = (x < lo) | (x > hi)
    with _no_grad():
        xc = _C.where(x < lo, lo, _C.where(x > hi, hi, x))
        at_bound = _C.log(xc) - _C.log1p(-xc)
    xs = _C.where(moved, tensor(0.5, dtype=x.dtype), x)  # a finite slope, masked below
    return _C.where(moved, at_bound, _C.log(xs) - _C.log1p(-xs))


def eye(n, m=None, *, dtype=None, requires_grad=False):
    """the n x m identity (out=, device & co.: _factory.py)"""
    for what, v in (('n', n), ('m', m)):
        if v is not None and not isinstance(v, (int, np.integer)):
            raise TypeError(f"eye(): argument '{what}' must be int, not {type(v).__name__}")
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"n must be greater or equal to 0, got {n if n < 0 else m}")
    m = n if m is None else m
    e = (arange(n).unsqueeze(1) == arange(m).unsqueeze(0)).to(_dt(dtype))
    return e.requires_grad_(True) if requires_grad else e


def get_default_dtype():
    """the dtype Python floats, floating factories (zeros, rand, ...), new
    modules' parameters and true division of integers take"""
    return _C._get_default_dtype()


def set_default_dtype(d):
    """float32 (the start) or float64, for the whole process, as PyTorch's;
    tg.function traces made under the old default trace again"""
    _C._set_default_dtype(d)
    from . import _trace_guards
    _trace_guards.changed()


def deg2rad(input):
    return _float(input) * (math.pi / 180)


def rad2deg(input):
    return _float(input) * (180 / math.pi)



def float_power(input, exponent):
    return _C.pow(_t(input).to(_C.float64), _t(exponent).to(_C.float64)
                  if isinstance(exponent, Tensor) else exponent)





def sgn(input):
    return input.sign()


def positive(input):
    return input


def absolute(input):
    return input.abs()
