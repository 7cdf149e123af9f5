"""PyTorch's argument parser also takes numpy's names for two arguments:
`axis` for `dim` and `keepdims` for `keepdim` (x.sum(axis=0),
torch.sort(x, axis=1), torch.cat(ts, axis=1)). The op table's binder
(python/src/ops.c) reads them for the C ops; the functions written in
Python that have a `dim` parameter, in the tg namespace and as Tensor
methods, get them here, wrapped once each (aliases stay one object).
nn.functional's functions are Python in PyTorch too and take no numpy
names, so they are left alone."""
import functools
import inspect

from . import _C

_wrapped = {}


def _takes_dim(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return 'dim' in params and 'axis' not in params


def numpy_names(fn):
    """fn taking axis= for dim= and keepdims= for keepdim="""
    w = _wrapped.get(id(fn))
    if w is not None:
        return w

    @functools.wraps(fn)
    def w(*args, **kwargs):
        if 'axis' in kwargs:
            if 'dim' in kwargs:
                raise TypeError(f"{fn.__name__}() got multiple values for argument 'dim'")
            kwargs['dim'] = kwargs.pop('axis')
        if 'keepdims' in kwargs:
            if 'keepdim' in kwargs:
                raise TypeError(f"{fn.__name__}() got multiple values for argument 'keepdim'")
            kwargs['keepdim'] = kwargs.pop('keepdims')
        return fn(*args, **kwargs)
    _wrapped[id(fn)] = w
    _wrapped[id(w)] = w
    return w


def install(namespace):
    """wraps namespace's public Python functions that take dim, and the
    Tensor methods written in Python that do"""
    for name, fn in list(namespace.items()):
        if not name.startswith('_') and inspect.isfunction(fn) and _takes_dim(fn) and \
                (fn.__module__ or '').startswith('tensorgraph'):
            namespace[name] = numpy_names(fn)
    for name, fn in list(_C.Tensor.__dict__.items()):
        if not name.startswith('_') and inspect.isfunction(fn) and _takes_dim(fn):
            _C._add_method(name, numpy_names(fn))
