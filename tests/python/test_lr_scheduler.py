"""optim.lr_scheduler: every schedule's lr sequence against PyTorch's
(exactly: the same float operations) and against closed forms written
here in plain Python (so the test means something without torch),
step(epoch), state_dict round trips, get_last_lr, and the momentum /
betas the cyclic schedules write reaching the C optimizers."""
import math

import numpy as np
import pytest

import tensorgraph as tg
from tensorgraph.optim import lr_scheduler as tls
from conftest import SANITIZED, needs_torch, torch

STEPS = 40


def _groups(lib, kind='sgd', lrs=(0.1, 0.05)):
    ps = [lib.nn.Parameter(lib.ones(2)) for _ in lrs]
    groups = [{'params': [p], 'lr': lr} for p, lr in zip(ps, lrs)]
    if kind == 'adam':
        return lib.optim.Adam(groups, lr=lrs[0])
    return lib.optim.SGD(groups, lr=lrs[0], momentum=0.9)


def _run(lib, make, kind='sgd', steps=STEPS, metrics=None):
    opt = _groups(lib, kind)
    s = make(lib.optim.lr_scheduler, opt)
    seq = [[g['lr'] for g in opt.param_groups]]
    mom = []
    for i in range(steps):
        opt.step()
        s.step(metrics[i]) if metrics is not None else s.step()
        seq.append([g['lr'] for g in opt.param_groups])
        mom.append([g.get('momentum', g.get('betas', (None,))[0]) for g in opt.param_groups])
        assert s._last_lr == seq[-1]  # get_last_lr(); ReduceLROnPlateau has none in torch 1.13
        if lib is tg:
            assert s.get_last_lr() == seq[-1]
    return seq, mom


class Halve:  # a callable object: its __dict__ is saved by state_dict
    def __init__(self):
        self.k = 0.5

    def __call__(self, e):
        return self.k ** e


SCHEDULES = {
    'StepLR': lambda m, o: m.StepLR(o, 3, gamma=0.5),
    'MultiStepLR': lambda m, o: m.MultiStepLR(o, [2, 5, 5, 11], gamma=0.3),
    'ExponentialLR': lambda m, o: m.ExponentialLR(o, 0.93),
    'LambdaLR': lambda m, o: m.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9 ** e]),
    'LambdaLR_obj': lambda m, o: m.LambdaLR(o, Halve()),
    'MultiplicativeLR': lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95),
    'ConstantLR': lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=4),
    'LinearLR': lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=7),
    'PolynomialLR': lambda m, o: m.PolynomialLR(o, total_iters=9, power=2.0),
    'CosineAnnealingLR': lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    'CosineAnnealingWarmRestarts': lambda m, o: m.CosineAnnealingWarmRestarts(o, 3, T_mult=2,
                                                                              eta_min=0.01),
    'CosineAnnealingWarmRestarts1': lambda m, o: m.CosineAnnealingWarmRestarts(o, 5),
    'CyclicLR': lambda m, o: m.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=4, step_size_down=3),
    'CyclicLR2': lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode='triangular2'),
    'CyclicLR_exp': lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode='exp_range',
                                            gamma=0.97),
    'OneCycleLR': lambda m, o: m.OneCycleLR(o, [0.5, 0.3], total_steps=STEPS),
    'OneCycleLR_3': lambda m, o: m.OneCycleLR(o, 0.5, epochs=4, steps_per_epoch=10,
                                              three_phase=True, anneal_strategy='linear'),
    'SequentialLR': lambda m, o: m.SequentialLR(
        o, [m.ConstantLR(o, 0.5, 3), m.ExponentialLR(o, 0.9), m.StepLR(o, 2)], [4, 9]),
    'ChainedScheduler': lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, 0.5, 3), m.ExponentialLR(o, 0.9)]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_sequence_equals_torch(name):
    make = SCHEDULES[name]
    got, gm = _run(tg, make)
    want, wm = _run(torch, make)
    assert got == want  # exactly
    assert gm == wm


@needs_torch
def test_onecycle_betas_equal_torch():
    make = SCHEDULES['OneCycleLR']
    got, gm = _run(tg, make, kind='adam')
    want, wm = _run(torch, make, kind='adam')
    assert got == want and gm == wm


METRICS = [5, 4, 4, 4, 4, 3.9999, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2, 2, 2] * 2


@needs_torch
@pytest.mark.parametrize("kw", [dict(), dict(mode='max', patience=1),
                                dict(patience=2, threshold_mode='abs', threshold=0.5,
                                     cooldown=2, min_lr=[0.02, 0.001]),
                                dict(patience=0, factor=0.5, eps=0.03)])
def test_plateau_equals_torch(kw):
    make = lambda m, o: m.ReduceLROnPlateau(o, **kw)  # noqa: E731
    got, _ = _run(tg, make, metrics=METRICS)
    want, _ = _run(torch, make, metrics=METRICS)
    assert got == want


def test_closed_forms_without_torch():
    """the recurrences against the formulas, in plain Python"""
    seq, _ = _run(tg, SCHEDULES['StepLR'])
    assert all(math.isclose(s[0], 0.1 * 0.5 ** (e // 3)) for e, s in enumerate(seq))
    seq, _ = _run(tg, SCHEDULES['ExponentialLR'])
    assert all(math.isclose(s[1], 0.05 * 0.93 ** e) for e, s in enumerate(seq))
    seq, _ = _run(tg, SCHEDULES['LinearLR'])
    assert all(math.isclose(s[0], 0.1 * (0.2 + 0.7 * min(e, 7) / 7)) for e, s in enumerate(seq))
    seq, _ = _run(tg, SCHEDULES['PolynomialLR'])
    assert all(math.isclose(s[0], 0.1 * (1 - min(e, 9) / 9) ** 2, abs_tol=1e-15)
               for e, s in enumerate(seq))
    seq, _ = _run(tg, SCHEDULES['CosineAnnealingLR'])
    for e, s in enumerate(seq):
        assert math.isclose(s[0], 0.001 + 0.099 * (1 + math.cos(math.pi * e / 7)) / 2)
    seq, _ = _run(tg, SCHEDULES['CyclicLR'])
    tri = [0.01 + 0.09 * (e % 7 / 4 if e % 7 <= 4 else (7 - e % 7) / 3) for e in range(STEPS)]
    assert np.allclose([s[0] for s in seq[:STEPS]], tri)
    seq, _ = _run(tg, SCHEDULES['MultiStepLR'])
    assert math.isclose(seq[5][0], 0.1 * 0.3 ** 3) and math.isclose(seq[11][0], 0.1 * 0.3 ** 4)
    seq, _ = _run(tg, SCHEDULES['CosineAnnealingWarmRestarts'])
    # periods 3, 6, 12: restarts at epochs 3 and 9
    assert seq[3][0] == 0.1 and seq[9][0] == 0.1 and seq[4][0] < 0.1
    seq, _ = _run(tg, lambda m, o: m.ReduceLROnPlateau(o, patience=1), steps=5,
                  metrics=[1, 1, 1, 1, 1])
    assert [round(s[0], 12) for s in seq] == [0.1, 0.1, 0.1, 0.01, 0.01, 0.001]


def test_step_with_epoch_uses_closed_form():
    opt = _groups(tg)
    s = tls.StepLR(opt, 3, gamma=0.5)
    with pytest.warns(UserWarning):
        s.step(7)
    assert math.isclose(s.get_last_lr()[0], 0.1 * 0.25)


@pytest.mark.parametrize("name", ['StepLR', 'LambdaLR_obj', 'CyclicLR', 'OneCycleLR',
                                  'SequentialLR', 'ChainedScheduler',
                                  'CosineAnnealingWarmRestarts'])
def test_state_dict_resumes_the_sequence(name):
    make = SCHEDULES[name]
    full, _ = _run(tg, make, steps=20)
    opt = _groups(tg)
    s = make(tls, opt)
    for _ in range(8):
        opt.step()
        s.step()
    state, ostate = s.state_dict(), opt.state_dict()
    assert 'optimizer' not in state
    opt2 = _groups(tg)
    s2 = make(tls, opt2)
    s2.load_state_dict(state)
    opt2.load_state_dict(ostate)
    rest = []
    for _ in range(12):
        opt2.step()
        s2.step()
        rest.append([g['lr'] for g in opt2.param_groups])
    assert rest == full[9:]


def test_cycled_momentum_reaches_the_c_optimizer():
    """SGD with the momentum OneCycleLR writes, against the update by hand"""
    p = tg.nn.Parameter(tg.zeros(1))
    opt = tg.optim.SGD([p], lr=0.1, momentum=0.9)
    s = tls.OneCycleLR(opt, 1.0, total_steps=10)
    buf, x = None, 0.0
    for _ in range(6):
        g = opt.param_groups[0]
        lr, m = g['lr'], g['momentum']
        p.grad = tg.ones(1)
        opt.step()
        buf = 1.0 if buf is None else m * buf + 1.0
        x -= lr * buf
        s.step()
    assert math.isclose(p.item(), x, rel_tol=1e-6)


def test_errors_as_torch():
    opt = _groups(tg)
    with pytest.raises(ValueError):
        tls.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError):
        tls.ReduceLROnPlateau(opt, mode='up')
    with pytest.raises(ValueError):
        tls.LinearLR(opt, start_factor=2)
    with pytest.raises(ValueError):
        tls.CosineAnnealingWarmRestarts(opt, 0)
    with pytest.raises(ValueError):
        tls.OneCycleLR(opt, 0.1)
    with pytest.raises(ValueError):
        tls.CyclicLR(tg.optim.Adam([tg.nn.Parameter(tg.ones(1))]), 0.1, 1.0)
    with pytest.raises(ValueError):
        tls.SequentialLR(opt, [tls.StepLR(opt, 2)], [3])
    s = tls.OneCycleLR(opt, 0.1, total_steps=2)
    s.step()
    s.step()
    with pytest.raises(ValueError, match="Tried to step"):
        s.step()


def test_a_schedule_below_zero_ascends_as_torch():
    """PyTorch checks lr >= 0 when an optimizer is built, not when a
    schedule moves it: OneCycleLR's three phases can pass below 0, and
    the step then ascends; a state_dict round trip keeps that lr"""
    def run(L):
        p = L.tensor([1.0, -2.0], requires_grad=True)
        opt = L.optim.Adam([p], lr=0.1)
        for lr in (0.1, -0.25, -0.5):
            opt.param_groups[0]['lr'] = lr
            p.grad = L.tensor([0.5, -1.5])
            opt.step()
        again = L.optim.Adam([p], lr=0.1)
        again.load_state_dict(opt.state_dict())
        p.grad = L.tensor([0.5, -1.5])
        again.step()
        return p.detach().tolist(), again.param_groups[0]['lr']
    got = run(tg)
    assert got[1] == -0.5 and got[0][0] > 1.0  # ascended past its start
    if torch is not None and not SANITIZED:
        want = run(torch)
        assert np.allclose(got[0], want[0], rtol=1e-6) and got[1] == want[1]
