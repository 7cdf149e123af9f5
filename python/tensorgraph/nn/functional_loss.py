"""torch.nn.functional losses composed from existing ops: l1, smooth_l1,
huber, binary_cross_entropy, kl_div, the margin and embedding losses,
poisson/gaussian NLL, and the parts of cross_entropy /
binary_cross_entropy_with_logits the C ops lack (label_smoothing,
probability targets, weight / pos_weight)."""
import math
import warnings

from .. import _C
from .._creation import zeros
from .._ops_cover import xlogy
from .._ops_shape import broadcast_tensors, torch_type_name
from .functional_act import pairwise_distance

__all__ = ['l1_loss', 'smooth_l1_loss', 'huber_loss', 'binary_cross_entropy', 'kl_div',
           'margin_ranking_loss', 'hinge_embedding_loss', 'soft_margin_loss',
           'cosine_embedding_loss', 'triplet_margin_loss', 'poisson_nll_loss',
           'gaussian_nll_loss', 'multilabel_soft_margin_loss', 'cross_entropy',
           'binary_cross_entropy_with_logits', 'mse_loss', 'nll_loss']

_C_cross_entropy = _C.cross_entropy


def _unbatched(fn, input, target, *args):
    """PyTorch's unbatched class-index form: logits [C] and a 0-d target
    run as a batch of one"""
    out = fn(input.unsqueeze(0), target.reshape(1), *args)
    return out.squeeze(0) if out.ndim else out


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction='mean'):
    reduction = legacy_reduction(size_average, reduce, reduction)
    if input.ndim == 1 and target.ndim == 0:
        return _unbatched(_C.nll_loss, input, target, weight, None, ignore_index, None,
                          reduction)
    return _C.nll_loss(input, target, weight, None, ignore_index, None, reduction)


def _float_kernel_dtype(input, target, kernel):
    """the operands' promoted dtype, which must be a float one: PyTorch's
    kernels take mixed operands (an integer or bool target with float
    predictions) but have no integer loop"""
    dt = _C.promote_types(input.dtype, target.dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f'"{kernel}" not implemented for \'{torch_type_name(dt)}\'')
    return dt


def _promoted_floats(input, target, kernel):
    """both operands in their promoted float dtype (_float_kernel_dtype)"""
    dt = _float_kernel_dtype(input, target, kernel)
    return input.to(dt), target.to(dt)


def mse_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    """the C op; a target of another shape broadcasts (with PyTorch's warning)"""
    reduction = _check_reduction(reduction, size_average, reduce)
    input, target = _promoted_floats(input, target, 'mse_cpu')
    if input.shape != target.shape:
        _broadcast_warn(input, target, 'mse_loss')
        input, target = broadcast_tensors(input, target)
    return _C.mse_loss(input, target, reduction)


# The hinges follow PyTorch's subgradient at the kink: clamp(min=0) where
# PyTorch's loss is composed with clamp_min (gradient 1 at exactly 0:
# margin_ranking, hinge_embedding, cosine_embedding, triplet_margin), relu
# where its kernel tests z > 0 (gradient 0: multi_margin, multilabel_margin).
def _reduce(loss, reduction):
    if reduction == 'none':
        return loss
    if reduction == 'mean':
        return _C.mean(loss)
    if reduction == 'sum':
        return _C.sum(loss)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_reduction(size_average, reduce, reduction):
    """reduction, or the one PyTorch's deprecated size_average and reduce
    (either given) stand for, with PyTorch's warning: none unless reduce
    (default True), else mean if size_average (default True), else sum"""
    if size_average is None and reduce is None:
        return reduction
    if reduce is not None and not reduce:
        ret = 'none'
    else:
        ret = 'sum' if size_average is not None and not size_average else 'mean'
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _check_reduction(reduction, size_average=None, reduce=None):
    """the reduction to use (size_average and reduce resolved), checked"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in ('none', 'mean', 'sum'):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _broadcast_warn(input, target, name):
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({tuple(target.shape)}) that is different to the "
                      f"input size ({tuple(input.shape)}). This will likely lead to incorrect "
                      f"results due to broadcasting. Please ensure they have the same size.",
                      stacklevel=3)


def l1_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    reduction = _check_reduction(reduction, size_average, reduce)
    _broadcast_warn(input, target, 'l1_loss')
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction='mean', beta=1.0):
    reduction = _check_reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _broadcast_warn(input, target, 'smooth_l1_loss')
    input, target = _promoted_floats(input, target, 'smooth_l1_cpu')
    # PyTorch's branches on the signed difference, whose gradients are its
    # backward's: -1 for x <= -beta, 1 for x >= beta (so -1 at x = 0 when
    # beta is 0), x / beta between
    x = input - target
    if beta == 0:
        loss = _reduce(_l1_with_torch_kink(input, target, x), reduction)
    else:
        loss = _reduce(_piecewise_quadratic(x, beta, 1.0 / beta, 1.0), reduction)
    return _C._set_grad_fn_name(loss, 'SmoothL1LossBackward0')


def _l1_with_torch_kink(input, target, x):
    """|x| for smooth_l1_loss(beta=0), with PyTorch's gradients: at x == 0
    both input's and target's are -1 (its backward runs with the roles
    swapped for target: x <= 0 there too), a NaN x gets NaN. s.detach() - s
    is +0 with the gradient -1/2 - 1/2 to input and target alike"""
    zero = zeros((), dtype=x.dtype)
    n = _C.where(x != x, x, zero)
    s = 0.5 * input + 0.5 * target
    kink = _C.where(x == 0, (s.detach() - s) * 2.0, n * n)
    return _C.where(x < 0, 0.0 - x, _C.where(x > 0, x, kink))


def _piecewise_quadratic(x, k, a, b):
    """b (|x| - k / 2) beyond k (b (-x - k/2) for x <= -k, b (x - k/2) for
    x >= k), a x^2 / 2 between (NaN included, which so gets a NaN
    gradient, as PyTorch's): smooth L1 and Huber. The quadratic sees 0
    outside, so an infinite x gives its branch's slope, not 0 * inf"""
    outside = (x <= -k) | (x >= k)
    inner = _C.where(outside, zeros((), dtype=x.dtype), x)
    linear = _C.where(x <= -k, (0.0 - x - 0.5 * k) * b, (x - 0.5 * k) * b)
    return _C.where(outside, linear, 0.5 * a * inner * inner)


def _as_input_dtype(loss, input):
    """the elementwise loss in input's float dtype, where PyTorch's output
    takes it (huber_loss, soft_margin_loss) though a float64 target
    promoted the arithmetic"""
    return loss.to(input.dtype) if input.dtype.is_floating_point else loss


def huber_loss(input, target, reduction='mean', delta=1.0):
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _broadcast_warn(input, target, 'huber_loss')
    if not input.dtype.is_floating_point:  # its output takes input's dtype
        dt = _float_kernel_dtype(input, target, 'huber_cpu')
        raise RuntimeError(f"result type {torch_type_name(dt)} can't be cast to the desired "
                           f"output type {torch_type_name(input.dtype)}")
    if target.dtype == _C.bool:
        target = target.to(input.dtype)
    return _C._set_grad_fn_name(
        _reduce(_as_input_dtype(_piecewise_quadratic(input - target, delta, 1.0, delta), input),
                reduction),
        'HuberLossBackward0')


def _bce_edge(x):
    """where PyTorch's gradient (x - t) / max(x (1 - x), 1e-12) clamps: x
    within 1e-12 of 0 or 1 (and at them)"""
    return (x * (1 - x)) <= 1e-12


def _bce_logs(input, target):
    """log x and log(1 - x), clamped at -100, differentiable away from the
    edges only: there they are constants, so no inf * 0 reaches the
    gradient (_bce_edge_grad supplies PyTorch's there)"""
    x = input.detach()
    edge = _bce_edge(x)
    inner = _C.where(edge, zeros((), dtype=input.dtype) + 0.5, input)
    lx = _C.where(edge, _C.clamp(_C.log(x), -100.0, None),
                  _C.clamp(_C.log(inner), -100.0, None))
    l1x = _C.where(edge, _C.clamp(_C.log1p(-x), -100.0, None),
                   _C.clamp(_C.log1p(-inner), -100.0, None))
    return lx, l1x


def _bce_edge_grad(input, target):
    """zero, with PyTorch's gradient at the edges: (x - t) / max(x (1 - x),
    1e-12)"""
    x = input.detach()
    edge = _bce_edge(x)
    slope = (x - target.detach()) / _C.clamp(x * (1 - x), 1e-12, None)
    zero = zeros((), dtype=input.dtype)
    return _C.where(edge, _C.where(edge, slope, zero) * (input - x), zero)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction='mean'):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as in
    PyTorch"""
    reduction = _check_reduction(reduction, size_average, reduce)
    if input.shape != target.shape:
        raise ValueError(f"Using a target size ({tuple(target.shape)}) that is different to the "
                         f"input size ({tuple(input.shape)}) is deprecated. Please ensure they "
                         f"have the same size.")
    if not input.is_symbolic and input.numel() and \
            not bool(((input >= 0) & (input <= 1)).all()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    lx, l1x = _bce_logs(input, target)
    loss = -(target * lx + (1 - target) * l1x) + _bce_edge_grad(input, target)
    if weight is not None:
        loss = loss * weight
    return _C._set_grad_fn_name(_reduce(loss, reduction), 'BinaryCrossEntropyBackward0')


def _bce_logits_composed(input, target, weight, pos_weight):
    """PyTorch 1.13's formula, in its order and dtypes: with m = max(-x, 0),
    (1 - t) x + m + log(exp(-m) + exp(-x - m)) (with pos_weight the last
    two terms scaled by 1 + (pos_weight - 1) t), the log term in the
    input's dtype and the rest written in place into 1 - target, so the
    loss, weighted or not, has the target's dtype (each in-place step
    computed in the operands' common dtype, then stored in it)"""
    out = target.dtype if target.dtype.is_floating_point else input.dtype
    m = _C.clamp(-input, 0, None)
    lse = _C.log(_C.exp(-m) + _C.exp(-input - m))      # input's dtype
    # 1 - t in the wider dtype: the same float32 loss, and the input's
    # gradient sigmoid(x) - t without 1 - t's float32 rounding, as
    # PyTorch's backward (a formula of its own) gives it
    wide = target.to(input.dtype) if input.dtype == _C.float64 and \
        target.dtype == _C.float32 else target
    loss = ((1 - wide) * input).to(out)
    if pos_weight is not None:
        lw = (pos_weight - 1) * target + 1
        loss = (loss + (lw * (lse + m)).to(lw.dtype)).to(out)
    else:
        loss = ((loss + m).to(out) + lse).to(out)
    if weight is not None:
        loss = (loss * weight).to(out)
    return loss


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction='mean', pos_weight=None):
    reduction = _check_reduction(reduction, size_average, reduce)
    if input.shape != target.shape:
        raise ValueError(f"Target size ({tuple(target.shape)}) must be the same as input size "
                         f"({tuple(input.shape)})")
    if weight is None and pos_weight is None and input.dtype == target.dtype:
        return _C.binary_cross_entropy_with_logits(input, target, reduction)
    # mixed dtypes or weights: PyTorch's formula, whose result has the
    # target's dtype and whose log term is taken in the input's
    return _C._set_grad_fn_name(_reduce(_bce_logits_composed(input, target, weight, pos_weight),
                                        reduction), 'BinaryCrossEntropyWithLogitsBackward0')


def kl_div(input, target, size_average=None, reduce=None, reduction='mean', log_target=False):
    """target * (log target - input) (0 where target is 0, NaN where it
    is negative); 'batchmean' divides the sum by the batch size"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction == 'mean':
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                      "the support size.'batchmean' divides only by the batch size, and "
                      "aligns with the KL div math definition.'mean' will be changed to "
                      "behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = _C.exp(target) * (target - input)
    else:
        # PyTorch's formula: NaN where a target is negative, and the
        # input's gradient is -target everywhere
        loss = xlogy(target, target) - target * input
    if reduction == 'batchmean':
        s = _C.sum(loss)
        return s / input.shape[0] if input.ndim else s
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction='mean'):
    reduction = _check_reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {tuple(input1.shape)}, input2: "
                           f"{tuple(input2.shape)}, target: {tuple(target.shape)} ")
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction='mean'):
    reduction = _check_reduction(reduction, size_average, reduce)
    z = zeros((), dtype=input.dtype)
    if input.dtype == _C.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if not input.dtype.is_floating_point:
        margin = int(margin)  # PyTorch fills the margin into the input's dtype first
    # PyTorch's formula, which also defines targets other than 1 and -1:
    # they take both terms
    loss = _C.where(target != -1, input, z) + _C.where(target != 1,
                                                      (margin - input).clamp(min=0), z)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    reduction = _check_reduction(reduction, size_average, reduce)
    # -input * target, in PyTorch's order: a bool target counts as 0 and 1
    return _reduce(_as_input_dtype(_C.softplus(-input * target), input), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction='mean'):
    reduction = _check_reduction(reduction, size_average, reduce)
    eps = 1e-12  # PyTorch's EPSILON here
    dim = input1.ndim - 1
    prod = _C.sum(input1 * input2, dim)
    m1 = _C.sum(input1 * input1, dim) + eps
    m2 = _C.sum(input2 * input2, dim) + eps
    cos = prod / _C.sqrt(m1 * m2)
    z = zeros((), dtype=cos.dtype)
    loss = _C.where(target == 1, 1 - cos, z) + _C.where(target == -1,
                                                        (cos - margin).clamp(min=0), z)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        size_average=None, reduce=None, reduction='mean'):
    reduction = _check_reduction(reduction, size_average, reduce)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-08,
                     reduce=None, reduction='mean'):
    reduction = _check_reduction(reduction, size_average, reduce)
    if log_input:
        loss = _C.exp(input) - target * input
    else:
        loss = input - target * _C.log(input + eps)
    if full:
        # Stirling's term t log t - t + log(2 pi t) / 2, for t > 1
        safe = _C.where(target > 1, target, _C.add(zeros((), dtype=target.dtype), 1))
        st = safe * _C.log(safe) - safe + 0.5 * _C.log(2 * math.pi * safe)
        loss = loss + _C.where(target > 1, st, zeros((), dtype=st.dtype))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-06, reduction='mean'):
    _check_reduction(reduction)
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if not var.is_symbolic and bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    # PyTorch clamps var without recording it: the gradient passes as if
    # unclamped
    v = var + (_C.clamp(var, eps, None) - var).detach()
    loss = 0.5 * (_C.log(v) + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction='mean'):
    reduction = _check_reduction(reduction, size_average, reduce)
    loss = -(target * -_C.softplus(-input) + (1 - target) * -_C.softplus(input))
    if weight is not None:
        loss = loss * weight
    # PyTorch divides by the input's classes, also where a target broadcast it
    class_dim = input.ndim - 1
    loss = _C.sum(loss, class_dim) / (input.shape[class_dim] if input.ndim else 1)
    return _reduce(loss, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction='mean', label_smoothing=0.0):
    """the C op for class indices without smoothing; composed for
    label_smoothing and for probability targets (float, input's shape)"""
    reduction = legacy_reduction(size_average, reduce, reduction)
    soft = target.dtype.is_floating_point
    if not soft and input.ndim == 1 and target.ndim == 0:
        return _unbatched(cross_entropy, input, target, weight, None, ignore_index, None,
                          reduction, label_smoothing)
    if not soft and label_smoothing == 0.0:
        return _C_cross_entropy(input, target, weight, None, ignore_index, None, reduction)
    reduction = _check_reduction(reduction)
    if soft and ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    cdim = 1 if input.ndim >= 2 else 0
    n_cls = input.shape[cdim]
    # label_smoothing / n_cls as PyTorch's C++ double division: no classes
    # (an empty input) give inf, multiplying only empty tensors
    per_cls = label_smoothing / n_cls if n_cls else math.inf if label_smoothing else math.nan
    logp = _C.log_softmax(input, cdim)
    wshape = [1] * input.ndim
    wshape[cdim] = n_cls
    w = weight.reshape(*wshape) if weight is not None else None
    if soft:
        if target.shape != input.shape:
            raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                               f"{list(target.shape)}")
        t = target * (1 - label_smoothing) + per_cls if label_smoothing else target
        lw = logp * w if w is not None else logp
        loss = -_C.sum(lw * t, cdim)
        if reduction == 'mean':
            if input.numel() == 0:  # PyTorch fills the empty sum with NaN
                return _C.sum(loss) + math.nan
            return _C.sum(loss) / (input.numel() // n_cls if input.ndim else 1)
        return _reduce(loss, reduction)
    nll = _C_cross_entropy(input, target, weight, None, ignore_index, None, 'none')
    lw = logp * w if w is not None else logp
    smooth = -_C.sum(lw, cdim)
    valid = target != ignore_index
    smooth = _C.where(valid, smooth, zeros((), dtype=smooth.dtype))
    loss = (1 - label_smoothing) * nll + per_cls * smooth
    if reduction == 'none':
        return loss
    if reduction == 'sum':
        return _C.sum(loss)
    if weight is not None:
        safe_t = _C.where(valid, target, zeros((), dtype=target.dtype))
        denom = _C.sum(_C.where(valid, _C.index_select(weight, 0, safe_t.reshape(-1))
                                .reshape(*target.shape), zeros((), dtype=weight.dtype)))
    else:
        denom = _C.sum(valid.to(loss.dtype))
    # every label ignored: NaN (0/0) as PyTorch, with a zero gradient, not inf * 0
    none = denom == 0
    zero = zeros((), dtype=loss.dtype)
    return _C.sum(loss) / _C.where(none, zero + 1, denom) + _C.where(none, zero + math.nan, zero)
