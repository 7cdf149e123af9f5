"""tensorgraph.testing: torch.testing's assert_close (and the deprecated
assert_allclose) and make_tensor.

assert_close compares tensors, NumPy arrays, Python numbers and (nested)
sequences and mappings of them, as PyTorch's: the attributes first (shape,
dtype unless check_dtype=False, strides with check_stride=True), then the
values, close where |actual - expected| <= atol + rtol * |expected| with
each dtype's default tolerances (float32: rtol 1.3e-6, atol 1e-5;
float64: 1e-7 and 1e-7; integers and bools exact; with check_dtype=False
the looser of the two dtypes'), NaN equal to NaN only with equal_nan, and
an AssertionError in PyTorch's words naming the mismatched elements and
the greatest differences."""
import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from . import _C

__all__ = ['assert_close', 'assert_allclose', 'make_tensor']

# (rtol, atol) per dtype, PyTorch's
_TOLERANCES = {'float32': (1.3e-6, 1e-5), 'float64': (1e-7, 1e-7)}


def _dtype_name(dtype):
    return str(dtype).split('.')[-1]


def _tolerances(*dtypes):
    pairs = [_TOLERANCES.get(_dtype_name(d), (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


class _Mismatch(AssertionError):
    pass


def _fail(msg, default, where):
    text = default if msg is None else (msg(default) if callable(msg) else msg)
    if where and msg is None:
        text += f"\n\nThe failure occurred for item {''.join(f'[{k!r}]' for k in where)}"
    raise _Mismatch(text)


def _is_number(x):
    return isinstance(x, (int, float, complex, bool)) and not isinstance(x, _C.Tensor)


def _as_array(x):
    if isinstance(x, _C.Tensor):
        return np.asarray(x.detach().numpy())
    return np.asarray(x)


def _differences(a, e):
    """(abs, rel) differences of float64 arrays: inf - inf of one sign
    counts 0, NaN where either is NaN"""
    with np.errstate(all='ignore'):
        diff = np.abs(a - e)
        same = a == e  # equal infinities
        diff = np.where(same, 0.0, diff)
        rel = np.where(same, 0.0, diff / np.abs(e))
    return diff, rel


def _close_mask(a, e, rtol, atol, equal_nan):
    with np.errstate(all='ignore'):  # infinities close only to themselves
        ok = (a == e) | (np.isfinite(a) & np.isfinite(e) &
                         (np.abs(a - e) <= atol + rtol * np.abs(e)))
    if equal_nan:
        ok |= np.isnan(a) & np.isnan(e)
    return ok


def _fmt(v):
    return repr(int(v)) if float(v).is_integer() and not math.isinf(v) else repr(float(v))


def _compare_values(a, e, rtol, atol, equal_nan, exact, scalar, msg, where):
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    ok = _close_mask(a64, e64, rtol, atol, equal_nan)
    if ok.all():
        return
    diff, rel = _differences(a64, e64)
    if exact and not scalar:  # PyTorch forms integer tensors' in float32
        rel = rel.astype(np.float32)
    kind = 'equal' if exact else 'close'
    allowed_abs = '' if exact else f" (up to {atol} allowed)"
    allowed_rel = '' if exact else f" (up to {rtol} allowed)"
    if scalar:
        d, r = diff.reshape(-1)[0], rel.reshape(-1)[0]
        dstr = _fmt(d) if exact else repr(float(d))
        _fail(msg, f"Scalars are not {kind}!\n\nAbsolute difference: {dstr}{allowed_abs}\n"
              f"Relative difference: {float(r)!r}{allowed_rel}", where)
    bad = ~ok
    n_bad, total = int(bad.sum()), ok.size
    # the greatest differences among the mismatched (NaN greatest)
    key_abs = np.where(bad, np.nan_to_num(diff, nan=np.inf), -1.0)
    key_rel = np.where(bad, np.nan_to_num(rel, nan=np.inf), -1.0)
    i_abs = np.unravel_index(int(np.argmax(key_abs)), a.shape)
    i_rel = np.unravel_index(int(np.argmax(key_rel)), a.shape)
    dstr = _fmt(diff[i_abs]) if exact else repr(float(diff[i_abs]))
    _fail(msg, f"Tensor-likes are not {kind}!\n\nMismatched elements: {n_bad} / {total} "
          f"({100.0 * n_bad / total:.1f}%)\n"
          f"Greatest absolute difference: {dstr} at index {tuple(int(i) for i in i_abs)}"
          f"{allowed_abs}\n"
          f"Greatest relative difference: {float(rel[i_rel])!r} at index "
          f"{tuple(int(i) for i in i_rel)}{allowed_rel}", where)


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype, check_stride,
                     msg, where):
    a, e = _as_array(actual), _as_array(expected)
    if tuple(actual.shape) != tuple(expected.shape):
        _fail(msg, f"The values for attribute 'shape' do not match: {actual.shape} != "
              f"{expected.shape}.", where)
    if check_dtype and actual.dtype != expected.dtype:
        _fail(msg, f"The values for attribute 'dtype' do not match: {actual.dtype} != "
              f"{expected.dtype}.", where)
    if check_stride and isinstance(actual, _C.Tensor) and actual.stride() != expected.stride():
        _fail(msg, f"The values for attribute 'stride()' do not match: {actual.stride()} != "
              f"{expected.stride()}.", where)
    if rtol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype)
    exact = rtol == 0 and atol == 0 and not (a.dtype.kind == 'f' or e.dtype.kind == 'f')
    _compare_values(a, e, rtol, atol, equal_nan, exact, a.ndim == 0, msg, where)


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype, msg, where):
    if isinstance(actual, bool) or isinstance(expected, bool):
        if actual is not expected and actual != expected:
            _fail(msg, f"Booleans mismatch: {actual} is not {expected}", where)
        return
    if check_dtype and type(actual) is not type(expected):
        _fail(msg, f"The (d)types do not match: {type(actual)} != {type(expected)}.", where)
    exact = isinstance(actual, int) and isinstance(expected, int)
    if rtol is None:
        rtol, atol = (0.0, 0.0) if exact else _TOLERANCES['float64']
    _compare_values(np.asarray(actual), np.asarray(expected), rtol, atol, equal_nan,
                    exact, True, msg, where)


def _compare(actual, expected, rtol, atol, equal_nan, check_dtype, check_stride, msg, where):
    tensor_like = (_C.Tensor, np.ndarray)
    if isinstance(actual, tensor_like) and isinstance(expected, tensor_like):
        return _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype,
                                check_stride, msg, where)
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype, msg,
                                where)
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            _fail(msg, f"The keys of the mappings do not match:\nMissing keys in the actual "
                  f"mapping: {sorted(set(expected) - set(actual), key=repr)}\nAdditional keys "
                  f"in the actual mapping: {sorted(set(actual) - set(expected), key=repr)}",
                  where)
        for k in expected:
            _compare(actual[k], expected[k], rtol, atol, equal_nan, check_dtype, check_stride,
                     msg, where + [k])
        return
    if isinstance(actual, Sequence) and isinstance(expected, Sequence) and \
            not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            _fail(msg, f"The length of the sequences mismatch: {len(actual)} != "
                  f"{len(expected)}", where)
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, rtol, atol, equal_nan, check_dtype, check_stride, msg, where + [i])
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """raises AssertionError unless actual and expected are close (module
    docstring); msg replaces the message (a callable is given it)"""
    if (rtol is None) != (atol is None):
        missing = 'atol' if atol is None else 'rtol'
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {missing}.")
    try:
        _compare(actual, expected, rtol, atol, equal_nan, check_dtype, check_stride, msg, [])
    except _Mismatch as e:
        raise AssertionError(str(e)) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=''):
    """deprecated in PyTorch 1.12 for assert_close: numbers are made tensors
    of the other's dtype, and dtypes need not match"""
    warnings.warn("torch.testing.assert_allclose() is deprecated since 1.12 and will be "
                  "removed in 1.14. Use torch.testing.assert_close() instead. For detailed "
                  "upgrade instructions see https://github.com/pytorch/pytorch/issues/61844.",
                  FutureWarning, stacklevel=2)
    from ._creation import tensor
    if not isinstance(actual, _C.Tensor):
        actual = tensor(actual)
    if not isinstance(expected, _C.Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_dtype=False, msg=msg or None)


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False):
    """a tensor of random values (tensorgraph's generator) in [low, high)
    (PyTorch's defaults by dtype: [-9, 9] for floats and signed integers,
    [0, 10) for uint8, False/True for bool)"""
    from ._creation import rand, randint
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    name = _dtype_name(dtype)
    if low is not None and high is not None and low > high:
        raise ValueError("make_tensor: low must be weakly less than high!")
    if name == 'bool':
        t = randint(0, 2, shape).to(_C.bool)
    elif name in ('int32', 'int64', 'uint8'):
        lo = 0 if name == 'uint8' else -9
        lo = max(lo, math.ceil(low)) if low is not None else lo
        hi = (10 if name == 'uint8' else 10) if high is None else math.ceil(high)
        t = randint(int(lo), max(int(hi), int(lo) + 1), shape, dtype=dtype)
    else:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        t = rand(*shape, dtype=dtype) * (hi - lo) + lo
    if exclude_zero:
        one = 1 if name != 'bool' else True
        t = _C.where(t == 0, _C.add(t * 0, one), t)
    if noncontiguous and t.numel() > 1:
        t = t.repeat_interleave(2, -1)[..., ::2]
    if requires_grad:
        t.requires_grad_(True)
    return t
