"""torch.special's orthogonal polynomials of degree n at x (Chebyshev of
the four kinds and their shifted forms, Hermite's two, Laguerre's,
Legendre's), the Bessel functions given by the ones tensorgraph has, and
K0/K1 and their exp(x)-scaled forms.

As PyTorch's: x or n may be a number; n is truncated to an integer, a
negative degree gives 0; the special values at the ends of the
Chebyshev and Legendre intervals are exact; Chebyshev polynomials of
degree above 6 inside (-1, 1) come from their trigonometric forms, the
others from the three-term recurrences; integers compute in the default
float dtype; the results are not differentiable (PyTorch defines no
derivative: they do not require grad). Computed on the host in the
inputs' float dtype, NumPy, elementwise."""
import numpy as np

from . import _C

__all__ = ['chebyshev_polynomial_t', 'chebyshev_polynomial_u', 'chebyshev_polynomial_v',
           'chebyshev_polynomial_w', 'shifted_chebyshev_polynomial_t',
           'shifted_chebyshev_polynomial_u', 'shifted_chebyshev_polynomial_v',
           'shifted_chebyshev_polynomial_w', 'hermite_polynomial_h', 'hermite_polynomial_he',
           'laguerre_polynomial_l', 'legendre_polynomial_p', 'modified_bessel_i0',
           'modified_bessel_i1', 'spherical_bessel_j0', 'modified_bessel_k0',
           'modified_bessel_k1', 'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1']

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
# K0/K1 and their e^x-scaled forms, in float64 from representations derived
# here (no coefficient tables): the power series to 2, beyond it the
# trapezoidal rule on e^x K_nu(x) = int_0^inf exp(-2 x sinh^2(t/2)) cosh(nu t)
# dt (the integrand is analytic in a strip, so the rule converges
# geometrically: to rounding with 128 nodes). Like PyTorch's: inf at 0, NaN
# below 0 and at NaN, 0 at inf; exp(-x) applied in the inputs' dtype.

_EULER = 0.57721566490153286061


def _bessel_operand(input):
    """input as a float NumPy array (integers in the default float dtype),
    its dtype and NumPy dtype"""
    from ._ops_math import _float
    x = _float(input).detach()
    npdt = np.float64 if x.dtype == _C.float64 else np.float32
    return np.asarray(x.numpy(), dtype=npdt), x.dtype, npdt


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
