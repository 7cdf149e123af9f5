"""Tensor creation with PyTorch's signatures: tensor, zeros, randn, ..."""
import builtins
import numpy as np

from . import _C

_NP_TO_TG = {np.dtype(np.float32): _C.float32, np.dtype(np.float64): _C.float64,
             np.dtype(np.int32): _C.int32, np.dtype(np.int64): _C.int64,
             np.dtype(np.uint8): _C.uint8, np.dtype(np.bool_): _C.bool}
_TG_TO_NP = {v: k for k, v in _NP_TO_TG.items()}


def _one_size(size):
    """one size argument as a tuple: an int, a sequence of ints or, as
    PyTorch's, an integer tensor of one element"""
    if isinstance(size, _C.Tensor):
        return (size.__index__(),)
    return (size,) if isinstance(size, builtins.int) else tuple(size)


def _size(size):
    """zeros(2, 3) and zeros((2, 3)) alike (and zeros(tensor(3)))"""
    if len(size) == 1 and not isinstance(size[0], builtins.int):
        return _one_size(size[0])
    return tuple(size)


def _finish(t, requires_grad):
    if not isinstance(requires_grad, bool):  # PyTorch's argument parser
        raise TypeError(f"argument 'requires_grad' must be bool, not "
                        f"{type(requires_grad).__name__}")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _numpy_dtype(data):
    """PyTorch's inference for Python data: floats -> the default dtype
    (float32 unless set_default_dtype changed it), ints -> int64, bools ->
    bool; numpy arrays keep theirs"""
    if isinstance(data, np.ndarray):
        return None
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    if isinstance(first, np.generic) and not isinstance(first, (np.str_, np.bytes_)):
        # numpy numbers keep their dtype, as PyTorch reads them (np.float64(2.5)
        # is float64; numpy's promotion of a list of them is PyTorch's)
        a = np.asarray(data)
        if a.dtype.kind in 'fiub':
            return a.dtype if a.dtype in _NP_TO_TG or a.dtype.kind == 'f' else np.int64
    a = np.asarray(data)
    if a.dtype.kind == 'f':
        return _TG_TO_NP[_C._get_default_dtype()]
    if a.dtype.kind in 'iu':
        return np.int64
    if a.dtype.kind == 'b':
        return np.bool_
    _refuse_data(a, data)
    raise TypeError(f"tensor(): can't convert data of numpy dtype {a.dtype}")


def _refuse_data(a, data):
    """PyTorch's errors for data that holds no numbers: a string is a
    TypeError, strings inside a sequence a ValueError, other objects
    (None, sets, dicts) a RuntimeError"""
    if a.dtype.kind in 'USa':
        if isinstance(data, (list, tuple)):
            raise ValueError("too many dimensions 'str'")
        raise TypeError(f"tensor(): invalid data type '{type(data).__name__}'")
    if a.dtype.kind == 'O':
        raise RuntimeError(f"tensor(): could not infer a dtype of {type(data).__name__} data "
                           "(numbers, bools, nested lists of them, arrays and tensors are)")


def _first_leaf(data):
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return data


def _tensors_as_scalars(data):
    """nested data whose leaves include tensors, as PyTorch reads it: each
    tensor of one element a number (detached; more elements are refused),
    the dtype promoted over the leaves (a tensor's own, a Python float's
    the default, an int's int64, a bool's bool). Returns (data, dtype)."""
    dtype = None

    def leaf(v):
        nonlocal dtype
        if isinstance(v, (list, tuple)):
            return [leaf(x) for x in v]
        if isinstance(v, Tensor):
            if v.numel() != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            d, v = v.dtype, v.detach().reshape(()).item()
        elif isinstance(v, builtins.bool):
            d = _C.bool
        elif isinstance(v, builtins.int):
            d = _C.int64
        elif isinstance(v, builtins.float):
            d = _C._get_default_dtype()
        else:
            d = _NP_TO_TG.get(np.asarray(v).dtype)
        if d is not None:
            dtype = d if dtype is None else _C.promote_types(dtype, d)
        return v
    return leaf(data), dtype


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of data (nested lists, numbers, arrays, tensors)."""
    if isinstance(data, Tensor):
        t = data.detach().clone()
        if dtype is not None:
            t = t.to(dtype)
        return _finish(t, requires_grad)
    if isinstance(data, (list, tuple)) and isinstance(_first_leaf(data), Tensor):
        data, inferred = _tensors_as_scalars(data)
        if dtype is None and inferred is not None:
            dtype = inferred
    if dtype is not None:
        if not isinstance(dtype, _C.dtype):  # PyTorch: TypeError, not a lookup's KeyError
            raise TypeError(f"tensor(): argument 'dtype' must be a tensorgraph.dtype "
                            f"(tensorgraph.float32, ...), not {type(dtype).__name__}")
        try:
            a = np.array(data, dtype=_TG_TO_NP[dtype])
        except (ValueError, TypeError):
            try:
                _refuse_data(np.asarray(data), data)
            except ValueError:  # ragged: numpy's message below
                pass
            raise
    else:
        a = np.array(data, dtype=_numpy_dtype(data))
        if a.dtype not in _NP_TO_TG:
            raise TypeError(f"tensor(): numpy dtype {a.dtype} is not supported "
                            "(float32, float64, int32, int64, uint8, bool are)")
    if a.dtype.kind in 'iu' and a.dtype not in _NP_TO_TG:
        a = a.astype(np.int64)
    t = _C.from_numpy(np.require(a, requirements='C')).clone()  # a copy the tensor owns
    return _finish(t, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Shares memory with a numpy array of a supported dtype when no conversion
    is needed (like from_numpy); copies otherwise."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and data.dtype in _NP_TO_TG and \
            (dtype is None or _NP_TO_TG[data.dtype] == dtype):
        try:
            return _C.from_numpy(data)
        except ValueError:
            pass
    return tensor(data, dtype=dtype)


def _dt(dtype):
    return _C._get_default_dtype() if dtype is None else dtype


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = (_C.bool if isinstance(fill_value, builtins.bool) else
                 _C.int64 if isinstance(fill_value, builtins.int) else _C._get_default_dtype())
    return _finish(_C._full(tuple(size), dtype, fill_value), requires_grad)


def _sizes(sizes, size, name):
    """the size given positionally (zeros(2, 3), zeros((2, 3))) or as size="""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    size = _sizes(sizes, size, 'zeros')
    return _finish(_C._full(_size(size), _dt(dtype), 0), requires_grad)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    size = _sizes(sizes, size, 'ones')
    return _finish(_C._full(_size(size), _dt(dtype), 1), requires_grad)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False,
          memory_format=None):
    """zeros: tensorgraph does not hand out uninitialised memory; in
    memory_format's strides (channels_last ...)"""
    r = zeros(*_sizes(sizes, size, 'empty'), dtype=dtype)
    if memory_format is not None:
        from ._memory_format import preserve_format
        if memory_format is preserve_format:
            raise RuntimeError("unsupported memory format Preserve")
        r = r.contiguous(memory_format=memory_format)
    return _finish(r, requires_grad)


def _like(t, make, dtype, requires_grad, memory_format):
    """make(shape, dtype) in t's layout (memory_format, PyTorch's
    preserve_format by default: a dense input's strides are kept)"""
    from ._memory_format import in_layout, layout_order
    r = in_layout(t.shape, layout_order(t, memory_format),
                  lambda shape: make(shape, dtype or t.dtype))
    return _finish(r, requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _like(input, lambda s, dt: zeros(s, dtype=dt), dtype, requires_grad,
                 memory_format or _preserve())


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(input, lambda s, dt: ones(s, dtype=dt), dtype, requires_grad,
                 memory_format or _preserve())


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return zeros_like(input, dtype=dtype, requires_grad=requires_grad, memory_format=memory_format)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(input, lambda s, dt: full(s, fill_value, dtype=dt), dtype, requires_grad,
                 memory_format or _preserve())


def _preserve():
    from ._memory_format import preserve_format
    return preserve_format


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if any(isinstance(v, _C.Tensor) and v.is_symbolic for v in (start, end, step)):
        return _finish(_traced_arange(start, end, step, dtype), requires_grad)
    # 0-d tensors and numpy numbers count as the Python numbers they hold
    start, end, step = (v.item() if isinstance(v, (_C.Tensor, np.generic)) else v
                        for v in (start, end, step))
    if dtype is None:
        ints = all(isinstance(v, builtins.int) for v in (start, end, step))
        dtype = _C.int64 if ints else _C._get_default_dtype()
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:  # PyTorch refuses what ONNX Range makes empty
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    return _finish(_C._arange(start, end, step, dtype), requires_grad)


def _traced_arange(start, end, step, dtype):
    """arange over values of a trace (tg.function): the range_by op, whose
    length the graph knows when it runs"""
    if dtype is None:
        ints = all(not v.is_floating_point() if isinstance(v, _C.Tensor)
                   else isinstance(v, builtins.int) for v in (start, end, step))
        dtype = _C.int64 if ints else _C._get_default_dtype()
    b = []
    for v in (start, end, step):
        if isinstance(v, _C.Tensor):
            if v.numel() != 1:
                raise RuntimeError(f"arange: bounds must be one-element tensors, got "
                                   f"shape {list(v.shape)}")
            b.append(v.reshape(()).to(dtype))
        else:
            b.append(tensor(v, dtype=dtype))
    return _C._range_by(*b)


def _spacing(name, start, end, steps, dtype):
    """the numbers of linspace/logspace as Python numbers, steps checked,
    the result's numpy dtype"""
    start, end = (v.item() if isinstance(v, (_C.Tensor, np.generic)) else v
                  for v in (start, end))
    if isinstance(steps, _C.Tensor) or not isinstance(steps, (builtins.int, np.integer)) \
            or isinstance(steps, builtins.bool):
        raise TypeError(f"{name}(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:  # PyTorch's RuntimeError (numpy would say ValueError)
        raise RuntimeError("number of steps must be non-negative")
    return start, end, builtins.int(steps), _TG_TO_NP[_dt(dtype)]


def linspace(start, end, steps, *, dtype=None, requires_grad=False):
    """steps values from start to end, PyTorch's to the bit (_spaced.py)"""
    from ._spaced import linspace_values
    start, end, steps, np_dt = _spacing('linspace', start, end, steps, dtype)
    return _finish(tensor(linspace_values(start, end, steps, np_dt), dtype=_dt(dtype)),
                   requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, requires_grad=False):
    """base ** linspace's exponents, PyTorch's to the bit (_spaced.py)"""
    from ._spaced import logspace_values
    start, end, steps, np_dt = _spacing('logspace', start, end, steps, dtype)
    return _finish(tensor(logspace_values(start, end, steps, base, np_dt), dtype=_dt(dtype)),
                   requires_grad)


def _random(kind, size, dtype, a, b, generator, requires_grad):
    return _finish(_C._random(kind, _size(size), _dt(dtype), a, b, generator), requires_grad)


def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    size = _sizes(sizes, size, 'rand')
    return _random("uniform", size, dtype, 0.0, 1.0, generator, requires_grad)


def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    size = _sizes(sizes, size, 'randn')
    return _random("normal", size, dtype, 0.0, 1.0, generator, requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(input, lambda s, dt: rand(s, dtype=dt), dtype, requires_grad,
                 memory_format or _preserve())


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _like(input, lambda s, dt: randn(s, dtype=dt), dtype, requires_grad,
                 memory_format or _preserve())


def randint(low, high=None, size=None, *, generator=None, dtype=None):
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if low >= high:  # PyTorch's RuntimeError (from random_)
        raise RuntimeError(f"randint: low must be less than high (random_ expects 'from' to "
                           f"be less than 'to'), but got low={low} >= high={high}")
    u = _C._random("uniform", tuple(size), _C.float64, 0.0, 1.0, generator)
    return (u * (high - low)).floor().to(dtype or _C.int64) + low


def randperm(n, *, generator=None, dtype=None):
    p = _C._random("randperm", (), _C.int64, n, 0.0, generator)
    return p if dtype is None or dtype == _C.int64 else p.to(dtype)


def bernoulli(input, p=None, *, generator=None):
    """bernoulli(probs): 1 where U(0,1) < probs"""
    probs = input if p is None else p
    if isinstance(probs, _C.Tensor) and not probs.is_symbolic and probs.numel():
        values = probs.detach().numpy()  # read directly: also while a trace records ops
        low, high = values.min().item(), values.max().item()
    else:
        low = high = probs if not isinstance(probs, _C.Tensor) else 0.0
    if not 0 <= low <= high <= 1:  # NaN too
        raise RuntimeError(f"bernoulli: probabilities must be in [0, 1], got values in "
                           f"[{low}, {high}]")
    u = _C._random("uniform", input.shape, _C.float64, 0.0, 1.0, generator)
    return (u < probs).to(input.dtype)


def manual_seed(seed):
    """Seeds the default generator (parameter init, rand/randn, dropout)."""
    return _C.default_generator.manual_seed(builtins.int(seed))


def seed():
    import time
    s = time.time_ns() & ((1 << 63) - 1)
    _C.default_generator.manual_seed(s)
    return s


def initial_seed():
    return _C.default_generator.initial_seed()


def get_rng_state():
    """the default generator's state, a uint8 tensor (not PyTorch's bytes:
    a tensorgraph state restores a tensorgraph generator only)"""
    return _C.default_generator.get_state()


def set_rng_state(new_state):
    _C.default_generator.set_state(new_state)


Tensor = _C.Tensor


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of another framework's tensor (an object
    with __dlpack__, e.g. a numpy array or a torch tensor, or a DLPack
    capsule), never a copy; CPU tensors of the six dtypes."""
    if hasattr(ext_tensor, '__dlpack__'):
        device = ext_tensor.__dlpack_device__()
        if device[0] != 1:
            raise BufferError(f"from_dlpack: only CPU tensors can be shared (device type "
                              f"{device[0]})")
        ext_tensor = ext_tensor.__dlpack__()
    return _C._from_dlpack_capsule(ext_tensor)
