"""optim.Adagrad: updates against PyTorch's (float32, several steps, every
option) and against the formula in float64 numpy; param groups, an lr
scheduler, state_dict round trip and argument errors."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

CONFIGS = [dict(), dict(lr=0.1, lr_decay=0.05), dict(lr=0.05, weight_decay=0.1),
           dict(lr=0.1, initial_accumulator_value=0.3, eps=1e-6), dict(lr=0.02, maximize=True)]
RNG = np.random.default_rng(11)
P0 = RNG.normal(size=(3, 4)).astype(np.float32)
GRADS = [RNG.normal(size=(3, 4)).astype(np.float32) for _ in range(6)]


def _run_tg(cfg, dtype=tg.float32):
    p = tg.nn.Parameter(tg.tensor(P0, dtype=dtype))
    opt = tg.optim.Adagrad([p], **cfg)
    out = []
    for g in GRADS:
        p.grad = tg.tensor(g, dtype=dtype)
        opt.step()
        out.append(p.detach().numpy().copy())
    return out


def _reference(cfg):
    lr, decay = cfg.get('lr', 1e-2), cfg.get('lr_decay', 0)
    wd, eps = cfg.get('weight_decay', 0), cfg.get('eps', 1e-10)
    p = P0.astype(np.float64)
    s = np.full_like(p, cfg.get('initial_accumulator_value', 0))
    out = []
    for k, g in enumerate(GRADS, 1):
        g = -g.astype(np.float64) if cfg.get('maximize') else g.astype(np.float64)
        g = g + wd * p
        s = s + g * g
        p = p - lr / (1 + (k - 1) * decay) * g / (np.sqrt(s) + eps)
        out.append(p)
    return out


@pytest.mark.parametrize("cfg", CONFIGS)
def test_against_formula(cfg):
    for got, want in zip(_run_tg(cfg, tg.float64), _reference(cfg)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


@needs_torch
@pytest.mark.parametrize("cfg", CONFIGS)
def test_against_torch_float32(cfg):
    p = torch.nn.Parameter(torch.tensor(P0))
    opt = torch.optim.Adagrad([p], **cfg)
    for got, g in zip(_run_tg(cfg), GRADS):
        p.grad = torch.tensor(g)
        opt.step()
        np.testing.assert_array_equal(got, p.detach().numpy())


@needs_torch
def test_groups_scheduler_and_state_dict():
    ps = [tg.nn.Parameter(tg.tensor(P0)), tg.nn.Parameter(tg.tensor(P0[0]))]
    ts = [torch.nn.Parameter(torch.tensor(P0)), torch.nn.Parameter(torch.tensor(P0[0]))]
    mk = (lambda lib, q: lib.optim.Adagrad([{'params': [q[0]]}, {'params': [q[1]], 'lr': 0.2}],
                                           lr=0.05, lr_decay=0.01))
    o, to = mk(tg, ps), mk(torch, ts)
    s = tg.optim.lr_scheduler.StepLR(o, 2, 0.5)
    ts_ = torch.optim.lr_scheduler.StepLR(to, 2, 0.5)
    for k, g in enumerate(GRADS):
        if k == 3:  # resume from a state_dict in fresh objects
            state, sstate = o.state_dict(), s.state_dict()
            ps = [tg.nn.Parameter(p.detach().clone()) for p in ps]
            o = mk(tg, ps)
            o.load_state_dict(state)
            s = tg.optim.lr_scheduler.StepLR(o, 2, 0.5)
            s.load_state_dict(sstate)
        ps[0].grad, ps[1].grad = tg.tensor(g), tg.tensor(g[1])
        ts[0].grad, ts[1].grad = torch.tensor(g), torch.tensor(g[1])
        o.step()
        to.step()
        s.step()
        ts_.step()
        for p, t in zip(ps, ts):
            np.testing.assert_array_equal(p.detach().numpy(), t.detach().numpy())
    o.zero_grad()
    assert not ps[0].grad.any()
    o.zero_grad(set_to_none=True)
    assert ps[0].grad is None


def test_errors_and_skipped_params():
    p = tg.nn.Parameter(tg.ones(2))
    with pytest.raises(ValueError):
        tg.optim.Adagrad([p], lr=-1)
    with pytest.raises(ValueError):
        tg.optim.Adagrad([p], eps=-1)
    q = tg.nn.Parameter(tg.ones(2))
    opt = tg.optim.Adagrad([p, q], lr=0.5)
    p.grad = tg.ones(2)
    opt.step()  # q has no grad: untouched, its state as built (step 0)
    assert q.tolist() == [1.0, 1.0] and p.tolist() != [1.0, 1.0]
    state = opt.state_dict()['state']  # PyTorch's layout: by parameter index
    assert set(state) == {0, 1} and set(state[0]) == {'sum', 'step'}
    assert state[0]['step'].item() == 1.0 and state[1]['step'].item() == 0.0
    with pytest.raises((ValueError, OSError)):  # the C optimizer refuses another's state
        tg.optim.SGD([p]).load_state_dict(opt.state_dict())
