"""Grad mode: no_grad / enable_grad / set_grad_enabled as context managers
and decorators (per thread, like PyTorch)."""
import functools
import inspect
import sys

from . import _C


def _decorate(make_mode, fn):
    """fn run under the context make_mode() gives; a generator function's
    generator runs each of its steps under it, as PyTorch's decorators do"""
    if not inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with make_mode():
                return fn(*args, **kwargs)
        return wrapper

    @functools.wraps(fn)
    def generator(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            with make_mode():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_mode():
                        gen.close()
                    raise
                except BaseException:
                    with make_mode():
                        response = gen.throw(*sys.exc_info())
                else:
                    with make_mode():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value
    return generator


class _GradMode:
    enabled = None

    def __enter__(self):
        self._prev = _C._set_grad_enabled(self.enabled)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        return _decorate(self.__class__, fn)


class no_grad(_GradMode):
    """Ops record nothing inside (parameter updates, evaluation)."""
    enabled = False


class enable_grad(_GradMode):
    enabled = True


def is_inference_mode_enabled():
    return _C._is_inference_mode()


class inference_mode:
    """inference_mode(mode=True): grad mode off (on for mode=False, as
    PyTorch's) and is_inference_mode_enabled() == mode inside; a context
    manager and a decorator. Tensors made inside are inference tensors
    (Tensor.is_inference(), the C core's tg_is_inference): outside, they
    cannot be written in place, require grad or be saved for a backward"""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self._prev_inference = _C._set_inference_mode(self.mode)
        self._prev = _C._set_grad_enabled(not self.mode)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        _C._set_inference_mode(self._prev_inference)
        return False

    def __call__(self, fn):
        return _decorate(lambda: inference_mode(self.mode), fn)


class set_grad_enabled:
    def __init__(self, mode):
        self._prev = _C._set_grad_enabled(bool(mode))  # takes effect at once, as PyTorch

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


def zero_grads(params, set_to_none):
    """Module.zero_grad and the optimizers': each gradient dropped, or (the
    default of PyTorch 1.13, Debian's and so the oracle here) detached from
    any history and zeroed in place; inside a tg.function trace, part of
    the compiled step"""
    _C._zero_grads(params, set_to_none)  # a loop in C: it runs every step
