"""tensorgraph.nn.functional: PyTorch's torch.nn.functional names over the
op table. Most are the C ops themselves; the few here add PyTorch's extra
arguments (inplace=..., pad's last-dim-first order)."""
from .. import _C
from .functional_conv import conv1d, conv2d, conv3d
from ._padding import circular_pad as _circular_pad


def linear(input, weight, bias=None):
    """input @ weight.T + bias: the C op; a 1-D weight (one output, dropped
    from the shape) as PyTorch's"""
    if weight.ndim == 1:
        out = _C.matmul(input, weight)
        return out + bias if bias is not None else out
    return _C.linear(input, weight, bias)


max_pool1d = _C.max_pool1d
avg_pool1d = _C.avg_pool1d
max_pool3d = _C.max_pool3d
avg_pool3d = _C.avg_pool3d
max_pool2d = _C.max_pool2d
avg_pool2d = _C.avg_pool2d
batch_norm = _C.batch_norm
layer_norm = _C.layer_norm
softmax = _C.softmax
log_softmax = _C.log_softmax
mse_loss = _C.mse_loss
cross_entropy = _C.cross_entropy
nll_loss = _C.nll_loss
binary_cross_entropy_with_logits = _C.binary_cross_entropy_with_logits
sigmoid = _C.sigmoid
tanh = _C.tanh


def gelu(input, approximate='none'):
    """exact (erf) or PyTorch's tanh approximation"""
    if approximate == 'none':
        return _C.gelu(input)
    if approximate == 'tanh':
        return _C._gelu_tanh(input)
    raise RuntimeError("approximate argument must be either none or tanh.")


softplus = _C.softplus


def relu(input, inplace=False):
    return input.relu_() if inplace else _C.relu(input)


def _maybe_inplace(input, fn, inplace):
    """fn(input); inplace=True writes it into input (recorded as in-place
    ops are: fn runs on a clone) and returns input, as PyTorch does"""
    from .functional_act import _inplace
    return _inplace(input, fn, inplace)


def hardswish(input, inplace=False):
    return _maybe_inplace(input, lambda x: _C.hardswish(x), inplace)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6"""
    return _maybe_inplace(input, lambda x: _C._hardsigmoid(x, 1.0 / 6.0, 0.5), inplace)


def selu(input, inplace=False):
    return _maybe_inplace(input, lambda x: _C.selu(x), inplace)


def dropout(input, p=0.5, training=True, inplace=False, generator=None):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if inplace:  # PyTorch's dropout_: input itself, overwritten
        from .._tensor import _update
        return _update(input, lambda x: _C.dropout(x, p, training, False, generator), (), {})
    return _C.dropout(input, p, training, False, generator)


def pad(input, pad, mode='constant', value=None):
    """pad lists (before, after) pairs from the LAST dim backwards, as PyTorch;
    modes constant, reflect (pads < the dim), replicate and circular, with
    PyTorch's checks"""
    modes = {'constant': 0, 'reflect': 1, 'replicate': 2, 'circular': 3}
    if mode not in modes:
        raise NotImplementedError(f"pad: mode '{mode}' is not supported (constant, reflect, "
                                  "replicate, circular are)")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise RuntimeError("pad: padding length must be divisible by 2 and at most twice the "
                           f"dims (got {len(pad)} for {input.ndim} dims)")
    if mode != 'constant':
        if value is not None and value != 0:
            raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument')
        k = len(pad) // 2
        if k > 3 or input.ndim not in (k + 1, k + 2):
            raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding "
                                      "are supported for now")
    pairs = [tuple(pad[i:i + 2]) for i in range(0, len(pad), 2)]
    if mode == 'circular':
        return _circular_pad(input, pairs)
    full = [(0, 0)] * (input.ndim - len(pairs)) + pairs[::-1]
    grown = [max(v, 0) for p in full for v in p]
    out = _C._pad(input, grown, value or 0.0, modes[mode]) if any(grown) else input
    if out is not input:  # PyTorch's nodes: ConstantPadNd, ReflectionPad2D, ...
        k = len(pairs)
        _C._set_grad_fn_name(out, 'ConstantPadNdBackward0' if mode == 'constant' else
                             f"{'Reflection' if mode == 'reflect' else 'Replication'}"
                             f"Pad{k}DBackward0")
    # negative pads crop, after the positive ones are added (a reflection
    # still mirrors around the uncropped input, as PyTorch's)
    for dim, (before, after) in enumerate(full):
        if before < 0 or after < 0:
            lo, hi = max(-before, 0), max(-after, 0)
            if lo + hi > out.shape[dim]:
                raise RuntimeError(f"pad: negative padding {pad} crops dim {dim} of size "
                                   f"{out.shape[dim]} to less than nothing")
            out = out.narrow(dim, lo, out.shape[dim] - lo - hi)
    return out


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps), as PyTorch (whose gradient is
    finite at a zero vector: the norm's is 0 there)"""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    from ..linalg import vector_norm
    denom = _C.clamp(vector_norm(input, p, dim, True), eps)
    return input / denom.expand_as(input)


def one_hot(tensor, num_classes=-1):
    if num_classes == -1:  # PyTorch's "one more than the largest class"
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    return _C._one_hot(tensor, num_classes)


def flatten(input, start_dim=0, end_dim=-1):
    return _C.flatten(input, start_dim, end_dim)


group_norm = _C.group_norm


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalises each sample and channel over its spatial dims. With
    use_input_stats the running statistics given move by momentum toward
    the batch's average of the per-sample means and unbiased variances;
    without, they normalize (PyTorch's)."""
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        shape = (1, -1) + (1,) * (input.ndim - 2)
        out = (input - running_mean.reshape(shape)) / _C.sqrt(running_var.reshape(shape) + eps)
        if weight is not None:
            out = out * weight.reshape(shape)
        return out + bias.reshape(shape) if bias is not None else out
    spatial = 1
    for n in input.shape[2:]:
        spatial *= n
    if spatial == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{input.shape}")
    out = _C._instance_norm(input, weight, bias, eps)
    if running_mean is not None or running_var is not None:
        _update_instance_stats(input, running_mean, running_var, momentum)
    return out


def _update_instance_stats(input, running_mean, running_var, momentum):
    from .._grad_mode import no_grad
    m = 0.1 if momentum is None else momentum
    dims = tuple(range(2, input.ndim))
    with no_grad():
        d = input.detach()
        mean = d.mean(dims)
        count = 1
        for i in dims:
            count *= d.shape[i]
        if running_mean is not None:
            running_mean.mul_(1 - m).add_(mean.mean(0).to(running_mean.dtype) * m)
        if running_var is not None:
            centred = d - mean.reshape(tuple(mean.shape) + (1,) * len(dims))
            var = (centred * centred).sum(dims) / max(count - 1, 1)
            running_var.mul_(1 - m).add_(var.mean(0).to(running_var.dtype) * m)


# the values of tg_interp_mode (include/tg/ops.h), and the spatial dims the
# linear modes need
_INTERP_MODES = {'nearest': 0, 'nearest-exact': 1, 'linear': 2, 'bilinear': 2, 'trilinear': 2,
                 'bicubic': 3}
_LINEAR_DIMS = {'linear': 1, 'bilinear': 2, 'trilinear': 3, 'bicubic': 2}


def interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """PyTorch's F.interpolate for modes nearest, nearest-exact, linear,
    bilinear, bicubic, trilinear and area (adaptive average pooling to the
    output size); antialias for bilinear and bicubic (nn/_antialias.py)."""
    if mode == 'area':
        return _area(input, size, scale_factor, align_corners, recompute_scale_factor,
                     antialias)
    if mode not in _INTERP_MODES:
        raise NotImplementedError(f"interpolate: mode '{mode}' is not supported (nearest, "
                                  f"nearest-exact, linear, bilinear, bicubic, trilinear, area)")
    if antialias and (mode not in ('bilinear', 'bicubic') or input.ndim != 4):
        raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")
    if input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"interpolate: only 3-D, 4-D and 5-D inputs [N, C, ...] are "
                                  f"supported, got {input.ndim}-D")
    nsp = input.ndim - 2
    if mode in _LINEAR_DIMS and _LINEAR_DIMS[mode] != nsp:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR_DIMS[mode] + 2}D input")
    if align_corners is not None and mode not in _LINEAR_DIMS:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined"
                         if size is None else "only one of size or scale_factor should be defined")
    if size is not None:
        size = [size] * nsp if isinstance(size, int) else list(size)
        if len(size) != nsp:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(input.shape[2:])} and output size of {size}.")
    else:
        scale_factor = ([float(scale_factor)] * nsp if isinstance(scale_factor, (int, float))
                        else [float(s) for s in scale_factor])
        if len(scale_factor) != nsp:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(input.shape[2:])} and scale_factor of shape "
                             f"{scale_factor}.")
        if recompute_scale_factor:  # coordinates from in / out, as with a size
            import math
            size = [math.floor(n * s) for n, s in zip(input.shape[2:], scale_factor)]
            scale_factor = None
    if antialias:
        from ._antialias import interpolate_antialias, output_size
        return interpolate_antialias(input, output_size(input, size, scale_factor),
                                     scale_factor, mode, align_corners)
    return _C._interpolate(input, size, scale_factor, _INTERP_MODES[mode],
                           bool(align_corners))


def _area(input, size, scale_factor, align_corners, recompute_scale_factor, antialias):
    """interpolate's area mode: adaptive average pooling to the output size
    (size, or each dim times scale_factor rounded down), as PyTorch"""
    import math
    if input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"interpolate: only 3-D, 4-D and 5-D inputs [N, C, ...] are "
                                  f"supported, got {input.ndim}-D")
    if align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")
    nsp = input.ndim - 2
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined"
                         if size is None else "only one of size or scale_factor should be defined")
    if size is None:
        scale = [scale_factor] * nsp if isinstance(scale_factor, (int, float)) else scale_factor
        size = [math.floor(n * float(s)) for n, s in zip(input.shape[2:], scale)]
    size = [size] * nsp if isinstance(size, int) else list(size)
    if len(size) != nsp:
        raise ValueError(f"Input and output must have the same number of spatial dimensions, "
                         f"but got input with spatial dimensions of {list(input.shape[2:])} "
                         f"and output size of {size}.")
    pool = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}[nsp]
    return pool(input, size)


def upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode='nearest')


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)


# composed activations, layer functions and losses (PyTorch's full signatures)
from .functional_act import *  # noqa: F401,F403,E402
from .functional_loss import *  # noqa: F401,F403,E402
from .functional_more import *  # noqa: F401,F403,E402  (supersedes max_pool1d/2d)
from .functional_grid import *  # noqa: F401,F403,E402  (affine_grid, grid_sample)
from .embedding_bag import embedding_bag  # noqa: F401,E402
from .functional_ctc import ctc_loss  # noqa: F401,E402
from .fractional_pool import (fractional_max_pool2d, fractional_max_pool3d,  # noqa: F401,E402
                              fractional_max_pool2d_with_indices,
                              fractional_max_pool3d_with_indices)
from .functional_misc import *  # noqa: F401,F403,E402  (lp_pool, channel_shuffle, rrelu, ...)
from .layers_extra import (adaptive_max_pool3d, conv_tbc, max_unpool3d,  # noqa: F401,E402
                           native_channel_shuffle, rrelu_, triplet_margin_with_distance_loss)

# every pooling op also over one unbatched sample [C, *spatial], as PyTorch's
from .functional_conv import conv_transpose1d, conv_transpose2d, conv_transpose3d  # noqa: E402
from .functional_conv import unbatched as _unbatched  # noqa: E402

max_pool1d, avg_pool1d = _unbatched(max_pool1d, 1), _unbatched(avg_pool1d, 1)
max_pool2d, avg_pool2d = _unbatched(max_pool2d, 2), _unbatched(avg_pool2d, 2)
max_pool3d, avg_pool3d = _unbatched(max_pool3d, 3), _unbatched(avg_pool3d, 3)


def _int64_through_double(pool):
    """PyTorch averages int64 inputs too (only those of the integer
    dtypes), dividing as integers (truncating): computed in float64,
    exact for sums below 2**53"""
    def run(input, *args, **kwargs):
        if isinstance(input, _C.Tensor) and input.dtype == _C.int64:
            return pool(input.double(), *args, **kwargs).trunc().long()
        return pool(input, *args, **kwargs)
    run.__name__ = run.__qualname__ = pool.__name__
    return run


avg_pool1d, avg_pool2d, avg_pool3d = map(_int64_through_double,
                                         (avg_pool1d, avg_pool2d, avg_pool3d))


def multi_head_attention_forward(*args, **kwargs):
    """PyTorch's functional multi-head attention (nn/transformer.py: the
    MultiheadAttention module's forward with the weights as arguments)"""
    from .transformer import multi_head_attention_forward as f
    return f(*args, **kwargs)
