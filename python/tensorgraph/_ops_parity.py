"""torch-level names PyTorch has beside its Tensor methods and
nn.functional, exposed with torch's argument conventions:

* the in-place functions torch.relu_(x), torch.clamp_(x, ...), ...: one
  table of names, each delegating to the Tensor method of that name (so
  in-place semantics, version counters and the errors on leaves that
  require grad are the methods'), and the functional ones (threshold_,
  selu_, celu_, rrelu(_), dropout_, alpha/feature dropouts) over
  nn.functional;
* the losses and layers torch has at top level (kl_div, bilinear,
  cosine_embedding_loss, ..., instance_norm, constant_pad_nd,
  channel_shuffle) with their reduction given as torch's integer enum;
* window functions (hann, hamming, blackman, bartlett, kaiser), range,
  gradient, frexp, frombuffer, asarray, empty_strided, is_inference,
  poisson and binomial;
* the *_copy and unsafe_ forms of view ops (two tables), constants and
  the RNN cells.
The older linear-algebra names, ATen's entry points and the recorded
settings are _ops_aten.py's."""
import builtins
import math
import warnings

import numpy as np

from . import _C
from ._creation import _NP_TO_TG, _TG_TO_NP, _dt, _finish, tensor
from ._ops_math import _float
from ._ops_shape import torch_type_name

Tensor = _C.Tensor

# torch.X(input, ...) for these is input.X(...)
_VIA_METHOD = (
    'relu_ sigmoid_ tanh_ abs_ neg_ negative_ exp_ exp2_ expm1_ log_ log2_ log10_ log1p_ '
    'sqrt_ rsqrt_ reciprocal_ sin_ cos_ tan_ asin_ acos_ atan_ arcsin_ arccos_ arctan_ '
    'sinh_ cosh_ asinh_ acosh_ atanh_ arcsinh_ arccosh_ arctanh_ ceil_ floor_ round_ '
    'trunc_ fix_ frac_ sinc_ square_ erf_ erfc_ deg2rad_ rad2deg_ clamp_ clip_ '
    'clamp_min_ clamp_max_ logit_ nan_to_num_ xlogy_ gcd_ lcm_ ldexp_ fill_ zero_ detach '
    'detach_ index_put_ i0_ conj_physical conj_physical_ resolve_conj resolve_neg is_neg '
    'adjoint narrow_copy matrix_exp nextafter is_inference frexp addmv_ resize_as_').split()

# torch.X_copy(input, ...) is input.X(...) copied (each piece of split / unbind)
_COPIES = {'alias_copy': 'view_as', 'as_strided_copy': 'as_strided', 'detach_copy': 'detach',
           'diagonal_copy': 'diagonal',
           'expand_copy': 'expand', 'permute_copy': 'permute', 'select_copy': 'select',
           'split_copy': 'split', 'split_with_sizes_copy': 'split_with_sizes',
           'squeeze_copy': 'squeeze', 't_copy': 't', 'transpose_copy': 'transpose',
           'unbind_copy': 'unbind', 'unfold_copy': 'unfold', 'unsqueeze_copy': 'unsqueeze',
           'view_copy': 'view'}
# PyTorch's unsafe_ forms differ only in not tracking the pieces as views
_UNSAFE = {'unsafe_chunk': 'chunk', 'unsafe_split': 'split',
           'unsafe_split_with_sizes': 'split_with_sizes'}

# torch.X(input, p, train) over nn.functional's dropouts: (X, the
# functional, in place)
_DROPOUT_FORMS = (('dropout_', 'dropout', True), ('alpha_dropout', 'alpha_dropout', False),
                  ('alpha_dropout_', 'alpha_dropout', True),
                  ('feature_alpha_dropout', 'feature_alpha_dropout', False),
                  ('feature_alpha_dropout_', 'feature_alpha_dropout', True))

__all__ = list(_VIA_METHOD) + list(_COPIES) + list(_UNSAFE) + [f[0] for f in _DROPOUT_FORMS] + [
    'e', 'pi', 'inf', 'nan', 'fill', 'slice_copy', 'max_pool1d_with_indices',
    'adaptive_avg_pool1d', 'adaptive_max_pool1d', 'embedding_renorm_', 'rnn_tanh_cell', 'rnn_relu_cell', 'lstm_cell',
    'gru_cell',
    'threshold_', 'selu_', 'celu_', 'rrelu', 'rrelu_', 'feature_dropout',
    'feature_dropout_', 'kl_div', 'bilinear', 'cosine_embedding_loss', 'hinge_embedding_loss',
    'margin_ranking_loss', 'triplet_margin_loss', 'poisson_nll_loss', 'ctc_loss',
    'binary_cross_entropy_with_logits', 'instance_norm', 'constant_pad_nd', 'channel_shuffle',
    'hann_window', 'hamming_window',
    'blackman_window', 'bartlett_window', 'kaiser_window', 'range', 'gradient', 'frombuffer',
    'asarray', 'empty_strided', 'poisson', 'binomial']


def _check_tensor(name, input, what='input', position=1):
    if not isinstance(input, Tensor):  # PyTorch's argument parser
        raise TypeError(f"{name}(): argument '{what}' (position {position}) must be Tensor, "
                        f"not {type(input).__name__}")


def _via_method(name):
    def f(input, *args, **kwargs):
        _check_tensor(name, input)
        return getattr(Tensor, name)(input, *args, **kwargs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.{name}(input, ...): input.{name}(...)"
    return f


for _n in _VIA_METHOD:
    globals()[_n] = _via_method(_n)

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan


def _copied(name, method):
    def f(input, *args, **kwargs):
        _check_tensor(name, input)
        if method == 'view_as':  # alias_copy(input)
            return input.clone()
        r = getattr(Tensor, method)(input, *args, **kwargs)
        return type(r)(t.clone() for t in r) if isinstance(r, (tuple, list)) else r.clone()
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.{name}: input.{method}(...) as a new tensor (not a view)"
    return f


for _n, _m in _COPIES.items():
    globals()[_n] = _copied(_n, _m)
for _n, _m in _UNSAFE.items():
    globals()[_n] = _via_method(_m)
    globals()[_n].__name__ = _n


def slice_copy(input, dim=0, start=None, end=None, step=1):
    _check_tensor('slice_copy', input)
    d = dim % builtins.max(input.ndim, 1)
    return input[(slice(None),) * d + (slice(start, end, step),)].clone()


def fill(input, value):
    """a copy of input with every element value (out of place)"""
    _check_tensor('fill', input)
    return input.clone().fill_(value)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return _F().max_pool1d_with_indices(input, kernel_size, stride or None, padding, dilation,
                                        ceil_mode)


def adaptive_avg_pool1d(input, output_size):
    return _F().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """(values, indices), as torch.adaptive_max_pool1d"""
    return _F().adaptive_max_pool1d_with_indices(input, output_size)


def _cell(name):
    def f(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        from .nn import rnn
        return getattr(rnn, name)(input, hx, w_ih, w_hh, b_ih, b_hh)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.{name}: one step of the cell with the weights passed in (nn/rnn.py)"
    return f


rnn_tanh_cell, rnn_relu_cell = _cell('rnn_tanh_cell'), _cell('rnn_relu_cell')
lstm_cell, gru_cell = _cell('lstm_cell'), _cell('gru_cell')


def embedding_renorm_(input, indices, max_norm, norm_type):
    """the rows of input that indices name rescaled in place (without
    recording) so that their norm_type-norm is at most max_norm (PyTorch's
    factor max_norm / (norm + 1e-7))"""
    _check_tensor('embedding_renorm_', input)
    if input.ndim != 2:
        raise RuntimeError(f"embedding_renorm_: Expected 2-D tensor for self, but got "
                           f"{input.ndim}-D")
    from ._grad_mode import no_grad
    with no_grad():
        rows = tensor(np.unique(indices.detach().numpy().reshape(-1)).astype(np.int64))
        sel = input.index_select(0, rows)
        norm = sel.norm(norm_type, 1, keepdim=True)
        scale = _C.where(norm > max_norm, max_norm / (norm + 1e-7), norm * 0 + 1)
        input.index_copy_(0, rows, sel * scale)
    return input


def _F():
    from .nn import functional
    return functional


# -- in-place and training-mode activations and dropouts ---------------------

def threshold_(input, threshold, value):
    _check_tensor('threshold_', input)
    return _F().threshold_(input, threshold, value)


def selu_(input):
    _check_tensor('selu_', input)
    return _F().selu_(input)


def celu_(input, alpha=1.0):
    _check_tensor('celu_', input)
    return _F().celu_(input, alpha)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    _check_tensor('rrelu', input)
    return _F().rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    _check_tensor('rrelu_', input)
    return _F().rrelu(input, lower, upper, training, inplace=True)


def _dropout_form(name, functional, inplace):
    """torch.<name>(input, p, train): nn.functional's <functional>"""
    def form(input, p, train):
        _check_tensor(name, input)
        f = getattr(_F(), functional)
        return f(input, p, train, inplace=True) if inplace else f(input, p, train)
    form.__name__ = form.__qualname__ = name
    return form


for _name, _functional, _inplace in _DROPOUT_FORMS:
    globals()[_name] = _dropout_form(_name, _functional, _inplace)


def _feature_dropout(input, p, train, inplace, name):
    """whole channels (dims 0 and 1 index one) zeroed with probability p,
    the rest scaled by 1 / (1 - p), as PyTorch's feature_dropout"""
    _check_tensor(name, input)
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0 or input.numel() == 0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    from ._creation import rand
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    keep = (rand(*shape, dtype=_C.float64) >= p).to(input.dtype)
    scale = keep * 0 if p == 1 else keep / (1 - p)
    if not inplace:
        return input * scale
    from ._tensor import _update
    return _update(input, lambda x: x * scale, (), {})


def feature_dropout(input, p, train):
    return _feature_dropout(input, p, train, False, 'feature_dropout')


def feature_dropout_(input, p, train):
    return _feature_dropout(input, p, train, True, 'feature_dropout_')


# -- losses and layers with torch's top-level signatures ---------------------
# The top-level losses take reduction as an at::Reduction int. Their
# schema's default is Mean, but PyTorch 1.13's Python binding of them does
# not reduce unless told (torch.kl_div(a, b) is elementwise, as is
# torch.ctc_loss's per-sequence result): the oracle's behaviour is kept,
# default 0. nn.functional's forms keep their 'mean'.

_REDUCTIONS = {0: 'none', 1: 'mean', 2: 'sum'}  # at::Reduction
_UNREDUCED = 0


def _reduction(r):
    """an at::Reduction value as F's name: any value but 1 (mean) and 2
    (sum) leaves the loss unreduced, as ATen's apply_loss_reduction does;
    a 0-d integer tensor that does not require grad is an int there too"""
    from ._C import Tensor
    if isinstance(r, Tensor) and r.ndim == 0 and not r.requires_grad and \
            not r.dtype.is_floating_point and r.dtype != _C.bool:
        r = int(r)
    if isinstance(r, bool) or not isinstance(r, int):
        raise TypeError(f"argument 'reduction' must be int, not {type(r).__name__}")
    return _REDUCTIONS.get(r, 'none')


def kl_div(input, target, reduction=_UNREDUCED, *, log_target=False):
    """the pointwise KL divergence; reduction 1 (mean) averages over every
    element, as torch.kl_div (F.kl_div's 'batchmean' has no enum value);
    elementwise by default (see above)"""
    with warnings.catch_warnings():  # F.kl_div's advice to use 'batchmean': not torch.kl_div's
        warnings.simplefilter('ignore', UserWarning)
        return _F().kl_div(input, target, reduction=_reduction(reduction),
                           log_target=log_target)


def bilinear(input1, input2, weight, bias=None):
    return _F().bilinear(input1, input2, weight, bias)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=_UNREDUCED):
    return _F().cosine_embedding_loss(input1, input2, target, margin,
                                      reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=_UNREDUCED):
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=_UNREDUCED):
    return _F().margin_ranking_loss(input1, input2, target, margin,
                                    reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        reduction=_UNREDUCED):
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps,
                                 reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=_UNREDUCED,
             zero_infinity=False):
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                         reduction=_reduction(reduction), zero_infinity=zero_infinity)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=_UNREDUCED):
    # ATen's form broadcasts input and target (F's insists on one size)
    if isinstance(input, _C.Tensor) and isinstance(target, _C.Tensor) and \
            input.shape != target.shape:
        from ._ops_shape import broadcast_tensors
        input, target = broadcast_tensors(input, target)
    return _F().binary_cross_entropy_with_logits(input, target, weight, pos_weight=pos_weight,
                                                 reduction=_reduction(reduction))


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return _F().instance_norm(input, running_mean, running_var, weight, bias,
                              use_input_stats, momentum, eps)


def constant_pad_nd(input, pad, value=0):
    """F.pad's constant mode: pad lists (before, after) pairs from the last
    dim backwards; negative amounts crop"""
    _check_tensor('constant_pad_nd', input)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)} while the "
                           f"input has {input.ndim} dimensions.")
    return _F().pad(input, list(pad), 'constant', value)


def channel_shuffle(input, groups):
    _check_tensor('channel_shuffle', input)
    return _F().channel_shuffle(input, groups)


# -- windows ------------------------------------------------------------------

def _window(name, window_length, periodic, dtype, requires_grad, values):
    """values(n, denom) for n = 0 .. length-1 (float64) as the window of
    window_length (periodic: the symmetric window one longer, cut)"""
    dtype = _dt(dtype)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        w = np.ones(window_length)
    else:
        length = window_length + 1 if periodic else window_length
        w = values(np.arange(window_length, dtype=np.float64), length - 1)
    return _finish(tensor(w, dtype=dtype), requires_grad)


def _cosine_sum(*coeffs):
    """a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) - ..."""
    def values(n, denom):
        return builtins.sum((-1) ** k * a * np.cos(2 * math.pi * k * n / denom)
                            for k, a in enumerate(coeffs))
    return values


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    return _window('hann_window', window_length, periodic, dtype, requires_grad,
                   _cosine_sum(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    return _window('hamming_window', window_length, periodic, dtype, requires_grad,
                   _cosine_sum(alpha, beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    return _window('blackman_window', window_length, periodic, dtype, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    return _window('bartlett_window', window_length, periodic, dtype, requires_grad,
                   lambda n, denom: 1 - np.abs(2 * n / denom - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """I0(beta sqrt(1 - (2 n / N - 1)^2)) / I0(beta)"""
    def values(n, denom):
        r = 2 * n / denom - 1
        return np.i0(beta * np.sqrt(np.maximum(1 - r * r, 0))) / np.i0(beta)
    return _window('kaiser_window', window_length, periodic, dtype, requires_grad, values)


# -- creation -------------------------------------------------------------------

def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False):
    """start, start + step, ... up to and including end (deprecated in
    PyTorch for arange, which excludes end); float32 unless dtype"""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        raise TypeError("range() missing required argument 'end'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = builtins.int(math.floor((end - start) / step)) + 1
    dtype = _dt(dtype)
    vals = start + step * np.arange(n, dtype=np.float64)
    if not dtype.is_floating_point:
        vals = np.asarray(start, dtype=np.int64) + np.asarray(step, dtype=np.int64) * \
            np.arange(n, dtype=np.int64)
    return _finish(tensor(vals, dtype=dtype), requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """a zero tensor of size; tensorgraph tensors are dense, so the strides
    must be a dense layout's (some order of the dims), else NotImplementedError"""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{builtins.min(size)}: {list(size)}")
    from ._creation import empty
    t = empty(size, dtype=dtype)
    order = sorted(builtins.range(len(size)), key=lambda d: (stride[d], size[d]), reverse=True)
    perm = [0] * len(order)
    for i, d in enumerate(order):
        perm[d] = i
    dense = t.permute(*order).contiguous().permute(*perm) if size else t
    if builtins.all(n <= 1 or s == d for n, s, d in zip(size, stride, dense.stride())):
        return _finish(dense, requires_grad)
    raise NotImplementedError(f"empty_strided: strides {list(stride)} for size {list(size)} "
                              "are not a dense layout (tensorgraph has no overlapping or "
                              "gapped tensors)")


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """a 1-D tensor of buffer's bytes read as dtype (PyTorch shares the
    memory; tensorgraph copies it)"""
    npdt = _TG_TO_NP.get(dtype)
    if npdt is None:
        raise TypeError(f"frombuffer: unsupported dtype {dtype}")
    mv = memoryview(buffer)
    nbytes = mv.nbytes
    if nbytes <= 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if not 0 <= offset < nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({nbytes} bytes) minus 1")
    if count == 0 or (count < 0 and (nbytes - offset) % npdt.itemsize):
        if count == 0:
            raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
        raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} "
                         f"bytes) must be a multiple of element size ({npdt.itemsize})")
    if count > 0 and count * npdt.itemsize > nbytes - offset:
        raise ValueError(f"requested buffer length ({count} * {npdt.itemsize} bytes) after "
                         f"offset ({offset} bytes) must not be greater than actual buffer "
                         f"length ({nbytes} bytes)")
    a = np.frombuffer(mv.cast('B'), dtype=npdt, count=count, offset=offset)
    return _finish(tensor(a.copy(), dtype=dtype), requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """obj as a tensor: a tensor of the same dtype is returned itself unless
    copy=True (copy=False with a dtype change raises); lists, numbers and
    arrays are copied (PyTorch shares a NumPy array's memory with copy not
    True, which tensorgraph cannot: copy=False for them raises)"""
    if isinstance(obj, Tensor):
        if dtype is None or dtype == obj.dtype:
            t = obj.clone() if copy else obj
        elif copy is False:
            raise ValueError("can't alias tensor from variable of type tensorgraph.Tensor "
                             "with a different dtype")
        else:
            t = obj.to(dtype)
        if requires_grad and not t.requires_grad:
            t = t.detach().requires_grad_(True) if t is not obj else t.requires_grad_(True)
        return t
    if copy is False:
        raise ValueError(f"can't alias NumPy arrays or Python data (of type "
                         f"{type(obj).__name__}) without copying: tensorgraph tensors own "
                         "their memory")
    if isinstance(obj, np.ndarray) and obj.dtype not in _NP_TO_TG:
        raise TypeError(f"can't convert np.ndarray of type {obj.dtype}")
    return _finish(tensor(obj, dtype=dtype), requires_grad)


# -- numerics --------------------------------------------------------------------

def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """the derivative estimated by second-order central differences in the
    interior and first- or second-order one-sided ones at the edges, for
    each dim (a tuple of tensors), as numpy.gradient; spacing is a number,
    one per dim, or one coordinate tensor per dim"""
    _check_tensor('gradient', input)
    nd = input.ndim
    dims = list(builtins.range(nd)) if dim is None else \
        [dim] if isinstance(dim, builtins.int) else list(dim)
    dims = [d % nd if -nd <= d < nd else _dim_error(d, nd) for d in dims]
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if isinstance(spacing, (builtins.int, builtins.float)) or \
            (isinstance(spacing, Tensor) and spacing.ndim == 0):
        spacing = [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                           f"it's spacing and dim arguments to have the same length, but got "
                           f"a spacing argument of length {len(spacing)} and a dim argument "
                           f"of length {len(dims)}.")
    x = _float(input)
    return tuple(_gradient_1d(x, d, h, edge_order) for d, h in zip(dims, spacing))


def _dim_error(d, nd):
    raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                     f"but got {d})")


def _gradient_1d(x, d, h, edge_order):
    n = x.shape[d]
    if n < edge_order + 1:
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")

    def sl(a, b):
        return x.narrow(d, a, b - a)
    if isinstance(h, Tensor) and h.ndim == 1:  # coordinates along d
        if h.shape[0] != n:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device "
                               f"and of length {n} along dim {d}, got {h.shape[0]}")
        shape = [1] * x.ndim
        shape[d] = n - 1
        dx = (h[1:] - h[:-1]).to(x.dtype).reshape(shape)
        hl, hr = dx.narrow(d, 0, n - 2), dx.narrow(d, 1, n - 2)
        interior = (hl * hl * sl(2, n) - hr * hr * sl(0, n - 2) +
                    (hr * hr - hl * hl) * sl(1, n - 1)) / (hl * hr * (hl + hr))
        h0, h1 = dx.narrow(d, 0, 1), dx.narrow(d, n - 2, 1)
        if edge_order == 1:
            first = (sl(1, 2) - sl(0, 1)) / h0
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / h1
        else:
            a, b = h0, dx.narrow(d, 1, 1)
            first = (-(2 * a + b) / (a * (a + b)) * sl(0, 1) + (a + b) / (a * b) * sl(1, 2) -
                     a / (b * (a + b)) * sl(2, 3))
            a, b = dx.narrow(d, n - 3, 1), h1
            last = (b / (a * (a + b)) * sl(n - 3, n - 2) - (a + b) / (a * b) * sl(n - 2, n - 1) +
                    (a + 2 * b) / (b * (a + b)) * sl(n - 1, n))
    else:
        h = h.item() if isinstance(h, Tensor) else h
        interior = (sl(2, n) - sl(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (sl(1, 2) - sl(0, 1)) / h
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / h
        else:
            first = (-1.5 * sl(0, 1) + 2 * sl(1, 2) - 0.5 * sl(2, 3)) / h
            last = (0.5 * sl(n - 3, n - 2) - 2 * sl(n - 2, n - 1) + 1.5 * sl(n - 1, n)) / h
    return _C.cat([first, interior, last], d)


# -- sampling from distributions ------------------------------------------------

def _uniform(shape, generator):
    return _C._random("uniform", tuple(shape), _C.float64, 0.0, 1.0, generator).numpy()


def _normal(shape, generator):
    return _C._random("normal", tuple(shape), _C.float64, 0.0, 1.0, generator).numpy()


def _poisson_np(lam, generator):
    """Poisson draws of rates lam (float64 array): inversion of the CDF by
    one uniform each where lam <= 200 (exact), the normal approximation
    rounded (|error| of the distribution ~1e-3) above"""
    lam = np.asarray(lam, dtype=np.float64)
    u = _uniform(lam.shape, generator)
    z = _normal(lam.shape, generator)
    small = lam <= 200
    k = np.zeros(lam.shape)
    ls = np.where(small, lam, 0.0)
    pmf = np.exp(-ls)
    cdf = pmf.copy()
    todo = small & (u >= cdf)
    i = 0
    while todo.any():
        i += 1
        pmf = pmf * ls / i
        cdf = cdf + pmf
        k = k + todo
        todo = todo & (u >= cdf) & (pmf > 0)
    big = np.maximum(np.round(lam + np.sqrt(np.where(small, 0, lam)) * z), 0)
    return np.where(small, k, big)


def poisson(input, generator=None):
    """one Poisson draw per element with input's rates, in input's dtype
    (from tensorgraph's generator)"""
    _check_tensor('poisson', input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"poisson_cpu\" not implemented for "
                           f"'{torch_type_name(input.dtype)}'")
    lam = input.detach().numpy().astype(np.float64)
    if (lam < 0).any() or np.isnan(lam).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return tensor(_poisson_np(lam, generator), dtype=input.dtype)


def binomial(count, prob, generator=None):
    """one Binomial(count, prob) draw per element (broadcast), in prob's
    dtype: inversion of the CDF by one uniform each where count * min(p,
    1 - p) <= 200, the normal approximation rounded into [0, count] above"""
    _check_tensor('binomial', count, 'count')
    _check_tensor('binomial', prob, 'prob', 2)
    if not prob.dtype.is_floating_point or not count.dtype.is_floating_point:
        bad = prob.dtype if count.dtype.is_floating_point else count.dtype
        raise RuntimeError(f"\"binomial_cpu\" not implemented for '{torch_type_name(bad)}'")
    n, p = np.broadcast_arrays(count.detach().numpy().astype(np.float64),
                               prob.detach().numpy().astype(np.float64))
    if (p < 0).any() or (p > 1).any() or np.isnan(p).any():
        raise RuntimeError("binomial: probabilities must be in [0, 1]")
    flip = p > 0.5
    q = np.where(flip, 1 - p, p)  # draw the rarer outcome
    u = _uniform(n.shape, generator)
    z = _normal(n.shape, generator)
    small = n * q <= 200
    nn_ = np.where(small, n, 0.0)
    pmf = np.where(q < 1, (1 - q) ** nn_, 0.0)
    cdf = pmf.copy()
    k = np.zeros(n.shape)
    todo = small & (u >= cdf) & (nn_ > 0)
    ratio = q / np.where(q < 1, 1 - q, 1)
    i = 0
    while todo.any():
        i += 1
        pmf = pmf * (nn_ - i + 1) / i * ratio
        cdf = cdf + pmf
        k = k + todo
        todo = todo & (u >= cdf) & (k < nn_)
    big = np.clip(np.round(n * q + np.sqrt(n * q * (1 - q)) * z), 0, n)
    draws = np.where(small, k, big)
    return tensor(np.where(flip, n - draws, draws), dtype=prob.dtype)
