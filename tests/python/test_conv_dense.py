"""Convolutions with enough channels for the dense implicit-GEMM path
(src/kernels/cpu/conv_dense.c: one group, >= 32 output channels, >= 64
taps) against PyTorch: strides 1, 2 and unequal, padding, dilation, odd
channel counts and planes, float32 and float64, with and without bias;
the gradients (which take the other paths) of a loss through them; and
conv + bias + relu compiled by tg.function (the fused forward, relu
applied as the tile is stored)."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch, pair, grads_match, close

SHAPES = [
    # (n, c, h, w, o, kh, kw, stride, padding, dilation)
    (1, 64, 14, 14, 64, 3, 3, (1, 1), (1, 1), (1, 1)),    # ResNet's 3x3
    (2, 33, 11, 9, 40, 3, 3, (2, 2), (1, 1), (1, 1)),     # strided, odd sizes
    (1, 3, 31, 29, 37, 7, 7, (2, 2), (3, 3), (1, 1)),     # the stem
    (2, 80, 9, 9, 35, 1, 1, (2, 2), (0, 0), (1, 1)),      # strided projection
    (1, 20, 13, 12, 48, 3, 3, (1, 2), (2, 1), (2, 1)),    # unequal stride, dilation
    (3, 24, 7, 7, 70, 3, 3, (1, 1), (1, 1), (1, 1)),      # 7x7 planes, o past tiles
]


@needs_torch
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype,rtol", [("float32", 2e-4), ("float64", 1e-10)])
@pytest.mark.parametrize("bias", [True, False])
def test_forward_and_gradients_match_torch(shape, dtype, rtol, bias):
    n, c, h, w, o, kh, kw, stride, padding, dilation = shape
    rng = np.random.default_rng(n + c + o + kh)
    x, tx = pair(rng.standard_normal((n, c, h, w)), dtype)
    wt, twt = pair(rng.standard_normal((o, c, kh, kw)) / np.sqrt(c * kh * kw), dtype)
    ins, tins = [x, wt], [tx, twt]
    b = tb = None
    if bias:
        b, tb = pair(rng.standard_normal(o), dtype)
        ins.append(b)
        tins.append(tb)
    y = F.conv2d(x, wt, b, stride=stride, padding=padding, dilation=dilation)
    ty = torch.nn.functional.conv2d(tx, twt, tb, stride=stride, padding=padding,
                                    dilation=dilation)
    grads_match(y, ty, ins, tins, rtol=rtol, atol=rtol)


@needs_torch
@pytest.mark.parametrize("dtype,rtol", [("float32", 2e-4), ("float64", 1e-10)])
def test_conv_bias_relu_compiled_matches_torch(dtype, rtol):
    """conv2d + bias + relu through tg.function (fused: relu applied as the
    outputs are stored, NaN passing and -0 becoming +0 as the relu op)"""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 48, 12, 10))
    w = rng.standard_normal((64, 48, 3, 3)) / np.sqrt(48 * 9)
    b = rng.standard_normal(64)
    x[0, 5, 3, 4] = np.nan
    tgd = getattr(tg, dtype)
    xs, ws, bs = (tg.tensor(v, dtype=tgd) for v in (x, w, b))

    @tg.function
    def step(x, w, b):
        return F.relu(F.conv2d(x, w, b, stride=1, padding=1))

    got = step(xs, ws, bs).numpy()
    tdt = getattr(torch, dtype)
    want = torch.relu(torch.nn.functional.conv2d(
        torch.tensor(x, dtype=tdt), torch.tensor(w, dtype=tdt), torch.tensor(b, dtype=tdt),
        padding=1)).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got).sum() == 64 * 9  # every channel's 3x3 outputs over the NaN
    assert not np.signbit(got[~np.isnan(got)]).any()
    close(np.nan_to_num(got), np.nan_to_num(want), rtol=rtol, atol=rtol)
