"""nn.utils.weight_norm / remove_weight_norm, as PyTorch's (the older API):
a parameter w becomes w_g (its norm over every dim but `dim`, kept as
size-1 dims) and w_v (its direction), and a forward pre-hook sets
module.w = w_v * (w_g / |w_v|) before each forward, so gradients reach
both."""
from ... import _C
from ...linalg import vector_norm
from ..parameter import Parameter


def _norm_except(v, dim):
    """the 2-norm of v over every dim but dim (all when dim is None), dims kept"""
    if dim is None:
        return vector_norm(v, 2)
    dims = tuple(d for d in range(v.ndim) if d != dim % v.ndim)
    return vector_norm(v, 2, dims, keepdim=True)


class WeightNorm:
    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute_weight(self, module):
        g = getattr(module, self.name + '_g')
        v = getattr(module, self.name + '_v')
        return v * (g / _norm_except(v, self.dim))

    def __call__(self, module, args):
        object.__setattr__(module, self.name, self.compute_weight(module))


def weight_norm(module, name='weight', dim=0):
    """module with its parameter `name` split into name_g and name_v"""
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                               f"{name}")
    w = getattr(module, name)
    if dim == -1:
        dim = None
    fn = WeightNorm(name, dim)
    del module._parameters[name]
    module.register_parameter(name + '_g', Parameter(_norm_except(w, dim).detach()))
    module.register_parameter(name + '_v', Parameter(w.detach()))
    object.__setattr__(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module, name='weight'):
    """the parameter `name` back as one parameter (its current value)"""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            w = hook.compute_weight(module).detach()
            del module._forward_pre_hooks[key]
            del module._parameters[name + '_g']
            del module._parameters[name + '_v']
            module.__dict__.pop(name, None)
            module.register_parameter(name, Parameter(w))
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
