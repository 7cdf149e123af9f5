"""use_deterministic_algorithms / are_deterministic_algorithms_enabled:
the switch is recorded and read back as PyTorch's; it changes no kernel
(tensorgraph has no alternative deterministic kernels to switch to, nor a
list of nondeterministic ones to refuse)."""

_state = {'on': False, 'warn_only': False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not "
                        f"{type(mode).__name__}")
    _state['on'], _state['warn_only'] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _state['on']


def is_deterministic_algorithms_warn_only_enabled():
    return _state['warn_only']
