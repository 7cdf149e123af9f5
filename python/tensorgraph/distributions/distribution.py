"""Distribution: the base class of tg.distributions, PyTorch's interface
(batch_shape, event_shape, sample/rsample, log_prob, the moments, argument
and sample validation with ValueError)."""
import warnings

import tensorgraph as tg

from . import constraints
from .utils import lazy_property

__all__ = ['Distribution']


def _format(tensor):
    """as PyTorch's f'{t}': a 0-d tensor as its number, others as str"""
    return format(tensor.item()) if tensor.dim() == 0 else str(tensor)


class Distribution:
    """shapes: a draw is sample_shape + batch_shape + event_shape; log_prob
    gives one number per batch element"""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = tg.Size(batch_shape)
        self._event_shape = tg.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f'{self.__class__} does not define `arg_constraints`. Please set '
                          '`arg_constraints = {}` or initialize the distribution with '
                          '`validate_args=False` to turn off validation.')
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # checked by the subclass
            if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                         lazy_property):
                continue  # the other parametrization was given
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{_format(value)}")

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """a draw without gradients (rsample's where there is one)"""
        with tg.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn('sample_n will be deprecated. Use .sample((n,)) instead', UserWarning)
        return self.sample(tg.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return tg.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        if not isinstance(sample_shape, tg.Size):
            sample_shape = tg.Size(sample_shape)
        return tg.Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """ValueError unless value is a tensor whose shape broadcasts with
        batch_shape + event_shape and whose values are in the support"""
        if not isinstance(value, tg.Tensor):
            raise ValueError('The value argument to log_prob must be a Tensor')
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f'The right-most size of value must match event_shape: '
                             f'{value.size()} vs {self._event_shape}.')
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f'Value is not broadcastable with batch_shape+event_shape: '
                                 f'{actual_shape} vs {expected_shape}.')
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f'{self.__class__} does not define `support` to enable sample '
                          'validation. Please initialize the distribution with '
                          '`validate_args=False` to turn off validation.')
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{_format(value)}")

    def _expand_wrapped(self, cls, attr, batch_shape, _instance=None):
        """expand for a distribution made around another one (self.<attr>:
        a LogNormal's Normal, a OneHotCategorical's Categorical): that one
        expanded, the same event shape"""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = tg.Size(batch_shape)
        setattr(new, attr, getattr(self, attr).expand(batch_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} "
                                      "that defines a custom __init__ method must also "
                                      "define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ', '.join(
            f"{p}: {_format(self.__dict__[p])}" if self.__dict__[p].numel() == 1
            else f"{p}: {self.__dict__[p].size()}"
            for p in names)
        return self.__class__.__name__ + '(' + args + ')'
