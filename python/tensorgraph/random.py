"""tensorgraph.random: torch.random's names for the default generator
(manual_seed, seed, initial_seed, get_rng_state, set_rng_state) and
fork_rng, which restores the generator's state when its block ends
(there are no CUDA generators to fork: devices must name none)."""
import contextlib

from ._C import Generator, default_generator  # noqa: F401 (torch.random's names)
from ._creation import get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401

__all__ = ['Generator', 'default_generator', 'fork_rng', 'get_rng_state', 'initial_seed',
           'manual_seed', 'seed', 'set_rng_state']


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices"):
    """the default generator's state saved, restored when the block ends
    (also when it raises); with enabled False, nothing"""
    if devices:
        from .cuda import _needs_cuda
        _needs_cuda()
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
