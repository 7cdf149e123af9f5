"""tensorgraph.random: torch.random's names and fork_rng, which restores
the default generator's state after its block (also after an error)."""
import pytest

import tensorgraph as tg
import tensorgraph.random as trandom


def test_names_act_on_the_default_generator():
    assert trandom.default_generator is tg.default_generator
    trandom.manual_seed(11)
    assert trandom.initial_seed() == 11
    state = trandom.get_rng_state()
    want = tg.rand(3).tolist()
    trandom.set_rng_state(state)
    assert tg.rand(3).tolist() == want


def test_fork_rng_restores_the_state():
    tg.manual_seed(3)
    want = tg.rand(4).tolist()
    tg.manual_seed(3)
    with trandom.fork_rng():
        tg.rand(7)
    assert tg.rand(4).tolist() == want
    tg.manual_seed(3)
    with pytest.raises(ValueError):
        with trandom.fork_rng():
            tg.rand(7)
            raise ValueError("inside")
    assert tg.rand(4).tolist() == want


def test_fork_rng_disabled_and_devices():
    tg.manual_seed(5)
    first = tg.rand(2).tolist()
    tg.manual_seed(5)
    with trandom.fork_rng(enabled=False):
        assert tg.rand(2).tolist() == first
    assert tg.rand(2).tolist() != first  # not restored
    with trandom.fork_rng(devices=[]):
        pass
    with pytest.raises(AssertionError, match='CUDA'):
        with trandom.fork_rng(devices=[0]):
            pass
