"""linspace and logspace with PyTorch's arithmetic, so that the values are
PyTorch's to the bit (computed on the host, then made a tensor).

PyTorch 1.13's CPU linspace steps from start in the first half and back
from end in the second, `start + step * i` and `end - step * (steps - 1 -
i)`, and its build contracts each into one fused multiply-add. Whole
blocks of 2 x 32 bytes go through its vectorized path, where each 32-byte
vector starts from such a fused base and its lanes add `lane * step`
rounded on its own; the tail is element by element. Integer dtypes step
in double and truncate. logspace raises base to those exponents in double
(no fusion; base as float32 for integer results). Above 32768 elements
PyTorch splits the range over its threads, each part starting its own
blocks: there the last bits may differ."""
import math

import numpy as np

_VECTOR_BYTES = 32  # ATen's Vectorized<T> at its default and AVX2 levels


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a, b):
    def split(x):  # Veltkamp: x = hi + lo, each half the mantissa
        c = 134217729.0 * x
        hi = c - (c - x)
        return hi, x - hi
    p = a * b
    (ah, al), (bh, bl) = split(a), split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma(a, b, c, np_dt):
    """a * b + c rounded once to np_dt: float32 exactly (the product is
    exact in float64, the sum's error known); float64 from error-free
    transformations (off only where the exact value sits within 2^-106 of a
    tie)"""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    if np_dt == np.float32:
        s, t = _two_sum(a * b, c)
        f = s.astype(np.float32)
        down = np.nextafter(f, np.float32(-np.inf))
        up = np.nextafter(f, np.float32(np.inf))
        f64 = f.astype(np.float64)
        # s exactly halfway between two float32s: the error's sign decides
        f = np.where(((f64 + down) / 2 == s) & (t < 0), down, f)
        return np.where(((f64 + up) / 2 == s) & (t > 0), up, f)
    p, e = _two_product(a, b)
    s, t = _two_sum(p, c)
    return s + (t + e)


_C_NAMES = {'int32': 'int', 'int64': 'int64_t', 'uint8': 'uint8_t'}


def _end(v, np_dt):
    """an end point in np_dt: PyTorch's Scalar conversion (integers truncate;
    a value outside a signed type's range is its RuntimeError)"""
    if np_dt.kind == 'f':
        return np_dt.type(v)
    if np_dt.kind == 'b':
        raise RuntimeError("\"linspace_cpu\" not implemented for 'Bool'")
    info = np.iinfo(np_dt)
    if not math.isfinite(v) or (np_dt.kind == 'i' and not info.min <= int(v) <= info.max):
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[np_dt.name]} "
                           f"without overflow")
    return np.int64(int(v)).astype(np_dt)  # a uint8 wraps, as PyTorch's


def _to_integer(values, np_dt):
    with np.errstate(invalid='ignore'):
        return np.trunc(values).astype(np_dt)


def linspace_values(start, end, steps, np_dt):
    """PyTorch's linspace of steps values in numpy dtype np_dt"""
    np_dt = np.dtype(np_dt)
    if steps <= 1:
        return np.full(steps, start).astype(np_dt)
    integral = np_dt.kind != 'f'
    calc = np.float64 if integral else np_dt.type  # the step's type
    s, e = calc(_end(start, np_dt)), calc(_end(end, np_dt))
    step = calc((e - s) / calc(steps - 1))
    half = steps // 2
    lanes = _VECTOR_BYTES // np_dt.itemsize
    n_vec = steps // (2 * lanes) * (2 * lanes)
    fused_dt = np.float64 if integral else np_dt.type

    def at(i):  # the fused value at positions i, each from its own end
        i = np.asarray(i, np.float64)
        return np.where(i < half, _fma(step, i, s, fused_dt),
                        _fma(-step, steps - 1 - i, e, fused_dt))
    out = np.empty(steps, np.float64 if integral else np_dt)
    out[n_vec:] = at(np.arange(n_vec, steps))
    if n_vec:
        base = at(np.arange(0, n_vec, lanes))
        if integral:
            base = _to_integer(base, np_dt).astype(np.float64)
        base = base.astype(out.dtype)
        offsets = (np.arange(lanes).astype(calc) * step).astype(out.dtype)
        out[:n_vec] = (base[:, None] + offsets[None, :]).reshape(-1)
    return _to_integer(out, np_dt) if integral else out


def _c_pow(b, x):
    """C's pow (math.pow raises where C returns NaN or inf)"""
    try:
        return math.pow(b, x)
    except ValueError:
        return math.inf if b == 0 else math.nan
    except OverflowError:
        return math.inf


def logspace_values(start, end, steps, base, np_dt):
    """PyTorch's logspace: base ** the exponents, in double"""
    np_dt = np.dtype(np_dt)
    integral = np_dt.kind != 'f'
    b = float(np.float32(base)) if integral else float(base)
    if steps <= 1:
        out = np.array([_c_pow(b, float(start))] * steps, np.float64)
    else:
        s, e = _end(start, np_dt), _end(end, np_dt)
        step = float(np_dt.type(e - s)) / (steps - 1)
        half = steps // 2
        out = np.array([_c_pow(b, float(s) + step * i) if i < half
                        else _c_pow(b, float(e) - step * (steps - i - 1))
                        for i in range(steps)], np.float64)
    return _to_integer(out, np_dt) if integral else out.astype(np_dt)
