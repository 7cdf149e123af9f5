"""One differential check against PyTorch for the tests that compare
functions: fn(L, *tensors) run with L = torch and L = tensorgraph on the
same arrays, the result's dtype, shape and values compared, and the
gradients of the arrays listed in grad (of the result weighted by
cos(0), cos(1), ... so that every element's gradient counts)."""
import numpy as np

import tensorgraph as tg
from conftest import torch


def _run(L, fn, arrays, grad):
    ts = [L.tensor(a) for a in arrays]
    for i in grad:
        ts[i].requires_grad_(True)
    y = fn(L, *ts)
    if grad:
        w = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))).to(y.dtype)
        (y * w).sum().backward()
    return (y.detach().numpy(), str(y.dtype).split('.')[-1],
            [ts[i].grad.numpy() for i in grad])


def compare_with_torch(fn, *arrays, grad=(), rtol=1e-5, atol=1e-6, grad_rtol=1e-4,
                       grad_atol=1e-5):
    (tv, tdt, tgr), (gv, gdt, ggr) = (_run(L, fn, arrays, grad) for L in (torch, tg))
    assert gdt == tdt, f"dtype {gdt}, PyTorch's {tdt}"
    assert gv.shape == tv.shape, f"shape {gv.shape}, PyTorch's {tv.shape}"
    np.testing.assert_allclose(gv, tv, rtol=rtol, atol=atol, equal_nan=True)
    for a, b in zip(ggr, tgr):
        np.testing.assert_allclose(a, b, rtol=grad_rtol, atol=grad_atol, equal_nan=True)
