"""tg.special's Bessel functions (i0 i0e i1 i1e), erfcx, log_ndtr, ndtri,
zeta (Hurwitz), polygamma and gammainc/gammaincc: values computed in
float64 with tensor ops (series, asymptotic expansions, Euler-Maclaurin,
continued fractions; the number of terms read from the data, so eager
only), each wrapped in an autograd Function whose backward is the
closed-form derivative (itself differentiable, so second derivatives
work) or, where PyTorch has none, its RuntimeError."""
import math

from . import _C
from .autograd import Function
from ._ops_math import _float
from ._creation import ones_like, tensor, zeros_like

_SQRT2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT_PI = math.sqrt(math.pi)
_LOG_SQRT_2PI = math.log(_SQRT_2PI)


def _as_float(x):
    """x as a floating tensor (ints promote to the default dtype)"""
    if not isinstance(x, _C.Tensor):
        x = tensor(x) if isinstance(x, (bool, int, float)) else x
    return _float(x)


def _const(value, like):
    return tensor(float(value), dtype=like.dtype)


def _in64(fn, x, *rest):
    """fn evaluated in float64 on detached inputs, cast back to x's dtype"""
    args = [t.detach().double() for t in (x,) + rest]
    return fn(*args).to(x.dtype)


def _elementwise(name, value64, derivative):
    """an autograd Function: value64 (a float64 tensor function) forward,
    grad * derivative(x) backward; derivative is written with the public
    (differentiable) functions, so second derivatives work"""
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _in64(value64, x)

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * derivative(x)
    return type(name, (Function,), {'forward': staticmethod(forward),
                                    'backward': staticmethod(backward)})


def _at_zero(x, value, d):
    """d, with value where x is 0 (a removable singularity of d's formula)"""
    return _C.where(x == 0, _const(value, x), d)


def _safe(x):
    return _C.where(x == 0, ones_like(x), x)


# ---- modified Bessel functions of order 0 and 1 -------------------------------------------
_SERIES_TERMS = 60     # (x^2/4)^k / (k!)^2 is below 1e-17 of the sum by then for |x| <= 20
_ASYMPTOTIC_TERMS = 16  # the expansion in 1/(8|x|) for |x| > 20
_SERIES_LIMIT = 20.0


def _bessel_series(ax, order):
    """sum_k (x^2/4)^k / (k! (k+order)!) (times (x/2)^order), all terms
    positive: no cancellation"""
    q = ax * ax / 4
    term = ones_like(ax) if order == 0 else ax / 2
    total = term
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        total = total + term
    return total


def _bessel_asymptotic_scaled(ax, order):
    """exp(-x) I_order(x) ~ 1/sqrt(2 pi x) sum_k c_k / x^k, c_k with
    mu = 4 order^2: c_k = (-1)^k prod_{j<=k} (mu - (2j - 1)^2) / (k! 8^k)"""
    mu = 4.0 * order * order
    safe = _C.where(ax > _SERIES_LIMIT, ax, ones_like(ax) * (2 * _SERIES_LIMIT))
    coeff, total, power = 1.0, ones_like(safe), ones_like(safe)
    for k in range(1, _ASYMPTOTIC_TERMS):
        coeff *= -(mu - (2 * k - 1) ** 2) / (k * 8.0)
        power = power / safe
        total = total + coeff * power
    return total / _C.sqrt(2 * math.pi * safe)


def _bessel_scaled(x, order):
    """exp(-|x|) I_order(x), odd in x for order 1"""
    ax = x.abs()
    small = _bessel_series(_C.where(ax <= _SERIES_LIMIT, ax, zeros_like(ax)), order)
    small = small * _C.exp(-_C.where(ax <= _SERIES_LIMIT, ax, zeros_like(ax)))
    value = _C.where(ax <= _SERIES_LIMIT, small, _bessel_asymptotic_scaled(ax, order))
    if order == 1:
        value = _C.where(x < 0, -value, value)
    return _C.where(x != x, x, value)


def _bessel(x, order):
    """I_order(x) = exp(|x|) * the scaled value (inf past float64's range)"""
    return _bessel_scaled(x, order) * _C.exp(x.abs())


_I0 = _elementwise('I0', lambda t: _bessel(t, 0), lambda x: i1(x))
# I1' = I0 - I1 / x (1/2 at 0); the scaled ones: the same minus sign(x) times themselves
_I1 = _elementwise('I1', lambda t: _bessel(t, 1),
                   lambda x: _at_zero(x, 0.5, i0(x) - i1(x) / _safe(x)))
_I0e = _elementwise('I0e', lambda t: _bessel_scaled(t, 0),
                    lambda x: i1e(x) - _C.sign(x) * i0e(x))
_I1e = _elementwise('I1e', lambda t: _bessel_scaled(t, 1),
                    lambda x: _at_zero(x, 0.5, i0e(x) - i1e(x) * (_C.sign(x) + 1 / _safe(x))))


def i0(input, *, out=None):
    """the modified Bessel function of the first kind, order 0"""
    return _I0.apply(_as_float(input))


def i1(input, *, out=None):
    return _I1.apply(_as_float(input))


def i0e(input, *, out=None):
    """exp(-|x|) i0(x), finite where i0 overflows"""
    return _I0e.apply(_as_float(input))


def i1e(input, *, out=None):
    return _I1e.apply(_as_float(input))


# ---- erfcx, log_ndtr, ndtri -------------------------------------------------------------------
_ERFCX_SWITCH = 12.0


def _erfcx64(x):
    """exp(x^2) erfc(x): the product below 12 (erfc is accurate in
    relative terms there), the asymptotic series 1/(x sqrt pi) *
    sum (-1)^k (2k-1)!! / (2x^2)^k above, and 2 exp(x^2) - erfcx(-x)
    for negative x"""
    from ._ops_cover import erfc
    ax = x.abs()
    mid = _C.where(ax < _ERFCX_SWITCH, ax, zeros_like(ax))
    near = _C.exp(mid * mid) * erfc(mid)
    far_x = _C.where(ax >= _ERFCX_SWITCH, ax, ones_like(ax) * _ERFCX_SWITCH)
    inv2x2 = 1 / (2 * far_x * far_x)
    total, term = ones_like(far_x), ones_like(far_x)
    for k in range(1, 30):
        term = -term * (2 * k - 1) * inv2x2
        total = total + term
    far = total / (far_x * _SQRT_PI)
    pos = _C.where(ax < _ERFCX_SWITCH, near, far)
    neg = 2 * _C.exp(x * x) - pos
    return _C.where(x < 0, neg, _C.where(x != x, x, pos))


_Erfcx = _elementwise('SpecialErfcx', _erfcx64,
                      lambda x: 2 * x * erfcx(x) - 2 / _SQRT_PI)


def erfcx(input, *, out=None):
    """the scaled complementary error function exp(x^2) erfc(x)"""
    return _Erfcx.apply(_as_float(input))


def _log_ndtr64(x):
    """log Phi(x): log1p(-Phi(-x)) above 0, log(erfcx(-x/sqrt2) / 2) -
    x^2 / 2 below (no underflow in the lower tail)"""
    from ._ops_cover import erfc
    upper = _C.log1p(-erfc(x / _SQRT2) / 2)
    t = -x / _SQRT2
    lower = _C.log(_erfcx64(_C.where(x < 0, t, zeros_like(t))) / 2) - x * x / 2
    return _C.where(x < 0, lower, upper)


# phi(x) / Phi(x) = exp(-x^2/2 - log Phi(x)) / sqrt(2 pi)
_LogNdtr = _elementwise('SpecialLogNdtr', _log_ndtr64,
                        lambda x: _C.exp(-x * x / 2 - log_ndtr(x) - _LOG_SQRT_2PI))


def log_ndtr(input, *, out=None):
    """log of the standard normal's CDF, accurate far into the lower tail"""
    return _LogNdtr.apply(_as_float(input))


def _ndtri64(p):
    """Phi^-1(p): a start from erfinv (or the tail's log form) refined by
    Newton steps on log Phi(x) = log p, which keep relative accuracy in
    both tails; 0 -> -inf, 1 -> inf, outside [0, 1] NaN"""
    from ._ops_special import erfinv
    lower = p < 0.5
    q = _C.where(lower, p, 1 - p)                 # the tail's probability, <= 1/2
    safe_q = _C.where(q > 0, q, ones_like(q) * 0.25)
    # start: the inverse of the tail's leading term, or erfinv in the middle
    ll = -2 * _C.log(safe_q)
    tail0 = -_C.sqrt(ll - _C.log(ll) - math.log(2 * math.pi))
    mid0 = _SQRT2 * erfinv(2 * safe_q - 1)
    x = _C.where(safe_q < 1e-3, tail0, mid0)
    log_q = _C.log(safe_q)
    for _ in range(6):
        lp = _log_ndtr64(x)
        # d log Phi / dx = phi / Phi
        slope = _C.exp(-x * x / 2 - lp - _LOG_SQRT_2PI)
        x = x - (lp - log_q) / slope
    x = _C.where(q == 0, ones_like(x) * -math.inf, x)
    x = _C.where(lower, x, -x)
    # 1 - p loses nothing for p >= 1/2, but the middle is exactly 0
    x = _C.where(p == 0.5, zeros_like(x), x)
    return _C.where((p < 0) | (p > 1) | (p != p), ones_like(x) * math.nan, x)


# 1 / phi(ndtri(p)) = sqrt(2 pi) exp(ndtri(p)^2 / 2)
_Ndtri = _elementwise('SpecialNdtri', _ndtri64,
                      lambda p: _SQRT_2PI * _C.exp(ndtri(p) * ndtri(p) / 2))


def ndtri(input, *, out=None):
    """the standard normal's quantile function (the inverse of ndtr)"""
    return _Ndtri.apply(_as_float(input))


def _take_out():
    from ._out_arg import takes_out
    g = globals()
    for name in ('i0', 'i1', 'i0e', 'i1e', 'erfcx', 'log_ndtr', 'ndtri'):
        g[name] = takes_out('special_' + name)(g[name])


_take_out()
