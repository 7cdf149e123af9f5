"""PyTorch's argument-type refusals for the functions written in Python.

PyTorch's generated argument parser refuses a value of the wrong Python
type with TypeError ("sqrt(): argument 'input' (position 1) must be
Tensor, not list"), before any work; user code written against PyTorch
catches that class. tensorgraph's Python-level functions (tg.X,
tg.nn.functional.X, tg.linalg.X, tg.special.X and the Tensor methods
written in Python) take their arguments as they come, so a wrong type used
to fail inside them with whatever the first misuse raised: AttributeError
("'int' object has no attribute 'ndim'") for a number or list given for a
tensor, RuntimeError or ValueError ("Boolean value of Tensor with more than
one value is ambiguous", "only one element tensors can be converted to
Python scalars") for a tensor given for a number.

install() wraps each such function so that those failures, and only
those, leave as PyTorch's TypeError, naming the argument: the call's
success path is unchanged (no check runs before the call; values
tensorgraph deliberately accepts more widely, such as Python numbers for
tensors, still work), and every other error passes through as raised.

- an AttributeError raised asking an object the caller passed, which is
  not a tensor, for an attribute tensors have: that argument "must be
  Tensor";
- a RuntimeError or ValueError (the call failed anyway: PyTorch's parser
  would have refused first), when the caller passed a tensor of more than
  one element, or requiring grad, for a parameter whose default is a
  Python int or that _INT_NAMES names (an int parameter: PyTorch takes a
  0-d integer tensor without grad there, nothing else), or a float for
  one of _INT_NAMES: that argument "must be int". Float and bool
  parameters are left alone: normal(mean=0.0, std=1.0) takes tensors, and
  PyTorch's Python-level functions take inplace=1 as Python takes it.
"""
import functools
import inspect
import types

from . import _C

# parameters PyTorch's parser types as int wherever they occur, default or
# not ("dim" is not here: reductions take tuples of dims too)
_INT_NAMES = dict.fromkeys(("k", "r", "n", "dim0", "dim1", "diagonal", "offset", "chunks",
                            "window_length", "start_dim", "end_dim", "axis0", "axis1", "row",
                            "col", "num_classes", "groups"), int)


def _bound(fn, args, kwargs, method):
    """[(name, position or None, value, default)] of the call's arguments
    (a method's positions not counting self, as PyTorch's; the values
    given for *args named by their index when *args comes first, else
    None), [] when fn's signature cannot bind them"""
    try:
        sig = inspect.signature(fn)
        ba = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return []
    out = []
    params = list(sig.parameters.values())
    for i, p in enumerate(params):
        if p.name not in ba.arguments or p.kind == p.VAR_KEYWORD:
            continue
        if p.kind == p.VAR_POSITIONAL:  # atleast_1d(*tensors), a method's (self, *args)
            out.extend((None if i else j, i + j + 1 - method, v, p.empty)
                       for j, v in enumerate(ba.arguments[p.name]))
            continue
        positional = p.kind != p.KEYWORD_ONLY and i < len(args)
        out.append((p.name, i + 1 - method if positional else None, ba.arguments[p.name],
                    p.default))
    return out


def _type_error(qualname, name, pos, want, value):
    if isinstance(name, int):  # the name-th of a function's *tensors
        return TypeError("expected Tensor as element %d in argument 0, but got %s"
                         % (name, type(value).__name__))
    if name is None:
        return TypeError("%s(): argument at position %d must be %s, not %s"
                         % (qualname, pos, want, type(value).__name__))
    where = " (position %d)" % pos if pos else ""
    return TypeError("%s(): argument '%s'%s must be %s, not %s"
                     % (qualname, name, where, want, type(value).__name__))


def _refusal(fn, qualname, method, args, kwargs, e):
    """PyTorch's TypeError for e raised by fn(*args, **kwargs), or None"""
    if isinstance(e, AttributeError):
        obj = getattr(e, "obj", None)
        if obj is None or isinstance(obj, _C.Tensor) or not hasattr(_C.Tensor, e.name or "_"):
            return None  # not a tensor's attribute asked of a non-tensor
        for name, pos, value, _ in _bound(fn, args, kwargs, method):
            if value is obj:
                return _type_error(qualname, name, pos, "Tensor", value)
        return None
    for name, pos, value, default in _bound(fn, args, kwargs, method):
        want = _INT_NAMES.get(name, type(default))
        if want is not int:  # float parameters: normal(mean=0.0, std=1.0) takes tensors
            continue
        if isinstance(value, _C.Tensor):
            if value.ndim or value.requires_grad:
                return _type_error(qualname, name, pos, want.__name__, value)
        elif name in _INT_NAMES and isinstance(value, float):
            return _type_error(qualname, name, pos, want.__name__, value)
    return None


_WRAPPED = {}  # (fn, method) -> its wrapper: one function under all its names


def checked(fn, qualname, method=False):
    """fn, with its argument-type failures raised as PyTorch's TypeError"""
    if getattr(fn, "_tg_argcheck", False):
        return fn
    if (fn, method) in _WRAPPED:
        return _WRAPPED[fn, method]

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (AttributeError, RuntimeError, ValueError) as e:
            err = _refusal(fn, qualname, method, args, kwargs, e)
            if err is None:
                raise
            raise err from e
    call._tg_argcheck = True
    _WRAPPED[fn, method] = call
    return call


def install(namespace, prefix=""):
    """wraps the public Python functions of a module's namespace (a dict)
    or a class (the Tensor methods written in Python)"""
    if isinstance(namespace, dict):
        items, put = list(namespace.items()), namespace.__setitem__
    else:
        items = list(vars(namespace).items())

        def put(k, v):
            _C._add_method(k, v)
    for name, fn in items:
        if name.startswith("_") or not isinstance(fn, types.FunctionType):
            continue
        put(name, checked(fn, prefix + name, not isinstance(namespace, dict)))


def need_tensor(qualname, name, pos, value):
    """PyTorch's TypeError unless value is a tensor"""
    if not isinstance(value, _C.Tensor):
        raise _type_error(qualname, name, pos, "Tensor", value)
