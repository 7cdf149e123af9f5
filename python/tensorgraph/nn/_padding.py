"""Padding helpers of nn.functional: pad's circular mode, and 'same'
padding's split of a convolution's extent."""
from .. import _C


def same_padding(kernel_size, dilation):
    """(left, right) per dim that keep a stride-1 convolution's size: the
    extent dilation * (k - 1) split with the odd one on the right"""
    pads = []
    for k, d in zip(kernel_size, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return pads


def circular_pad(input, pairs):
    """pad's circular mode: pairs (before, after) from the last dim
    backwards; each side wraps around at most once (negative values crop)"""
    for i, (before, after) in enumerate(pairs):
        dim = input.ndim - 1 - i
        size = input.shape[dim]
        if before > size or after > size:
            raise ValueError("Padding value causes wrapping around more than once.")
        if before < 0 or after < 0:  # crop first, then wrap what is left
            lo, hi = max(-before, 0), max(-after, 0)
            input = input.narrow(dim, lo, size - lo - hi)
            size = input.shape[dim]
            before, after = max(before, 0), max(after, 0)
        parts = [input.narrow(dim, size - before, before)] if before else []
        parts.append(input)
        if after:
            parts.append(input.narrow(dim, 0, after))
        input = _C.cat(parts, dim) if len(parts) > 1 else input
    return input
