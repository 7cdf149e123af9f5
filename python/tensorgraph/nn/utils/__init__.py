"""nn.utils: gradient clipping, parameters <-> one vector, weight_norm,
nn.utils.prune and nn.utils.rnn.pad_sequence."""
import math

from ... import _C
from ..._grad_mode import no_grad
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
from . import fusion, parametrizations, parametrize, prune, stateless  # noqa: F401,E402
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401,E402
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights,  # noqa: F401,E402
                     fuse_linear_bn_eval, fuse_linear_bn_weights)
from ._extras import (clip_grad_norm, consume_prefix_in_state_dict_if_present,  # noqa: F401,E402
                      skip_init)


def _params(parameters):
    return [parameters] if isinstance(parameters, _C.Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """scales the gradients so that their joint norm_type-norm is at most
    max_norm; returns the norm before clipping (a tensor, as PyTorch)"""
    from ..._creation import tensor
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        return tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        if norm_type == math.inf:
            total = max(float(g.abs().max()) for g in grads)
        else:
            total = sum(float((g.double().abs() ** norm_type).sum()) for g in grads) \
                ** (1.0 / norm_type)
        if error_if_nonfinite and not math.isfinite(total):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                               f"`parameters` is non-finite, so it cannot be clipped.")
        coef = max_norm / (total + 1e-6)
        if coef < 1:
            for g in grads:
                g.mul_(coef)
    return tensor(total, dtype=grads[0].dtype)


def clip_grad_value_(parameters, clip_value):
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    return _C.cat([p.reshape(-1) for p in parameters], 0)


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, _C.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    i = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[i:i + n].view(p.shape))
            i += n


from . import rnn  # noqa: E402,F401
