"""Adamax, NAdam, RAdam (optim/py_algos.py) against PyTorch over several
steps (NAdam as PyTorch 1.13, Debian's and so the oracle here, computes
it: mu_product_next has one factor mu more than PyTorch 2's; under
PyTorch 2 it is checked against a reference of 1.13's formula),
PyTorch-layout state_dicts and their round trip, and the constructors'
checks."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

P0 = [np.random.RandomState(0).randn(4, 3), np.random.RandomState(1).randn(3)]
GRADS = [[np.random.RandomState(10 + i).randn(*p.shape) for p in P0] for i in range(8)]


def _run(L, name, kw):
    ps = [L.tensor(p.copy(), requires_grad=True) for p in P0]
    opt = getattr(L.optim, name)(ps, **kw)
    for g in GRADS:
        for p, gg in zip(ps, g):
            p.grad = L.tensor(gg)
        opt.step()
    return [p.detach().numpy() for p in ps], opt.state_dict()


def _torch_has_changed_nadam():
    return int(torch.__version__.split('.')[0]) >= 2


@needs_torch
@pytest.mark.parametrize('name,kw', [
    ('Adamax', {}), ('Adamax', dict(lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    ('RAdam', {}), ('RAdam', dict(lr=0.05, betas=(0.5, 0.6), weight_decay=0.2)),
    ('NAdam', {}), ('NAdam', dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01))])
def test_matches_torch(name, kw):
    got, gsd = _run(tg, name, kw)
    if name == 'NAdam' and _torch_has_changed_nadam():
        want = _nadam_reference(**kw)
    else:
        want, tsd = _run(torch, name, kw)
        assert {k: sorted(v) for k, v in gsd['state'].items()} == \
            {k: sorted(v) for k, v in tsd['state'].items()}
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


def _nadam_reference(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3):
    """NAdam as PyTorch 1.13 computes it (mu_product in float32)"""
    out = []
    for k, p in enumerate(P0):
        p, m, v, mu_prod = p.copy(), np.zeros_like(p), np.zeros_like(p), np.float32(1)
        for step, gs in enumerate(GRADS, 1):
            g = gs[k] + weight_decay * p
            mu = betas[0] * (1 - 0.5 * 0.96 ** (step * momentum_decay))
            mu_next = betas[0] * (1 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
            mu_prod = np.float32(mu_prod * np.float32(mu))
            nxt = mu_prod * np.float32(mu) * np.float32(mu_next)
            m = m * betas[0] + g * (1 - betas[0])
            v = v * betas[1] + g * g * (1 - betas[1])
            den = np.sqrt(v / (1 - betas[1] ** step)) + eps
            p = p + g / den * float(np.float32(-lr * (1 - mu)) / (np.float32(1) - mu_prod))
            p = p + m / den * float(np.float32(-lr * mu_next) / (np.float32(1) - nxt))
        out.append(p)
    return out


def test_state_round_trip_and_checks():
    for name in ('Adamax', 'NAdam', 'RAdam'):
        p = tg.nn.Parameter(tg.ones(3))
        opt = getattr(tg.optim, name)([p])
        for _ in range(2):
            p.grad = tg.ones(3)
            opt.step()
        q = tg.nn.Parameter(p.detach().clone())
        o2 = getattr(tg.optim, name)([q])
        o2.load_state_dict(opt.state_dict())
        p.grad, q.grad = tg.ones(3), tg.ones(3)
        opt.step()
        o2.step()
        assert p.tolist() == q.tolist()
        with pytest.raises(ValueError, match="learning rate"):
            getattr(tg.optim, name)([p], lr=-1)
        with pytest.raises(ValueError, match="beta parameter at index 1"):
            getattr(tg.optim, name)([p], betas=(0.9, 1.0))


def _layout(lib, name, **kw):
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0]))
    o = getattr(lib.optim, name)([w], lr=0.1, **kw)
    for _ in range(2):
        o.zero_grad()
        (w ** 2).sum().backward()
        o.step()
    s = o.state_dict()
    group = {k: v for k, v in s['param_groups'][0].items()}
    entry = {k: (type(v).__name__, str(getattr(v, 'dtype', '')).split('.')[-1],
                 v.tolist() if hasattr(v, 'tolist') and getattr(v, 'ndim', 1) == 0 else None)
             for k, v in s['state'][0].items()}
    return group, entry


@pytest.mark.parametrize("name", ['SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adadelta',
                                  'Adamax', 'NAdam', 'RAdam', 'ASGD', 'Rprop'])
def test_state_dict_layout_as_pytorch_1_13(name):
    # hyper-parameters with PyTorch's defaults (ints where its are, its
    # foreach/differentiable/capturable/fused flags), 'step' a float32 tensor
    # or an int by optimizer, SGD without momentum: momentum_buffer None
    group, entry = _layout(tg, name)
    assert group['foreach'] is None
    if name == 'SGD':
        assert entry == {'momentum_buffer': ('NoneType', '', None)}
        assert group['momentum'] == 0 and type(group['momentum']) is int
        assert group['differentiable'] is False
    elif name in ('RMSprop', 'Adadelta', 'Rprop'):
        assert entry['step'] == ('int', '', None)
    else:
        assert entry['step'] == ('Tensor', 'float32', 2.0)
    if torch is not None:
        tgroup, tentry = _layout(torch, name)
        assert group == tgroup
        assert entry == tentry


def test_state_dict_round_trip_and_flags():
    w = tg.nn.Parameter(tg.tensor([1.0, 2.0]))
    o = tg.optim.SGD([w], lr=0.1)
    (w ** 2).sum().backward()
    o.step()
    o2 = tg.optim.SGD([tg.nn.Parameter(tg.tensor([1.0, 2.0]))], lr=0.5)
    o2.load_state_dict(o.state_dict())  # momentum_buffer None loads
    assert o2.state_dict()['state'] == {0: {'momentum_buffer': None}}
    a = tg.optim.Adam([w], lr=0.1)
    (w ** 2).sum().backward()
    a.step()
    b = tg.optim.Adam([tg.nn.Parameter(tg.tensor([1.0, 2.0]))], lr=0.1)
    b.load_state_dict(a.state_dict())
    assert b.state_dict()['state'][0]['step'].item() == 1.0
    assert "foreach: None" in repr(a) and "weight_decay: 0\n" in repr(a)
    with pytest.raises(RuntimeError, match="CUDA"):
        tg.optim.Adam([w], fused=True)
    with pytest.raises(NotImplementedError, match="differentiable"):
        tg.optim.SGD([w], lr=0.1, differentiable=True)
    tg.optim.SGD([w], lr=0.1, foreach=True).step()  # a speed choice: accepted


def test_sgd_lr_is_required_as_pytorch():
    w = tg.nn.Parameter(tg.ones(1))
    with pytest.raises(ValueError, match="required optimization parameter lr"):
        tg.optim.SGD([w])
    o = tg.optim.SGD([{'params': [w], 'lr': 0.1}])  # a group's own lr is enough
    assert o.param_groups[0]['lr'] == 0.1 and repr(o.defaults['lr']) == "<required parameter>"
    if torch is not None:
        with pytest.raises(ValueError, match="required optimization parameter lr"):
            torch.optim.SGD([torch.nn.Parameter(torch.ones(1))])
