"""GroupNorm and InstanceNorm1d/2d/3d: PyTorch's constructors and defaults
over F.group_norm / F.instance_norm; the instance norms may keep running
statistics (track_running_stats) as PyTorch's."""
from . import functional as F
from ._factory_kwargs import factory_kwargs
from .layers import NormStateMixin, init_affine, init_norm_state, reset_affine
from .module import Module


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        init_affine(self, (num_channels,), affine, dtype)

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def reset_parameters(self):
        reset_affine(self)

    def extra_repr(self):
        return f'{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}'


class _InstanceNorm(NormStateMixin, Module):
    """per sample and channel normalization; with track_running_stats, in
    training each sample's per-channel mean and unbiased variance,
    averaged over the batch, move the running values by momentum, and in
    eval those normalize (PyTorch's)"""
    _dims = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        init_norm_state(self, num_features, eps, momentum, affine, track_running_stats, dtype)

    def forward(self, x):
        unbatched = x.ndim == self._dims + 1
        if unbatched:
            x = x.unsqueeze(0)
        if x.ndim != self._dims + 2:
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input "
                             f"(got {x.ndim + unbatched - 1}D input)")
        # PyTorch's instance_norm leaves num_batches_tracked at 0
        track = self.track_running_stats
        out = F.instance_norm(x, self.running_mean if track else None,
                              self.running_var if track else None, self.weight, self.bias,
                              self.training or not track, self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        """running statistics in a state_dict without metadata for a module
        that tracks none: PyTorch's error (saved before 0.4.0, when the
        instance norms tracked them by default)"""
        if local_metadata.get('version', None) is None and not self.track_running_stats:
            keys = [prefix + n for n in ('running_mean', 'running_var')
                    if prefix + n in state_dict]
            if keys:
                klass = type(self).__name__
                error_msgs.append(
                    'Unexpected running stats buffer(s) {names} for {klass} '
                    'with track_running_stats=False. If state_dict is a '
                    'checkpoint saved before 0.4.0, this may be expected '
                    'because {klass} does not track running stats by default '
                    'since 0.4.0. Please remove these keys from state_dict. If '
                    'the running stats are actually needed, instead set '
                    'track_running_stats=True in {klass} to enable them. See '
                    'the documentation of {klass} for details.'
                    .format(names=" and ".join(f'"{k}"' for k in keys), klass=klass))
                for k in keys:
                    state_dict.pop(k)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def extra_repr(self):
        return (f'{self.num_features}, eps={self.eps}, momentum={self.momentum}, '
                f'affine={self.affine}, track_running_stats={self.track_running_stats}')


class InstanceNorm1d(_InstanceNorm):
    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    _dims = 2


class InstanceNorm3d(_InstanceNorm):
    _dims = 3
