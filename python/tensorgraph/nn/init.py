"""nn.init: in-place initialisers drawn from the default generator (or one
given), with PyTorch's formulas."""
import math
import warnings

from .._grad_mode import no_grad


def _no_elements(t):
    """PyTorch's kaiming initialisers leave a tensor without elements alone (its
    fans can be 0: nn.Conv2d(1, 1, 0) is made, and refused when called)"""
    if t.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return True
    return False


def _fans(t):
    if t.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in t.shape[2:]:
        receptive *= s
    return t.shape[1] * receptive, t.shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
    if nonlinearity in ('linear', 'conv2d', 'sigmoid'):
        return 1.0
    if nonlinearity == 'tanh':
        return 5.0 / 3
    if nonlinearity == 'relu':
        return math.sqrt(2.0)
    if nonlinearity == 'leaky_relu':
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(t, a=0.0, b=1.0, generator=None):
    with no_grad():
        return t.uniform_(a, b, generator)


def normal_(t, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return t.normal_(mean, std, generator)


def constant_(t, val):
    with no_grad():
        return t.fill_(val)


def zeros_(t):
    return constant_(t, 0.0)


def ones_(t):
    return constant_(t, 1.0)


def kaiming_uniform_(t, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None):
    if _no_elements(t):
        return t
    fan = _fans(t)[0 if mode == 'fan_in' else 1]
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(t, -bound, bound, generator)


def kaiming_normal_(t, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None):
    if _no_elements(t):
        return t
    fan = _fans(t)[0 if mode == 'fan_in' else 1]
    return normal_(t, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def xavier_uniform_(t, gain=1.0, generator=None):
    fan_in, fan_out = _fans(t)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound, generator)


def xavier_normal_(t, gain=1.0, generator=None):
    fan_in, fan_out = _fans(t)
    return normal_(t, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)
