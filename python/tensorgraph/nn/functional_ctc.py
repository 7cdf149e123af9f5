"""F.ctc_loss (nn.CTCLoss): connectionist temporal classification by the
forward algorithm in log space, composed of ops over the time steps (a
Python loop of T steps), so autograd gives the gradient. The targets
with blanks between and around them are the "extended" sequence of
2 L + 1 states; a state is reached from itself, the one before, or the
one two before when that skips a blank between different labels. A
sum of exponentials over states no path reaches is -inf with a zero
gradient (`_logsumexp3`), as PyTorch's own backward gives."""
import math

import numpy as np

from .. import _C
from .._creation import arange, full, tensor, zeros

__all__ = ['ctc_loss']

_NEG = -math.inf


def _logsumexp3(a, b, c):
    """log(e^a + e^b + e^c), -inf (gradient 0) where all three are -inf"""
    m = _C.maximum(a, _C.maximum(b, c)).detach()
    dead = m == _NEG
    m0 = _C.where(dead, zeros(1, dtype=a.dtype), m)
    s = (a - m0).exp() + (b - m0).exp() + (c - m0).exp()
    s = _C.where(dead, full((1,), 1.0, dtype=a.dtype), s)
    return _C.where(dead, full((1,), _NEG, dtype=a.dtype), m0 + s.log())


def _shift(x, k):
    """x [N, S] moved k states right, -inf coming in"""
    pad = full((x.shape[0], k), _NEG, dtype=x.dtype)
    return _C.cat([pad, x[:, :x.shape[1] - k]], 1)


def _host(v):
    """a tensor's values (or a list's, or a number) as a Python list"""
    v = v.tolist() if hasattr(v, 'tolist') else v
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _extended(targets, ndim, lengths, blank, classes):
    """the extended states [N, 2 Lmax + 1] (blank, label 1, blank, ...,
    blank; blanks past a target's end) and where a state may be reached
    from two before (a label unlike the label two states back)"""
    n, lmax = len(lengths), max(lengths + [0])
    rows, at = [], 0
    for b, length in enumerate(lengths):
        row = targets[b][:length] if ndim == 2 else targets[at:at + length]
        at += length
        if any(not 0 <= v < classes or v == blank for v in row):
            raise RuntimeError(f"ctc_loss: target labels must be in [0, {classes}) and not "
                               f"the blank ({blank})")
        rows.append(list(row) + [blank] * (lmax - length))
    ext = np.full((n, 2 * lmax + 1), blank, dtype=np.int64)
    if lmax:
        ext[:, 1::2] = np.array(rows, dtype=np.int64).reshape(n, lmax)
    skip = np.zeros(ext.shape, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, skip


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean',
             zero_infinity=False):
    """the negative log-likelihood of each target under log_probs [T, N, C]
    (or [T, C] unbatched), summed over alignments; reduction 'mean'
    divides each by its target length (at least 1) and averages"""
    if reduction not in ('none', 'mean', 'sum'):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: log_probs should be [T, N, C], got {list(log_probs.shape)}")
    t_len, n, c = log_probs.shape
    in_lens = [int(v) for v in _host(input_lengths)]
    lengths = [int(v) for v in _host(target_lengths)]
    if len(in_lens) != n or len(lengths) != n:
        raise RuntimeError(f"ctc_loss: input_lengths and target_lengths must have {n} entries")
    if any(v > t_len or v < 0 for v in in_lens):
        raise RuntimeError(f"ctc_loss: input_lengths must be in [0, {t_len}]")
    ext, skip = _extended(_host(targets), targets.ndim, lengths, blank, c)
    s_len = ext.shape[1]
    ext, skip = tensor(ext), tensor(skip)
    lp = log_probs.gather(2, ext.unsqueeze(0).expand(t_len, n, s_len))  # [T, N, S]
    dead = full((n, s_len), _NEG, dtype=log_probs.dtype)
    start = arange(s_len).reshape(1, s_len) < 2
    alpha = _C.where(start, lp[0], dead)
    in_len_t = tensor(in_lens).reshape(n, 1)
    for t in range(1, t_len):
        two = _C.where(skip, _shift(alpha, 2), dead)
        new = _logsumexp3(alpha, _shift(alpha, 1), two) + lp[t]
        alpha = _C.where(in_len_t > t, new, alpha)
    last = tensor([2 * v for v in lengths]).reshape(n, 1)
    before = tensor([max(2 * v - 1, 0) for v in lengths]).reshape(n, 1)
    a_last = alpha.gather(1, last).reshape(n)
    a_before = alpha.gather(1, before).reshape(n)
    a_before = _C.where(tensor([v > 0 for v in lengths]), a_before, dead[:, 0])
    loss = -_logsumexp3(a_last, a_before, dead[:, 0])
    # no frames at all: the empty target has likelihood 1, any other 0
    empty_input = tensor([v == 0 for v in in_lens])
    if bool(empty_input.any()):
        zero_len = tensor([v == 0 for v in lengths])
        loss = _C.where(empty_input, _C.where(zero_len, zeros(1, dtype=loss.dtype),
                                              full((1,), math.inf, dtype=loss.dtype)), loss)
    if zero_infinity:
        loss = _C.where(loss == math.inf, zeros(1, dtype=loss.dtype), loss)
    if reduction == 'none':
        return loss[0] if unbatched else loss
    if reduction == 'sum':
        return loss.sum()
    denom = tensor([float(max(v, 1)) for v in lengths], dtype=loss.dtype)
    return (loss / denom).mean()
