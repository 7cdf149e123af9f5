"""Automatic mixed precision as a CPU-only PyTorch has it: autocast for
'cuda' warns and is disabled (PyTorch's "CUDA is not available.
Disabling"), GradScaler likewise (scale() returns the loss, step() steps).
CPU autocast to bfloat16 is refused: tensorgraph has no bfloat16, and
running in float32 silently would not be PyTorch's numbers."""
import functools
import warnings

_state = {'enabled': False}


def is_autocast_enabled():
    return _state['enabled']


class autocast:
    def __init__(self, device_type='cuda', dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device_type, self.enabled = device_type, bool(enabled)
        if self.enabled and device_type == 'cuda':
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling")
            self.enabled = False
        elif self.enabled:
            raise NotImplementedError(f"autocast('{device_type}'): mixed precision needs "
                                      f"bfloat16/float16, which tensorgraph does not have; "
                                      f"pass enabled=False")

    def __enter__(self):
        self._prev = _state['enabled']
        _state['enabled'] = self.enabled
        return self

    def __exit__(self, *exc):
        _state['enabled'] = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


class GradScaler:
    """PyTorch's GradScaler without CUDA: always disabled (a warning when
    asked to be enabled), so it passes losses and steps through"""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.")

    def is_enabled(self):
        return False

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass
