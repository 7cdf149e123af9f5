"""nn.utils: gradient clipping."""
import math

from .._grad_mode import no_grad


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in ([parameters] if hasattr(parameters, 'grad') else parameters)
             if p.grad is not None]
    if not grads:
        return 0.0
    with no_grad():
        total = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
        coef = max_norm / (total + 1e-6)
        if coef < 1:
            for g in grads:
                g.mul_(coef)
    return total


def clip_grad_value_(parameters, clip_value):
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)
