"""nn.utils.spectral_norm / remove_spectral_norm, as PyTorch's (the older
API): a parameter w becomes w_orig, with buffers w_u and w_v, and a
forward pre-hook sets module.w = w_orig / sigma before each forward, sigma
estimated by power iteration (n_power_iterations steps per training
forward; none in eval)."""
from ... import _trace_guards
from ..._grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter


class SpectralNorm:
    def __init__(self, name='weight', n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim = name, dim
        self.n_power_iterations, self.eps = n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            from ..._ops_shape import movedim
            weight = movedim(weight, self.dim, 0)
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + '_orig')
        u = getattr(module, self.name + '_u')
        v = getattr(module, self.name + '_v')
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                W = weight_mat.detach()
                for _ in range(self.n_power_iterations):
                    v = F.normalize(W.T @ u, dim=0, eps=self.eps)
                    u = F.normalize(W @ v, dim=0, eps=self.eps)
                module._buffers[self.name + '_u'] = u
                module._buffers[self.name + '_v'] = v
                _trace_guards.changed()
        u, v = u.clone(), v.clone()
        sigma = (u * (weight_mat @ v)).sum()
        return weight / sigma

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name,
                           self.compute_weight(module, do_power_iteration=module.training))

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        module.__dict__.pop(self.name, None)
        del module._buffers[self.name + '_u']
        del module._buffers[self.name + '_v']
        del module._parameters[self.name + '_orig']
        module.register_parameter(self.name, Parameter(weight.detach()))


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """module with its parameter `name` normalized by its spectral norm"""
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                               f"parameter {name}")
    if dim is None:
        from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d,
                                       ConvTranspose3d)) else 0
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    with no_grad():
        weight_mat = fn.reshape_weight_to_matrix(weight)
        h, w = weight_mat.shape
        from ..._creation import randn
        u = F.normalize(randn(h, dtype=weight.dtype), dim=0, eps=fn.eps)
        v = F.normalize(randn(w, dtype=weight.dtype), dim=0, eps=fn.eps)
    del module._parameters[name]
    module.register_parameter(name + '_orig', weight)
    object.__setattr__(module, name, weight.detach())
    module.register_buffer(name + '_u', u)
    module.register_buffer(name + '_v', v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module, name='weight'):
    """the parameter `name` back as one parameter (its normalized value)"""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
