"""optim.swa_utils (AveragedModel, SWALR, update_bn) against PyTorch's, and
every PyTorch 1.13 lr scheduler's get_last_lr() sequence over 30 steps."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
from conftest import close, needs_torch, torch

R = np.random.RandomState(0)


def _twins():
    """the same small model (Linear, BatchNorm1d, Linear) in both libraries"""
    ours = nn.Sequential(nn.Linear(3, 4, dtype=tg.float64), nn.BatchNorm1d(4, dtype=tg.float64),
                         nn.Linear(4, 2, dtype=tg.float64))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.Linear(4, 2)).double()
    ours.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    return ours, theirs


def _perturb(ours, theirs, seed):
    rs = np.random.RandomState(seed)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        d = rs.normal(size=tuple(q.shape))
        with tg.no_grad():
            p.add_(tg.tensor(d))
        with torch.no_grad():
            q.add_(torch.tensor(d))
    x = rs.normal(size=(5, 3))
    ours(tg.tensor(x))       # training forward: moves the running statistics
    theirs(torch.tensor(x))


@needs_torch
@pytest.mark.parametrize('use_buffers', [False, True])
@pytest.mark.parametrize('ema', [False, True])
def test_averaged_model(use_buffers, ema):
    ours, theirs = _twins()
    avg_fn = (lambda a, m, n: 0.9 * a + 0.1 * m) if ema else None
    swa = tg.optim.swa_utils.AveragedModel(ours, avg_fn=avg_fn, use_buffers=use_buffers)
    tswa = torch.optim.swa_utils.AveragedModel(theirs, avg_fn=avg_fn, use_buffers=use_buffers)
    assert list(swa.state_dict()) == list(tswa.state_dict())
    for step in range(4):
        _perturb(ours, theirs, step)
        swa.update_parameters(ours)
        tswa.update_parameters(theirs)
    for k, v in tswa.state_dict().items():
        close(swa.state_dict()[k], v.numpy(), rtol=1e-12, atol=1e-12)
    assert int(swa.n_averaged) == 4
    x = R.normal(size=(5, 3))
    swa.eval()
    tswa.eval()
    close(swa(tg.tensor(x)), tswa(torch.tensor(x)).detach().numpy(), rtol=1e-10)


@needs_torch
def test_update_bn():
    ours, theirs = _twins()
    data = [R.normal(size=(6, 3)) for _ in range(4)]
    ours.eval()
    theirs.eval()
    tg.optim.swa_utils.update_bn([(tg.tensor(d), 0) for d in data], ours)
    torch.optim.swa_utils.update_bn([(torch.tensor(d), 0) for d in data], theirs)
    assert not ours.training and ours[1].momentum == 0.1
    for k, v in theirs.state_dict().items():
        close(ours.state_dict()[k], v.numpy(), rtol=1e-10, atol=1e-12)
    tg.optim.swa_utils.update_bn([], nn.Linear(2, 2))   # no batch norm: nothing to do


@needs_torch
@pytest.mark.parametrize('strategy', ['cos', 'linear'])
@pytest.mark.parametrize('anneal_epochs', [0, 1, 5])
def test_swalr(strategy, anneal_epochs):
    def run(lib, opt_mod, sched_mod):
        p = [lib.zeros(2, requires_grad=True)]
        q = [lib.zeros(2, requires_grad=True)]
        opt = opt_mod.SGD([{'params': p}, {'params': q, 'lr': 0.5}], lr=0.1)
        sched = sched_mod.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs,
                                anneal_strategy=strategy)
        seq = []
        for _ in range(12):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr())
        return seq
    ours = run(tg, tg.optim, tg.optim.swa_utils)
    theirs = run(torch, torch.optim, torch.optim.swa_utils)
    np.testing.assert_allclose(ours, theirs, rtol=1e-15)


def test_swalr_errors():
    opt = tg.optim.SGD([tg.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="'cos' or 'linear'"):
        tg.optim.swa_utils.SWALR(opt, 0.05, anneal_strategy='exp')
    with pytest.raises(ValueError, match='anneal_epochs'):
        tg.optim.swa_utils.SWALR(opt, 0.05, anneal_epochs=-1)
    with pytest.raises(ValueError, match='same length'):
        tg.optim.swa_utils.SWALR(opt, [0.05, 0.01])


SCHEDULERS = [
    ('StepLR', dict(step_size=4, gamma=0.5)),
    ('MultiStepLR', dict(milestones=[3, 7, 20], gamma=0.3)),
    ('ExponentialLR', dict(gamma=0.9)),
    ('ConstantLR', dict(factor=0.25, total_iters=6)),
    ('LinearLR', dict(start_factor=0.2, end_factor=0.9, total_iters=12)),
    ('PolynomialLR', dict(total_iters=20, power=2.0)),
    ('CosineAnnealingLR', dict(T_max=7, eta_min=0.001)),
    ('CosineAnnealingWarmRestarts', dict(T_0=5, T_mult=2, eta_min=0.002)),
    ('CyclicLR', dict(base_lr=0.01, max_lr=0.2, step_size_up=4, mode='triangular2')),
    ('CyclicLR', dict(base_lr=0.01, max_lr=0.2, step_size_up=3, step_size_down=5,
                      mode='exp_range', gamma=0.97)),
    ('OneCycleLR', dict(max_lr=0.3, total_steps=31)),
    ('OneCycleLR', dict(max_lr=0.3, total_steps=31, anneal_strategy='linear',
                        three_phase=True)),
    ('LambdaLR', dict(lr_lambda=lambda e: 1 / (1 + e))),
    ('MultiplicativeLR', dict(lr_lambda=lambda e: 0.95)),
]


def _sequence(lib, name, kwargs, wrap=None):
    p = [lib.zeros(2, requires_grad=True)]
    opt = (tg.optim if lib is tg else torch.optim).SGD(p, lr=0.1, momentum=0.9)
    mod = (tg if lib is tg else torch).optim.lr_scheduler
    sched = wrap(mod, opt) if wrap else getattr(mod, name)(opt, **kwargs)
    seq = [sched.get_last_lr()]
    for _ in range(30):
        opt.step()
        sched.step()
        seq.append(sched.get_last_lr())
    return seq


@needs_torch
@pytest.mark.parametrize('name,kwargs', SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_sequences_as_torch(name, kwargs):
    np.testing.assert_array_equal(_sequence(tg, name, kwargs), _sequence(torch, name, kwargs))


@needs_torch
def test_composed_schedulers_and_plateau_as_torch():
    def sequential(mod, opt):
        return mod.SequentialLR(opt, [mod.ConstantLR(opt, factor=0.5, total_iters=3),
                                      mod.ExponentialLR(opt, gamma=0.9)], milestones=[5])

    def chained(mod, opt):
        return mod.ChainedScheduler([mod.ConstantLR(opt, factor=0.5, total_iters=4),
                                     mod.ExponentialLR(opt, gamma=0.9)])
    for wrap in (sequential, chained):
        np.testing.assert_allclose(_sequence(tg, None, None, wrap),
                                   _sequence(torch, None, None, wrap), rtol=1e-15)

    def plateau(lib):
        p = [lib.zeros(2, requires_grad=True)]
        opt = (tg.optim if lib is tg else torch.optim).SGD(p, lr=0.1)
        mod = (tg if lib is tg else torch).optim.lr_scheduler
        sched = mod.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1)
        seq = []
        for epoch in range(30):
            sched.step(1.0 if epoch % 7 else 1.0 - epoch / 100)
            seq.append(opt.param_groups[0]['lr'])
        return seq
    assert plateau(tg) == plateau(torch)


def test_every_torch_scheduler_name_exists():
    names = ['LambdaLR', 'MultiplicativeLR', 'StepLR', 'MultiStepLR', 'ConstantLR', 'LinearLR',
             'ExponentialLR', 'SequentialLR', 'CosineAnnealingLR', 'ChainedScheduler',
             'ReduceLROnPlateau', 'CyclicLR', 'CosineAnnealingWarmRestarts', 'OneCycleLR',
             'PolynomialLR']
    assert [n for n in names if not hasattr(tg.optim.lr_scheduler, n)] == []
