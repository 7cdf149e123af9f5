"""torch.special's orthogonal polynomials of degree n at x (Chebyshev of
the four kinds and their shifted forms, Hermite's two, Laguerre's,
Legendre's), the Bessel functions J0/J1/Y0/Y1, K0/K1 (and e^x-scaled)
and the Airy function Ai (computed here, below), and the Bessel forms
given by the functions tensorgraph has (modified_bessel_i0/i1,
spherical_bessel_j0).

As PyTorch's: x or n may be a number; n is truncated to an integer, a
negative degree gives 0; the special values at the ends of the
Chebyshev and Legendre intervals are exact; Chebyshev polynomials of
degree above 6 inside (-1, 1) come from their trigonometric forms, the
others from the three-term recurrences; integers compute in the default
float dtype; the results are not differentiable (PyTorch defines no
derivative: they do not require grad). Computed on the host in the
inputs' float dtype, NumPy, elementwise."""
import math

import numpy as np

from . import _C

__all__ = ['chebyshev_polynomial_t', 'chebyshev_polynomial_u', 'chebyshev_polynomial_v',
           'chebyshev_polynomial_w', 'shifted_chebyshev_polynomial_t',
           'shifted_chebyshev_polynomial_u', 'shifted_chebyshev_polynomial_v',
           'shifted_chebyshev_polynomial_w', 'hermite_polynomial_h', 'hermite_polynomial_he',
           'laguerre_polynomial_l', 'legendre_polynomial_p', 'modified_bessel_i0',
           'modified_bessel_i1', 'spherical_bessel_j0', 'bessel_j0', 'bessel_j1', 'bessel_y0',
           'bessel_y1', 'modified_bessel_k0', 'modified_bessel_k1', 'scaled_modified_bessel_k0',
           'scaled_modified_bessel_k1', 'airy_ai']

_TRIG_DEGREE = 6  # above it, inside (-1, 1): the Chebyshev forms' cos/sin


def _operands(x, n, name):
    """x and n as NumPy arrays of the result's float dtype, broadcast, the
    degrees truncated; and that dtype"""
    from ._creation import tensor
    from ._ops_math import get_default_dtype
    if not isinstance(x, _C.Tensor) and not isinstance(n, _C.Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(x).__name__}, {type(n).__name__}): x or n must be a Tensor")
    tx = x if isinstance(x, _C.Tensor) else tensor(x)
    tn = n if isinstance(n, _C.Tensor) else tensor(n)
    if isinstance(x, _C.Tensor) and isinstance(n, _C.Tensor):
        dt = _C.promote_types(tx.dtype, tn.dtype)
    else:
        dt = (tx if isinstance(x, _C.Tensor) else tn).dtype
        other = n if isinstance(x, _C.Tensor) else x
        if isinstance(other, float) and not dt.is_floating_point:
            dt = get_default_dtype()
    if not dt.is_floating_point:
        dt = get_default_dtype()
    npdt = np.float64 if dt == _C.float64 else np.float32
    xs = np.asarray(tx.detach().numpy(), dtype=npdt)
    ns = np.trunc(np.asarray(tn.detach().numpy(), dtype=np.float64))
    ns = np.where(np.isnan(ns), -1, ns)
    xs, ns = np.broadcast_arrays(xs, ns)
    return xs, np.clip(ns, -1, np.iinfo(np.int64).max // 2).astype(np.int64), dt, npdt


def _recur(x, n, p, q, step, npdt):
    """the degree-n value of a three-term recurrence from p (degree 0) and
    q (degree 1): step(k, x, p_k-1, p_k) gives degree k + 1"""
    out = np.where(n == 0, p, q).astype(npdt)
    todo = n >= 2
    if not todo.any():
        return out
    xs, ns = x[todo], n[todo]
    p, q = np.broadcast_to(p, x.shape)[todo].astype(npdt), q[todo].astype(npdt)
    res = np.empty_like(xs)
    with np.errstate(all='ignore'):
        for k in range(1, int(ns.max())):
            p, q = q, step(npdt(k), xs, p, q).astype(npdt)
            done = ns == k + 1
            res[done] = q[done]
    out[todo] = res
    return out


def _result(values, dt):
    from ._creation import tensor
    return tensor(values, dtype=dt)


def _chebyshev(kind, x, n, npdt):
    """T, U, V or W at x: ends, trigonometric forms, recurrence"""
    one = npdt(1)
    odd = n % 2 == 1
    with np.errstate(all='ignore'):
        theta = np.arccos(np.clip(x, -1, 1))
        if kind == 't':
            q, end_pos, end_neg = x, one + 0 * x, np.where(odd, -one, one)
            trig = np.cos(n * theta)
        elif kind == 'u':
            q, end_pos = x + x, (n + 1).astype(npdt)
            end_neg = np.where(odd, -end_pos, end_pos)
            trig = np.sin((n + 1) * theta) / np.sin(theta)
        elif kind == 'v':
            q, end_pos = x + x - 1, one + 0 * x
            end_neg = np.where(odd, -(n + n + 1), n + n + 1).astype(npdt)
            trig = np.cos((n + npdt(0.5)) * theta) / np.cos(theta / 2)
        else:
            q, end_pos = x + x + 1, (n + n + 1).astype(npdt)
            end_neg = np.where(odd, -one, one)
            trig = np.sin((n + npdt(0.5)) * theta) / np.sin(theta / 2)
        rec = _recur(x, n, one, q, lambda k, x, p, q: (x + x) * q - p, npdt)
    inside = (np.abs(x) < 1) & (n > _TRIG_DEGREE) & np.isfinite(trig)
    r = np.where(inside, trig, rec)
    r = np.where(x == 1, end_pos, np.where(x == -1, end_neg, r))
    return np.where(n < 0, 0, r).astype(npdt)


def _make_chebyshev(kind, shifted):
    name = f"{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"

    def f(input, n, *, out=None):
        x, k, dt, npdt = _operands(input, n, name)
        y = x + x - npdt(1) if shifted else x
        return _result(_chebyshev(kind, y.astype(npdt), k, npdt), dt)
    f.__name__ = name
    f.__doc__ = (f"the Chebyshev polynomial of the {kind.upper()} kind of degree n at "
                 f"{'2x - 1' if shifted else 'x'} (PyTorch's special.{name})")
    return f


chebyshev_polynomial_t = _make_chebyshev('t', False)
chebyshev_polynomial_u = _make_chebyshev('u', False)
chebyshev_polynomial_v = _make_chebyshev('v', False)
chebyshev_polynomial_w = _make_chebyshev('w', False)
shifted_chebyshev_polynomial_t = _make_chebyshev('t', True)
shifted_chebyshev_polynomial_u = _make_chebyshev('u', True)
shifted_chebyshev_polynomial_v = _make_chebyshev('v', True)
shifted_chebyshev_polynomial_w = _make_chebyshev('w', True)


def hermite_polynomial_h(input, n, *, out=None):
    """the physicists' Hermite polynomial H_n(x)"""
    x, k, dt, npdt = _operands(input, n, 'hermite_polynomial_h')
    r = _recur(x, k, npdt(1), x + x, lambda j, x, p, q: (x + x) * q - (j + j) * p, npdt)
    return _result(np.where(k < 0, 0, r).astype(npdt), dt)


def hermite_polynomial_he(input, n, *, out=None):
    """the probabilists' Hermite polynomial He_n(x)"""
    x, k, dt, npdt = _operands(input, n, 'hermite_polynomial_he')
    r = _recur(x, k, npdt(1), x, lambda j, x, p, q: x * q - j * p, npdt)
    return _result(np.where(k < 0, 0, r).astype(npdt), dt)


def laguerre_polynomial_l(input, n, *, out=None):
    """the Laguerre polynomial L_n(x) (1 at x = 0)"""
    x, k, dt, npdt = _operands(input, n, 'laguerre_polynomial_l')
    r = _recur(x, k, npdt(1), npdt(1) - x,
               lambda j, x, p, q: ((j + j + 1 - x) * q - j * p) / (j + 1), npdt)
    r = np.where(x == 0, npdt(1), r)
    return _result(np.where(k < 0, 0, r).astype(npdt), dt)


def legendre_polynomial_p(input, n, *, out=None):
    """the Legendre polynomial P_n(x) (exact at x = +-1)"""
    x, k, dt, npdt = _operands(input, n, 'legendre_polynomial_p')
    r = _recur(x, k, npdt(1), x, lambda j, x, p, q: ((j + j + 1) * x * q - j * p) / (j + 1),
               npdt)
    r = np.where(x == 1, npdt(1), np.where(x == -1, np.where(k % 2 == 1, -1, 1), r))
    return _result(np.where(k < 0, 0, r).astype(npdt), dt)


def _undifferentiated(fn, input):
    """PyTorch's modified_bessel_i0/i1: i0/i1's values, NaN at the
    infinities (its Chebyshev series there), no gradient"""
    from ._ops_math import _float
    x = _float(input).detach()
    y = fn(x)
    return _C.where(_C.isinf(x), x - x, y)


def modified_bessel_i0(input, *, out=None):
    from ._special_extra import i0
    return _undifferentiated(i0, input)


def modified_bessel_i1(input, *, out=None):
    from ._special_extra import i1
    return _undifferentiated(i1, input)


def spherical_bessel_j0(input, *, out=None):
    """sin(x) / x: 1 at 0, 0 at the infinities, not differentiable (as
    PyTorch's)"""
    from ._creation import ones_like
    from ._ops_math import _float
    x = _float(input).detach()
    tiny = x.abs() < 1e-4
    safe = _C.where(tiny, ones_like(x), x)
    x2 = x * x
    series = 1 - x2 / 6 * (1 - x2 / 20)  # 1 - x^2/6 + x^4/120: exact to rounding below 1e-4
    from ._creation import zeros_like
    return _C.where(tiny, series, _C.where(_C.isinf(x), zeros_like(x), _C.sin(safe) / safe))


# ---------------------------------------------------------------------------
# Bessel J0/J1/Y0/Y1, K0/K1 (and e^x-scaled) and the Airy function Ai.
#
# The values are computed in float64 from representations derived here (no
# coefficient tables): J_n for x <= 25 by the M-point trapezoidal rule on
# Bessel's integral (1/2pi) int_0^2pi cos(n t - x sin t) dt (exact to
# rounding for n + x well below M), Y0/Y1 from Neumann's series in those
# J_2k; beyond 25 Hankel's expansion with its coefficients generated from
# their product formula; K0/K1 by their power series to 2 and the
# trapezoidal rule on int_0^inf exp(-x cosh t) cosh(nu t) dt beyond; Ai by
# its Maclaurin series on [-1, 1], by K_1/3 above, by Schlafli's integrals
# of J_(+-1/3) down to -12 and by its asymptotic expansion below.  Where
# PyTorch's (Cephes') forms round a phase (x - pi/4, 2/3 x^1.5 + pi/4) or an
# exponent in the inputs' dtype, that rounding is reproduced, so the values
# agree with PyTorch's also where that rounding dominates (large arguments,
# float32).

_EULER = 0.57721566490153286061
_PIO4 = 0.785398163397448309615660845819875721
_3PIO4 = 2.356194490192344928846982537459627163
_TRAP_M = 192          # nodes of the trapezoidal rule for J_n, x <= _J_SPLIT
_J_SPLIT = 25.0        # Hankel's expansion beyond
_J_ORDERS = 90         # J_0 .. J_89 for Neumann's series


def _bessel_operand(input):
    """input as a float NumPy array (integers in the default float dtype),
    its dtype and NumPy dtype"""
    from ._ops_math import _float
    x = _float(input).detach()
    npdt = np.float64 if x.dtype == _C.float64 else np.float32
    return np.asarray(x.numpy(), dtype=npdt), x.dtype, npdt


def _j_orders(x):
    """J_0(x) .. J_(_J_ORDERS - 1)(x) for x in [0, _J_SPLIT], shape (len(x), orders)"""
    tau = 2 * np.pi * np.arange(_TRAP_M) / _TRAP_M
    n = np.arange(_J_ORDERS)
    arg = x[:, None] * np.sin(tau)[None, :]
    # the cos(x sin t) part vanishes for odd n, the sin(x sin t) part for even n
    even = np.cos(arg) @ np.cos(np.outer(tau, n))
    odd = np.sin(arg) @ np.sin(np.outer(tau, n))
    return np.where(n % 2 == 0, even, odd) / _TRAP_M


def _hankel_pq(nu, x):
    """Hankel's P and Q of order nu at x (>= _J_SPLIT): the asymptotic
    series a_k(nu) / x^k, a_k = prod_(j<=k) (4 nu^2 - (2j - 1)^2) / (k! 8^k)"""
    mu = 4.0 * nu * nu
    p, q = np.ones_like(x), np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (8.0 * k * x)
        if k % 2:
            q += term if (k // 2) % 2 == 0 else -term
        else:
            p += term if (k // 2) % 2 == 0 else -term
    return p, q


def _jy(order, x, npdt):
    """(J_order, Y_order) at x >= 0 finite, float64, with the phase x - (2
    order + 1) pi/4 rounded as PyTorch's in npdt beyond 5"""
    j, y = np.empty_like(x), np.empty_like(x)
    small = x <= _J_SPLIT
    if small.any():
        xs = x[small]
        jn = _j_orders(xs)
        k = np.arange(1, _J_ORDERS // 2 - 1)
        sign = np.where(k % 2 == 1, -1.0, 1.0)
        with np.errstate(divide='ignore', invalid='ignore'):
            lg = np.log(xs / 2) + _EULER
            if order == 0:
                j[small] = jn[:, 0]
                y[small] = 2 / np.pi * lg * jn[:, 0] - 4 / np.pi * (jn[:, 2 * k] @ (sign / k))
            else:
                j[small] = jn[:, 1]
                y[small] = (2 / np.pi * (lg * jn[:, 1] - jn[:, 0] / xs)
                            + 2 / np.pi * ((jn[:, 2 * k - 1] - jn[:, 2 * k + 1]) @ (sign / k)))
        tiny = xs == 0
        y_small = y[small]
        y_small[tiny] = -np.inf
        y[small] = y_small
    big = ~small
    if big.any():
        xb = x[big]
        p, q = _hankel_pq(float(order), xb)
        c = _PIO4 if order == 0 else _3PIO4
        chi = (xb.astype(npdt) - npdt(c)).astype(np.float64)
        amp = 0.797884560802865355879892119868763737 / np.sqrt(xb)
        with np.errstate(invalid='ignore'):
            cs, sn = np.cos(chi), np.sin(chi)
        j[big] = amp * (p * cs - q * sn)
        y[big] = amp * (p * sn + q * cs)
    if npdt is np.float32:  # PyTorch's float phase between 5 and the split: to first order
        mid = (x > 5) & small
        if mid.any():
            c = _PIO4 if order == 0 else _3PIO4
            xm = x[mid]
            delta = (xm.astype(np.float32) - np.float32(c)).astype(np.float64) - (xm - c)
            jm, ym = j[mid], y[mid]
            j[mid], y[mid] = jm - ym * delta, ym + jm * delta
    return j, y


def _bessel_jy(order, which, name):
    def f(input, *, out=None):
        x, dt, npdt = _bessel_operand(input)
        flat = x.astype(np.float64).ravel()
        a = np.abs(flat)
        fin = np.isfinite(a)
        r = np.full(flat.shape, np.nan)
        j, y = _jy(order, a[fin], npdt)
        if which == 'j':
            v = j if order == 0 else np.where(flat[fin] < 0, -j, j)
            r[fin] = v
        else:
            r[fin] = np.where(flat[fin] < 0, np.nan, y)
        return _result(r.reshape(x.shape).astype(npdt), dt)
    f.__name__ = name
    f.__doc__ = (f"the Bessel function of the {'first' if which == 'j' else 'second'} kind of "
                 f"order {order} (PyTorch's special.{name}; NaN at the infinities"
                 f"{'' if which == 'j' else ' and below 0, -inf at 0'}; not differentiable)")
    return f


bessel_j0 = _bessel_jy(0, 'j', 'bessel_j0')
bessel_j1 = _bessel_jy(1, 'j', 'bessel_j1')
bessel_y0 = _bessel_jy(0, 'y', 'bessel_y0')
bessel_y1 = _bessel_jy(1, 'y', 'bessel_y1')


def _k_integral(nu, x, nodes=128):
    """e^x K_nu(x) for x > 0 (not too small): the trapezoidal rule on
    int_0^inf exp(-2 x sinh^2(t/2)) cosh(nu t) dt, cut where the
    integrand is below e^-46"""
    tmax = np.arccosh(1 + 46.0 / x)
    h = tmax / nodes
    t = h[:, None] * np.arange(nodes + 1)[None, :]
    s = np.sinh(t / 2)
    w = np.exp(-2 * x[:, None] * s * s) * np.cosh(nu * t)
    w[:, 0] *= 0.5
    return h * w.sum(axis=1)


def _k_series(order, x):
    """K_0 or K_1 at 0 < x <= 2 by the power series"""
    z = x * x / 4
    term = np.ones_like(x) if order == 0 else x / 2   # (x/2)^(2k+n) / (k! (k+n)!)
    psi1 = -_EULER                                     # psi(k + 1)
    psin = -_EULER + (1.0 if order == 1 else 0.0)      # psi(k + n + 1)
    i_sum, s_sum = np.zeros_like(x), np.zeros_like(x)
    for k in range(40):
        i_sum += term
        s_sum += term * (psi1 + psin) / 2
        psi1 += 1.0 / (k + 1)
        psin += 1.0 / (k + 1 + order)
        term = term * z / ((k + 1) * (k + 1 + order))
    with np.errstate(divide='ignore', over='ignore'):
        lg = np.log(x / 2)
        if order == 0:
            return -lg * i_sum + s_sum
        return 1 / x + lg * i_sum - s_sum


def _bessel_k(order, scaled, name):
    def f(input, *, out=None):
        x, dt, npdt = _bessel_operand(input)
        flat = x.astype(np.float64).ravel()
        r = np.full(flat.shape, np.nan)
        r[flat == 0] = np.inf
        r[flat == np.inf] = 0.0
        lo = (flat > 0) & (flat <= 2)
        hi = (flat > 2) & np.isfinite(flat)
        with np.errstate(over='ignore', under='ignore'):
            k = _k_series(order, flat[lo])
            r[lo] = k * np.exp(flat[lo]) if scaled else k
            xh = flat[hi]
            g = _k_integral(float(order), xh) * np.sqrt(xh)
            r[hi] = g / np.sqrt(xh) if scaled else np.exp(-xh) * g / np.sqrt(xh)
            if not scaled and npdt is np.float32:
                r[hi] = (np.exp(-xh.astype(np.float32)).astype(np.float64) * g / np.sqrt(xh))
        return _result(r.reshape(x.shape).astype(npdt), dt)
    f.__name__ = name
    f.__doc__ = (f"the modified Bessel function of the second kind of order {order}"
                 f"{' times exp(x)' if scaled else ''} (PyTorch's special.{name}; inf at 0, "
                 f"NaN below, 0 at inf; not differentiable)")
    return f


modified_bessel_k0 = _bessel_k(0, False, 'modified_bessel_k0')
modified_bessel_k1 = _bessel_k(1, False, 'modified_bessel_k1')
scaled_modified_bessel_k0 = _bessel_k(0, True, 'scaled_modified_bessel_k0')
scaled_modified_bessel_k1 = _bessel_k(1, True, 'scaled_modified_bessel_k1')

_AI0 = 1 / (3 ** (2 / 3) * math.gamma(2 / 3))    # Ai(0)
_AIP0 = 1 / (3 ** (1 / 3) * math.gamma(1 / 3))   # -Ai'(0)
_AIRY_NEG = 12.0                                 # the asymptotic expansion below -12


def _airy_maclaurin(x):
    f, g = np.ones_like(x), x.copy()
    tf, tg = np.ones_like(x), x.copy()
    z = x * x * x
    for k in range(1, 40):
        tf = tf * z / ((3 * k - 1) * (3 * k))
        tg = tg * z / ((3 * k) * (3 * k + 1))
        f += tf
        g += tg
    return _AI0 * f - _AIP0 * g


def _airy_neg_integral(x):
    """Ai(x) and Bi(x) for -_AIRY_NEG <= x < 0 from Schlafli's integral
    J_nu(z) = 1/pi int_0^pi cos(nu s - z sin s) ds
              - sin(nu pi)/pi int_0^inf exp(-z sinh t - nu t) dt, z = 2/3 |x|^1.5"""
    a = -x
    zeta = 2 * a * np.sqrt(a) / 3
    s, ws = np.polynomial.legendre.leggauss(96)
    th = (s + 1) * np.pi / 2
    wt = ws * np.pi / 2
    tmax = np.arcsinh(46.0 / zeta)
    u = (s[None, :] + 1) * tmax[:, None] / 2
    wu = ws[None, :] * tmax[:, None] / 2
    e = np.exp(-zeta[:, None] * np.sinh(u))
    jv = {}
    for nu in (1 / 3, -1 / 3):
        first = np.cos(nu * th[None, :] - zeta[:, None] * np.sin(th)[None, :]) @ wt
        second = (e * np.exp(-nu * u) * wu).sum(axis=1)
        jv[nu] = (first - np.sin(nu * np.pi) * second) / np.pi
    ai = np.sqrt(a) / 3 * (jv[1 / 3] + jv[-1 / 3])
    bi = np.sqrt(a / 3) * (jv[-1 / 3] - jv[1 / 3])
    return ai, bi


def _airy_neg_asymptotic(x, npdt):
    """Ai(x) for x < -_AIRY_NEG: pi^-1/2 |x|^-1/4 (sin(t) P - cos(t) Q),
    t = zeta + pi/4 rounded as PyTorch's, P, Q the series in u_k / zeta^k,
    u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!)"""
    xx = x.astype(npdt)
    zeta_t = (npdt(-2.0) * xx * np.sqrt(-xx) / npdt(3.0))
    t = (zeta_t.astype(np.float64) + 0.25 * np.pi).astype(npdt).astype(np.float64)
    zeta = -2.0 * x * np.sqrt(-x) / 3.0
    p, q = np.ones_like(x), np.zeros_like(x)
    u = np.ones_like(x)
    for k in range(1, 30):
        u = u * ((6 * k - 5) * (6 * k - 3) * (6 * k - 1)) / ((2 * k - 1) * 216.0 * k) / zeta
        sgn = 1 if (k // 2) % 2 == 0 else -1
        if k % 2:
            q += sgn * u
        else:
            p += sgn * u
    with np.errstate(invalid='ignore'):
        return 0.564189583547756286948 / np.sqrt(np.sqrt(-x)) * (np.sin(t) * p - np.cos(t) * q)


def airy_ai(input, *, out=None):
    """the Airy function Ai(x) (PyTorch's special.airy_ai: NaN at the
    infinities, 0 above 103.892; not differentiable)"""
    x, dt, npdt = _bessel_operand(input)
    flat = x.astype(np.float64).ravel()
    r = np.full(flat.shape, np.nan)
    fin = np.isfinite(flat)
    r[fin & (flat > npdt(103.892))] = 0.0
    mac = fin & (np.abs(flat) <= 1)
    r[mac] = _airy_maclaurin(flat[mac])
    pos = fin & (flat > 1) & (flat <= npdt(103.892))
    if pos.any():
        xp = flat[pos]
        zeta = 2.0 * xp * np.sqrt(xp) / 3.0
        with np.errstate(over='ignore', under='ignore'):
            v = np.sqrt(xp / 3) / np.pi * _k_integral(1 / 3, zeta)
            if npdt is np.float32:  # PyTorch's exponent rounded in float beyond 2.09
                x32 = xp.astype(np.float32)
                z32 = (np.float32(2.0) * x32 * np.sqrt(x32) / np.float32(3.0)).astype(np.float64)
                zeta = np.where(xp >= np.float32(2.09), z32, zeta)
            r[pos] = v / np.exp(zeta)
    mid = fin & (flat < -1) & (flat >= -_AIRY_NEG)
    if mid.any():
        xm = flat[mid]
        ai, bi = _airy_neg_integral(xm)
        if npdt is np.float32:  # PyTorch's float phase below -2.09, to first order
            x32 = xm.astype(np.float32)
            zeta = -2.0 * xm * np.sqrt(-xm) / 3.0 + 0.25 * np.pi
            z32 = (np.float32(-2.0) * x32 * np.sqrt(-x32) / np.float32(3.0)).astype(np.float64)
            delta = np.where(xm < np.float32(-2.09),
                             (z32 + 0.25 * np.pi).astype(np.float32).astype(np.float64) - zeta, 0)
            ai = ai + bi * delta
        r[mid] = ai
    low = fin & (flat < -_AIRY_NEG)
    r[low] = _airy_neg_asymptotic(flat[low], npdt)
    return _result(r.reshape(x.shape).astype(npdt), dt)
