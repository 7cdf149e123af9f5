"""The params argument every optimizer takes, checked as PyTorch does."""
from .. import _C


def param_list(params):
    """params (an iterable of tensors or of group dicts) as a non-empty list"""
    if isinstance(params, _C.Tensor):
        from .._ops_aten import typename
        raise TypeError("params argument given to the optimizer should be an iterable of "
                        f"Tensors or dicts, but got {typename(params)}")
    params = list(params)
    if not params:
        raise ValueError("optimizer got an empty parameter list")
    return params
