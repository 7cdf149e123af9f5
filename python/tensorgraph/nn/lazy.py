"""The Lazy modules (LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d,
LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d): built with 0 input
channels and no parameters; the first call reads the channels from the
input (dim 1, or dim 0 of an unbatched sample), builds the parameters as
the eager module's constructor would, and the module becomes that class
(PyTorch's cls_to_become). Hooks and train/eval mode set before then are
kept. The instance norms track running statistics by default (PyTorch's
Lazy default; the plain InstanceNorm's is not to)."""
import inspect
import warnings

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
        self._build(channels, input.dtype)

    def _channels_in(self, state_dict, prefix):
        """the input channels a checkpoint's entries were saved with (None
        when it has none for this module)"""
        from .conv import _ConvTranspose, _ConvNd
        for name in ('weight', 'bias', 'running_mean', 'running_var'):
            t = state_dict.get(prefix + name)
            if not hasattr(t, 'shape') or t.ndim == 0:
                continue
            if not isinstance(self, _ConvNd):
                return t.shape[0]  # the norms: one entry per channel
            if name == 'weight' and t.ndim >= 2:
                return t.shape[0] if isinstance(self, _ConvTranspose) \
                    else t.shape[1] * self.groups
        return None

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        """a pending module loading a checkpoint takes its channels from it
        (PyTorch materializes its placeholders to the checkpoint's shapes)"""
        if self.has_uninitialized_params():
            channels = self._channels_in(state_dict, prefix)
            if channels:
                self._build(channels)  # now of the real class: its loading
                return self._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                                  missing_keys, unexpected_keys, error_msgs)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def _build(self, channels, dtype=None):
        """the real module for this many input channels, in place"""
        target, args, kwargs = self._lazy_args
        kept = {k: self.__dict__[k] for k in _KEPT}
        kept.update((k, self.__dict__[k]) for k in ('_state_dict_hooks',
                    '_load_state_dict_pre_hooks', '_load_state_dict_post_hooks')
                    if k in self.__dict__)
        if dtype is not None and kwargs.get('dtype') is None:
            kwargs = dict(kwargs, dtype=dtype)
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
    # the target's signature without its first argument (in_channels or
    # num_features, read from the first input), as PyTorch's Lazy classes'
    sig = inspect.signature(target.__init__)
    params = list(sig.parameters.values())
    __init__.__signature__ = sig.replace(parameters=params[:1] + params[2:])
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


def _tracked(plain):
    """plain with the Lazy instance norms' defaults (affine, running
    statistics)"""
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):
        plain.__init__(self, num_features, eps, momentum, affine, track_running_stats,
                       device, dtype)
    return type(plain.__name__, (plain,),
                {'__init__': __init__, '__module__': plain.__module__,
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
