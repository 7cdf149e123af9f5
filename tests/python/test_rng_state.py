"""Generator.get_state / set_state, tg.get_rng_state / set_rng_state and
inference_mode, as PyTorch's."""
import pytest

import tensorgraph as tg
from conftest import torch


def test_generator_state_restores_the_draws():
    g = tg.Generator().manual_seed(7)
    s = g.get_state()
    assert s.dtype == tg.uint8 and s.ndim == 1
    a = tg.randn(4, generator=g)
    b = tg.rand(3, generator=g)
    assert g.set_state(s) is g
    assert tg.equal(tg.randn(4, generator=g), a) and tg.equal(tg.rand(3, generator=g), b)
    h = tg.Generator().manual_seed(1)  # another generator takes it, seed included
    h.set_state(s)
    assert tg.equal(tg.randn(4, generator=h), a) and h.initial_seed() == 7
    with pytest.raises(TypeError, match="RNG state must be"):
        g.set_state(tg.zeros(s.shape[0]))
    with pytest.raises(RuntimeError, match="RNG state size"):
        g.set_state(tg.zeros(3, dtype=tg.uint8))
    with pytest.raises(RuntimeError, match="all-zero"):
        g.set_state(tg.zeros(s.shape[0], dtype=tg.uint8))
    with pytest.raises(TypeError, match="must be Tensor"):
        g.set_state([1, 2])


def test_global_rng_state():
    tg.manual_seed(3)
    s = tg.get_rng_state()
    a = tg.rand(5)
    tg.set_rng_state(s)
    assert tg.equal(tg.rand(5), a)
    # draws made by modules (init, dropout) use the same default generator
    tg.set_rng_state(s)
    w = tg.nn.Linear(3, 2).weight.detach().clone()
    tg.set_rng_state(s)
    assert tg.equal(tg.nn.Linear(3, 2).weight, w)


def _modes(lib):
    x = lib.ones(1, requires_grad=True)
    out = []
    with lib.inference_mode():
        out.append((lib.is_inference_mode_enabled(), lib.is_grad_enabled(),
                    (x * 2).requires_grad))
        with lib.inference_mode(False):
            out.append((lib.is_inference_mode_enabled(), lib.is_grad_enabled(),
                        (x * 2).requires_grad))
        out.append((lib.is_inference_mode_enabled(), lib.is_grad_enabled()))
    out.append((lib.is_inference_mode_enabled(), lib.is_grad_enabled()))

    @lib.inference_mode()
    def f(v):
        return v * 2, lib.is_inference_mode_enabled()
    r, on = f(x)
    out.append((r.requires_grad, on, lib.is_inference_mode_enabled()))
    return out


def test_inference_mode_flags():
    got = _modes(tg)
    assert got == [(True, False, False), (False, True, True), (True, False), (False, True),
                   (False, True, False)]
    if torch is not None:
        assert got == _modes(torch)
