"""nn.utils.stateless.functional_call: a module called with some of its
parameters and buffers (dotted names) replaced by given tensors for that
call only; the module is left as it was, also when the call raises."""
import contextlib

from ... import _C

__all__ = ['functional_call']


def _owner(module, dotted):
    """(the submodule, the last name) of a dotted parameter/buffer name"""
    *path, name = dotted.split('.')
    for part in path:
        module = getattr(module, part)
    return module, name


@contextlib.contextmanager
def _swapped(module, tensors):
    saved = []
    try:
        for dotted, value in tensors.items():
            owner, name = _owner(module, dotted)
            if name in owner._parameters:
                store = owner._parameters
            elif name in owner._buffers:
                store = owner._buffers
            else:
                store = None
            if store is None:
                # not a parameter or buffer: a plain attribute (as PyTorch's,
                # which sets it for the call)
                had = name in owner.__dict__
                saved.append((owner, name, None, owner.__dict__.get(name), had))
                object.__setattr__(owner, name, value)
                continue
            saved.append((owner, name, store, store[name], True))
            store[name] = value
        yield
    finally:
        for owner, name, store, old, had in reversed(saved):
            if store is not None:
                store[name] = old
            elif had:
                object.__setattr__(owner, name, old)
            else:
                owner.__dict__.pop(name, None)


def functional_call(module, parameters_and_buffers, args, kwargs=None):
    """module(*args, **kwargs) with parameters_and_buffers (name -> tensor)
    in place of the module's own"""
    for name, value in parameters_and_buffers.items():
        if not isinstance(value, _C.Tensor):
            raise TypeError(f"functional_call: {name} must be a Tensor, not "
                            f"{type(value).__name__}")
    if kwargs is None:
        kwargs = {}
    if not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, parameters_and_buffers):
        return module(*args, **kwargs)
