"""tg.autograd.forward_ad: PyTorch's forward-mode AD with dual tensors.

    import tensorgraph.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = f(x)                          # any ops, eagerly
        value, jvp = fwAD.unpack_dual(y)  # jvp = J_f(primal) @ tangent

While a level is open, every op run on tensors that carry tangents gives
its outputs theirs from the op's forward-mode rule (the C core's
dispatcher does it: the same rules tg.function's graphs use), so J.v comes
out with the value in one pass, without a trace. One level at a time, as
in PyTorch 1.13; leaving it drops every tangent. Tangents are ordinary
tensors: backward goes through them (reverse over forward), and a
backward run inside a level is itself differentiated forward (forward
over reverse, Hessian-vector products). Inside tg.function (a traced
graph) tangents are not propagated: use tg.autograd.functional.jvp there."""
import collections

from . import _C

__all__ = ['dual_level', 'enter_dual_level', 'exit_dual_level', 'make_dual',
           'unpack_dual', 'UnpackedDualTensor']

_current_level = -1


class UnpackedDualTensor(collections.namedtuple('UnpackedDualTensor', ['primal', 'tangent'])):
    """What unpack_dual returns: the primal (a view without the tangent)
    and the tangent (None when the tensor carries none)."""


def enter_dual_level():
    """Opens the dual level (refused when one is open: nested forward
    mode is not supported) and returns its index (0, as PyTorch's)."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _C._dual_level_enter()
    _current_level = 0
    return _current_level


def exit_dual_level(*, level=None):
    """Closes the open level: every tangent made in it is dropped."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level or _current_level < 0:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one "
                           "that was created. This is not supported.")
    _C._dual_level_exit()
    _current_level = -1


class dual_level:
    """Context manager for a dual level: tangents live inside it."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def _check_level(level, what):
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level "
                           "exists, make sure to enter_dual_level() first."
                           if what == 'make_dual' else
                           "Trying to unpack a dual Tensor for forward AD but no level "
                           "exists, make sure to enter_dual_level() first.")
    if level != _current_level:
        raise RuntimeError(f"Invalid level {level}: only level {_current_level} is open")


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` carrying `tangent` (same size; cast to tensor's
    dtype) for the open level; tensor itself gets no tangent."""
    if not isinstance(tensor, _C.Tensor) or not isinstance(tangent, _C.Tensor):
        raise TypeError("make_dual: expected tensor and tangent to be Tensors, got "
                        f"{type(tensor).__name__} and {type(tangent).__name__}")
    _check_level(level, 'make_dual')
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    return _C._make_dual(tensor, tangent)


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of `tensor` at the open level; tangent None when
    it carries none (or no level is open)."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    _check_level(level, 'unpack_dual')
    primal, tangent = _C._unpack_dual(tensor)
    return UnpackedDualTensor(primal, tangent)
