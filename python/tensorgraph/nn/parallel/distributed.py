"""DistributedDataParallel as PyTorch's: wraps a module so that every
rank's backward averages the gradients across ranks. The module's
parameters and buffers are broadcast from rank 0 when it is wrapped (and
the buffers again at each forward, broadcast_buffers=True); the forward
arms the C gradient reducer (tg/dist.h), which the next backward tells
each parameter whose gradient is final: a bucket of bucket_cap_mb whose
parameters are all final starts its allreduce while backward goes on, and
when backward returns every parameter's .grad holds the mean over ranks."""
from contextlib import contextmanager

from ... import _C
from ..module import Module
from ... import _grad_mode

_MEAN = 1  # tg_reduce_op's TG_REDUCE_MEAN


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=25,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        from ... import distributed as dist
        if not dist.is_initialized():
            raise RuntimeError("DistributedDataParallel: Default process group has not been "
                               "initialized, please make sure to call init_process_group.")
        if device_ids not in (None, [], ['cpu']):
            raise ValueError("DistributedDataParallel: device_ids must be None for CPU modules "
                             f"(got {device_ids!r})")
        self.module = module
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self._sync = True
        with _grad_mode.no_grad():
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t.data if hasattr(t, 'data') else t, 0)
        params = [p for p in module.parameters() if p.requires_grad]
        object.__setattr__(self, '_reducer', _C._dist_reducer_new(
            params, int(bucket_cap_mb * 1024 * 1024), _MEAN) if params else None)

    def forward(self, *inputs, **kwargs):
        from ... import distributed as dist
        if self.broadcast_buffers:
            with _grad_mode.no_grad():
                for b in self.module.buffers():
                    dist.broadcast(b, 0)
        if self._reducer is not None and self._sync and _C.is_grad_enabled():
            _C._dist_reducer_arm(self._reducer)
        return self.module(*inputs, **kwargs)

    @contextmanager
    def no_sync(self):
        """backward passes inside accumulate local gradients, unsynchronised
        (the first forward-backward outside averages the sum)"""
        old, self._sync = self._sync, False
        try:
            yield
        finally:
            self._sync = old

    def _bucket_stats(self):
        """(buckets, how many the last backward started before it ended)"""
        return _C._dist_reducer_buckets(self._reducer) if self._reducer is not None else (0, 0)
