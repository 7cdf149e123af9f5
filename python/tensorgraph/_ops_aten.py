"""torch-level names from PyTorch's older or internal (ATen) surface,
exposed with torch's argument conventions: the older linear-algebra
names (lu, lu_unpack, lu_solve, orgqr, frobenius/nuclear norms), the
native_* forms, ATen's convolution and grid-sampler entry points,
typename and the settings PyTorch records (matmul precision, warn_always,
interop threads, deterministic debug mode)."""
import builtins

import numpy as np

from . import _C
from ._creation import tensor
from ._ops_parity import _F, _check_tensor

Tensor = _C.Tensor

__all__ = ['lu', 'lu_unpack', 'lu_solve', 'orgqr', 'frobenius_norm', 'nuclear_norm',
    'norm_except_dim', 'native_layer_norm', 'native_batch_norm', 'native_group_norm',
    'get_device', 'native_dropout', 'native_channel_shuffle',
    'conv_tbc', 'convolution', 'affine_grid_generator', 'grid_sampler', 'grid_sampler_2d',
    'grid_sampler_3d', 'typename', 'is_storage', 'get_float32_matmul_precision',
    'set_float32_matmul_precision', 'is_warn_always_enabled', 'set_warn_always',
    'get_num_interop_threads', 'set_num_interop_threads', 'get_deterministic_debug_mode',
    'set_deterministic_debug_mode', 'is_deterministic_algorithms_warn_only_enabled']


# -- linear algebra under torch's older names ------------------------------------------

def lu(A, pivot=True, get_infos=False, out=None):
    """(LU, pivots) or (LU, pivots, infos): linalg.lu_factor_ex (deprecated
    in PyTorch for linalg.lu_factor)"""
    from . import linalg
    if not pivot:
        raise NotImplementedError("lu: pivot=False is not supported (CPU LU always pivots)")
    LU, pivots, info = linalg.lu_factor_ex(A)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from an LU factorization: L unit lower (m x k), U upper
    (k x n), P the permutation the 1-based row swaps in pivots make, so that
    A = P L U; differentiable in LU_data"""
    from .return_types import lu_unpack as _lu_unpack_type
    from ._creation import empty
    from ._ops_math import eye
    from ._ops_shape import tril, triu
    if LU_data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = builtins.min(m, n)
    if LU_pivots.dtype != _C.int32:
        raise RuntimeError("lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.")
    if unpack_data:
        L = tril(LU_data, -1).narrow(-1, 0, k) + eye(m, k, dtype=LU_data.dtype)
        U = triu(LU_data).narrow(-2, 0, k)
    else:
        L = U = empty(0, dtype=LU_data.dtype)
    if unpack_pivots:
        piv = LU_pivots.detach().numpy().astype(np.int64) - 1
        batch = piv.shape[:-1]
        perm = np.tile(np.arange(m), batch + (1,)).reshape(-1, m)
        for b, row in enumerate(piv.reshape(-1, piv.shape[-1])):
            for i, j in enumerate(row):
                perm[b, i], perm[b, j] = perm[b, j], perm[b, i]
        # row i of P^T is e_perm[i], so P[perm[i], i] = 1
        P = np.zeros(perm.shape + (m,))
        for b in builtins.range(perm.shape[0]):
            P[b, perm[b], np.arange(m)] = 1
        P = tensor(P.reshape(batch + (m, m)), dtype=LU_data.dtype)
    else:
        P = empty(0, dtype=LU_data.dtype)
    return _lu_unpack_type(P, L, U)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """x with A x = b from A's LU factorization (linalg.lu_solve's order)"""
    from . import linalg
    return linalg.lu_solve(LU_data, LU_pivots, b)


def orgqr(input, tau):
    from . import linalg
    return linalg.householder_product(input, tau)


def frobenius_norm(input, dim=None, keepdim=False, *, out=None):
    """sqrt of the sum of squares over dim (all dims by default)"""
    _check_tensor('frobenius_norm', input)
    if dim is None:  # PyTorch's norm(input): every dim, a zero gradient at a zero norm
        dim = ()
    dim = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           "instead.")
    from .linalg import vector_norm
    if len(dim) < 2:
        # PyTorch's norm(input, 2, dim): a zero norm has a zero gradient
        return vector_norm(input, 2, dim, keepdim)
    from ._ops_shape import _dims
    if len(set(d % builtins.max(input.ndim, 1) for d in dim)) < 2:
        raise RuntimeError(f"Expected dims to be different, got {list(dim)} instead")
    _dims(dim, input.ndim)  # out of range: IndexError
    # two dims: PyTorch's sqrt(sum(input * input)), whose gradient at a
    # zero norm is NaN (0 / 0) and whose second derivative rounds its way
    return (input * input).sum(dim, keepdim=keepdim).sqrt()


def nuclear_norm(input, dim=(-2, -1), keepdim=False, *, out=None):
    _check_tensor('nuclear_norm', input)
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    from . import linalg
    return linalg.matrix_norm(input, 'nuc', dim, keepdim)


def norm_except_dim(v, pow=2, dim=0):
    """the pow-norm of v over every dim but dim (kept as size-1 dims
    elsewhere); dim=-1: the norm of all of v, as weight_norm's"""
    _check_tensor('norm_except_dim', v)
    if dim == -1:
        return v.norm(pow)
    others = [d for d in builtins.range(v.ndim) if d != dim % v.ndim]
    if not others:  # each element its own row, as PyTorch's view(n, -1).norm(pow, 1)
        from .linalg import vector_norm
        return vector_norm(v.unsqueeze(-1), pow, -1)
    return v.norm(pow, others, keepdim=True)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd), mean and rstd over the normalized dims, kept as
    size-1 dims, as torch.native_layer_norm"""
    _check_tensor('native_layer_norm', input)
    n = len(normalized_shape)
    dims = tuple(builtins.range(input.ndim - n, input.ndim))
    mean = input.mean(dims, keepdim=True)
    var = ((input - mean) ** 2).mean(dims, keepdim=True)
    rstd = (var + eps).rsqrt()
    out = (input - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """(output, save_mean, save_invstd) as torch.native_batch_norm: in
    training the batch's mean and 1 / sqrt(biased var + eps) per channel
    (the running statistics updated as F.batch_norm updates them), else
    empty [0] tensors"""
    _check_tensor('native_batch_norm', input)
    from ._creation import empty
    from .nn.functional import batch_norm
    out = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, empty(0, dtype=input.dtype), empty(0, dtype=input.dtype)
    dims = (0,) + tuple(builtins.range(2, input.ndim))
    x = input.detach()
    mean = x.mean(dims)
    invstd = (x.var(dims, unbiased=False) + eps).rsqrt()
    return out, mean, invstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd) as torch.native_group_norm: mean and rstd per
    image and group, [N, group]"""
    _check_tensor('native_group_norm', input)
    from .nn.functional import group_norm
    out = group_norm(input, group, weight, bias, eps)
    g = input.detach().reshape(N, group, -1)
    return out, g.mean(-1), (g.var(-1, unbiased=False) + eps).rsqrt()


def get_device(input):
    """-1: every tensor lives on the CPU (torch.get_device's value for CPU
    tensors)"""
    _check_tensor('get_device', input)
    return -1


def native_dropout(input, p, train):
    """(output, mask): the kept elements scaled by 1 / (1 - p) and the bool
    mask of those kept (all True when not training)"""
    _check_tensor('native_dropout', input)
    from ._creation import full, rand
    if train is False:
        return input.clone(), full(tuple(input.shape), True, dtype=_C.bool)
    keep = rand(*input.shape, dtype=_C.float64) >= p
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    return input * keep.to(input.dtype) * scale, keep


def native_channel_shuffle(input, groups):
    _check_tensor('native_channel_shuffle', input)
    return _F().channel_shuffle(input, groups)


# -- convolutions and grids under ATen's names --------------------------------------------

def conv_tbc(input, weight, bias, pad=0):
    return _F().conv_tbc(input, weight, bias, pad)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """F.conv{1,2,3}d or F.conv_transpose{1,2,3}d by the weight's spatial dims"""
    nd = weight.ndim - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, got "
                           f"{weight.ndim}-D")
    F = _F()
    if transposed:
        return getattr(F, f'conv_transpose{nd}d')(input, weight, bias, tuple(stride),
                                                  tuple(padding), tuple(output_padding),
                                                  groups, tuple(dilation))
    return getattr(F, f'conv{nd}d')(input, weight, bias, tuple(stride), tuple(padding),
                                    tuple(dilation), groups)


def affine_grid_generator(theta, size, align_corners):
    return _F().affine_grid(theta, list(size), align_corners=align_corners)


_GRID_MODES = {0: 'bilinear', 1: 'nearest', 2: 'bicubic'}
_GRID_PADDINGS = {0: 'zeros', 1: 'border', 2: 'reflection'}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """F.grid_sample with ATen's integer modes (0 bilinear, 1 nearest, 2
    bicubic; padding 0 zeros, 1 border, 2 reflection)"""
    if interpolation_mode not in _GRID_MODES or padding_mode not in _GRID_PADDINGS:
        raise RuntimeError(f"grid_sampler: interpolation_mode {interpolation_mode} or "
                           f"padding_mode {padding_mode} is not one of PyTorch's")
    return _F().grid_sample(input, grid, _GRID_MODES[interpolation_mode],
                            _GRID_PADDINGS[padding_mode], align_corners)


grid_sampler_2d = grid_sampler_3d = grid_sampler


# -- settings and names --------------------------------------------------------------------

def typename(o):
    """a tensor's type string ('torch.FloatTensor', as PyTorch's), else the
    object's module-qualified class name"""
    if isinstance(o, Tensor):
        return o.type()
    module = ''
    class_name = ''
    if hasattr(o, '__module__') and o.__module__ not in ('builtins', '__builtin__', None):
        module = o.__module__ + '.'
    if hasattr(o, '__qualname__'):
        class_name = o.__qualname__
    elif hasattr(o, '__name__'):
        class_name = o.__name__
    else:
        class_name = o.__class__.__name__
    return module + class_name


def is_storage(obj):
    return False  # tensorgraph exposes no storage objects


_settings = {'matmul_precision': 'highest', 'warn_always': False, 'interop_threads': 1}


def get_float32_matmul_precision():
    return _settings['matmul_precision']


def set_float32_matmul_precision(precision):
    """recorded ('highest', 'high' or 'medium'); float32 matmuls always run in
    float32 here"""
    if precision not in ('highest', 'high', 'medium'):
        raise RuntimeError(f"Invalid precision {precision}")
    _settings['matmul_precision'] = precision


def is_warn_always_enabled():
    return _settings['warn_always']


def set_warn_always(b):
    _settings['warn_always'] = builtins.bool(b)


def get_num_interop_threads():
    return _settings['interop_threads']


def set_num_interop_threads(num):
    """recorded: tensorgraph has one pool of threads (set_num_threads)"""
    if not isinstance(num, builtins.int) or num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _settings['interop_threads'] = num


def get_deterministic_debug_mode():
    """0, 1 or 2 from use_deterministic_algorithms' switch (off, warn_only, on)"""
    from . import _determinism as d
    if not d.are_deterministic_algorithms_enabled():
        return 0
    return 1 if d.is_deterministic_algorithms_warn_only_enabled() else 2


def set_deterministic_debug_mode(debug_mode):
    """'default'/0, 'warn'/1 or 'error'/2: use_deterministic_algorithms off,
    on with warn_only, on"""
    modes = {'default': 0, 'warn': 1, 'error': 2}
    mode = modes.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if isinstance(debug_mode, str) and debug_mode not in modes:
        raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                           f"`error`, but got {debug_mode}")
    if mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {mode}")
    from ._determinism import use_deterministic_algorithms
    use_deterministic_algorithms(mode != 0, warn_only=mode == 1)


from ._determinism import is_deterministic_algorithms_warn_only_enabled  # noqa: E402,F401
