"""torch.nn.functional activations and layer functions: the C ops silu,
mish, hardtanh, relu6, logsigmoid, softsign, threshold, celu, softshrink,
hardshrink with PyTorch's argument checks and inplace=; composed from
existing ops: glu, prelu, softmin, tanhshrink, softplus(beta, threshold),
cosine_similarity, pairwise_distance, channel dropout, scaled dot-product
attention, pixel_shuffle, adaptive pooling, unfold (im2col)."""
import builtins
import math
import warnings

from .. import _C
from .._creation import ones, zeros
from .._ops_stats import _memory_bytes
from .sparse import embedding  # noqa: F401  (padding_idx, max_norm)

__all__ = ['silu', 'mish', 'hardtanh', 'relu6', 'logsigmoid', 'softsign', 'glu', 'threshold',
           'prelu', 'celu', 'softmin', 'tanhshrink', 'softshrink', 'hardshrink', 'softplus',
           'cosine_similarity', 'pairwise_distance', 'dropout1d', 'dropout2d', 'dropout3d',
           'scaled_dot_product_attention', 'pixel_shuffle', 'pixel_unshuffle',
           'adaptive_max_pool2d', 'adaptive_avg_pool2d', 'adaptive_avg_pool1d',
           'adaptive_max_pool1d', 'adaptive_max_pool1d_with_indices',
           'adaptive_max_pool2d_with_indices', 'adaptive_max_pool3d_with_indices', 'unfold', 'fold', 'hardtanh_', 'relu6_', 'silu_', 'celu_', 'leaky_relu', 'elu',
           'threshold_', 'embedding', 'softmax', 'log_softmax']


def _inplace(input, fn, inplace):
    """fn(input), or with inplace=True written into input as PyTorch's
    in-place ops (fn runs on a clone when autograd watches, so what it
    saves for its gradient is not the tensor overwritten)"""
    if not inplace:
        return fn(input)
    from .._tensor import _update
    return _update(input, fn, (), {})


def _zero(x):
    return zeros((), dtype=x.dtype)


def silu(input, inplace=False):
    return _inplace(input, lambda x: _C.silu(x), inplace)


def silu_(input):
    return silu(input, True)


def mish(input, inplace=False):
    return _inplace(input, lambda x: _C.mish(x), inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:  # PyTorch's: max_val everywhere (NaN stays), a zero gradient
        min_val = max_val     # (the same values and slopes; C's hardtanh refuses min > max)
    # the op's gradient is PyTorch's: 0 at the bounds (clamp's is 1)
    return _inplace(input, lambda x: _C.hardtanh(x, min_val, max_val), inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return _inplace(input, lambda x: _C.relu6(x), inplace)


def relu6_(input):
    return relu6(input, True)


logsigmoid = _C.logsigmoid
softsign = _C.softsign


def glu(input, dim=-1):
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.ndim} "
                           f"is size {n}")
    # narrow, not split: a dim of 0 splits into one empty piece, not two
    a, b = input.narrow(dim, 0, n // 2), input.narrow(dim, n // 2, n // 2)
    return a * _C.sigmoid(b)


def threshold(input, threshold, value, inplace=False):
    return _inplace(input, lambda x: _C.threshold(x, threshold, value), inplace)


def threshold_(input, threshold, value):
    return _inplace(input, lambda x: _C.threshold(x, threshold, value), True)


def prelu(input, weight):
    """x where x > 0, weight * x elsewhere; weight has 1 element or one per
    channel (dim 1): the C function tg_prelu"""
    return _C.prelu(input, weight)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _inplace(input, lambda x: _C.leaky_relu(x, negative_slope), inplace)


def elu(input, alpha=1.0, inplace=False):
    return _inplace(input, lambda x: _C.elu(x, alpha), inplace)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _inplace(input, lambda x: _C.celu(x, alpha), inplace)


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


def _softmax_dim(ndim, name='softmin'):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=4)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_family(op, name, sign=1):
    """F.softmax & co.: dim None picks PyTorch's legacy dim (with its
    warning); dtype casts the input first"""
    def f(input, dim=None, _stacklevel=3, dtype=None):
        if dim is None:
            dim = _softmax_dim(input.ndim, name)
        if dtype is not None:
            input = input.to(dtype)
        return op(-input if sign < 0 else input, dim)
    f.__name__ = name
    return f


softmin = _softmax_family(_C.softmax, 'softmin', -1)
softmax = _softmax_family(_C.softmax, 'softmax')
log_softmax = _softmax_family(_C.log_softmax, 'log_softmax')


def tanhshrink(input):
    return input - _C.tanh(input)


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _C.softshrink(input, lambd)


hardshrink = _C.hardshrink


def _scalar(v, fn, name, position):
    """a Scalar argument as PyTorch's binding reads it: a number, or a 0-d
    tensor that does not require grad taken as its value (so it neither
    promotes the result's dtype nor receives a gradient)"""
    if isinstance(v, _C.Tensor):
        if v.ndim != 0 or v.requires_grad:
            raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Number, "
                            f"not Tensor")
        return v.item()
    return v


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, x itself where beta x > threshold"""
    beta = _scalar(beta, 'softplus', 'beta', 2)
    threshold = _scalar(threshold, 'softplus', 'threshold', 3)
    if beta == 1.0 and threshold >= 20.0:
        return _C.softplus(input)
    bx = input * beta
    if beta == 0 and threshold < 0:  # beta x = 0 > threshold: x itself everywhere
        y = _C._grad_tie(input).clone()
    elif beta == 0:
        # log(2) / 0 everywhere, with PyTorch's slope sigmoid(0) = 0.5; its
        # softplus_backward(grad, self, ...) is an op of the input, so the
        # gradient is tied to it (grad_tie: requires grad under
        # create_graph, a zero second derivative)
        y = (_C.softplus(bx) / beta).detach() + (_C._grad_tie(input) - input.detach()) * 0.5
    else:
        soft = _C.softplus(bx) / beta
        # at beta x == threshold PyTorch's slope is the softplus branch's,
        # sigmoid(threshold), but its second derivative (softplus_double_
        # backward's beta x < threshold) is 0: there the linear function of
        # that value and slope, its slope tied to the input
        t = float(threshold)
        slope = 1 / (1 + math.exp(-t)) if t > -700 else 0.0
        at = (soft.detach() + (_C._grad_tie(input) - input.detach()) * slope).to(soft.dtype)
        y = _C.where(bx > threshold, input, _C.where(bx == threshold, at, soft))
    return _C._set_grad_fn_name(y, 'SoftplusBackward0')


def _norm(x, dim, keepdim=False):
    return _C.sqrt(_C.sum(x * x, dim, keepdim))


def _clamped_norm(x, dim, eps):
    """max(|x|, eps) along dim (kept), as PyTorch 1.13 computes it: the
    squared norm clamped outside autograd, so the square root's slope is
    taken at the clamped value and a zero vector still gets a gradient"""
    w = _C.sum(x * x, dim, True)
    return _C.sqrt(w + (_C.clamp(w, eps * eps, None) - w).detach())


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) along dim
    (broadcasting x1 with x2), PyTorch 1.13's formula and gradients"""
    from .._ops_math import _float_pair
    x1, x2 = _float_pair(x1, x2)  # integer vectors: their norms in floating point
    nd = max(x1.ndim, x2.ndim)
    d = dim + nd if dim < 0 else dim
    if nd and x1.ndim < nd:
        x1 = x1.reshape((1,) * (nd - x1.ndim) + tuple(x1.shape))
    if nd and x2.ndim < nd:
        x2 = x2.reshape((1,) * (nd - x2.ndim) + tuple(x2.shape))
    if nd and x1.shape[d] != x2.shape[d]:  # norms of the broadcast vectors, as PyTorch's
        n = max(x1.shape[d], x2.shape[d])
        x1, x2 = (x.expand(*x.shape[:d], n, *x.shape[d + 1:]) for x in (x1, x2))
    return _C.sum(x1 / _clamped_norm(x1, d, eps) * (x2 / _clamped_norm(x2, d, eps)), d)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """the p-norm of x1 - x2 + eps over the last dim (PyTorch's norm, so
    every order vector_norm takes, with its gradients)"""
    from ..linalg import vector_norm
    d = x1 - x2 + eps
    dim = -1 if max(x1.ndim, x2.ndim) > 0 else 0
    if d.ndim == 0:
        d = d.reshape(1)
    return _C._set_grad_fn_name(vector_norm(d, p, dim, keepdim), 'NormBackward1')


def _channel_dropout(input, p, training, inplace, batched_ndim, name):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if input.ndim not in (batched_ndim, batched_ndim - 1):
        raise RuntimeError(f"{name}: Expected {batched_ndim - 1}D or {batched_ndim}D input, "
                           f"but received a {input.ndim}D input.")
    # one Bernoulli draw per (sample, channel), broadcast over the spatial dims
    keep_dims = 2 if input.ndim == batched_ndim else 1
    shape = tuple(input.shape[:keep_dims]) + (1,) * (input.ndim - keep_dims)
    if p == 1:
        return _inplace(input, lambda x: x * _zero(x), inplace)
    from .._creation import rand
    mask = (rand(*shape, dtype=input.dtype) >= p).to(input.dtype) / (1 - p)
    return _inplace(input, lambda x: x * mask, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 3, 'dropout1d')


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 4, 'dropout2d')


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 5, 'dropout3d')


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    """softmax(q k^T * scale + mask) v; a bool mask keeps where True, a
    float mask is added; is_causal masks the future"""
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    attn = _C.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not "
                               "be set when is_causal=True")
        from .._ops_shape import tril
        attn_mask = tril(ones(L, S, dtype=_C.bool))
    if attn_mask is not None:
        if attn_mask.dtype == _C.bool:
            attn = _C.where(attn_mask, attn, _C.add(_zero(attn), -math.inf))
        else:
            attn = attn + attn_mask
    attn = _C.softmax(attn, -1)
    if dropout_p > 0:
        attn = _C.dropout(attn, dropout_p, True, False, None)
    return _C.matmul(attn, value)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): the C function tg_pixel_shuffle"""
    return _C.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W): the C function tg_pixel_unshuffle"""
    return _C.pixel_unshuffle(input, downscale_factor)


def _output_sizes(input, output_size, nd):
    """output_size (an int, a tuple) as nd sizes, None entries taking the
    input's size (left None when the input has fewer than nd dims)"""
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * nd
    sizes = list(input.shape[-nd:]) if input.ndim >= nd else [None] * nd
    return [s if o is None else o for s, o in zip(sizes, output_size)]


def _check_adaptive(input, out, nd, name):
    """PyTorch's checks of the adaptive pools: nd + 1 or nd + 2 dims, no
    negative output size, every dim but the first non-empty (the 2-D
    average pool: its spatial dims only; the 1-D pools run as the 2-D ones
    over [..., 1, L], and their messages say so)"""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{input.ndim}D")
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to "
                           f"0, got {list(out)}")
    sizes, as_name = list(input.shape), name
    if nd == 1:
        sizes.insert(len(sizes) - 1, 1)
        as_name = name.replace('1d', '2d')
    first = len(sizes) - 2 if as_name == 'adaptive_avg_pool2d' else 1
    for i in range(first, len(sizes)):
        if sizes[i] == 0:
            raise RuntimeError(f"{as_name}(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {sizes} with "
                               f"dimension {i} being empty")


def _empty_result(input, out, nd):
    """an adaptive pool's result with no elements: input's dtype, and a
    function of input (its gradient zeros), as PyTorch's"""
    return input.reshape(-1).narrow(0, 0, 0).reshape(*input.shape[:-nd], *out).clone()


def _adaptive(input, output_size, nd, reduce, name):
    sizes = list(input.shape[-nd:])
    out = _output_sizes(input, output_size, nd)
    _check_adaptive(input, out, nd, name)
    if 0 in out or input.numel() == 0:  # nothing to reduce: an empty result, as PyTorch's
        return _empty_result(_C._grad_tie(input), out, nd)  # (its gradient tied, below)
    is_max = name.startswith('adaptive_max')
    equal = all(s % o == 0 for s, o in zip(sizes, out))
    # max pooling's gradient goes to each window's first maximum (PyTorch's
    # indices), not shared among ties as amax shares it
    if is_max and (not equal or input.requires_grad):
        return _adaptive_max_with_indices(input, output_size, nd, name)[0]
    # PyTorch's backward is an op of the input (adaptive_avg_pool2d_backward(
    # grad, self)): under create_graph the gradient requires grad and gives
    # the input zeros (grad_tie; the all-ones shortcuts are means, untied)
    input = _C._grad_tie(input)
    if equal:
        # equal windows: one reshape and one reduction
        shape = list(input.shape[:-nd])
        for s, o in zip(sizes, out):
            shape += [o, s // o]
        x = input.reshape(*shape)
        red = tuple(range(x.ndim - 2 * nd + 1, x.ndim, 2))
        return reduce(x, red)
    # unequal windows: every window's elements gathered by a host table
    # ([output cells, largest window], the padding reading a zero past the
    # plane) and summed; a few ops whatever the output size
    import numpy as np
    from .._creation import tensor
    pos, valid = _window_table(sizes, out, name)
    cells, win = pos.shape
    plane = int(np.prod(sizes))
    x = input.reshape(-1, plane)
    x = _C.cat([x, zeros(x.shape[0], 1, dtype=x.dtype)], 1)
    flat = tensor(np.where(valid, pos, plane).reshape(-1))
    parts = _C.index_select(x, 1, flat).reshape(x.shape[0], cells, win)
    count = tensor(valid.sum(1).astype(np.float64)).to(x.dtype)
    return (_C.sum(parts, (2,), False) / count).reshape(*input.shape[:-nd], *out)


def _window_table(sizes, out, name):
    """the flat positions (within a plane of the given sizes) of every output
    cell's adaptive window, padded to the largest window: pos and a mask of
    the real ones, [output cells, largest window] numpy arrays"""
    import numpy as np
    win = 1
    for n, o in zip(sizes, out):
        win *= builtins.min(-(-n // o) + 1, n)  # a window's most positions
    if math.prod(out) * win * 16 > _memory_bytes():
        raise RuntimeError(f"{name}: output_size {tuple(out)} would not fit in memory")
    per_dim = []
    for n, o in zip(sizes, out):
        lo = np.arange(o, dtype=np.int64) * n // o
        hi = -(-(np.arange(o, dtype=np.int64) + 1) * n // o)
        k = int((hi - lo).max())
        t = lo[:, None] + np.arange(k, dtype=np.int64)[None, :]
        per_dim.append(np.where(t < hi[:, None], t, -1))
    strides = np.cumprod([1] + sizes[::-1])[:-1][::-1]
    pos, valid = np.zeros((1, 1), dtype=np.int64), np.ones((1, 1), dtype=bool)
    for t, st in zip(per_dim, strides):  # outer product over dims: cells x window offsets
        pos = (pos[:, None, :, None] + (t * st)[None, :, None, :]).reshape(-1, pos.shape[1] * t.shape[1])
        valid = (valid[:, None, :, None] & (t >= 0)[None, :, None, :]).reshape(pos.shape)
    return pos, valid


def _all_ones(input, output_size, nd):
    """whether output_size is 1 in every one of the last nd dims"""
    return all(o == 1 for o in _output_sizes(input, output_size, nd))


def adaptive_avg_pool2d(input, output_size):
    if _all_ones(input, output_size, 2):
        # PyTorch's shortcut: the mean over the last two dims of any rank
        if input.ndim == 4 and input.shape[-1] and input.shape[-2]:
            return _C._global_avg_pool2d(input)
        return _C.mean(input, (-1, -2), True)  # (an empty plane: NaN, as PyTorch's)
    return _adaptive(input, output_size, 2, lambda x, d, k=False: _C.mean(x, d, k),
                     'adaptive_avg_pool2d')


def adaptive_avg_pool1d(input, output_size):
    if input.ndim in (2, 3) and _all_ones(input, output_size, 1):
        return _C.mean(input, -1, True)  # PyTorch's 2-D shortcut (empty rows: NaN)
    return _adaptive(input, output_size, 1, lambda x, d, k=False: _C.mean(x, d, k),
                     'adaptive_avg_pool1d')


def _adaptive_max_with_indices(input, output_size, nd, name):
    """adaptive max pooling and the flat position (within each [..., spatial]
    plane) of every window's maximum, the first one on ties and NaN as the
    maximum, as PyTorch's; the values are gathered at those positions, so
    the gradient goes to them alone. The windows' positions come from a
    host table: [output cells, largest window], padded with a position
    whose key loses to every element."""
    import numpy as np
    from .._creation import tensor
    sizes = list(input.shape[-nd:])
    out = _output_sizes(input, output_size, nd)
    _check_adaptive(input, out, nd, name)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}\" not implemented for '{input.dtype}'")
    lead = list(input.shape[:-nd])
    if 0 in out or input.numel() == 0:
        return _empty_result(_C._grad_tie(input), out, nd), zeros(*lead, *out, dtype=_C.int64)
    pos, valid = _window_table(sizes, out, name)
    cells, win = pos.shape
    plane = int(np.prod(sizes))
    x = input.reshape(-1, plane)
    # the comparison key: NaN above everything, -inf (as the lowest finite
    # value) above the padding's -inf
    top = zeros((), dtype=x.dtype) + math.inf
    lowest = zeros((), dtype=x.dtype) - (1.7976931348623157e308 if x.dtype == _C.float64
                                         else 3.4028234663852886e38)
    key = _C.where(_C.isnan(x), top, _C.where(x == -math.inf, lowest, x))
    key = _C.cat([key, zeros(x.shape[0], 1, dtype=x.dtype) - math.inf], 1)
    flat = tensor(np.where(valid, pos, plane).reshape(-1))
    cand = _C.index_select(key.detach(), 1, flat).reshape(x.shape[0], cells, win)
    best = _C.argmax(cand, 2, True)                                  # [B, cells, 1]
    table = tensor(np.where(valid, pos, 0)).reshape(1, cells, win)
    idx = _C.gather(table.expand(x.shape[0], cells, win), 2, best).reshape(x.shape[0], cells)
    values = _C.gather(_C._grad_tie(x), 1, idx)  # the gradient tied to x, as PyTorch's
    return values.reshape(*lead, *out), idx.reshape(*lead, *out)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_with_indices(input, output_size, 1, 'adaptive_max_pool1d')


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_with_indices(input, output_size, 2, 'adaptive_max_pool2d')


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_with_indices(input, output_size, 3, 'adaptive_max_pool3d')


def adaptive_max_pool2d(input, output_size, return_indices=False):
    if return_indices:
        return adaptive_max_pool2d_with_indices(input, output_size)
    # per window maximum (sequential windows: a max over each one's slice,
    # so separable windows give the 2-D window's max)
    return _adaptive(input, output_size, 2, lambda x, d, k=False: _C.amax(x, d, k),
                     'adaptive_max_pool2d')


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if return_indices:
        return adaptive_max_pool1d_with_indices(input, output_size)
    return _adaptive(input, output_size, 1, lambda x, d, k=False: _C.amax(x, d, k),
                     'adaptive_max_pool1d')


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C kh kw, L), the sliding blocks as
    columns (one strided slice per kernel offset, stacked)"""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got "
                           f"{input.ndim}D)")
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel_size, dilation, padding, stride))
    for what, (a, b), least in (("kernel size", (kh, kw), 1), ("dilation", (dh, dw), 1),
                                ("stride", (sh, sw), 1), ("padding", (ph, pw), 0)):
        if a < least or b < least:  # PyTorch's checks and words
            raise RuntimeError(f"{what} should be {'greater than zero' if least else 'non-negative'}"
                               f", but got {what.split()[0]}_height: {a} "
                               f"{what.split()[0]}_width: {b}")
    n, c, h, w = x.shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), "
                           f"kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), padding=({ph}, "
                           f"{pw}), calculated shape of the array of sliding blocks as ({oh}, "
                           f"{ow}), but its components must be at least one.")
    if (h + 2 * ph) * (w + 2 * pw) > 4 * (h * w + kh * kw * oh * ow) + 65536:
        # a padding far past the input (with a dilation to match): gather the
        # blocks through a table instead of padding, as large as the output
        out = _unfold_gather(x, (kh, kw), (dh, dw), (ph, pw), (sh, sw), (oh, ow))
        return out if batched else out.squeeze(0)
    if ph or pw:
        x = _C._pad(x, [0, 0, 0, 0, ph, ph, pw, pw], 0)
    cols = []
    for i in range(kh):
        for j in range(kw):
            cols.append(x[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                          j * dw: j * dw + sw * (ow - 1) + 1: sw])
    out = _C.stack(cols, 2).reshape(n, c * kh * kw, oh * ow)
    return out if batched else out.squeeze(0)


def _unfold_gather(x, k, d, p, s, o):
    """unfold of x [N, C, H, W] by one index_select: each block position's
    flat offset in the plane, or a zero appended past it where the block
    reads the padding"""
    import numpy as np
    from .._creation import tensor
    n, c, h, w = x.shape
    if c * k[0] * k[1] * o[0] * o[1] * 16 > _memory_bytes():
        raise RuntimeError(f"unfold: the {c * k[0] * k[1]} x {o[0] * o[1]} blocks would not "
                           f"fit in memory")
    iy = (np.arange(o[0])[None, :] * s[0] - p[0] + np.arange(k[0])[:, None] * d[0])  # [kh, oh]
    ix = (np.arange(o[1])[None, :] * s[1] - p[1] + np.arange(k[1])[:, None] * d[1])  # [kw, ow]
    vy, vx = (iy >= 0) & (iy < h), (ix >= 0) & (ix < w)
    flat = iy[:, None, :, None] * w + ix[None, :, None, :]          # [kh, kw, oh, ow]
    ok = vy[:, None, :, None] & vx[None, :, None, :]
    idx = tensor(np.where(ok, flat, h * w).reshape(-1))
    planes = _C.cat([x.reshape(n * c, h * w), zeros(n * c, 1, dtype=x.dtype)], 1)
    return _C.index_select(planes, 1, idx).reshape(n, c * k[0] * k[1], o[0] * o[1])


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, unfold's adjoint: overlapping blocks summed (computed as the
    gradient of unfold, so it is exact and differentiable)"""
    batched = input.ndim == 3
    cols = input if batched else input.unsqueeze(0)
    (kh, kw) = _pair(kernel_size)
    oh, ow = _pair(output_size)
    n, ck, _ = cols.shape
    if ck % (kh * kw):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the "
                           "product of kernel_size")
    c = ck // (kh * kw)
    from .. import autograd
    from .._grad_mode import enable_grad
    with enable_grad():
        z = zeros(n, c, oh, ow, dtype=cols.dtype, requires_grad=True)
        u = unfold(z, kernel_size, dilation, padding, stride)
        if u.shape != cols.shape:
            raise RuntimeError(f"fold: expected input of shape {list(u.shape)}, got "
                               f"{list(cols.shape)}")
        out, = autograd.grad(u, z, cols, create_graph=cols.requires_grad)
    return out if batched else out.squeeze(0)
