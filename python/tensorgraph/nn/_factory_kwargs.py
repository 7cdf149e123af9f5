"""PyTorch's factory keywords of module constructors (nn.Linear(3, 2,
device=..., dtype=...), Conv*, the norms, the recurrent and transformer
layers, ...): one definition every constructor calls.

device goes through the factory functions' checker
(tensorgraph._factory.check_device): None, 'cpu', 'cpu:N' or a device
naming the CPU are accepted (parameters live in host memory), 'cuda'
raises PyTorch's AssertionError of a CPU-only build and other device types
a RuntimeError. It is checked even when the module has no tensor to create
(an InstanceNorm without affine or running statistics), where PyTorch,
creating nothing, would not look at it. dtype is the parameters' dtype, as
the constructors already use it."""
from .._factory import check_device

__all__ = ['factory_kwargs']


def factory_kwargs(device=None, dtype=None):
    """{'device': device, 'dtype': dtype} once device is checked: what a
    module forwards to the submodules it builds (PyTorch's
    factory_kwargs)"""
    check_device(device)
    return {'device': device, 'dtype': dtype}
