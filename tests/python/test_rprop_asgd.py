"""Rprop and ASGD against PyTorch: parameters over several steps (sign
flips, step-size clamps, ASGD's averaging once t0 is passed), maximize,
weight decay, and a state_dict round trip mid-run."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def _train(L, cls, kw, steps=8, reload_at=None):
    rng = np.random.default_rng(1)
    w = L.tensor(rng.normal(size=(3, 4)).astype(np.float32))
    w.requires_grad_(True)
    opt = getattr(L.optim, cls)([w], **kw)
    for i in range(steps):
        if i == reload_at:
            sd = opt.state_dict()
            opt = getattr(L.optim, cls)([w], **kw)
            opt.load_state_dict(sd)
        x = L.tensor(rng.normal(size=(5, 3)).astype(np.float32))
        opt.zero_grad()
        ((x @ w).sin() ** 2).mean().backward()
        opt.step()
    return w.detach().numpy(), opt


@needs_torch
@pytest.mark.parametrize('cls,kw', [
    ('Rprop', dict(lr=0.01)),
    ('Rprop', dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.06), maximize=True)),
    ('ASGD', dict(lr=0.05)),
    ('ASGD', dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1)),
    ('ASGD', dict(lr=0.05, t0=2, maximize=True)),
])
def test_matches_torch(cls, kw):
    t, topt = _train(torch, cls, kw)
    g, gopt = _train(tg, cls, kw)
    np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)
    if cls == 'ASGD':  # the running average of the iterates
        tax = topt.state[topt.param_groups[0]['params'][0]]['ax'].numpy()
        gax = gopt.state_dict()['state'][0]['ax'].numpy()
        np.testing.assert_allclose(gax, tax, rtol=1e-5, atol=1e-6)
    g2, _ = _train(tg, cls, kw, reload_at=4)
    np.testing.assert_allclose(g2, t, rtol=1e-5, atol=1e-6)


def test_rprop_checks_etas():
    with pytest.raises(ValueError, match="Invalid eta values"):
        tg.optim.Rprop([tg.zeros(2, requires_grad=True)], etas=(1.2, 0.5))
