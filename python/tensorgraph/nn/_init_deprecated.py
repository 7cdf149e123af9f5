"""nn.init's deprecated names without the trailing underscore (uniform,
normal, constant, eye, dirac, xavier_*, kaiming_*, orthogonal, sparse):
each warns as PyTorch's and calls the in-place initialiser."""
import functools
import warnings

__all__ = ['constant', 'dirac', 'eye', 'kaiming_normal', 'kaiming_uniform', 'normal',
           'orthogonal', 'sparse', 'uniform', 'xavier_normal', 'xavier_uniform']


def _deprecated(new_name):
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        from . import init
        warnings.warn(f"nn.init.{old_name} is now deprecated in favor of nn.init.{new_name}.",
                      stacklevel=2)
        return getattr(init, new_name)(*args, **kwargs)
    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = (f"{old_name}(...): deprecated in favor of "
                               f"nn.init.{new_name}")
    return functools.wraps(deprecated_init)(deprecated_init)


uniform = _deprecated('uniform_')
normal = _deprecated('normal_')
constant = _deprecated('constant_')
eye = _deprecated('eye_')
dirac = _deprecated('dirac_')
xavier_uniform = _deprecated('xavier_uniform_')
xavier_normal = _deprecated('xavier_normal_')
kaiming_uniform = _deprecated('kaiming_uniform_')
kaiming_normal = _deprecated('kaiming_normal_')
orthogonal = _deprecated('orthogonal_')
sparse = _deprecated('sparse_')
