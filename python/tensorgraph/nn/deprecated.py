"""nn's deprecated NLLLoss2d and Container, with PyTorch's warnings."""
import warnings

from .loss import NLLLoss
from .module import Module

__all__ = ['Container', 'NLLLoss2d']


class NLLLoss2d(NLLLoss):
    """NLLLoss under its deprecated name"""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction='mean'):
        warnings.warn("NLLLoss2d has been deprecated. Please use NLLLoss instead as a drop-in "
                      "replacement and see https://pytorch.org/docs/master/nn.html#torch.nn."
                      "NLLLoss for more details.", stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Container(Module):
    """a Module holding the keyword modules (deprecated: subclass Module)"""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("nn.Container is deprecated. All of it's functionality is now "
                      "implemented in nn.Module. Subclass that instead.", stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)
