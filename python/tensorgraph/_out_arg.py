"""out= of the op table's functions, as PyTorch's: the result written into
the given tensor, which is returned. Refused when autograd would record
(PyTorch's out= functions are not differentiable) or when the result's
dtype cannot be cast to out's; a tensor of another shape is resized (with
PyTorch's warning unless it was empty)."""
import functools
import warnings

from . import _C
from ._ops_shape import torch_type_name


# ops whose out= must have the result's dtype exactly (PyTorch's non-
# elementwise kernels); the elementwise ones and reductions cast
_EXACT_DTYPE = {'gather', 'index_select', 'matmul', 'mm', 'bmm', 'mv', 'addmm', 'softmax',
                'log_softmax', 'where'}
_C10_NAMES = {'float32': 'float', 'float64': 'double', 'int32': 'int', 'int64': 'long int',
              'uint8': 'unsigned char', 'bool': 'bool'}


def c10_name(dtype):
    """the dtype as PyTorch's out= messages name it (c10's type names)"""
    return _C10_NAMES.get(str(dtype).split('.')[-1], str(dtype))


_c10 = c10_name


def write_out(name, out, result):
    if not isinstance(out, _C.Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _C.is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")
    if name in _EXACT_DTYPE and out.dtype != result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_c10(result.dtype)}, but got "
                           f"{_c10(out.dtype)} instead")
    from ._ops_misc import can_cast
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {torch_type_name(result.dtype)} can't be cast to the "
                           f"desired output type {torch_type_name(out.dtype)}")
    resize_for(out, result, keep_history=False, stacklevel=4)
    out.copy_(result)  # nothing records: refused above when autograd would
    return out


def takes_out(name):
    """a function composed in Python taking out= as the op table's
    functions do (write_out: autograd refused, cast where safe, resized with
    PyTorch's warning)"""
    def wrap(fn):
        @functools.wraps(fn)
        def f(*args, out=None, **kwargs):
            r = fn(*args, **kwargs)
            return r if out is None else write_out(name, out, r)
        return f
    return wrap


def resize_for(out, result, keep_history, stacklevel, warn=True):
    """out made result's shape when it differs, as PyTorch's resize_output:
    a warning (unless warn is False: PyTorch's factories) unless out was
    empty (which takes new storage: result's values in out's dtype; with its
    history when keep_history)"""
    if out.shape == result.shape:
        return
    if out.numel() and warn:
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(out.shape)}, which does not match the required output shape "
                      f"{list(result.shape)}. This behavior is deprecated, and in a future "
                      f"PyTorch release outputs will not be resized unless they have zero "
                      f"elements. You can explicitly reuse an out tensor t by resizing it, "
                      f"inplace, to zero elements with t.resize_(0).", UserWarning,
                      stacklevel=stacklevel)
    if out.numel() == 0:  # an empty out takes new storage
        r = result if keep_history else result.detach()
        out._rebind_(r.to(out.dtype).clone())
    else:
        out.resize_(tuple(result.shape))
