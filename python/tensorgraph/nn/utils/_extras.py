"""nn.utils' deprecated clip_grad_norm, skip_init and
consume_prefix_in_state_dict_if_present."""
import warnings

__all__ = ['clip_grad_norm', 'skip_init', 'consume_prefix_in_state_dict_if_present']


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """the deprecated name of clip_grad_norm_ (with PyTorch's warning)"""
    from . import clip_grad_norm_
    warnings.warn("torch.nn.utils.clip_grad_norm is now deprecated in favor of "
                  "torch.nn.utils.clip_grad_norm_.", stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) whose parameters are to be overwritten:
    PyTorch builds it on the meta device and leaves the memory
    uninitialized; here it is built normally (the values are unspecified
    either way). PyTorch's check that the class takes `device` is kept, and
    the final device (PyTorch's default 'cpu') is checked by the class."""
    import inspect
    from ..module import Module
    if not isinstance(module_cls, type) or not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if 'device' not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop('device', 'cpu')
    return module_cls(*args, device=final_device, **kwargs)


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """the keys starting with prefix (DistributedDataParallel's 'module.')
    renamed without it, in place, in sorted order (as PyTorch's; its check
    for metadata looks for a "_metadata" key, so the _metadata attribute
    is left as it is, as in PyTorch 1.13)"""
    for key in sorted(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    if "_metadata" in state_dict:
        metadata = state_dict._metadata
        for key in list(metadata.keys()):
            if key:
                metadata[key[len(prefix):]] = metadata.pop(key)
