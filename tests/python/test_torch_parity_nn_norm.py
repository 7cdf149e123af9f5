"""F.instance_norm with running statistics against PyTorch 1.13: the
running mean and variance it updates (use_input_stats=True), the
normalization by them (use_input_stats=False), gradients of the input,
weight and bias, and the InstanceNorm modules over it."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

pytestmark = needs_torch


def _run(L, x, rm, rv, w, b, uis, momentum):
    xs = [L.tensor(a).requires_grad_(True) for a in (x, w, b)]
    m, v = L.tensor(rm), L.tensor(rv)
    y = L.nn.functional.instance_norm(xs[0], m, v, xs[1], xs[2], use_input_stats=uis,
                                      momentum=momentum, eps=1e-3)
    (y * L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))).float()).sum().backward()
    return [y.detach().numpy(), m.numpy(), v.numpy()] + [t.grad.numpy() for t in xs]


@pytest.mark.parametrize('shape', [(2, 3, 5), (3, 3, 2, 4), (2, 3, 2, 2, 3)])
@pytest.mark.parametrize('uis', [True, False])
@pytest.mark.parametrize('momentum', [0.1, 0.6])
def test_instance_norm_running_stats(shape, uis, momentum):
    rs = np.random.RandomState(0)
    x = (rs.randn(*shape) * 2 + 1).astype(np.float32)
    rm, rv = rs.randn(3).astype(np.float32), (rs.rand(3) + 0.5).astype(np.float32)
    w, b = rs.randn(3).astype(np.float32), rs.randn(3).astype(np.float32)
    want = _run(torch, x, rm, rv, w, b, uis, momentum)
    got = _run(tg, x, rm, rv, w, b, uis, momentum)
    for a, e in zip(got, want):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)


def test_instance_norm_without_running_stats_needs_them():
    with pytest.raises(RuntimeError, match="running_mean and running_var to be defined"):
        tg.nn.functional.instance_norm(tg.ones(2, 3, 4), use_input_stats=False)


@pytest.mark.parametrize('cls,shape', [('InstanceNorm1d', (2, 3, 5)),
                                       ('InstanceNorm2d', (3, 2, 4)),
                                       ('InstanceNorm3d', (2, 3, 2, 2, 3))])
def test_instance_norm_module_train_then_eval(cls, shape):
    rs = np.random.RandomState(1)
    mods = [getattr(L.nn, cls)(3, affine=True, track_running_stats=True, momentum=0.3)
            for L in (torch, tg)]
    for step in range(3):
        x = (rs.randn(*shape) * 3 - 1).astype(np.float32)
        outs = [m(L.tensor(x)).detach().numpy() for L, m in zip((torch, tg), mods)]
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-5)
    for m in mods:
        m.eval()
    x = rs.randn(*shape).astype(np.float32)
    outs = [m(L.tensor(x)).detach().numpy() for L, m in zip((torch, tg), mods)]
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-5)
    for k in ('running_mean', 'running_var'):
        np.testing.assert_allclose(getattr(mods[1], k).numpy(), getattr(mods[0], k).numpy(),
                                   rtol=1e-4, atol=1e-5)
