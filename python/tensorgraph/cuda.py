"""tensorgraph.cuda: PyTorch's torch.cuda queries for a build without CUDA
(tensorgraph runs on the CPU), so that device-choosing code runs as it
does under a CPU-only PyTorch: is_available() is False, device_count() 0,
seeding is a no-op (PyTorch's is lazy too), and whatever needs a GPU
raises PyTorch's AssertionError."""

_NO_CUDA = "tensorgraph is not compiled with CUDA enabled (Torch not compiled with CUDA enabled)"


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    """no CUDA generator to seed (PyTorch defers it; nothing happens)"""


def manual_seed_all(seed):
    """see manual_seed"""


def empty_cache():
    """no CUDA memory to release"""


def _needs_cuda(*args, **kwargs):
    raise AssertionError(_NO_CUDA)


current_device = synchronize = set_device = get_device_name = _needs_cuda


class amp:  # tensorgraph.cuda.amp.autocast / GradScaler (disabled: no CUDA)
    from ._amp import GradScaler

    @staticmethod
    def autocast(enabled=True, dtype=None, cache_enabled=True):
        from ._amp import autocast
        return autocast('cuda', dtype, enabled, cache_enabled)
