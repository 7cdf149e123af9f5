"""interpolate's antialias=True for bilinear and bicubic 4-D inputs, as
PyTorch's separable _upsample_bilinear2d_aa / _upsample_bicubic2d_aa: along
each spatial axis every output pixel is a normalized weighted sum of the
input pixels under a filter stretched by the downscaling factor (triangle
for bilinear, Keys' cubic with a = -0.5 for bicubic). The weights are a
host matrix per axis, applied with two matmuls, so autograd reaches the
input."""
import math

import numpy as np

from .._creation import tensor


def _triangle(x):
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _keys(x, a=-0.5):
    x = np.abs(x)
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))


def _scale(n_in, n_out, align_corners, scale_factor):
    """PyTorch's area_pixel_compute_scale: input pixels per output pixel"""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return n_in / n_out


def _weights(n_in, n_out, align_corners, scale_factor, cubic):
    """the [n_out, n_in] matrix of one axis"""
    scale = _scale(n_in, n_out, align_corners, scale_factor)
    taps = 4 if cubic else 2
    support = taps * 0.5 * scale if scale >= 1.0 else taps * 0.5
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    filt = _keys if cubic else _triangle
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)  # C's truncation toward zero
        hi = min(int(center + support + 0.5), n_in)
        if hi <= lo:
            continue
        row = filt((np.arange(lo, hi) - center + 0.5) * inv)
        total = row.sum()
        w[i, lo:hi] = row / total if total != 0.0 else row
    return w


def interpolate_antialias(input, size, scale_factor, mode, align_corners):
    """size: the output's (H, W); scale_factor: the two factors PyTorch's
    kernel gets (None when the size was given or recomputed)"""
    if mode not in ('bilinear', 'bicubic') or input.ndim != 4:
        raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")
    if min(size) <= 0:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"(H: {input.shape[2]}, W: {input.shape[3]}) output (H: {size[0]}, "
                           f"W: {size[1]})")
    sf = scale_factor or [None, None]
    cubic = mode == 'bicubic'
    h_in, w_in = input.shape[2], input.shape[3]
    wh = _weights(h_in, size[0], bool(align_corners), sf[0], cubic)
    ww = _weights(w_in, size[1], bool(align_corners), sf[1], cubic)
    wh = tensor(wh).to(input.dtype)
    ww = tensor(ww.T.copy()).to(input.dtype)
    return wh.matmul(input.matmul(ww))


def output_size(input, size, scale_factor):
    """the spatial output size, from size or floor(extent * factor)"""
    if size is not None:
        return list(size)
    return [math.floor(n * s) for n, s in zip(input.shape[2:], scale_factor)]
