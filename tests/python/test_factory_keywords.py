"""The factories' keywords (device, layout, pin_memory, out, requires_grad:
_factory.py) and linspace/logspace with PyTorch's values to the bit
(_spaced.py). PyTorch 1.13's linspace steps from each end with fused
multiply-adds and fills whole 32-byte vectors from one base; numpy's
linspace (the former implementation) differs in the last bit for most
lengths."""
import random
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import torch, needs_torch

FACTORIES = [  # name, args (tensorgraph's and torch's alike), has out=
    ('zeros', (2, 3), True), ('ones', (2,), True), ('empty', (2,), True),
    ('full', ((2,), 1.5), True), ('arange', (5,), True), ('linspace', (0, 1, 5), True),
    ('logspace', (0, 1, 5), True), ('eye', (3,), True), ('rand', (2,), True),
    ('randn', (2,), True), ('randint', (0, 5, (3,)), True), ('randperm', (5,), True),
    ('tensor', ([1., 2.],), False), ('as_tensor', ([1.],), False),
    ('scalar_tensor', (2.,), False), ('tril_indices', (3, 3), False),
    ('hann_window', (5,), False), ('kaiser_window', (5,), False),
]
LIKES = ['zeros_like', 'ones_like', 'empty_like', 'rand_like', 'randn_like']


def _spaced_cases(seed, n):
    rnd = random.Random(seed)
    for _ in range(n):
        lo = rnd.uniform(-30, 30)
        hi = lo + rnd.uniform(-60, 60)
        steps = rnd.choice([rnd.randint(0, 70), rnd.randint(70, 700)])
        yield lo, hi, steps


@needs_torch
@pytest.mark.parametrize('dt', ['float32', 'float64', 'int64', 'int32'])
def test_linspace_is_pytorchs_to_the_bit(dt):
    for lo, hi, steps in _spaced_cases(1, 300):
        want = torch.linspace(lo, hi, steps, dtype=getattr(torch, dt)).numpy()
        got = tg.linspace(lo, hi, steps, dtype=getattr(tg, dt)).numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"linspace({lo}, {hi}, {steps})")


@needs_torch
def test_linspace_default_dtype_and_tensor_ends():
    want = torch.linspace(torch.tensor(-1.5), torch.tensor(2.25), 37).numpy()
    got = tg.linspace(tg.tensor(-1.5), tg.tensor(2.25), 37)
    assert got.dtype == tg.float32
    np.testing.assert_array_equal(got.numpy(), want)
    assert tg.linspace(0, 1, 0).shape == (0,)
    np.testing.assert_array_equal(tg.linspace(3, 7, 1).numpy(), [3.])


@needs_torch
@pytest.mark.parametrize('dt', ['float32', 'float64'])
def test_logspace_is_pytorchs_to_the_bit(dt):
    rnd = random.Random(2)
    for _ in range(200):
        lo = rnd.uniform(-5, 5)
        hi = lo + rnd.uniform(-6, 6)
        steps = rnd.randint(0, 100)
        base = rnd.choice([10., 2., rnd.uniform(0.1, 5), -2., 0.])
        want = torch.logspace(lo, hi, steps, base, dtype=getattr(torch, dt)).numpy()
        got = tg.logspace(lo, hi, steps, base, dtype=getattr(tg, dt)).numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"logspace({lo}, {hi}, {steps}, {base})")


def test_spacing_integer_ends():
    """PyTorch's: integer ends truncate, a uint8 wraps, out of range is an error"""
    assert tg.linspace(-3, 5, 4, dtype=tg.uint8).tolist() == [253, 170, 87, 5]
    assert tg.linspace(2, -7, 5, dtype=tg.int32).tolist() == [2, 0, -2, -4, -7]
    with pytest.raises(RuntimeError, match='int without overflow'):
        tg.linspace(0, 1e10, 3, dtype=tg.int32)
    with pytest.raises(RuntimeError, match='int64_t without overflow'):
        tg.logspace(0, float('inf'), 3, dtype=tg.int64)
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        tg.linspace(0, 1, 3, dtype=tg.bool)


def test_spacing_steps_checked():
    with pytest.raises(RuntimeError, match='non-negative'):
        tg.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="'steps' must be int"):
        tg.logspace(0, 1, 2.5)


@pytest.mark.parametrize('name, args, has_out', FACTORIES)
def test_factory_keywords_accepted(name, args, has_out):
    f = getattr(tg, name)
    for kw in ({'device': 'cpu'}, {'device': tg.device('cpu')}, {'layout': tg.strided},
               {'pin_memory': False}):
        r = f(*args, **kw)
        assert isinstance(r, tg.Tensor)
    if name not in ('randint', 'randperm', 'tril_indices'):
        assert f(*args, requires_grad=True, dtype=tg.float64).requires_grad


@pytest.mark.parametrize('name, args, has_out', FACTORIES)
def test_factory_refuses_other_places(name, args, has_out):
    f = getattr(tg, name)
    with pytest.raises(AssertionError, match='CUDA'):
        f(*args, device='cuda')
    with pytest.raises(RuntimeError, match='unknown device'):
        f(*args, device='meta')
    with pytest.raises(RuntimeError, match='strided'):
        f(*args, layout=tg.sparse_coo)
    with pytest.raises(RuntimeError, match='needs CUDA'):
        f(*args, pin_memory=True)


@pytest.mark.parametrize('name', LIKES)
def test_like_keywords(name):
    x = tg.ones(2, 3)
    assert getattr(tg, name)(x, device='cpu', pin_memory=False).shape == (2, 3)
    with pytest.raises(AssertionError, match='CUDA'):
        getattr(tg, name)(x, device='cuda:0')


@needs_torch
@pytest.mark.parametrize('name, args, has_out',
                         [c for c in FACTORIES if c[2] and c[0] not in ('empty',)])
def test_out_takes_out_dtype_and_returns_out(name, args, has_out):
    for dt in ('float64', 'int64'):
        if dt == 'int64' and name in ('rand', 'randn'):
            continue  # PyTorch: normal/uniform not implemented for Long
        out = tg.empty(0, dtype=getattr(tg, dt))
        r = getattr(tg, name)(*args, out=out)
        want = getattr(torch, name)(*args, out=torch.empty(0, dtype=getattr(torch, dt)))
        assert r is out and out.dtype == getattr(tg, dt)
        assert tuple(out.shape) == tuple(want.shape)
        if name not in ('rand', 'randn', 'randint', 'randperm'):
            np.testing.assert_array_equal(out.numpy(), want.numpy())


def test_out_resized_silently_and_checked():
    out = tg.ones(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # PyTorch's factories resize without a warning
        r = tg.zeros(2, 3, out=out)
    assert r is out and out.shape == (2, 3) and not out.numpy().any()
    with pytest.raises(RuntimeError, match=r'dtype Long does not match dtype of out '
                                           r'parameter \(Float\)'):
        tg.arange(3, dtype=tg.int64, out=tg.ones(3))
    with pytest.raises(RuntimeError, match='leaf Variable that requires grad'):
        tg.zeros(2, out=tg.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="'out' must be Tensor"):
        tg.zeros(2, out=[1, 2])
    o = tg.empty(0)
    assert tg.ones(2, out=o, requires_grad=True).requires_grad and o.requires_grad


def test_empty_and_randint_like_memory_format():
    assert tg.empty(2, 3, 4, 5, memory_format=tg.channels_last).stride() == (60, 1, 15, 3)
    x = tg.ones(2, 3, 4, 5).contiguous(memory_format=tg.channels_last)
    r = tg.randint_like(x, 3)
    assert r.stride() == (60, 1, 15, 3) and r.dtype == tg.float32
    assert int(r.max()) <= 2
    with pytest.raises(RuntimeError, match='Preserve'):
        tg.empty(2, memory_format=tg.preserve_format)


@pytest.mark.parametrize('name, args', [('new_zeros', ((2,),)), ('new_ones', ((2,),)),
                                        ('new_full', ((2,), 3.)), ('new_empty', ((2,),)),
                                        ('new_tensor', ([1., 2.],)),
                                        ('new_empty_strided', ((2,), (1,)))])
def test_new_methods_keywords(name, args):
    x = tg.ones(3, dtype=tg.float64)
    r = getattr(x, name)(*args, device=x.device, layout=tg.strided, pin_memory=False,
                         requires_grad=True)
    assert r.requires_grad and r.dtype == tg.float64 and r.shape == (2,)
    with pytest.raises(AssertionError, match='CUDA'):
        getattr(x, name)(*args, device='cuda')
