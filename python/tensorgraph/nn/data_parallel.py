"""DataParallel and SyncBatchNorm as PyTorch 1.13's behave on a machine
without CUDA, which is where tensorgraph's tensors live.

DataParallel(module, device_ids, output_device, dim): PyTorch finds no
accelerator, keeps the module (state_dict keys 'module.<name>'), sets
device_ids to [] and nothing else (no dim, output_device or checks on the
ids), and its forward is module(*inputs, **kwargs).

SyncBatchNorm: a batch norm whose forward, in PyTorch, takes CUDA input
only: a CPU input raises ValueError("SyncBatchNorm expected input tensor to
be on GPU") in training and in eval mode alike, before any other check.
convert_sync_batchnorm(module, process_group) swaps every batch norm of a
module tree (BatchNorm1d/2d/3d, their Lazy forms, SyncBatchNorm) for a
SyncBatchNorm that shares its weight, bias and running statistics."""
from .layers import _BatchNorm
from .module import Module

__all__ = ['DataParallel', 'SyncBatchNorm']


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        # no CUDA device: PyTorch keeps the module and an empty device list
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class SyncBatchNorm(_BatchNorm):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype)
        self.process_group = process_group

    def _check_input_dim(self, x):
        if x.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {x.ndim}D input)")

    def _check_non_zero_input_channels(self, x):
        if x.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        if not input.is_cuda:   # always so in tensorgraph, as PyTorch's on CPU
            raise ValueError("SyncBatchNorm expected input tensor to be on GPU")
        self._check_non_zero_input_channels(input)
        # one process (no CUDA): PyTorch's unsynchronised path, a batch norm
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with each batch norm in its tree replaced by a SyncBatchNorm
        of the same settings holding the same parameters and buffers (a
        batch norm itself: the new SyncBatchNorm). As PyTorch's, the new
        module starts in training mode and copies `qconfig` when present."""
        out = module
        if isinstance(module, _BatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                module.affine, module.track_running_stats, process_group)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            if hasattr(module, 'qconfig'):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
