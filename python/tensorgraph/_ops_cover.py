"""More of PyTorch's functions, composed from existing ops so that their
gradients come from autograd: aliases (not_equal, greater, ravel, ...),
elementwise math (erfc, exp2, xlogy, sinc, fmax/fmin, copysign,
heaviside), scans (cummax/cummin, logcumsumexp), splits (h/v/dsplit),
trapezoid, normal and randint_like, and the bitwise ops of
integer tensors (computed on the host, eager mode only: the C core has
no bitwise kernels)."""
import builtins
import math

import numpy as np

from . import _C
from ._creation import _dt, arange, randint, randn, tensor, zeros
from ._ops_math import _float, _float_pair, _result_dtype, _scan

Tensor = _C.Tensor

__all__ = ['masked_fill', 'not_equal', 'greater', 'greater_equal', 'less', 'less_equal',
           'ravel', 'swapdims', 'erfc', 'exp2', 'xlogy', 'sinc', 'fmax',
           'fmin', 'copysign', 'heaviside', 'cummax', 'cummin', 'logcumsumexp', 'msort',
           'diagflat', 'hsplit', 'vsplit', 'dsplit', 'randint_like',
           'is_nonzero', 'trapezoid', 'trapz', 'normal', 'bitwise_and', 'bitwise_or',
           'bitwise_xor', 'bitwise_not', 'det', 'logdet', 'slogdet', 'inverse', 'matrix_power',
           'cholesky', 'qr', 'svd', 'pinverse', 'triangular_solve', 'cholesky_solve',
           'cholesky_inverse']

from ._linalg_lu import (det as _det, inv as _inv, logdet as _logdet,  # noqa: E402
                         matrix_power as _matrix_power, slogdet as _slogdet)
from ._linalg_out import with_out as _with_out  # noqa: E402

from ._linalg_decomp import (cholesky_inverse, cholesky_solve, legacy_cholesky as cholesky,  # noqa: E402,E501
                             legacy_qr as qr, legacy_svd as svd, pinverse, triangular_solve)


# torch.det & co. name their argument input where torch.linalg's say A
def det(input):
    return _det(input)


def logdet(input):
    return _logdet(input)


def slogdet(input):
    return _slogdet(input)


def _inverse(input):
    return _inv(input)


def _matrix_power_of_input(input, n):
    return _matrix_power(input, n)


# out= with linalg's checks (_linalg_out.py), named as the torch.* functions
inverse = _with_out(_inverse, 'inv', None, 'inverse')
matrix_power = _with_out(_matrix_power_of_input, 'matrix_power', None, 'matrix_power')
qr = _with_out(qr, 'qr', ('linalg_qr', 'exact', 2), 'qr')
svd = _with_out(svd, 'svd', ('_linalg_svd', 'exact', 3), 'svd')
triangular_solve = _with_out(triangular_solve, 'triangular_solve',
                             ('triangular_solve', 'exact', 2), 'triangular_solve')

not_equal, greater, greater_equal = _C.ne, _C.gt, _C.ge
less, less_equal = _C.lt, _C.le


def masked_fill(input, mask, value):
    return input.masked_fill(mask, value)


def ravel(input):
    return input.reshape(-1)


def swapdims(input, dim0, dim1):
    return _C.transpose(input, dim0, dim1)


def _as_tensor(x, like=None):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, float) and like is not None and like.dtype.is_floating_point:
        return tensor(x, dtype=like.dtype)
    return tensor(x)


def _with_gradient_of(value, make_g, x):
    """value's numbers (computed without recording) with the gradient of
    make_g(x), which has the derivative wanted: value + (g - g) where the
    second g is computed without recording (no detach(), so this also
    traces inside tg.function)"""
    g = make_g(x)
    with _no_grad():
        g0 = make_g(x)
    return value + (g - g0)


def _erfc_tail(x):
    """erfc(x) for x >= 2 by its continued fraction
    exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))),
    evaluated from a fixed depth (enough for float64 at x = 2)"""
    f = x
    for k in range(90, 0, -1):
        f = x + (k / 2.0) / f
    return _C.exp(-x * x) / (math.sqrt(math.pi) * f)


def erfc(input):
    """1 - erf(x) without the cancellation for large x (a continued
    fraction there), computed in float64; the gradient is
    -2/sqrt(pi) exp(-x^2) exactly"""
    x = _float(input)
    with _no_grad():
        x64 = x.to(_C.float64)
        big = x64 >= 2
        tail = _erfc_tail(_C.where(big, x64, tensor(2.0, dtype=_C.float64)))
        value = _C.where(big, tail, 1 - _C.erf(x64)).to(x.dtype)
    if not x.requires_grad:
        return value
    return _with_gradient_of(value, lambda t: -_C.erf(t), x)


def exp2(input):
    x = _float(input)
    return _C._set_grad_fn_name(_C.pow(tensor(2.0, dtype=x.dtype), x), 'Exp2Backward0')


def xlogy(input, other):
    """x * log(y), 0 where x == 0 (NaN when y is NaN), as torch.xlogy"""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("xlogy(): expected at least one Tensor argument")
    x = _as_tensor(input, other if isinstance(other, Tensor) else None)
    y = _as_tensor(other, x)
    x, y = _float_pair(x, y)
    dt = x.dtype
    # where x == 0 the log's argument is replaced by 1 wherever log(y)
    # would not be finite, so 0 * log(...) is 0 and no gradient is NaN;
    # the gradients are PyTorch's: log(y) for x (0 where x == 0 and
    # y <= 0), x / y for y
    x0 = x == 0
    fix = x0 & ((y <= 0) | (y == math.inf))
    one = tensor(1.0, dtype=dt)
    if (x.requires_grad or y.requires_grad) and _C.is_grad_enabled() and \
            not (_C._is_symbolic(x) or _C._is_symbolic(y)):
        # PyTorch's derivatives as they are written, so that their own
        # derivatives (create_graph) are PyTorch's too: y's x / y is a
        # function of x also where x == 0
        return _C._set_grad_fn_name(_Xlogy().apply(x, y), 'XlogyBackward0')
    value = x * _C.log(_C.where(fix, one, y))
    if y.requires_grad and _C.is_grad_enabled():
        # PyTorch's slope in y is x / y: NaN at x == y == 0. sqrt(s) -
        # sqrt(s) is 0 everywhere and its slope at s == 0 is inf - inf; s
        # takes y only there (1 elsewhere), so no other gradient changes
        s = _C.where(x0 & (y == 0), y, one)
        value = value + (_C.sqrt(s) - _C.sqrt(s))
    if value.grad_fn is None:
        return value
    return _C._set_grad_fn_name(value, 'XlogyBackward0')


def _xlogy_value(x, y):
    fix = (x == 0) & ((y <= 0) | (y == math.inf))
    return x * _C.log(_C.where(fix, tensor(1.0, dtype=x.dtype), y))


_XLOGY = []


def _Xlogy():
    """the Function below, made once (autograd imports this module)"""
    if _XLOGY:
        return _XLOGY[0]
    from .autograd import Function

    class Xlogy(Function):
        """x * log(y), 0 where x == 0 (NaN where y is), with PyTorch's
        derivatives: xlogy(grad, y).masked_fill((x == 0) & (y <= 0), 0) for
        x, grad * x / y for y"""
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return _xlogy_value(x, y)

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            gx = gy = None
            if ctx.needs_input_grad[0]:
                gx = xlogy(grad, y)
                gx = _C.where((x == 0) & (y <= 0), zeros((), dtype=gx.dtype), gx)
                gx = gx.sum_to_size(x.shape)
            if ctx.needs_input_grad[1]:
                gy = (grad * x / y).sum_to_size(y.shape)
            return gx, gy

    _XLOGY.append(Xlogy)
    return Xlogy


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0"""
    x = _float(input)
    zero = x == 0
    safe = _C.where(zero, tensor(1.0, dtype=x.dtype), x) * math.pi
    return _C.where(zero, tensor(1.0, dtype=x.dtype), _C.sin(safe) / safe)


def _nan_ignoring(keep_first, name):
    """fmax / fmin: input where keep_first(input, other) or other is NaN,
    else other; PyTorch's gradient follows the same choice (ties to input)"""
    def f(input, other):
        dt = _result_dtype(input, other)
        a, b = input.to(dt), other.to(dt)
        keep = keep_first(a, b)
        if dt.is_floating_point:
            keep = keep | _C.isnan(b)
        return _C.where(keep, a, b)
    f.__name__ = name
    f.__doc__ = f"elementwise {name[1:]} that takes the number over a NaN (NaN when both are)"
    return f


fmax = _nan_ignoring(_C.ge, 'fmax')
fmin = _nan_ignoring(_C.le, 'fmin')


def copysign(input, other):
    """|input| with the sign (sign bit, so -0.0 too) of other"""
    from ._ops_math import signbit
    a = _as_tensor(input)
    b = _as_tensor(other, a)
    neg = signbit(b) if b.dtype.is_floating_point else b < 0
    a = _float_pair(a, b)[0]
    out = _C.where(neg, -a.abs(), a.abs())
    if b.requires_grad:
        # other's gradient is zeros, not None (PyTorch's): subtract a zero
        # that reaches b (x - 0 keeps the sign of a zero x)
        out = out - _C.where(tensor(False), b, tensor(0.0, dtype=out.dtype))
    return out


def heaviside(input, values):
    if not isinstance(values, Tensor):
        raise TypeError("heaviside(): argument 'values' must be Tensor, not "
                        f"{type(values).__name__}")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    step = (input > 0).to(input.dtype)
    return _C.where(input == 0, values, step)


# ---- scans --------------------------------------------------------------------------


def _cum_extreme(input, dim, pick, name):
    from ._ops_shape import _dim
    from . import return_types
    ValuesIndices = getattr(return_types, name)
    if input.ndim == 0 or input.numel() == 0:  # any dim, as PyTorch's (it returns first)
        values = input.clone()
        if input.numel() == 0 and input.requires_grad:
            # PyTorch's backward returns the (empty) input itself as its
            # gradient: a function of input, which requires grad under
            # create_graph. input * input is the same nothing, and so is
            # its gradient, which depends on input
            values = input * input
        return ValuesIndices(values, zeros(*input.shape, dtype=_C.int64))
    d = _dim(dim, input.ndim)
    if input.dtype == _C.bool:  # as uint8 (PyTorch 1.13 takes bools)
        v, i = _cum_extreme(input.to(_C.uint8), dim, pick, name)
        return ValuesIndices(v.to(_C.bool), i)
    with _no_grad():
        running = _scan(input, d, pick)
        # the last position at or before i holding the running extreme
        # (a NaN holds from there on, and each later NaN takes over)
        hit = running == input
        if input.dtype.is_floating_point:
            hit = hit | _C.isnan(input)
        shape = [1] * input.ndim
        shape[d] = input.shape[d]
        pos = arange(input.shape[d]).reshape(shape).expand(*input.shape)
        idx = _scan(_C.where(hit, pos, zeros((), dtype=_C.int64) - 1), d, _C.maximum)
    values = _C.gather(input, d, idx) if input.requires_grad else running
    return ValuesIndices(values, idx)


def cummax(input, dim):
    """(running maximum along dim, index of the last element holding it);
    NaN propagates; the gradient flows to those indices"""
    return _cum_extreme(input, dim, _C.maximum, 'cummax')


def cummin(input, dim):
    return _cum_extreme(input, dim, _C.minimum, 'cummin')


def logcumsumexp(input, dim):
    """log(cumsum(exp(x))) along dim without overflow or underflow: a
    doubling scan of logaddexp"""
    from ._ops_math import logaddexp
    from ._ops_shape import _dim
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"logcumsumexp_out_cpu\" not implemented for '{input.dtype}'")
    d = _dim(dim, input.ndim)
    if input.ndim == 0:
        return input.clone()
    if input.shape[d] <= 1:
        # one element along dim: x itself, through logaddexp(x, -inf) so
        # that the gradient (1) is a function of x, as PyTorch's
        # (differentiable again, to 0) rather than a constant
        return logaddexp(input, zeros((), dtype=input.dtype) - math.inf)
    return _scan(input, d, logaddexp, -math.inf)


def msort(input):
    from ._ops import sort
    return sort(input, 0).values


def diagflat(input, offset=0):
    from ._ops_shape import diag
    return diag(input.reshape(-1), offset)


# ---- splits -------------------------------------------------------------------------
def _split_along(input, sections, d, name):
    from ._ops_stats import tensor_split
    if isinstance(sections, int):
        size = input.shape[d]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {size} is not divisible by the "
                               f"split_size {sections}!")
    return tensor_split(input, sections, d)


def hsplit(input, indices_or_sections):
    if input.ndim < 1:
        raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got "
                           "a tensor with 0 dimensions!")
    return _split_along(input, indices_or_sections, 1 if input.ndim > 1 else 0, 'hsplit')


def vsplit(input, indices_or_sections):
    if input.ndim < 2:
        raise RuntimeError("torch.vsplit requires a tensor with at least 2 dimension, but got "
                           f"a tensor with {input.ndim} dimensions!")
    return _split_along(input, indices_or_sections, 0, 'vsplit')


def dsplit(input, indices_or_sections):
    if input.ndim < 3:
        raise RuntimeError("torch.dsplit requires a tensor with at least 3 dimension, but got "
                           f"a tensor with {input.ndim} dimensions!")
    return _split_along(input, indices_or_sections, 2, 'dsplit')


# ---- integration, creation, randomness ----------------------------------------------
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """the trapezoid rule along dim: spacing dx (1 by default) or the
    sample points x (1-D, or shaped as y)"""
    from ._ops_shape import _dim
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx "
                        "cannot both be given")
    d = _dim(dim, y.ndim)
    n = y.shape[d]
    if n == 0:  # PyTorch: new zeros of y's own dtype (also an integer one), no gradient
        return zeros(y.shape[:d] + y.shape[d + 1:], dtype=y.dtype)
    pair = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    if x is None:
        return _C.sum(pair, d) * ((1.0 if dx is None else dx) / 2)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point "
                               f"(got {x.shape[0]} x values and {n} sample points)")
        shape = [1] * y.ndim
        shape[d] = n
        x = x.reshape(shape)
    elif x.ndim < y.ndim:  # PyTorch: x padded with leading 1s, not broadcast to y
        x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    # the differences along y's dim d (also when x has more dims than y);
    # x's extent there may be 1 or 0 (then no differences: a zero sum)
    m = x.shape[d]
    k = max(m - 1, 0)
    h = x.narrow(d, min(1, m), k) - x.narrow(d, 0, k)
    return _C.sum(h * pair, d) / 2


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def randint_like(input, low=0, high=None, *, dtype=None, requires_grad=False,
                 memory_format=None):
    """randint in input's shape, dtype and (by default) strides"""
    from ._creation import _like, _preserve
    if high is None:
        low, high = 0, low
    return _like(input, lambda s, dt: randint(low, high, s, dtype=dt), dtype, requires_grad,
                 memory_format or _preserve())


def is_nonzero(input):
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item() != 0)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False):
    """samples of N(mean, std^2): mean and std tensors (broadcast) or
    numbers (then size gives the shape). As torch.normal, the result is
    differentiable in neither mean nor std."""
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal() missing required argument 'size' (mean and std are "
                            "numbers)")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        shape = tuple(size)
        dt = _dt(dtype)
    else:
        if size is not None:
            raise TypeError("normal(): size is only taken when mean and std are numbers")
        for t in tensors:
            if not t.dtype.is_floating_point:
                raise RuntimeError(f"\"normal\" not implemented for '{t.dtype}'")
        if isinstance(std, Tensor):
            if std.numel() and builtins.bool((std < 0).any()):
                raise RuntimeError("normal expects all elements of std >= 0.0")
        elif std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        shape = tuple(np.broadcast_shapes(*[tuple(t.shape) for t in tensors]))
        dt = tensors[0].dtype
    with _no_grad():
        eps = randn(shape, generator=generator, dtype=dt)
        out = eps * std + mean  # recorded by nothing: grad mode is off
    if requires_grad:
        out.requires_grad_(True)
    return out


# ---- bitwise ops --------------------------------------------------------------------
_BITWISE = {'and': np.bitwise_and, 'or': np.bitwise_or, 'xor': np.bitwise_xor}
_LOGICAL = {'and': _C.logical_and, 'or': _C.logical_or, 'xor': _C.logical_xor}


def _scalar_dtype(number, t):
    """a Python number next to tensor t takes t's dtype, but an int (not
    a bool) next to a bool tensor is int64, as PyTorch's result_type"""
    if t.dtype == _C.bool and not isinstance(number, bool):
        return _C.int64
    return t.dtype


def _bitwise(name, input, other):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"bitwise_{name}(): expected at least one Tensor argument")
    for v in (input, other):
        if (isinstance(v, Tensor) and v.dtype.is_floating_point) or isinstance(v, float):
            raise RuntimeError(f"bitwise_{name}: not implemented for floating-point tensors "
                               "(bool and integer tensors only)")
    a = input if isinstance(input, Tensor) else tensor(input, dtype=_scalar_dtype(input, other))
    b = other if isinstance(other, Tensor) else tensor(other, dtype=_scalar_dtype(other, a))
    from ._ops_misc import result_type  # a 0-d operand yields as in + and *
    dt = result_type(a, b)
    if dt == _C.bool:
        return _LOGICAL[name](a, b)
    if a.is_symbolic or b.is_symbolic:
        raise RuntimeError(f"bitwise_{name} of integer tensors: not available inside "
                           "tg.function (computed on the host; no C kernel yet)")
    an, bn = a.to(dt).numpy(), b.to(dt).numpy()
    return tensor(np.array(_BITWISE[name](an, bn), order='C'), dtype=dt)  # 0-d stays 0-d


def bitwise_and(input, other):
    return _bitwise('and', input, other)


def bitwise_or(input, other):
    return _bitwise('or', input, other)


def bitwise_xor(input, other):
    return _bitwise('xor', input, other)


def bitwise_not(input):
    if input.dtype.is_floating_point:
        raise RuntimeError("bitwise_not: not implemented for floating-point tensors (bool and "
                           "integer tensors only)")
    if input.dtype == _C.bool:
        return _C.logical_not(input)
    if input.is_symbolic:
        raise RuntimeError("bitwise_not of integer tensors: not available inside tg.function "
                           "(computed on the host; no C kernel yet)")
    return tensor(np.array(np.invert(input.numpy()), order='C'), dtype=input.dtype)


class _no_grad:
    def __enter__(self):
        self._prev = _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
