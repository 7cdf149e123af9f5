"""Tensor methods that reinterpret a tensor's memory: view(dtype) (the same
bytes read as another dtype, sharing storage) and resize_ (a new shape
over the same storage). Both read the host memory through numpy, so they
work on eager tensors only, as PyTorch's own do on real data."""
import math

import numpy as np

from . import _C
from ._creation import _TG_TO_NP
from ._ops_shape import torch_type_name

Tensor = _C.Tensor
_c_view = Tensor.view


def _host_array(self, what):
    try:
        return np.asarray(self.detach())
    except Exception as e:  # a symbolic tensor of tg.function: no memory to read
        raise RuntimeError(f"{what}: needs an eager tensor with memory (not a symbolic tensor "
                           f"inside tg.function): {e}") from None


def _view_dtype(self, dtype):
    """self's bytes as dtype: the same shape for the same element size,
    else the last dim scaled by the size ratio (it must be contiguous and,
    when it shrinks, divisible). The result shares self's storage and
    never requires grad (PyTorch 1.13's is not differentiable either)"""
    if dtype == self.dtype:
        return self.detach()
    a, b = self.element_size(), np.dtype(_TG_TO_NP[dtype]).itemsize
    if a != b:
        how = f"to view {torch_type_name(self.dtype)} as {torch_type_name(dtype)} " \
              f"(different element sizes)"
        if self.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {how}")
        if self.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {how}, but got {self.stride(-1)}")
        if b > a and self.shape[-1] % (b // a):
            raise RuntimeError(f"self.size(-1) must be divisible by {b // a} {how}, but got "
                               f"{self.shape[-1]}")
        for d in range(self.ndim - 1):
            if b > a and self.stride(d) % (b // a):
                raise RuntimeError(f"self.stride({d}) must be divisible by {b // a} {how}, "
                                   f"but got {self.stride(d)}")
        if b > a and self.storage_offset() % (b // a):
            raise RuntimeError(f"self.storage_offset() must be divisible by {b // a} {how}, "
                               f"but got {self.storage_offset()}")
    return _C.from_numpy(_host_array(self, 'view(dtype)').view(_TG_TO_NP[dtype]))


def view(self, *shape, dtype=None):
    """view(*shape) / view(shape): the C view; view(dtype): _view_dtype"""
    if dtype is None and len(shape) == 1 and isinstance(shape[0], _C.dtype):
        dtype = shape[0]
    elif dtype is not None and shape:
        raise TypeError("view() received an invalid combination of arguments: give a shape "
                        "or a dtype, not both")
    if dtype is not None:
        return _view_dtype(self, dtype)
    return _c_view(self, *shape)


def resize_(self, *sizes, memory_format=None):
    """self, now of shape sizes over its own storage (elements in order).
    Growing past self's element count is not supported (PyTorch grows the
    storage, with uninitialized new elements): a RuntimeError says so"""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    if any(not isinstance(s, int) or s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension or a non-integer "
                           f"size: {list(shape)}")
    n = math.prod(shape)
    if n > self.numel():
        raise RuntimeError(f"resize_: growing a tensor of {self.numel()} elements to "
                           f"{list(shape)} ({n}) is not supported by tensorgraph (its storage "
                           f"cannot grow in place); make a new tensor")
    if not self.is_contiguous():
        raise RuntimeError("resize_: a non-contiguous tensor is not supported by tensorgraph "
                           "(PyTorch reads its storage in memory order); call .contiguous() "
                           "first")
    return self._rebind_(_c_view(_c_view(self, -1)[:n], shape))


for _name, _fn in (('view', view), ('resize_', resize_)):
    _C._add_method(_name, _fn)
