"""More Tensor methods: the new functions of _ops_shape/_ops_math as
methods (and their in-place forms), type(), repeat, nbytes/itemsize,
in-place view changes (squeeze_, t_, ...), and gradient hooks
(register_hook, retain_grad).

Hooks. A non-leaf tensor y gets its hooks by becoming the output of an
identity autograd.Function whose backward runs them (y's wrapper is
rebound to that output, which shares y's storage), so the hook sees the
sum of all gradients reaching y from uses after registration, and its
return value (when not None) replaces it. A leaf's hooks run around
backward: its grad is set aside, the pass accumulates this backward's
gradient alone, the hooks transform it, and the old grad is added back;
autograd.grad passes a hooked leaf's result through its hooks too."""
import builtins
import itertools
import warnings
import weakref

from . import (_C, _ops, _ops_bits, _ops_cover, _ops_math, _ops_misc, _ops_more, _ops_scatter,
               _ops_shape, _ops_special, _ops_stats, _ops_windows)
from ._tensor import _update, _no_record, check_leaf_inplace

Tensor = _C.Tensor
_methods = {}

_SHAPE = ('tril', 'triu', 'fliplr', 'flipud', 'roll', 'rot90', 'diag', 'diagonal', 'as_strided',
          'diag_embed', 'trace', 'repeat_interleave', 'narrow', 'select', 'unbind', 'movedim',
          'moveaxis', 'unflatten', 'outer', 'ger', 'dot', 'vdot', 'inner',
          'scatter', 'scatter_add', 'index_add', 'index_fill', 'index_copy', 'nonzero',
          'argwhere', 'masked_select')
_MATH = ('isreal', 'lerp', 'addcmul',
         'addcdiv', 'square', 'trunc', 'fix', 'frac',
         'logaddexp', 'logaddexp2', 'hypot', 'atan2', 'arctan2', 'isclose', 'floor_divide',
         'div', 'divide',
         'clamp', 'clip', 'clamp_min', 'clamp_max', 'cumprod', 'diff', 'logit', 'deg2rad',
         'rad2deg', 'float_power', 'signbit', 'sgn', 'positive',
         'absolute', 'round')
_MORE = ('nan_to_num', 'nansum', 'nanmean', 'aminmax', 'mv', 'addmv', 'addr', 'baddbmm',
         'addbmm', 'kron', 'cross', 'unique', 'bincount', 'multinomial')
for _n in _MORE:
    _methods[_n] = getattr(_ops_more, _n)
_methods['where'] = lambda self, condition, y: _ops_more.where(condition, self, y)


def _broadcast_to(self, *size, **kwargs):
    """the method takes the sizes as arguments too (x.broadcast_to(2, 3)),
    as PyTorch's, or size="""
    if kwargs:
        if size or set(kwargs) != {'size'}:
            raise TypeError(f"broadcast_to() got unexpected arguments {sorted(kwargs)}")
        size = (kwargs['size'],)
    return _ops_shape.broadcast_to(self, size if len(size) != 1 else size[0])


_methods['broadcast_to'] = _broadcast_to

_methods['equal'] = _ops.equal
_methods['allclose'] = _ops.allclose
for _n in ('median', 'nanmedian', 'kthvalue', 'quantile', 'nanquantile', 'histc',
           'histogram', 'renorm', 'tensor_split', 'dist', 'cov', 'corrcoef'):
    _methods[_n] = getattr(_ops_stats, _n)
for _n in ('bitwise_left_shift', 'bitwise_right_shift', 'index_put', 'index_put_',
           'bitwise_left_shift_', 'bitwise_right_shift_'):  # << >>: number.c's slots
    _methods[_n] = getattr(_ops_bits, _n)
for _n in _SHAPE:
    _methods[_n] = getattr(_ops_shape, _n)
for _n in _ops_scatter.__all__:
    _methods[_n] = getattr(_ops_scatter, _n)
_COVER = ('not_equal', 'greater', 'greater_equal', 'less', 'less_equal', 'ravel', 'swapdims',
          'erfc', 'exp2', 'xlogy', 'sinc', 'fmax', 'fmin', 'copysign', 'heaviside',
          'logcumsumexp', 'cummax', 'cummin', 'msort', 'diagflat', 'hsplit', 'vsplit',
          'dsplit', 'is_nonzero', 'bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_not',
          'det', 'logdet', 'slogdet', 'inverse', 'matrix_power', 'cholesky', 'qr', 'svd',
          'pinverse', 'triangular_solve', 'cholesky_solve', 'cholesky_inverse')
for _n in _COVER:
    _methods[_n] = getattr(_ops_cover, _n)
for _n in _ops_special.__all__:
    _methods[_n] = getattr(_ops_special, _n)
for _n in ('ldexp', 'mvlgamma', 'gcd', 'lcm', 'is_signed', 'is_same_size', 'conj', 'angle',
           'is_conj'):
    _methods[_n] = getattr(_ops_misc, _n)
for _n in _MATH:
    _methods[_n] = getattr(_ops_math, _n)

_INPLACE = ('tril', 'triu', 'scatter', 'scatter_add', 'index_add', 'index_fill', 'index_copy',
            'lerp', 'addcmul', 'addcdiv', 'square', 'trunc', 'fix', 'frac',
            'clamp', 'clip', 'clamp_min', 'clamp_max', 'hypot', 'atan2',
            'logit', 'floor_divide', 'div', 'divide', 'cumprod', 'deg2rad', 'rad2deg',
            'sgn', 'nan_to_num', 'addmv', 'addr', 'baddbmm', 'addbmm',
            'not_equal', 'greater', 'greater_equal', 'less', 'less_equal', 'erfc', 'exp2',
            'xlogy', 'sinc', 'fmax', 'fmin', 'copysign', 'heaviside', 'bitwise_and',
            'bitwise_or', 'bitwise_xor', 'bitwise_not', 'lgamma', 'digamma', 'erfinv',
            'ldexp', 'gcd', 'lcm', 'round')


def _inplace(fn):
    def f(self, *args, **kwargs):
        return _update(self, fn, args, kwargs)
    f.__name__ = fn.__name__ + '_'
    return f


# in-place forms of the table's binary ops and comparisons (a comparison
# writes 1/0 in self's dtype, as PyTorch's eq_ & co.)
for _n in ('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'fmod', 'remainder', 'multiply', 'subtract',
           'true_divide', 'addmm', 'cumsum', 'negative'):
    if hasattr(_C, _n):
        _methods[_n + '_'] = _inplace(getattr(_C, _n))


def _untracked_inplace(fn):
    """PyTorch's logical_*_ record nothing: self gets the 1/0 values in its
    dtype and keeps its history, also a leaf that requires grad"""
    def f(self, *args, **kwargs):
        with _no_record():
            return self.copy_(fn(self, *args, **kwargs))
    f.__name__ = fn.__name__ + '_'
    return f


for _n in ('logical_and', 'logical_or', 'logical_xor', 'logical_not'):
    _methods[_n + '_'] = _untracked_inplace(getattr(_C, _n))
_methods['absolute_'] = _inplace(_ops_math.absolute)
_methods['arctan2_'] = _inplace(_ops_math.atan2)
_methods['mvlgamma_'] = _inplace(_ops_misc.mvlgamma)
_methods['is_cpu'] = property(lambda self: True)  # every tensor is in host memory
_methods['real'] = property(lambda self: self)  # no complex dtype: its own real part


def fill_diagonal_(self, fill_value, wrap=False):
    """the main diagonal (of a 2-D tensor, or of an N-D one with equal
    sizes) set to fill_value; wrap=True restarts it after every n + 1 rows
    of a tall matrix, as PyTorch's"""
    import numpy as np
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    strides = np.cumprod((1,) + tuple(self.shape[:0:-1]))[::-1]
    step = int(strides.sum())  # one along every dim
    n = builtins.min(self.shape)
    stop = self.numel() if wrap and self.ndim == 2 else n * step
    mask = np.zeros(self.numel(), dtype=bool)
    mask[0:stop:step] = True
    from ._creation import tensor
    return self.masked_fill_(tensor(mask.reshape(self.shape)), fill_value)


_methods['fill_diagonal_'] = fill_diagonal_
for _n in _INPLACE:
    _methods[_n + '_'] = _inplace(_methods[_n] if _n in _methods else getattr(_ops_more, _n))


def _method(fn):
    _methods[fn.__name__] = fn
    return fn


@_method
def flip(self, *dims, **kwargs):
    if 'dims' in kwargs:  # x.flip(dims=...)
        dims = (kwargs.pop('dims'),)
    if kwargs:
        raise TypeError(f"flip() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(dims) == 1 and not isinstance(dims[0], int):
        dims = tuple(dims[0])
    return _ops_shape.flip(self, dims)


@_method
def count_nonzero(self, *dims, **kwargs):
    """x.count_nonzero(), (dim), (dims tuple), (d0, d1, ...), (dim=...) or
    numpy's (axis=...)"""
    positional = not kwargs
    for name in ('dim', 'axis'):
        if name in kwargs:
            dims = (kwargs.pop(name),)
    if kwargs:
        raise TypeError(f"count_nonzero() got an unexpected keyword argument '{next(iter(kwargs))}'")
    dim = dims[0] if len(dims) == 1 else tuple(dims) if dims else None
    if positional and len(dims) == 1 and isinstance(dim, _C.Tensor):
        # the method's positional `int? dim` takes whatever has __index__:
        # a one-element integer or bool tensor of any shape
        import operator
        dim = operator.index(dim)
    return _ops_shape.count_nonzero(self, dim)


@_method
def repeat(self, *sizes):
    """the tensor tiled sizes[i] times along dim i (more sizes than dims
    add leading dims)"""
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        from ._creation import _one_size
        sizes = _one_size(sizes[0])
    if len(sizes) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                           "number of dimensions of tensor")
    # the result's sizes are the products (a negative size of an empty dim
    # gives 0, allowed, as PyTorch's)
    shape = [1] * (len(sizes) - self.ndim) + list(self.shape)
    if builtins.any(s * d < 0 for s, d in zip(sizes, shape)):
        raise RuntimeError(f"Trying to create tensor with negative dimension: "
                           f"{[s * d for s, d in zip(sizes, shape)]}")
    return _C.tile(self, sizes)


_TYPE_NAMES = {_C.float32: 'torch.FloatTensor', _C.float64: 'torch.DoubleTensor',
               _C.int32: 'torch.IntTensor', _C.int64: 'torch.LongTensor',
               _C.uint8: 'torch.ByteTensor', _C.bool: 'torch.BoolTensor'}
_TYPE_DTYPES = {v: k for k, v in _TYPE_NAMES.items()}
_TYPE_DTYPES.update({v.replace('torch.', 'tensorgraph.'): k for k, v in _TYPE_NAMES.items()})


@_method
def type(self, dtype=None, non_blocking=False, **kwargs):
    """type(): PyTorch's type string ('torch.FloatTensor'); type(dtype or
    such a string): a copy converted (self when the dtype is the same)"""
    if dtype is None:
        return _TYPE_NAMES[self.dtype]
    if isinstance(dtype, str):
        if dtype not in _TYPE_DTYPES:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _TYPE_DTYPES[dtype]
    elif isinstance(getattr(dtype, 'dtype', None), _C.dtype) and isinstance(dtype, builtins.type):
        dtype = dtype.dtype  # a legacy type: x.type(tg.FloatTensor)
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"type(): expected a dtype or a type string, got "
                        f"{builtins.type(dtype).__name__}")
    return self.to(dtype)


_methods['nbytes'] = property(lambda self: self.numel() * self.element_size())
_methods['itemsize'] = property(lambda self: self.element_size())


@_method
def ndimension(self):
    return self.ndim


@_method
def is_complex(self):
    return False


@_method
def new_empty(self, *sizes, size=None, dtype=None, device=None, requires_grad=False):
    return self.new_zeros(*sizes, size=size, dtype=dtype, requires_grad=requires_grad)


@_method
def unflatten(self, dim, sizes):
    return _ops_shape.unflatten(self, dim, sizes)


# ---- in-place view changes: the wrapper now holds the new view ----------------------
def _reshaping(name, make, node):
    """an in-place view op (PyTorch's unsqueeze_, t_): the view made and
    the wrapper rebound to it, refused where PyTorch refuses changing a
    multi-output or no-grad view or a leaf that requires grad; under no_grad
    a tensor with history keeps it (the view is recorded), as PyTorch's
    in-place view ops keep grad_fn; node(args): PyTorch's name for it"""
    def f(self, *args, **kwargs):
        # the view first (it changes nothing): PyTorch parses the arguments
        # before refusing the operation (a TypeError before the leaf's error)
        if not _C.is_grad_enabled() and _C._grad_fn_name(self) is not None:
            prev = _C._set_grad_enabled(True)
            try:
                r = make(self, *args, **kwargs)
            finally:
                _C._set_grad_enabled(prev)
        else:
            r = make(self, *args, **kwargs)
        _C._check_view_inplace(self)
        check_leaf_inplace(self)
        return _C._set_grad_fn_name(self._rebind_(r), node(args, kwargs))
    f.__name__ = name
    _methods[name] = f


_reshaping('squeeze_', lambda self, dim=None: _C.squeeze(self, dim),
           lambda a, kw: 'SqueezeBackward3' if a or kw.get('dim') is not None
           else 'SqueezeBackward2')
_reshaping('unsqueeze_', lambda self, dim: _C.unsqueeze(self, dim),
           lambda a, kw: 'UnsqueezeBackward1')
_reshaping('t_', lambda self: self.t(), lambda a, kw: 'TBackward1')
_reshaping('as_strided_', lambda self, size, stride, storage_offset=None:
           _ops_shape.as_strided(self, size, stride, storage_offset),
           lambda a, kw: 'AsStridedBackward0')
for _n in ('transpose_', 'swapaxes_', 'swapdims_'):
    _reshaping(_n, lambda self, d0, d1: _C.transpose(self, d0, d1),
               lambda a, kw: 'TransposeBackward1')


@_method
def detach_(self):
    """cuts self off from the graph in place (it becomes a leaf that does
    not require grad); views are refused, as PyTorch refuses them"""
    if _C._is_view(self):
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using "
            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
            "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
            "called on these gradients. To fix this error, please refer to the "
            "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
    return self._rebind_(self.detach())


@_method
def _is_view(self):
    """is self a view of another tensor (PyTorch's _is_view)"""
    return _C._is_view(self)


_methods['_base'] = property(_C._view_base, doc="the tensor a view views (the root of a "
                             "chain of views), or None")


# ---- gradient hooks ------------------------------------------------------------------
class RemovableHandle:
    _ids = itertools.count()

    def __init__(self, hooks):
        self.id = next(RemovableHandle._ids)
        self._hooks = weakref.ref(hooks) if hooks is not None else None

    def remove(self):
        hooks = self._hooks() if self._hooks else None
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _Hooks(dict):
    """handle id -> hook, in registration order (weak-referenceable)"""

    def run(self, grad):
        for h in list(self.values()):
            r = h(grad)
            if r is not None:
                if not isinstance(r, Tensor):
                    raise TypeError(f"hook returned an object of type "
                                    f"{builtins.type(r).__name__}, expected a Tensor or None")
                if r.shape != grad.shape:
                    name = getattr(h, '__name__', h)  # PyTorch names the hook
                    raise RuntimeError(f"hook '{name}' has changed the size of value: "
                                       f"expected {list(grad.shape)}, got {list(r.shape)}")
                grad = r
        return grad


_HookFn = None


def _hook_function():
    global _HookFn
    if _HookFn is None:
        from .autograd import Function

        class TensorHook(Function):
            """identity whose backward runs the tensor's hooks"""
            @staticmethod
            def forward(ctx, x, hooks):
                ctx.hooks = hooks
                return x

            @staticmethod
            def backward(ctx, grad):
                return ctx.hooks.run(grad), None
        _HookFn = TensorHook
    return _HookFn


_leaf_hooks = weakref.WeakValueDictionary()  # id(tensor) -> hooked leaf


def _hooks_of(self):
    d = self.__dict__
    if '_tg_hooks' not in d:
        d['_tg_hooks'] = _Hooks()
        if self.is_leaf:
            _leaf_hooks[id(self)] = self
        else:
            with _C_enable_grad():
                self._rebind_(_hook_function().apply(self, d['_tg_hooks']))
    return d['_tg_hooks']


class _C_enable_grad:
    def __enter__(self):
        self._prev = _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


@_method
def register_hook(self, hook):
    """hook(grad) runs when the gradient of self is computed; a tensor it
    returns replaces the gradient. Returns a handle with remove()."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    hooks = _hooks_of(self)
    h = RemovableHandle(hooks)
    hooks[h.id] = hook
    return h


_grad_descr = Tensor.__dict__['grad']


def _get_grad(self):
    d = self.__dict__
    if '_tg_retained' in d and not self.is_leaf:
        return d['_tg_retained']
    g = _grad_descr.__get__(self)
    if g is None and not self.is_leaf:
        warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being "
                      "accessed. Its .grad attribute won't be populated during "
                      "autograd.backward(). If you indeed want the .grad field to be populated "
                      "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
                      "access the non-leaf Tensor by mistake, make sure you access the leaf "
                      "Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
                      "informations.", UserWarning, stacklevel=2)
    return g


def _set_grad(self, value):
    d = self.__dict__
    if '_tg_retained' in d and not self.is_leaf:
        d['_tg_retained'] = value
        return
    _grad_descr.__set__(self, value)


_methods['grad'] = property(_get_grad, _set_grad, None,
                            "The accumulated gradient (a new wrapper each time).")


@_method
def retain_grad(self):
    """a non-leaf keeps its gradient in .grad after backward (summed over
    passes, as a leaf's)"""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.is_leaf or '_tg_retained' in self.__dict__:
        return
    self.__dict__['_tg_retained'] = None
    ref = weakref.ref(self)

    def keep(grad):
        t = ref()
        if t is not None:
            old = t.__dict__.get('_tg_retained')
            with _no_record():
                t.__dict__['_tg_retained'] = grad.detach().clone() if old is None else old + grad
    self.register_hook(keep)


_methods['retains_grad'] = property(lambda self: '_tg_retained' in self.__dict__)


def _hooked_leaves():
    return [t for t in list(_leaf_hooks.values()) if t.__dict__.get('_tg_hooks')]


def _with_leaf_hooks(run):
    """runs a backward pass (run()), passing each hooked leaf's gradient
    from this pass through its hooks before it joins the old grad"""
    leaves = _hooked_leaves() if _leaf_hooks.data else None  # .data: no call when empty
    if not leaves:
        return run()
    old = {}
    for t in leaves:
        old[id(t)] = _grad_descr.__get__(t)
        _grad_descr.__set__(t, None)
    try:
        run()
    finally:
        for t in leaves:
            new, prev = _grad_descr.__get__(t), old[id(t)]
            _grad_descr.__set__(t, None)
            if new is not None:
                new = t.__dict__['_tg_hooks'].run(new)
                with _no_record():
                    new = new if prev is None else prev + new
            _grad_descr.__set__(t, new if new is not None else prev)


_c_backward = Tensor.backward


@_method
def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """d self / d leaves accumulated into their .grad (see Tensor.backward
    in PyTorch); hooked leaves' gradients go through their hooks. Inside a
    tg.function trace it becomes part of the compiled step (function.py)"""
    if self.is_symbolic:
        if inputs is not None or _leaf_hooks.data:
            raise NotImplementedError("backward() inside tg.function with inputs=... or with "
                                      "hooks registered on leaf tensors is not supported; "
                                      "call it outside the function")
        return _C._trace_backward(self, gradient, bool(create_graph))
    if inputs is not None:
        from .autograd import backward_into
        return backward_into((self,), None if gradient is None else (gradient,), inputs,
                             retain_graph, create_graph)
    if not _leaf_hooks.data:  # no hooked leaf (.data: no call when empty)
        return _c_backward(self, gradient, retain_graph, create_graph, inputs)
    return _with_leaf_hooks(lambda: _c_backward(self, gradient, retain_graph, create_graph,
                                                inputs))


def apply_input_hooks(inputs, results):
    """autograd.grad: a hooked leaf's gradient goes through its hooks"""
    out = []
    for x, r in zip(inputs, results):
        hooks = x.__dict__.get('_tg_hooks') if x.is_leaf else None
        out.append(hooks.run(r) if hooks and r is not None else r)
    return tuple(out)


# sliding windows, masked_scatter, split_with_sizes, unique_consecutive
_methods['unfold'] = _ops_windows.unfold
for _n in _ops_windows.__all__:
    _methods[_n] = getattr(_ops_windows, _n)
_methods['masked_scatter_'] = _inplace(_ops_windows.masked_scatter)
for _n in ('scatter_reduce', 'index_reduce', 'put'):
    _methods[_n + '_'] = _inplace(getattr(_ops_scatter, _n))


@_method
def bernoulli(self, p=None, *, generator=None):
    """0/1 draws with the probabilities self (or p), in self's dtype"""
    from ._creation import bernoulli as draw
    return draw(self, p, generator=generator)


@_method
def bernoulli_(self, p=0.5, *, generator=None):
    from ._creation import bernoulli as draw
    return self.copy_(draw(self, p, generator=generator))


@_method
def get_device(self):
    """-1: a CPU tensor, as PyTorch says"""
    return -1


@_method
def is_inference(self):
    return _C._is_inference(self)


for _name, _fn in _methods.items():
    _C._add_method(_name, _fn)
