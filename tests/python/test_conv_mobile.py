"""The MobileNets' convolution paths against PyTorch: the few-input-channel
strided stem (src/kernels/cpu/conv_few.c), depthwise layers
(conv_dw.c) and pointwise layers (conv_pw.c), forward and the gradients
of a loss through them (which take the general paths), float32 and
float64; and MobileNet blocks compiled by tg.function, where the fusion
pass has the convolution apply hardswish, relu6 (clamp) or a residual
shortcut as it stores, forward and gradients."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch, pair, grads_match

SHAPES = [
    # (n, c, h, w, o, k, stride, padding, groups)
    (1, 3, 33, 30, 16, 3, 2, 1, 1),     # MobileNetV3's stem, odd plane
    (2, 3, 20, 37, 32, 3, 2, 1, 1),     # MobileNetV2's, rows past a vector
    (2, 2, 17, 17, 5, 5, 2, 2, 1),      # 5x5, channels past the tile's 4
    (1, 4, 16, 16, 7, 3, 3, 0, 1),      # stride 3
    (1, 24, 15, 13, 24, 3, 1, 1, 24),   # depthwise 3x3
    (2, 16, 14, 14, 16, 5, 2, 2, 16),   # depthwise 5x5 stride 2
    (2, 40, 7, 9, 96, 1, 1, 0, 1),      # pointwise
]


@needs_torch
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype,rtol", [("float32", 2e-4), ("float64", 1e-10)])
def test_forward_and_gradients_match_torch(shape, dtype, rtol):
    n, c, h, w, o, k, s, p, g = shape
    rng = np.random.default_rng(n + c + o + k + s)
    x, tx = pair(rng.standard_normal((n, c, h, w)), dtype)
    wt, twt = pair(rng.standard_normal((o, c // g, k, k)) / np.sqrt(c // g * k * k), dtype)
    b, tb = pair(rng.standard_normal(o), dtype)
    y = F.conv2d(x, wt, b, stride=s, padding=p, groups=g)
    ty = torch.nn.functional.conv2d(tx, twt, tb, stride=s, padding=p, groups=g)
    grads_match(y, ty, [x, wt, b], [tx, twt, tb], rtol=rtol, atol=rtol)


def _block(conv2d, hardswish, clamp, x, ws):
    """a stem with hardswish, then an inverted residual block: pointwise
    expansion + relu6, depthwise 3x3 + relu6, pointwise projection + the
    shortcut"""
    w0, b0, we, be, wd, bd, wp, bp = ws
    h = hardswish(conv2d(x, w0, b0, stride=2, padding=1))
    e = clamp(conv2d(h, we, be), 0, 6)
    d = clamp(conv2d(e, wd, bd, padding=1, groups=wd.shape[0]), 0, 6)
    return conv2d(d, wp, bp) + h


@needs_torch
@pytest.mark.parametrize("dtype,rtol", [("float32", 2e-4), ("float64", 1e-10)])
def test_compiled_block_matches_torch(dtype, rtol):
    rng = np.random.default_rng(3)
    shapes = [(8, 3, 3, 3), (8,), (24, 8, 1, 1), (24,), (24, 1, 3, 3), (24,),
              (8, 24, 1, 1), (8,)]
    fan = {4: lambda s: s[1] * s[2] * s[3], 1: lambda s: 1}
    vals = [rng.standard_normal(s) * 2 / np.sqrt(fan[len(s)](s)) for s in shapes]
    pairs = [pair(v, dtype) for v in vals]
    x, tx = pair(rng.standard_normal((2, 3, 19, 22)) * 2, dtype)
    ws, tws = [a for a, _ in pairs], [b for _, b in pairs]

    @tg.function
    def block(x, *ws):
        return _block(F.conv2d, F.hardswish, tg.clamp, x, ws)

    y = block(x, *ws)
    ty = _block(torch.nn.functional.conv2d, torch.nn.functional.hardswish, torch.clamp,
                tx, tws)
    grads_match(y, ty, [x] + ws, [tx] + tws, rtol=rtol, atol=rtol)
