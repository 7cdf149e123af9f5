"""tg.autograd's Variable (PyTorch's deprecated alias: every tensor is a
Variable), anomaly mode (detect_anomaly / set_detect_anomaly) and
gradgradcheck.

Anomaly mode with check_nan has the C engine test every gradient a
backward function gives (tg_set_anomaly_check), for backward() and
autograd.grad alike, and stop at the first NaN with PyTorch's message
naming the function ('SqrtBackward0'). PyTorch's other part, the forward
traceback printed with the error, is not kept."""
import threading
import warnings

from . import _C

__all__ = ['Variable', 'detect_anomaly', 'gradgradcheck', 'is_anomaly_check_nan_enabled',
           'is_anomaly_enabled', 'set_detect_anomaly']


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _C.Tensor)


class Variable(_C.Tensor, metaclass=_VariableMeta):
    """Variable(data, requires_grad=False): a tensor sharing data's values,
    detached, with requires_grad as given (PyTorch's deprecated wrapper)"""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            from ._creation import tensor
            return tensor([]).requires_grad_(requires_grad)
        if not isinstance(data, _C.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", stacklevel=2)
        return data.detach().requires_grad_(requires_grad)


_state = threading.local()


def is_anomaly_enabled():
    return getattr(_state, 'enabled', False)


def is_anomaly_check_nan_enabled():
    return getattr(_state, 'check_nan', True)


def _set(enabled, check_nan):
    _state.enabled, _state.check_nan = enabled, check_nan
    _C._set_anomaly_check(bool(enabled and check_nan))


class detect_anomaly:
    """anomaly mode inside the block (a context manager or a decorator):
    with check_nan, backward stops with RuntimeError at the first
    backward function that returns NaN"""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn('Anomaly Detection has been enabled. This mode will increase the runtime '
                      'and should only be enabled for debugging.', stacklevel=2)

    def __enter__(self):
        _set(True, self.check_nan)

    def __exit__(self, *args):
        _set(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = is_anomaly_enabled(), is_anomaly_check_nan_enabled()
            _set(True, self.check_nan)
            try:
                return fn(*args, **kwargs)
            finally:
                _set(*prev)
        return wrapper


class set_detect_anomaly:
    """anomaly mode on or off, from the call (a function) or for a block"""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        _set(bool(mode), check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        _set(self.prev, self.prev_check_nan)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, **unused):
    """second derivatives against finite differences of the first: the
    gradients of func's outputs (times grad_outputs, random ones when
    None) checked by gradcheck with respect to inputs and grad_outputs"""
    from . import autograd
    from ._creation import randn_like
    inputs = (inputs,) if isinstance(inputs, _C.Tensor) else tuple(inputs)
    outputs = func(*inputs)
    outputs = (outputs,) if isinstance(outputs, _C.Tensor) else tuple(outputs)
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o).requires_grad_(True) for o in outputs)
    else:
        grad_outputs = (grad_outputs,) if isinstance(grad_outputs, _C.Tensor) \
            else tuple(grad_outputs)
    n = len(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad]

    def first_grads(*args):
        # gradcheck evaluates its function under no_grad for the finite
        # differences: these first derivatives need the graph regardless
        from ._grad_mode import enable_grad
        ins, gos = args[:n], args[n:]
        with enable_grad():
            outs = func(*ins)
            outs = (outs,) if isinstance(outs, _C.Tensor) else tuple(outs)
            grads = autograd.grad(outs, [ins[i] for i in diff], gos, create_graph=True,
                                  allow_unused=True)
        flat = [g.reshape(-1) for g in grads if g is not None]
        if not flat:
            raise RuntimeError("gradgradcheck: no input's gradient depends on the inputs")
        return _C.cat(flat, 0)

    return autograd.gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol,
                              rtol=rtol, raise_exception=raise_exception)
