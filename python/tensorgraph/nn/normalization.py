"""GroupNorm and InstanceNorm1d/2d/3d: PyTorch's constructors and defaults
over F.group_norm / F.instance_norm; the instance norms may keep running
statistics (track_running_stats) as PyTorch's."""
from .. import _C
from .._grad_mode import no_grad
from . import functional as F
from .layers import init_affine, init_norm_state
from .module import Module


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        init_affine(self, (num_channels,), affine, dtype)

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f'{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}'


class _InstanceNorm(Module):
    """per sample and channel normalization; with track_running_stats, in
    training each sample's per-channel mean and unbiased variance,
    averaged over the batch, move the running values by momentum, and in
    eval those normalize (PyTorch's)"""
    _dims = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, dtype=None):
        super().__init__()
        init_norm_state(self, num_features, eps, momentum, affine, track_running_stats, dtype)

    def forward(self, x):
        unbatched = x.ndim == self._dims + 1
        if unbatched:
            x = x.unsqueeze(0)
        if x.ndim != self._dims + 2:
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input "
                             f"(got {x.ndim + unbatched - 1}D input)")
        if self.track_running_stats and not self.training:
            shape = (1, -1) + (1,) * self._dims
            out = (x - self.running_mean.reshape(shape)) / _C.sqrt(
                self.running_var.reshape(shape) + self.eps)
            if self.weight is not None:
                out = out * self.weight.reshape(shape) + self.bias.reshape(shape)
        else:
            out = F.instance_norm(x, weight=self.weight, bias=self.bias, eps=self.eps)
            if self.track_running_stats:
                self._update_running(x, tuple(range(2, x.ndim)))
        return out.squeeze(0) if unbatched else out

    def _update_running(self, x, dims):
        with no_grad():
            # PyTorch's instance_norm leaves num_batches_tracked at 0
            m = self.momentum if self.momentum is not None else 0.1
            d = x.detach()
            mean = d.mean(dims)
            count = 1
            for i in dims:
                count *= d.shape[i]
            var = ((d - mean.reshape(tuple(mean.shape) + (1,) * len(dims))) ** 2).sum(dims) \
                / max(count - 1, 1)
            self.running_mean.mul_(1 - m).add_(mean.mean(0).to(self.running_mean.dtype) * m)
            self.running_var.mul_(1 - m).add_(var.mean(0).to(self.running_var.dtype) * m)

    def extra_repr(self):
        return (f'{self.num_features}, eps={self.eps}, momentum={self.momentum}, '
                f'affine={self.affine}, track_running_stats={self.track_running_stats}')


class InstanceNorm1d(_InstanceNorm):
    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    _dims = 2


class InstanceNorm3d(_InstanceNorm):
    _dims = 3
