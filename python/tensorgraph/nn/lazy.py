"""The Lazy modules (LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d,
LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d): built with 0 input
channels and no parameters; the first call reads the channels from the
input (dim 1, or dim 0 of an unbatched sample), builds the parameters as
the eager module's constructor would, and the module becomes that class
(PyTorch's cls_to_become). Hooks and train/eval mode set before then are
kept. The instance norms track running statistics (PyTorch's Lazy
default), which tensorgraph's plain InstanceNorm refuses."""
import warnings

from .. import _C
from . import functional as F
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .layers import BatchNorm1d, BatchNorm2d
from .layers_more import BatchNorm3d
from .module import Module
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = ['LazyBatchNorm1d', 'LazyBatchNorm2d', 'LazyBatchNorm3d', 'LazyConv1d', 'LazyConv2d',
           'LazyConv3d', 'LazyConvTranspose1d', 'LazyConvTranspose2d', 'LazyConvTranspose3d',
           'LazyInstanceNorm1d', 'LazyInstanceNorm2d', 'LazyInstanceNorm3d', 'LazyModuleMixin']

_KEPT = ('_forward_hooks', '_forward_pre_hooks', 'training')


class LazyModuleMixin:
    """what the Lazy classes share: the pending state and its resolution"""
    cls_to_become = None
    _spatial_dims = 0   # the input's dims after the channels (unbatched: one fewer)

    def _lazy_init(self, target, args, kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')   # "Initializing zero-element tensors"
            target.__init__(self, 0, *args, **kwargs)
        object.__setattr__(self, '_lazy_args', (target, args, kwargs))
        for name in list(self._parameters):
            self.register_parameter(name, None)
        for name in list(self._buffers):
            self._buffers[name] = None

    def has_uninitialized_params(self):
        return '_lazy_args' in self.__dict__

    def initialize_parameters(self, input, *rest):
        """the real module's parameters for the channels of input"""
        if not self.has_uninitialized_params():
            return
        target, args, kwargs = self._lazy_args
        unbatched = self._spatial_dims and input.ndim == self._spatial_dims + 1
        channels = input.shape[0 if unbatched else 1] if input.ndim > 1 else 0
        if input.ndim < 2 or channels == 0:
            raise ValueError(f"{type(self).__name__}: cannot infer the number of input "
                             f"channels from an input of shape {tuple(input.shape)}")
        kept = {k: self.__dict__[k] for k in _KEPT}
        if 'dtype' not in kwargs or kwargs['dtype'] is None:
            kwargs = dict(kwargs, dtype=input.dtype)
        del self.__dict__['_lazy_args']
        target.__init__(self, channels, *args, **kwargs)
        self.__dict__.update(kept)
        self.__class__ = self.cls_to_become

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params() and args:
            self.initialize_parameters(*args)
        # the class has changed: the real module's call
        return Module.__call__(self, *args, **kwargs)

    def extra_repr(self):
        """the target's, with a pending bias shown as present (PyTorch's
        placeholder parameters print as parameters)"""
        if not self.has_uninitialized_params() or 'bias' not in self._parameters:
            return self.cls_to_become.extra_repr(self)
        import inspect
        target, args, kwargs = self._lazy_args
        bound = inspect.signature(target.__init__).bind(self, 0, *args, **kwargs)
        if not bound.arguments.get('bias', True):
            return self.cls_to_become.extra_repr(self)
        from .._creation import zeros
        self._parameters['bias'] = zeros(0)
        try:
            return self.cls_to_become.extra_repr(self)
        finally:
            self._parameters['bias'] = None


def _lazy_class(name, target, spatial_dims, signature_doc):
    def __init__(self, *args, **kwargs):
        self._lazy_init(target, args, kwargs)
    cls = type(name, (LazyModuleMixin, target), {
        '__init__': __init__, 'cls_to_become': target, '_spatial_dims': spatial_dims,
        '__doc__': f"{target.__name__} with in_channels/num_features from the first input: "
                   f"{name}({signature_doc})"})
    return cls


LazyConv1d = _lazy_class('LazyConv1d', Conv1d, 1, 'out_channels, kernel_size, ...')
LazyConv2d = _lazy_class('LazyConv2d', Conv2d, 2, 'out_channels, kernel_size, ...')
LazyConv3d = _lazy_class('LazyConv3d', Conv3d, 3, 'out_channels, kernel_size, ...')
LazyConvTranspose1d = _lazy_class('LazyConvTranspose1d', ConvTranspose1d, 1,
                                  'out_channels, kernel_size, ...')
LazyConvTranspose2d = _lazy_class('LazyConvTranspose2d', ConvTranspose2d, 2,
                                  'out_channels, kernel_size, ...')
LazyConvTranspose3d = _lazy_class('LazyConvTranspose3d', ConvTranspose3d, 3,
                                  'out_channels, kernel_size, ...')
LazyBatchNorm1d = _lazy_class('LazyBatchNorm1d', BatchNorm1d, 0, 'eps, momentum, ...')
LazyBatchNorm2d = _lazy_class('LazyBatchNorm2d', BatchNorm2d, 0, 'eps, momentum, ...')
LazyBatchNorm3d = _lazy_class('LazyBatchNorm3d', BatchNorm3d, 0, 'eps, momentum, ...')


class _TrackedInstanceNorm:
    """an InstanceNorm that may keep running statistics, as PyTorch's
    (which LazyInstanceNorm turns on by default): in training each
    sample's per-channel mean and unbiased variance, averaged over the
    batch, move the running values by momentum; in eval they normalize"""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, dtype=None):
        type(self)._plain.__init__(self, num_features, eps, momentum, affine, False, dtype)
        self.track_running_stats = track_running_stats
        if track_running_stats:
            from .._creation import ones, tensor, zeros
            self.register_buffer('running_mean', zeros(num_features, dtype=dtype))
            self.register_buffer('running_var', ones(num_features, dtype=dtype))
            self.register_buffer('num_batches_tracked', tensor(0))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def forward(self, x):
        if not self.track_running_stats:
            return type(self)._plain.forward(self, x)
        unbatched = x.ndim == self._dims + 1
        if unbatched:
            x = x.unsqueeze(0)
        if x.ndim != self._dims + 2:
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input "
                             f"(got {x.ndim + unbatched - 1}D input)")
        dims = tuple(range(2, x.ndim))
        if self.training:
            out = F.instance_norm(x, weight=self.weight, bias=self.bias, eps=self.eps)
            self._update_running(x, dims)
        else:
            shape = (1, -1) + (1,) * self._dims
            out = (x - self.running_mean.reshape(shape)) / _C.sqrt(
                self.running_var.reshape(shape) + self.eps)
            if self.weight is not None:
                out = out * self.weight.reshape(shape) + self.bias.reshape(shape)
        return out.squeeze(0) if unbatched else out

    def _update_running(self, x, dims):
        from .._grad_mode import no_grad
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


def _tracked(plain):
    return type(plain.__name__, (_TrackedInstanceNorm, plain),
                {'_plain': plain, '__module__': plain.__module__,
                 '__doc__': plain.__doc__})


_InstanceNorm1dTracked = _tracked(InstanceNorm1d)
_InstanceNorm2dTracked = _tracked(InstanceNorm2d)
_InstanceNorm3dTracked = _tracked(InstanceNorm3d)

LazyInstanceNorm1d = _lazy_class('LazyInstanceNorm1d', _InstanceNorm1dTracked, 1,
                                 'eps, momentum, affine=True, track_running_stats=True')
LazyInstanceNorm2d = _lazy_class('LazyInstanceNorm2d', _InstanceNorm2dTracked, 2,
                                 'eps, momentum, affine=True, track_running_stats=True')
LazyInstanceNorm3d = _lazy_class('LazyInstanceNorm3d', _InstanceNorm3dTracked, 3,
                                 'eps, momentum, affine=True, track_running_stats=True')
