"""avg_pool2d/3d with divisor_override and interpolate's area mode, against
PyTorch (values and gradients), and their errors."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

POOL2D = [dict(kernel_size=2, divisor_override=3),
          dict(kernel_size=3, stride=2, padding=1, divisor_override=5),
          dict(kernel_size=3, stride=2, ceil_mode=True, divisor_override=2),
          dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), ceil_mode=True,
               divisor_override=7)]


@needs_torch
@pytest.mark.parametrize('kw', POOL2D)
def test_avg_pool2d_divisor_override(kw):
    x = np.random.RandomState(0).randn(2, 3, 7, 9).astype('float32')
    a, b = torch.tensor(x, requires_grad=True), tg.tensor(x, requires_grad=True)
    ya, yb = torch.nn.functional.avg_pool2d(a, **kw), tg.nn.functional.avg_pool2d(b, **kw)
    assert tuple(yb.shape) == tuple(ya.shape)
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), rtol=1e-6, atol=1e-6)
    w = np.random.RandomState(1).randn(*ya.shape).astype('float32')
    ya.backward(torch.tensor(w))
    yb.backward(tg.tensor(w))
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-6, atol=1e-6)
    layer = tg.nn.AvgPool2d(**kw)
    assert layer.divisor_override == kw['divisor_override']
    np.testing.assert_allclose(layer(tg.tensor(x)).numpy(), ya.detach().numpy(), atol=1e-6)


@needs_torch
def test_avg_pool3d_divisor_override():
    x = np.random.RandomState(2).randn(1, 2, 5, 6, 7).astype('float32')
    for kw in (dict(kernel_size=2, divisor_override=3, ceil_mode=True),
               dict(kernel_size=3, stride=2, padding=1, divisor_override=4)):
        want = torch.nn.AvgPool3d(**kw)(torch.tensor(x)).numpy()
        np.testing.assert_allclose(tg.nn.AvgPool3d(**kw)(tg.tensor(x)).numpy(), want, atol=1e-6)
        np.testing.assert_allclose(tg.nn.functional.avg_pool3d(tg.tensor(x), **kw).numpy(), want,
                                   atol=1e-6)


def test_divisor_override_zero_and_plain_average():
    x = tg.ones(1, 1, 4, 4)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        tg.nn.functional.avg_pool2d(x, 2, divisor_override=0)
    assert tg.nn.functional.avg_pool2d(x, 2, divisor_override=2).tolist() == [[[[2.0, 2.0],
                                                                                  [2.0, 2.0]]]]
    assert tg.nn.functional.avg_pool2d(x, 2).tolist() == [[[[1.0, 1.0], [1.0, 1.0]]]]


@needs_torch
@pytest.mark.parametrize('shape,kw', [((2, 3, 7, 9), dict(size=(4, 4))),
                                      ((2, 3, 7, 9), dict(scale_factor=0.5)),
                                      ((2, 3, 7, 9), dict(size=(9, 11))),
                                      ((2, 3, 7), dict(size=4)),
                                      ((1, 2, 5, 6, 7), dict(size=(2, 3, 4)))])
def test_interpolate_area(shape, kw):
    x = np.random.RandomState(3).randn(*shape).astype('float32')
    a, b = torch.tensor(x, requires_grad=True), tg.tensor(x, requires_grad=True)
    ya = torch.nn.functional.interpolate(a, mode='area', **kw)
    yb = tg.nn.functional.interpolate(b, mode='area', **kw)
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), rtol=1e-5, atol=1e-6)
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_interpolate_area_errors():
    x = tg.ones(1, 1, 4, 4)
    with pytest.raises(ValueError, match="align_corners"):
        tg.nn.functional.interpolate(x, size=2, mode='area', align_corners=True)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        tg.nn.functional.interpolate(x, mode='area')
    with pytest.raises(ValueError, match="same number of spatial"):
        tg.nn.functional.interpolate(x, size=(2, 2, 2), mode='area')


UNBATCHED = [
    ('conv1d', lambda L, F, x: F.conv1d(x, L.ones(2, 3, 3)), (3, 6)),
    ('conv2d same', lambda L, F, x: F.conv2d(x, L.ones(2, 3, 3, 3), padding='same'), (3, 6, 7)),
    ('conv3d', lambda L, F, x: F.conv3d(x, L.ones(2, 3, 3, 3, 3), stride=2), (3, 6, 6, 5)),
    ('conv_transpose1d', lambda L, F, x: F.conv_transpose1d(x, L.ones(3, 2, 3), stride=2), (3, 6)),
    ('conv_transpose2d', lambda L, F, x: F.conv_transpose2d(x, L.ones(3, 2, 3, 3)), (3, 6, 7)),
    ('max_pool1d', lambda L, F, x: F.max_pool1d(x, 2), (3, 6)),
    ('avg_pool1d', lambda L, F, x: F.avg_pool1d(x, 2), (3, 6)),
    ('max_pool2d indices', lambda L, F, x: F.max_pool2d(x, 2, return_indices=True)[1], (3, 6, 7)),
    ('avg_pool2d divisor', lambda L, F, x: F.avg_pool2d(x, 3, 2, 1, divisor_override=2), (3, 6, 7)),
    ('max_pool3d', lambda L, F, x: F.max_pool3d(x, 2), (3, 6, 6, 5)),
    ('MaxPool2d module', lambda L, F, x: L.nn.MaxPool2d(2)(x), (3, 6, 7)),
    ('AvgPool1d module', lambda L, F, x: L.nn.AvgPool1d(2)(x), (3, 6)),
]


@needs_torch
@pytest.mark.parametrize('name,fn,shape', UNBATCHED, ids=[c[0] for c in UNBATCHED])
def test_unbatched_convolution_and_pooling(name, fn, shape):
    x = np.random.RandomState(4).randn(*shape).astype('float32')
    want = fn(torch, torch.nn.functional, torch.tensor(x))
    got = fn(tg, tg.nn.functional, tg.tensor(x))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_unbatched_module_and_gradient():
    conv = tg.nn.Conv2d(3, 2, 3, padding=1, padding_mode='reflect')
    x = tg.randn(3, 5, 5, requires_grad=True)
    y = conv(x)
    assert tuple(y.shape) == (2, 5, 5)
    y.sum().backward()
    assert tuple(x.grad.shape) == (3, 5, 5)
    with pytest.raises(RuntimeError, match="4-D"):
        tg.nn.functional.conv2d(tg.ones(5, 5), tg.ones(2, 3, 3, 3))
