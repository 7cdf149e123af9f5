"""Grad mode: no_grad / enable_grad / set_grad_enabled as context managers
and decorators (per thread, like PyTorch)."""
import functools

from . import _C


class _GradMode:
    enabled = None

    def __enter__(self):
        self._prev = _C._set_grad_enabled(self.enabled)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Ops record nothing inside (parameter updates, evaluation)."""
    enabled = False


class enable_grad(_GradMode):
    enabled = True


inference_mode = no_grad


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
    any history and zeroed in place"""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        g = p.grad
        if g.grad_fn is not None:
            g = g.detach()
            p.grad = g
        else:
            g.requires_grad_(False)
        g.zero_()
