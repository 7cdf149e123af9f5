"""tensorgraph.nn.parallel: DistributedDataParallel (data parallel over
the ranks of tensorgraph.distributed)."""
from .distributed import DistributedDataParallel

__all__ = ['DistributedDataParallel']
