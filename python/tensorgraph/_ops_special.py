"""lgamma, digamma and erfinv composed from elementwise ops (no C kernels yet),
computed in float64 so that float32 results are correctly rounded and
float64 ones within about 1e-14 (absolute near lgamma's zeros at 1 and 2).

Both use the recurrence to move the argument up by 12 (where the
asymptotic series is accurate to float64) and the reflection formula for
x < 1/2; autograd differentiates the composition, so lgamma's gradient is
this digamma and digamma's is trigamma to the same accuracy. erfinv: see
its docstring. All are eager and graph-safe (no host reads); at the poles
(erfinv at +-1 and beyond, lgamma at 0 and the negative integers) the
gradient is PyTorch's (+-inf, NaN), see _pole_slopes."""
import math

from . import _C
from ._creation import tensor
from ._ops_math import _float_dtype

Tensor = _C.Tensor

__all__ = ['lgamma', 'digamma', 'erfinv']

_SHIFT = 12  # z = x + 12 >= 12.5: the series' next terms are below 1e-17


def _prepare(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return input.to(_C.float64), _float_dtype(input.dtype)


def _split(x):
    """(reflect, xr, xs): reflect where x < 1/2; xr = 1 - x there (else
    x), always >= 1/2; xs = x where reflecting (else 1/4, keeping the
    unused branch finite so no gradient is NaN)"""
    reflect = x < 0.5
    xr = _C.where(reflect, 1 - x, x)
    xs = _C.where(reflect, x, tensor(0.25, dtype=_C.float64))
    return reflect, xr, xs


def _nonpositive_integer(x):
    return (x <= 0) & (_C.floor(x) == x)


def _stirling(z):
    """lgamma(z) for z >= 12 (Stirling's series to z^-11)"""
    r = 1 / z
    r2 = r * r
    series = r * (1 / 12 + r2 * (-1 / 360 + r2 * (1 / 1260 + r2 * (-1 / 1680 + r2 * (
        1 / 1188 + r2 * (-691 / 360360))))))
    return (z - 0.5) * _C.log(z) - z + 0.5 * math.log(2 * math.pi) + series


def lgamma(input):
    """log |Gamma(x)|: inf at 0, the negative integers and -inf"""
    x, dt = _prepare(input, 'lgamma')
    pole = _nonpositive_integer(x)
    xp = x
    # keep the poles out of the composition (its 0 * inf would make their
    # gradient NaN); _pole_slopes gives them PyTorch's digamma instead
    x = _C.where(pole, tensor(0.25, dtype=_C.float64), x)
    reflect, xr, xs = _split(x)
    logs = _C.log(xr)
    for k in range(1, _SHIFT):
        logs = logs + _C.log(xr + k)
    main = _stirling(xr + _SHIFT) - logs
    # Gamma(x) Gamma(1 - x) = pi / sin(pi x)
    refl = math.log(math.pi) - _C.log(_C.sin(xs * math.pi).abs())
    r = _C.where(reflect, refl - main, main)
    inf = tensor(math.inf, dtype=_C.float64)
    r = _C.where(pole | (xp.abs() == math.inf), inf, r)
    zero = xp == 0
    positive_zero = zero & ((1 / xp) > 0)
    # digamma is -inf at +0, +inf at -0, NaN at the negative integers
    finite_pole = pole & ~zero & (xp != -math.inf)
    return (r + _pole_slopes(xp, zero & ~positive_zero, positive_zero, finite_pole)).to(dt)


def _pole_slopes(x, plus_inf, minus_inf, nan):
    """a term whose value is 0 (adding it changes nothing) and whose slope
    in x is +inf where plus_inf, -inf where minus_inf (both masks only at
    integers) and NaN where nan, 0 elsewhere (minus_inf may be None); the
    second derivative is +inf at both infinite slopes, as erfinv's and
    lgamma's. With d = x - floor(x), exactly +0 at an integer and of
    slope 1 (floor's is 0): -sqrt(floor(x) - x) has slope +inf and curvature +inf,
    -sqrt(d) slope -inf and curvature +inf; sqrt(x - x) has slope
    inf * (1 - 1) = NaN. This gives a pole's gradient PyTorch's value
    (grad * inf, grad * NaN) while the rest of the composition stays
    finite there; no detached copy is needed, so it traces into graphs"""
    zero = tensor(0.0, dtype=_C.float64)
    f = _C.floor(x)
    d = x - f
    up = -_C.sqrt(_C.where(plus_inf, f - x, zero))  # f - x, not -d: +0, not -0
    slope = up if minus_inf is None else up - _C.sqrt(_C.where(minus_inf, d, zero))
    return slope + _C.sqrt(_C.where(nan, x - x, zero))


def _psi_series(z):
    """digamma(z) for z >= 12 (the asymptotic series to z^-12)"""
    r = 1 / z
    r2 = r * r
    series = r2 * (1 / 12 + r2 * (-1 / 120 + r2 * (1 / 252 + r2 * (-1 / 240 + r2 * (
        1 / 132 + r2 * (-691 / 32760))))))
    return _C.log(z) - 0.5 * r - series


def digamma(input):
    """d/dx lgamma(x): -inf at +0, +inf at -0, NaN at the negative integers
    and -inf, as PyTorch"""
    x, dt = _prepare(input, 'digamma')
    reflect, xr, xs = _split(x)
    recip = 1 / xr
    for k in range(1, _SHIFT):
        recip = recip + 1 / (xr + k)
    main = _psi_series(xr + _SHIFT) - recip
    # psi(1 - x) - psi(x) = pi / tan(pi x)
    r = _C.where(reflect, main - math.pi / _C.tan(xs * math.pi), main)
    # NaN added, not selected: the slope stays the composition's, pi^2 /
    # sin^2(pi x) of a rounded pi x at the poles, as PyTorch's trigamma
    # gives (a huge finite number), not a selection's 0
    pole = (_nonpositive_integer(x) & (x != 0)) | (x == -math.inf)
    zero = tensor(0.0, dtype=_C.float64)
    r = r + _C.where(pole, zero + math.nan, zero)
    return r.to(dt)


# Giles (2010), "Approximating the erfinv function": single-precision
# polynomials in w = -log(1 - y^2), for w < 5 and beyond
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefs, w):
    p = tensor(coefs[0], dtype=_C.float64)
    for c in coefs[1:]:
        p = p * w + c
    return p


def _erf_residual(x, y):
    """erf(x) - y, through erfc where |y| > 1/2 so that the difference of
    two numbers near +-1 keeps its relative precision (1 - |y| is exact)"""
    from ._ops_cover import erfc
    hi = (1 - y) - erfc(x)
    lo = erfc(-x) - (1 + y)
    mid = _C.erf(x) - y
    return _C.where(y > 0.5, hi, _C.where(y < -0.5, lo, mid))


def _newton(x, y):
    """one Newton step for erf(x) = y: x - (erf(x) - y) sqrt(pi)/2 e^(x^2)"""
    return x - _erf_residual(x, y) * (0.5 * math.sqrt(math.pi)) * _C.exp(x * x)


def _refine(x, y):
    """a Newton step on log erfc(|x|) = log(1 - |y|) where |y| > 1/2 (far
    in the tail, erf is too flat for plain Newton to converge quickly;
    the log is nearly quadratic), on erf(x) = y elsewhere"""
    from ._ops_cover import erfc
    a, xa = y.abs(), x.abs()
    e = erfc(xa)
    step = (_C.log(e) - _C.log(1 - a)) * e * (0.5 * math.sqrt(math.pi)) * _C.exp(xa * xa)
    return _C.where(a > 0.5, _C.sign(y) * (xa + step), _newton(x, y))


def erfinv(input):
    """the inverse of erf on (-1, 1): +-inf at +-1, NaN beyond. A
    single-precision start refined by Newton steps to float64; the last
    two steps start from that value detached but stay differentiable in
    y, which makes the first and second derivatives exact (Newton's map
    has zero slope at its fixed point)"""
    y, dt = _prepare(input, 'erfinv')
    inside = y.abs() < 1
    ys = _C.where(inside, y, tensor(0.0, dtype=_C.float64))
    with _NoGrad():
        yd = ys  # grad mode is off here: nothing below is recorded
        w = -_C.log((1 - yd) * (1 + yd))
        central = _horner(_ERFINV_CENTRAL, w - 2.5)
        tail = _horner(_ERFINV_TAIL, _C.sqrt(_C.where(w < 5, tensor(5.0, dtype=_C.float64), w))
                       - 3)
        x = _C.where(w < 5, central, tail) * yd
        for _ in range(6):
            x = _refine(x, yd)
    x = _newton(_newton(x, ys), ys)
    edge = _C.where(y > 0, tensor(math.inf, dtype=_C.float64),
                    tensor(-math.inf, dtype=_C.float64))
    nan = tensor(math.nan, dtype=_C.float64)
    r = _C.where(inside, x, _C.where(y.abs() == 1, edge, nan))
    # the slope sqrt(pi)/2 exp(erfinv(y)^2) is +inf at +-1, NaN beyond;
    # its slope, 2 erfinv(y) times that squared, is +inf at 1 but -inf at
    # -1: there +sqrt(y - floor(y)), of slope +inf and curvature -inf
    edges = y.abs() == 1
    beyond = ~inside & ~edges
    zero = tensor(0.0, dtype=_C.float64)
    rising = _C.sqrt(_C.where(y == -1, y - _C.floor(y), zero))
    return (r + _pole_slopes(y, y == 1, None, beyond) + rising).to(dt)


class _NoGrad:
    def __enter__(self):
        self._prev = _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
