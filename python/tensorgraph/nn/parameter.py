"""nn.Parameter: a leaf tensor that modules register as a parameter."""
from .. import _C


class Parameter(_C.Tensor):
    """Parameter(data, requires_grad=True): shares data's storage."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C._full((0,), _C._get_default_dtype(), 0)
        if requires_grad and isinstance(data, _C.Tensor) and not data.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")  # PyTorch's words on this path
        return _C.Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (Parameter, (self.detach().clone(), self.requires_grad))
