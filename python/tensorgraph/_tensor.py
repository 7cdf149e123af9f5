"""Tensor methods written in Python: conversions, numpy interop, the
methods whose signatures need logic (max with dim, to(...)), in-place
variants and grad_fn (_grad_node.py). They join the C type through _C._add_method."""
import builtins
import warnings

import numpy as np

from . import _C, _grad_node, _memory_format, _ops, _out_arg, _tensor_str
from ._device import check_eager_target
from ._creation import _TG_TO_NP, zeros, ones, full, tensor

Tensor = _C.Tensor
_methods = {}


def method(fn):
    _methods[fn.__name__] = fn
    return fn


@method
def numpy(self, *, force=False):
    """A numpy array sharing this tensor's memory (no copy, any layout)."""
    if force:
        self = self.detach()
    return np.asarray(self)


@method
def __array__(self, dtype=None):
    a = np.asarray(memoryview(self))
    return a if dtype is None else a.astype(dtype, copy=False)


@method
def __iter__(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


@method
def __contains__(self, element):
    """element in self: any element equal to it, as PyTorch's"""
    if isinstance(element, (Tensor, int, float, bool)):
        return bool((self == element).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in "
                       f"a {type(element)}.")


@method
def __format__(self, spec):
    # PyTorch's: a 0-d tensor formats as its number; any other as object
    # does (str(self) for an empty spec, else TypeError)
    if self.ndim == 0 and not self.is_symbolic:
        return format(self.item(), spec)
    if spec:
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return str(self)


@method
def __reduce_ex__(self, protocol):
    return (tensor, (self.detach().numpy().copy(), self.dtype, None, self.requires_grad))


@method
def __deepcopy__(self, memo):
    if self.is_leaf:
        t = self.detach().clone()
        t.requires_grad_(self.requires_grad)
        if type(self) is not Tensor:
            t = type(self)(t, requires_grad=self.requires_grad)
    else:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                           "support the deepcopy protocol at the moment")
    memo[id(self)] = t
    return t


@method
def to(self, *args, dtype=None, **kwargs):
    """to(dtype), to(other) (its dtype), to('cpu') (no-op): a copy only when the
    dtype changes"""
    for a in args:
        if isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        else:
            check_eager_target(a, 'to()')
    if dtype is None or dtype == self.dtype:
        # copy=True: a new tensor even when nothing changes, as PyTorch's
        return self.clone() if kwargs.get('copy', False) else self
    return _C._cast(self, dtype)


def _cast_method(dt):
    def f(self, memory_format=None):
        """self in the dtype; in memory_format's strides when one is given
        (PyTorch's preserve_format, the default, keeps the layout)"""
        r = self.to(dt)
        from ._memory_format import preserve_format
        if memory_format is None or memory_format is preserve_format:
            return r
        return r.contiguous(memory_format=memory_format)
    return f


for _n, _d in (('float', _C.float32), ('double', _C.float64), ('long', _C.int64),
               ('int', _C.int32), ('bool', _C.bool), ('byte', _C.uint8)):
    _methods[_n] = _cast_method(_d)


@method
def type_as(self, other):
    return self.to(other.dtype)


@method
def cpu(self, memory_format=None):
    """self: every tensor is in host memory (PyTorch's to() returns self when
    the device does not change, whatever memory_format says)"""
    return self


@method
def is_floating_point(self):
    return self.dtype.is_floating_point


@method
def t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return _C._set_grad_fn_name(self.transpose(0, 1) if self.ndim == 2 else self.view(self.shape),
                                'TBackward0')


@method
def narrow(self, dim, start, length):
    dim = dim % self.ndim
    return self[(slice(None),) * dim + (slice(start, start + length),)]


@method
def view_as(self, other):
    return self.view(other.shape)


@method
def reshape_as(self, other):
    return self.reshape(other.shape)


@method
def expand_as(self, other):
    return self.expand(other.shape)


def _bool_mask(mask):
    """bool, or (PyTorch 1.13's legacy) an integer mask of 0s and 1s"""
    if not isinstance(mask, Tensor) or mask.dtype in (_C.bool, _C.uint8):
        return mask
    if mask.dtype.is_floating_point:
        raise RuntimeError(f"masked_fill: expected a bool mask, got {mask.dtype} (compare it, "
                           "e.g. mask != 0)")
    if not mask.is_symbolic and bool(((mask != 0) & (mask != 1)).any()):
        raise RuntimeError("Mask tensor can take 0 and 1 values only")
    return mask != 0


def _fill_value(self, value):
    """masked_fill's value as a 0-d tensor of self's dtype: the result
    keeps self's dtype (1.5 into an int64 tensor writes 1, as PyTorch)"""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        return value.to(self.dtype)
    if isinstance(value, float) and not self.dtype.is_floating_point:
        value = int(value) if value == value and abs(value) != float('inf') else value
    return tensor(value, dtype=self.dtype)


@method
def masked_fill(self, mask, value):
    return _C._set_grad_fn_name(_C.where(_bool_mask(mask), _fill_value(self, value), self),
                                'MaskedFillBackward0')


@method
def new_zeros(self, *sizes, size=None, dtype=None, requires_grad=False):
    return zeros(*sizes, size=size, dtype=dtype or self.dtype, requires_grad=requires_grad)


@method
def new_ones(self, *sizes, size=None, dtype=None, requires_grad=False):
    return ones(*sizes, size=size, dtype=dtype or self.dtype, requires_grad=requires_grad)


@method
def new_full(self, size, fill_value, *, dtype=None, requires_grad=False):
    return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


@method
def new_tensor(self, data, dtype=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


@method
def split(self, split_size, dim=0):
    return _ops.split(self, split_size, dim)


@method
def chunk(self, chunks, dim=0):
    return _ops.chunk(self, chunks, dim)


@method
def topk(self, k, dim=-1, largest=True, sorted=True):
    return _ops.topk(self, k, dim, largest, sorted)


@method
def sort(self, dim=-1, descending=False, stable=False):
    return _ops.sort(self, dim, descending, stable)


@method
def argsort(self, dim=-1, descending=False, stable=False):
    return _ops.argsort(self, dim, descending, stable)


@method
def norm(self, p='fro', dim=None, keepdim=False, dtype=None):
    return _ops.norm(self, p, dim, keepdim, dtype)


@method
def max(self, dim=None, keepdim=False):
    return _ops.max(self, dim, keepdim)


@method
def min(self, dim=None, keepdim=False):
    return _ops.min(self, dim, keepdim)


for _n in ('sum', 'prod', 'all', 'any', 'var', 'std', 'softmax', 'log_softmax', 'bmm'):
    _methods[_n] = getattr(_ops, _n)


def _watched(args, kwargs):
    """does autograd watch any tensor among these arguments?"""
    return any(isinstance(a, Tensor) and a.requires_grad
               for a in (*args, *kwargs.values()))


# the kinds an in-place result may not go down: bool < integer < floating
# point (float64 into float32, int64 into int32 are fine, as in PyTorch)
_KIND = {_C.bool: 0, _C.uint8: 1, _C.int32: 1, _C.int64: 1, _C.float32: 2, _C.float64: 2}


def check_leaf_inplace(self):
    """PyTorch's refusal to change a leaf that requires grad in place"""
    if _C.is_grad_enabled() and self.requires_grad and self.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def _update(self, op, args, kwargs, node=None):
    """self = op(self, ...) written into self, as PyTorch's in-place ops:
    recorded when autograd watches an operand (op runs on a clone of self,
    which its rule may save; copy_ then gives self the history op -> clone
    -> self's old history, and a result the rule saved is self from then
    on, as in PyTorch), else computed without recording. A result
    self's dtype cannot hold raises, as in PyTorch."""
    recorded = _C.is_grad_enabled() and (self.requires_grad or _watched(args, kwargs))
    if recorded:
        r = op(self.clone(), *args, **kwargs)
    else:
        with _no_record():
            r = op(self, *args, **kwargs)
    if _KIND[r.dtype] > _KIND[self.dtype]:  # PyTorch's can_cast: not down a kind
        raise RuntimeError(f"result type {r.dtype} can't be cast to the desired output "
                           f"type {self.dtype}")
    self.copy_(r)
    if recorded:  # a result op saved is self now: changing self again fails backward
        _C._saved_result_is(r, self)
    if node is None:  # PyTorch names an in-place op's node as the op's
        node = _C._grad_fn_name(r)
        node = node and _grad_node._node_type(node).__name__
    return self if node is None else _C._name_inplace(self, node)


def _inplace(name):
    op = getattr(_C, name)

    def f(self, *args, **kwargs):
        return _update(self, op, args, kwargs)
    f.__name__ = name + '_'
    return f


class _no_record:
    def __enter__(self):
        self._prev = _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


for _n in ('neg', 'abs', 'exp', 'log', 'sqrt', 'rsqrt', 'sin', 'cos', 'tanh', 'sigmoid',
           'relu', 'clamp', 'floor', 'ceil', 'round', 'sign', 'pow', 'maximum', 'minimum',
           'clip', 'erf', 'tan', 'asin', 'arcsin', 'acos', 'arccos', 'atan', 'arctan', 'asinh',
           'arcsinh', 'acosh', 'arccosh', 'atanh', 'arctanh', 'log2', 'log10', 'sinh', 'cosh',
           'expm1', 'log1p', 'reciprocal'):
    if hasattr(_C, _n):
        _methods[_n + '_'] = _inplace(_n)


@method
def masked_fill_(self, mask, value):
    mask = _bool_mask(mask)
    spread = [d for d in range(self.ndim) if self.stride(d) == 0 and self.shape[d] > 1]
    # an empty tensor has no location two positions share
    if spread and isinstance(mask, Tensor) and not self.is_symbolic and self.numel():
        return _masked_fill_expanded(self, mask, value, spread)
    return _update(self, lambda s, m, v: _C.where(m, v, s),
                   (mask, _fill_value(self, value)), {}, 'MaskedFillBackward0')


def _masked_fill_expanded(self, mask, value, spread):
    """PyTorch 1.13 (deprecated, with its warning) fills an expanded
    tensor: a memory location takes the value when any position sharing it
    is masked. So the mask is reduced by any() over the expanded dims and
    written once per location, through the view without them; a backward
    through the write fails, as PyTorch's"""
    warnings.warn("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the "
                  "tensor before performing this operation. This also applies to advanced "
                  "indexing e.g. tensor[mask] = scalar", UserWarning, stacklevel=3)
    mask = mask.expand(self.shape)
    once = self
    for d in spread:
        mask = mask.any(d, keepdim=True)
        once = once.narrow(d, 0, 1)
    once.masked_fill_(mask, value)
    if once.requires_grad:  # PyTorch refuses the gradient of such a write
        _C._overlapping_write(once)
    return self


_methods['grad_fn'] = property(_grad_node.grad_fn, doc="the node that made the tensor "
                               "(None for a leaf): _grad_node.py")
_C._set_repr_hook(_tensor_str.tensor_repr)
_C._set_out_hook(_out_arg.write_out)
_methods['clone'] = _memory_format.clone
_methods['contiguous'] = _memory_format.contiguous
_methods['is_contiguous'] = _memory_format.is_contiguous
_methods['is_cuda'] = property(lambda self: False)


def _matrix_transpose(name):
    """mT, mH, adjoint(): the last two dims swapped; a 0-d tensor is its
    own (a view), as PyTorch's; 1-D is refused"""
    def f(self):
        if self.ndim == 0:
            return self.view(())
        if self.ndim < 2:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of "
                               f"matrices. Got {self.ndim}-D tensor.")
        return self.transpose(-2, -1)
    return f


_methods['mT'] = property(_matrix_transpose('mT'))
_methods['__array_priority__'] = 1000  # numpy defers to our reflected operators

for _name, _fn in _methods.items():
    _C._add_method(_name, _fn)

del builtins
