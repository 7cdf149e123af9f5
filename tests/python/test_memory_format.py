"""clone(), contiguous() and the *_like creators lay memory out as
PyTorch's do: preserve_format keeps a dense input's strides (a transposed
tensor's clone is transposed), contiguous() makes C order, channels_last
and channels_last_3d as asked; gradients flow through the copies."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

LAYOUTS = {
    'permuted': lambda L: L.arange(24.).reshape(2, 3, 4).permute(2, 0, 1),
    'transposed': lambda L: L.arange(6.).reshape(2, 3).t(),
    'size1': lambda L: L.ones(3, 1, 4).permute(2, 1, 0),
    'sliced': lambda L: L.arange(12.).reshape(3, 4)[:, ::2],
    'expanded': lambda L: L.arange(3.).reshape(3, 1).expand(3, 4),
    'channels_last': lambda L: L.arange(24.).reshape(2, 3, 2, 2).contiguous(
        memory_format=L.channels_last),
    'channels_last_sliced': lambda L: L.arange(48.).reshape(2, 3, 4, 2).contiguous(
        memory_format=L.channels_last)[:, :, ::2],
    'contiguous': lambda L: L.arange(6.).reshape(2, 3),
    '0d': lambda L: L.tensor(3.),
    'empty': lambda L: L.zeros(0, 3).t(),
}
MAKERS = {
    'clone': lambda L, t: t.clone(),
    'torch.clone': lambda L, t: L.clone(t),
    'contiguous': lambda L, t: t.contiguous(),
    'empty_like': lambda L, t: L.empty_like(t),
    'zeros_like': lambda L, t: L.zeros_like(t),
    'ones_like': lambda L, t: L.ones_like(t),
    'full_like': lambda L, t: L.full_like(t, 2.),
    'rand_like': lambda L, t: L.rand_like(t),
    'randn_like': lambda L, t: L.randn_like(t),
    'clone_contiguous_format': lambda L, t: t.clone(memory_format=L.contiguous_format),
    'zeros_like_contiguous_format': lambda L, t: L.zeros_like(
        t, memory_format=L.contiguous_format),
}


@needs_torch
@pytest.mark.parametrize('maker', sorted(MAKERS))
@pytest.mark.parametrize('layout', sorted(LAYOUTS))
def test_strides_as_torch(layout, maker):
    a = MAKERS[maker](tg, LAYOUTS[layout](tg))
    b = MAKERS[maker](torch, LAYOUTS[layout](torch))
    assert a.shape == tuple(b.shape)
    assert a.stride() == b.stride()
    assert a.is_contiguous() == b.is_contiguous()
    if maker in ('clone', 'torch.clone', 'contiguous'):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@needs_torch
@pytest.mark.parametrize('fmt', ['channels_last', 'contiguous_format'])
def test_explicit_formats(fmt):
    for make in (lambda L, t: t.contiguous(memory_format=getattr(L, fmt)),
                 lambda L, t: t.clone(memory_format=getattr(L, fmt)),
                 lambda L, t: L.empty_like(t, memory_format=getattr(L, fmt))):
        a = make(tg, tg.arange(48.).reshape(2, 3, 4, 2).permute(0, 3, 1, 2))
        b = make(torch, torch.arange(48.).reshape(2, 3, 4, 2).permute(0, 3, 1, 2))
        assert a.stride() == b.stride()
        for f in ('channels_last', 'contiguous_format'):
            assert a.is_contiguous(memory_format=getattr(tg, f)) == \
                b.is_contiguous(memory_format=getattr(torch, f))


def test_contiguous_returns_self_when_already_so():
    x = tg.arange(6.).reshape(2, 3)
    assert x.contiguous() is x
    c = x.t().contiguous()
    assert c is not x and c.is_contiguous() and c.stride() == (2, 1)
    with pytest.raises(RuntimeError, match="required rank 4"):
        x.contiguous(memory_format=tg.channels_last)
    with pytest.raises(RuntimeError, match="preserve memory format"):
        x.contiguous(memory_format=tg.preserve_format)


def test_gradient_through_layout_preserving_clone():
    p = tg.arange(6., requires_grad=True)
    c = p.reshape(2, 3).t().clone()
    assert c.stride() == (1, 3)
    (c * tg.arange(6.).reshape(3, 2)).sum().backward()
    assert p.grad.tolist() == [0., 2., 4., 1., 3., 5.]


def test_like_with_requires_grad_is_a_leaf():
    r = tg.zeros_like(tg.ones(2, 3).t(), requires_grad=True)
    assert r.stride() == (1, 3) and r.requires_grad and r.is_leaf and r.grad_fn is None
