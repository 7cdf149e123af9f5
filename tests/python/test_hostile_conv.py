"""Convolutions, pooling and block ops given hostile strides, dilations,
paddings and output sizes, against torch where torch computes them
(tests/test_hostile_conv.c has the C side)."""

import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F
from conftest import SANITIZED, needs_torch, torch

BIG = 2**31 - 1


def _pair(m, shape, grad=True):
    n = 1
    for s in shape:
        n *= s
    x = ((m.arange(float(n)) % 7) - 3).reshape(*shape).double()
    if grad:
        x.requires_grad_(True)
    return x


def _run(m, fn, xs, ws=None):
    """fn's output (its shape and sums: some outputs have millions of
    elements) and the gradients of sum(y * y), as nested lists"""
    x = _pair(m, xs)
    args = (x,) if ws is None else (x, _pair(m, ws))
    y = fn(m, *args)
    y = y[0] if isinstance(y, tuple) else y
    sq = (y * y).sum()
    sq.backward()
    head = y.flatten()[:1000].tolist()
    return [list(y.shape), float(y.sum()), float(sq), head] + [a.grad.tolist() for a in args]


def _close(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(p, q) for p, q in zip(a, b))
    return abs(a - b) <= 1e-9 * (1 + abs(b))


CONV_CASES = [
    # few input channels with a stride, dense, depthwise, pointwise, grouped
    ((1, 3, 9, 9), (4, 3, 3, 3), 1, dict(stride=(2, BIG), padding=1)),
    ((1, 3, 9, 9), (4, 3, 3, 3), 1, dict(stride=(2**26, 2), padding=1)),
    ((1, 32, 9, 9), (32, 32, 3, 3), 1, dict(stride=(BIG, BIG))),
    ((1, 8, 9, 9), (8, 1, 3, 3), 8, dict(stride=(1, 2**20), padding=1)),
    ((1, 8, 9, 9), (4, 8, 1, 1), 1, dict(stride=(BIG, BIG))),
    ((2, 2, 9, 9), (4, 1, 3, 3), 2, dict(stride=(3, BIG), padding=(1, 0))),
    # a dilation and padding of 2^30 around a small plane: the centre tap
    ((1, 3, 9, 9), (4, 3, 3, 3), 1, dict(dilation=2**30 - 1, padding=2**30 - 1, stride=(1, 3))),
    ((1, 32, 9, 9), (32, 32, 3, 3), 1, dict(dilation=2**20, padding=2**20)),
    ((1, 8, 9, 9), (8, 1, 3, 3), 8, dict(dilation=(1, 2**29), padding=(1, 2**29))),
    # a 1x1 kernel over an 11 x 2^18 plane: the batch lanes' scratch was 3 GB
    ((1, 8, 9, 9), (4, 8, 1, 1), 1, dict(dilation=(1, 2**17), padding=(1, 2**17))),
]


@needs_torch
@pytest.mark.parametrize("xs,ws,groups,kw", CONV_CASES)
def test_conv2d_hostile_geometry_matches_torch(xs, ws, groups, kw):
    def fn(m, x, w):
        return m.nn.functional.conv2d(x, w, groups=groups, **kw)
    got, want = _run(tg, fn, xs, ws), _run(torch, fn, xs, ws)
    assert _close(got, want)


@needs_torch
@pytest.mark.parametrize("name,xs,ws,kw", [
    ("conv1d", (1, 3, 9), (4, 3, 3), dict(stride=BIG, padding=1)),
    ("conv1d", (1, 3, 9), (4, 3, 3), dict(dilation=2**30 - 1, padding=2**30 - 1)),
    ("conv3d", (1, 2, 4, 5, 6), (3, 2, 3, 3, 3), dict(stride=(1, BIG, 2), padding=1)),
    ("conv_transpose2d", (1, 3, 1, 1), (3, 2, 3, 3), dict(stride=BIG, padding=1)),
    ("conv_transpose2d", (1, 3, 4, 5), (3, 2, 3, 3), dict(stride=(1, 2**20), padding=(1, 2**21))),
])
def test_other_convs_hostile_geometry_matches_torch(name, xs, ws, kw):
    def fn(m, x, w):
        return getattr(m.nn.functional, name)(x, w, **kw)
    assert _close(_run(tg, fn, xs, ws), _run(torch, fn, xs, ws))


def test_huge_stride_computes_and_says_why_on_failure():
    y = F.conv2d(tg.ones(1, 1, 5, 5), tg.ones(1, 1, 3, 3), stride=(2, BIG), padding=1)
    assert y.tolist() == [[[[4.0], [6.0], [4.0]]]]


@pytest.mark.skipif(SANITIZED, reason="ASan aborts on an allocation past its maximum size "
                    "instead of returning NULL (tests/test_hostile_conv.c checks the C side "
                    "with allocator_may_return_null)")
def test_an_impossible_im2col_says_why():
    # an im2col of 2^21 taps x 2^20 positions (8 TB): a MemoryError that says so
    with pytest.raises(MemoryError, match="conv2d: out of memory"):
        F.conv2d(tg.ones(1, 1, 1, 2**22), tg.ones(1, 1, 1, 2**21), stride=2)


@needs_torch
@pytest.mark.parametrize("name,size", [
    ("adaptive_max_pool2d", 1), ("adaptive_max_pool2d", 4), ("adaptive_max_pool2d", 9),
    ("adaptive_max_pool3d", 4), ("adaptive_avg_pool2d", 4), ("adaptive_max_pool1d", 2**20),
    ("adaptive_avg_pool1d", 2**20), ("adaptive_avg_pool2d", (13, 2)),
])
def test_adaptive_pools_match_torch_with_ties_and_huge_sizes(name, size):
    # the inputs repeat every 7 values: windows with tied maxima, whose
    # gradient torch gives to the first (amax shared it among them); an
    # output of 2^20 positions was a Python loop of 2^20 slices
    nd = int(name[-2])
    xs = {1: (1, 2, 9), 2: (1, 2, 9, 9), 3: (1, 2, 5, 6, 7)}[nd]

    def fn(m, x):
        return getattr(m.nn.functional, name)(x, size)
    assert _close(_run(tg, fn, xs), _run(torch, fn, xs))


@needs_torch
@pytest.mark.parametrize("kw", [dict(kernel_size=3, dilation=2**20, padding=2**20),
                                dict(kernel_size=(1, 3), dilation=(1, 2**29), padding=(0, 2**29)),
                                dict(kernel_size=3, stride=2**20, padding=1)])
def test_unfold_and_fold_far_padding_match_torch(kw):
    def unfold(m, x):
        return m.nn.functional.unfold(x, **kw)
    assert _close(_run(tg, unfold, (1, 2, 5, 6)), _run(torch, unfold, (1, 2, 5, 6)))
    cols = torch.nn.functional.unfold(torch.zeros(1, 2, 5, 6), **kw).shape

    def fold(m, x):
        return m.nn.functional.fold(x, (5, 6), **kw)
    assert _close(_run(tg, fold, tuple(cols)), _run(torch, fold, tuple(cols)))


def test_unfold_checks_its_arguments():
    x = tg.ones(1, 2, 5, 6)
    for kw, what in ((dict(kernel_size=2, dilation=0), "dilation"),
                     (dict(kernel_size=0), "kernel size"),
                     (dict(kernel_size=2, stride=0), "stride"),
                     (dict(kernel_size=2, padding=-1), "padding")):
        with pytest.raises(RuntimeError, match=what):
            F.unfold(x, **kw)
        if torch is not None and not SANITIZED:
            with pytest.raises(RuntimeError, match=what):
                torch.nn.functional.unfold(torch.ones(1, 2, 5, 6), **kw)
