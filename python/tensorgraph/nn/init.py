"""nn.init: in-place initialisers drawn from the default generator (or one
given), with PyTorch's formulas (orthogonal_'s QR runs in numpy on the
host)."""
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


# PyTorch's private names for these, which custom initializers call
_calculate_fan_in_and_fan_out = _fans


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ('fan_in', 'fan_out'):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    return _fans(tensor)[0 if mode == 'fan_in' else 1]


_UNIT_GAIN = ('linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d',
              'conv_transpose3d', 'sigmoid')


def calculate_gain(nonlinearity, param=None):
    if nonlinearity in _UNIT_GAIN:
        return 1  # an int, as PyTorch's
    if nonlinearity == 'selu':
        return 3.0 / 4
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


def trunc_normal_(t, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """normal(mean, std) restricted to [a, b]: uniform draws between the
    bounds' CDF values mapped through the inverse CDF (erfinv), as PyTorch"""
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    from .._ops_special import erfinv
    with no_grad():
        t.uniform_(2 * lo - 1, 2 * hi - 1, generator)
        return t.copy_((erfinv(t) * (std * math.sqrt(2.0)) + mean).clamp(a, b))


def orthogonal_(t, gain=1, generator=None):
    """a (semi-)orthogonal matrix over t's first dim and the rest flattened:
    QR of a normal draw, Q's columns signed by R's diagonal, times gain"""
    import numpy as np
    from .._creation import randn, tensor
    if t.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if t.numel() == 0:
        return t
    rows = t.shape[0]
    cols = t.numel() // rows
    flat = randn(rows, cols, generator=generator).numpy().astype(np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        return t.copy_(tensor(q * gain, dtype=t.dtype).reshape(tuple(t.shape)))


def eye_(t):
    """the identity matrix (2-D tensors)"""
    if t.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .._ops_math import eye
    with no_grad():
        return t.copy_(eye(t.shape[0], t.shape[1], dtype=t.dtype))


def dirac_(t, groups=1):
    """the identity convolution: 1 at the kernel centre of channel d to
    output d (per group) of a 3-, 4- or 5-D weight"""
    if t.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if t.shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = t.shape[0] // groups
    centre = tuple(s // 2 for s in t.shape[2:])
    with no_grad():
        t.zero_()
        for g in range(groups):
            for d in range(min(per_group, t.shape[1])):
                t[(g * per_group + d, d) + centre] = 1
    return t


def sparse_(t, sparsity, std=0.01, generator=None):
    """normal(0, std) with ceil(sparsity * rows) zeros in every column (2-D)"""
    from .._creation import randperm
    if t.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = t.shape
    n_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        t.normal_(0, std, generator)
        for c in range(cols):
            idx = randperm(rows, generator=generator)[:n_zeros]
            t[idx, c] = 0
    return t
from ._init_deprecated import *  # noqa: E402,F401,F403  (uniform, normal, ...: deprecated)
