"""torch.utils.data.distributed's name for the sampler of data-parallel
training (one definition, in this package's __init__)"""
from . import Dataset, DistributedSampler, Sampler  # noqa: F401
