"""tg.special.zeta (Hurwitz), polygamma (n >= 1 through zeta; n = 0 is
digamma) and gammainc/gammaincc (regularized incomplete gamma), values in
float64 tensor ops, gradients as PyTorch's: polygamma(n)' =
polygamma(n + 1); gammainc/gammaincc in x; zeta and the gradient in a
raise PyTorch's 'not implemented' RuntimeError."""
import math

from . import _C
from .autograd import Function
from ._ops_math import get_default_dtype
from ._creation import ones_like, tensor, zeros_like
from ._special_extra import _as_float

# B_2j / (2j)!, j = 1..12 (the Euler-Maclaurin tail of the zeta sum)
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730]
_EM_COEFFS = [b / math.factorial(2 * (j + 1)) for j, b in enumerate(_BERNOULLI)]
_DIRECT_TERMS = 9


def _zeta64(s, q):
    """sum_k (q + k)^-s: the first terms directly until q + k > 9, then
    Euler-Maclaurin's integral, half term and Bernoulli corrections;
    PyTorch's (Cephes') domain: inf at s = 1 and at integer q <= 0, NaN
    for s < 1 and for q < 0 with a non-integer s"""
    s, q = _bcast(s, q)
    q_int = q == _C.floor(q)
    # only the q whose value the sum decides set the number of direct terms:
    # integer q <= 0, and q < 0 with a non-integer s, take theirs from the
    # domain rules below (q = -2**63 would otherwise ask for 2**63 terms)
    summed = _C.isfinite(q) & ~((q <= 0) & q_int) & ~((q < 0) & (s != _C.floor(s)))
    summed_q = _C.where(summed, q, ones_like(q))
    low = float(summed_q.min()) if summed_q.numel() else 1.0
    shift = max(_DIRECT_TERMS, math.ceil(_DIRECT_TERMS - low) + 1)
    total = zeros_like(s)
    for k in range(shift):
        base = q + k
        total = total + _C.pow(base, -s)
    a = q + shift
    total = total + _C.pow(a, 1 - s) / (s - 1) + 0.5 * _C.pow(a, -s)
    # sum_j B_2j/(2j)! s (s+1) ... (s+2j-2) a^(-s-2j+1)
    rising = s
    power = _C.pow(a, -s - 1)
    inv_a2 = 1 / (a * a)
    for j, c in enumerate(_EM_COEFFS):
        # for a huge s the rising factorial overflows while a^(-s-2j+1) is 0:
        # the term is 0, not inf * 0
        term = c * rising * power
        total = total + _C.where(power == 0, zeros_like(term), term)
        rising = rising * (s + 2 * j + 1) * (s + 2 * j + 2)
        power = power * inv_a2
    nan = tensor(math.nan, dtype=s.dtype)
    inf = tensor(math.inf, dtype=s.dtype)
    total = _C.where(s == 1, inf, total)
    total = _C.where(s < 1, nan, total)
    total = _C.where((q <= 0) & q_int & (s >= 1), inf, total)
    total = _C.where((q < 0) & ~q_int & (s != _C.floor(s)), nan, total)
    return total


def _bcast(*tensors):
    """the tensors expanded to their common shape (0-d ones too)"""
    from ._ops_shape import broadcast_shapes
    shape = tuple(broadcast_shapes(*[tuple(t.shape) for t in tensors]))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def _pair64(x, q):
    """both in the floating dtype PyTorch computes in (a 0-d operand ranks
    below a dimensioned one)"""
    from ._ops_math import _float_pair
    return _float_pair(x, q)


class _Zeta(Function):
    @staticmethod
    def forward(ctx, x, q):
        x, q = _bcast(x, q)
        return _zeta64(x.detach().double(), q.detach().double()).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("the derivative for 'zeta' is not implemented.")


def _scalar_like(value, other):
    if isinstance(value, _C.Tensor):
        return value
    dtype = other.dtype if isinstance(other, _C.Tensor) and other.dtype.is_floating_point \
        else get_default_dtype()
    return tensor(float(value), dtype=dtype)


def zeta(input, other, *, out=None):
    """the Hurwitz zeta function sum_k (other + k)^-input"""
    if not isinstance(input, _C.Tensor) and not isinstance(other, _C.Tensor):
        raise TypeError(f"special_zeta() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}): one must be a "
                        "Tensor")
    x, q = _pair64(_scalar_like(input, other), _scalar_like(other, input))
    return _Zeta.apply(x, q)


class _Polygamma(Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        x64 = x.detach().double()
        sign = -1.0 if n % 2 == 0 else 1.0
        # n! in float64, as PyTorch's exp(lgamma(n + 1)): inf past 170! (an exact
        # math.factorial(2**62) ran until the machine ran out of memory)
        factorial = float(math.factorial(n)) if n <= 170 else math.inf
        value = sign * factorial * _zeta64(ones_like(x64) * (n + 1.0), x64)
        return value.to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * polygamma(ctx.n + 1, x), None


def polygamma(n, input, *, out=None):
    """the n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x)"""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _as_float(input)
    if n == 0:
        from ._ops_special import digamma
        return digamma(x)
    r = _Polygamma.apply(x, n)
    if n == 1:  # at 0 and the negative integers PyTorch's trigamma reflects:
        # pi^2 / sin^2(pi x) of the rounded pi x, a huge finite number
        from ._ops_special import _nonpositive_integer
        r = _C.where(_nonpositive_integer(x), math.pi ** 2 / _C.sin(x * math.pi) ** 2, r)
    return r


# ---- the regularized incomplete gamma functions ------------------------------------------------
_MAX_ITERATIONS = 2000


def _gammainc_series(a, x):
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum x^n / ((a+1)...(a+n)), for
    x < a + 1 (the terms shrink from the start)"""
    from ._ops_special import lgamma
    term = ones_like(x)
    total = term
    ap = a
    for _ in range(_MAX_ITERATIONS):
        ap = ap + 1
        term = term * x / ap
        total = total + term
        if not bool((term.abs() > 1e-17 * total.abs()).any()):
            break
    log_front = a * _C.log(x) - x - lgamma(a + 1)
    return total * _C.exp(log_front)


def _gammaincc_fraction(a, x):
    """Q(a, x) by Legendre's continued fraction (modified Lentz), for
    x >= a + 1"""
    from ._ops_special import lgamma
    tiny = 1e-300
    b = x + 1 - a
    c = ones_like(x) / tiny
    d = 1 / b
    h = d
    for i in range(1, _MAX_ITERATIONS):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = _C.where(d.abs() < tiny, ones_like(d) * tiny, d)
        c = b + an / c
        c = _C.where(c.abs() < tiny, ones_like(c) * tiny, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if not bool(((delta - 1).abs() > 1e-16).any()):
            break
    return _C.exp(a * _C.log(x) - x - lgamma(a)) * h


def _gammainc64(a, x, upper):
    """P(a, x) (upper False) or Q(a, x), each from whichever of the series
    and the continued fraction converges fast there; PyTorch's edge values"""
    use_series = x < a + 1
    xs = _C.where(use_series & (x > 0), x, ones_like(x) * 0.5)
    as_ = _C.where(use_series & (x > 0), a, ones_like(a))
    p_series = _gammainc_series(_C.where(a > 0, as_, ones_like(a)), xs)
    xf = _C.where(~use_series, x, a + 2)
    xf = _C.where(_C.isfinite(xf), xf, ones_like(xf) * 2)
    af = _C.where(a > 0, a, ones_like(a))
    q_frac = _gammaincc_fraction(af, _C.where(~use_series & _C.isfinite(x), xf, af + 2))
    p = _C.where(use_series, p_series, 1 - q_frac)
    q = _C.where(use_series, 1 - p_series, q_frac)
    r = q if upper else p
    zero, one = zeros_like(r), ones_like(r)
    at_zero = zero if not upper else one     # x = 0
    at_inf = one if not upper else zero      # x = inf
    r = _C.where(x == 0, at_zero, r)
    r = _C.where(x == math.inf, at_inf, r)
    # a = 0 (x > 0): the limit, P = 1
    r = _C.where((a == 0) & (x > 0), at_inf, r)
    nan = tensor(math.nan, dtype=r.dtype)
    bad = (a < 0) | (x < 0) | (a != a) | (x != x) | ((a == 0) & (x == 0)) | (a == math.inf)
    return _C.where(bad, nan, r)


class _Gammainc(Function):
    @staticmethod
    def forward(ctx, a, x, upper):
        ctx.x_shape = tuple(x.shape)  # the gradient is summed back to it
        a, x = _bcast(a, x)
        ctx.save_for_backward(a, x)
        ctx.upper = upper
        return _gammainc64(a.detach().double(), x.detach().double(), upper).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        from ._ops_special import lgamma
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            name = 'igammac' if ctx.upper else 'igamma'
            raise RuntimeError(f"the derivative for '{name}: input' is not implemented.")
        # d P / dx = x^(a-1) e^-x / Gamma(a) = -d Q / dx
        d = _C.exp((a - 1) * _C.log(x) - x - lgamma(a))
        return None, (grad * (-d if ctx.upper else d)).sum_to_size(ctx.x_shape), None


def _check_tensors(name, input, other):
    """PyTorch's gammainc/gammaincc take tensors only"""
    for arg, value in (('input', input), ('other', other)):
        if not isinstance(value, _C.Tensor):
            raise TypeError(f"special_{name}(): argument '{arg}' must be Tensor, not "
                            f"{type(value).__name__}")


def gammainc(input, other, *, out=None):
    """the regularized lower incomplete gamma function P(input, other)"""
    _check_tensors('gammainc', input, other)
    a, x = _pair64(_scalar_like(input, other), _scalar_like(other, input))
    return _Gammainc.apply(a, x, False)


def gammaincc(input, other, *, out=None):
    """the regularized upper incomplete gamma function Q(input, other)"""
    _check_tensors('gammaincc', input, other)
    a, x = _pair64(_scalar_like(input, other), _scalar_like(other, input))
    return _Gammainc.apply(a, x, True)


def _take_out():
    from ._out_arg import takes_out
    g = globals()
    for name in ('zeta', 'polygamma', 'gammainc', 'gammaincc'):
        g[name] = takes_out(name)(g[name])


_take_out()
