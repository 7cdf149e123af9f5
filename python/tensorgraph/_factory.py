"""The keyword arguments every PyTorch factory function takes, for
tensorgraph's factories (zeros, arange, linspace, rand, randint, eye, the
windows, ...): device, layout, pin_memory, requires_grad and, where
PyTorch has it, out.

- device: 'cpu' (any index) or None; 'cuda' raises PyTorch's AssertionError
  of a CPU-only build, other device types a RuntimeError. Eager tensors
  live in host memory.
- layout: strided (or None); sparse layouts do not exist here.
- pin_memory: False; True needs CUDA, as in PyTorch.
- out: the result is written into out, which is returned: out's dtype is
  the result's unless dtype is given, when the two must agree (PyTorch's
  message); a tensor of another shape is resized without a warning, as
  PyTorch's factories do (_out_arg.resize_for: a non-empty out cannot grow
  here); an out requiring grad is refused.
- requires_grad: set on the result (PyTorch's error for integer dtypes)."""
import functools

from . import _C
from ._creation import _finish
from ._ops_shape import torch_type_name


def check_device(device):
    if device is None:
        return
    name = str(device)
    if name.split(':')[0] == 'cuda':
        from .cuda import _needs_cuda
        _needs_cuda()
    from ._device import check_eager_target
    check_eager_target(name.rsplit('/', 1)[-1], 'tensor factory')


def check_layout(layout):
    from ._memory_format import strided
    if layout is not None and layout is not strided:
        raise RuntimeError(f"layout {layout} is not supported: tensorgraph's tensors are "
                           f"strided (dense)")


def check_pin_memory(pin_memory):
    if pin_memory:
        raise RuntimeError("pin_memory=True needs CUDA (pinned host memory is for copies to "
                           "a GPU); tensorgraph runs on the CPU")


def _fill_out(out, result, requires_grad):
    if not isinstance(out, _C.Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if out.requires_grad and _C.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    from ._out_arg import resize_for
    resize_for(out, result, keep_history=False, stacklevel=4, warn=False)
    out.copy_(result.detach())
    return _finish(out, requires_grad)


def factory(name, fn, takes_out):
    """fn taking PyTorch's factory keywords; out= when takes_out"""
    @functools.wraps(fn)
    def f(*args, device=None, layout=None, pin_memory=False, requires_grad=False,
          **kwargs):
        check_device(device)
        check_layout(layout)
        check_pin_memory(pin_memory)
        out = kwargs.pop('out', None) if takes_out else None
        if out is not None and isinstance(out, _C.Tensor):
            dtype = kwargs.get('dtype')
            if dtype is not None and dtype != out.dtype:
                raise RuntimeError(f"dtype {torch_type_name(dtype)} does not match dtype of "
                                   f"out parameter ({torch_type_name(out.dtype)})")
            kwargs['dtype'] = out.dtype
        r = fn(*args, **kwargs)
        if out is not None:
            return _fill_out(out, r, requires_grad)
        return _finish(r, requires_grad)
    return f


# PyTorch's factories: with out= / without (the _like functions, tensor,
# the index and window functions)
WITH_OUT = ('zeros ones empty full arange range linspace logspace eye rand randn randint '
            'randperm').split()
WITHOUT_OUT = ('tensor as_tensor asarray scalar_tensor empty_strided zeros_like ones_like empty_like full_like '
               'rand_like randn_like randint_like tril_indices triu_indices bartlett_window '
               'blackman_window hamming_window hann_window kaiser_window').split()


# and the Tensor methods making a tensor like self
METHODS = 'new_zeros new_ones new_full new_empty new_tensor new_empty_strided'.split()


def install(namespace):
    """wraps the factories of namespace (tensorgraph's) and the new_*
    methods in place"""
    for takes_out, names in ((True, WITH_OUT), (False, WITHOUT_OUT)):
        for n in names:
            namespace[n] = factory(n, namespace[n], takes_out)
    for n in METHODS:
        _C._add_method(n, factory(n, getattr(_C.Tensor, n), False))
