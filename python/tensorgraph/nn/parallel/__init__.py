"""tensorgraph.nn.parallel: DistributedDataParallel (data parallel over
the ranks of tensorgraph.distributed) and DataParallel (as PyTorch's
without CUDA: the module called as it is)."""
from ..data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ['DataParallel', 'DistributedDataParallel']
