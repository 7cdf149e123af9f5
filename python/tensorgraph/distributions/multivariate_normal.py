"""MultivariateNormal(loc, covariance_matrix | precision_matrix |
scale_tril): everything through the lower Cholesky factor L of the
covariance (tg.linalg.cholesky / solve_triangular, so gradients reach each
parametrization)."""
import math

import tensorgraph as tg

from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ['MultivariateNormal']


def _batch_mv(bmat, bvec):
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x for batches of L and x that broadcast"""
    batch = tg.broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    n = bx.shape[-1]
    L = bL.expand(tuple(batch) + (n, n))
    x = bx.expand(tuple(batch) + (n,))
    y = tg.linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return y.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """the lower Cholesky factor of P^-1 without inverting P: the factor of
    the flipped P gives an upper factor of P, whose inverse is lower"""
    Lf = tg.linalg.cholesky(tg.flip(P, (-2, -1)))
    L_inv = tg.transpose(tg.flip(Lf, (-2, -1)), -2, -1)
    eye = tg.eye(P.shape[-1], dtype=P.dtype).expand(tuple(P.shape))
    return tg.linalg.solve_triangular(L_inv, eye, upper=False)


class _ScaleTrilMatrices:
    """scale_tril L and the covariance L L^T of a distribution holding its
    unbroadcast L, both in the shape _matrix_shape() gives (the
    multivariate normal's and Wishart's)"""

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())


class MultivariateNormal(_ScaleTrilMatrices, Distribution):
    """a Gaussian over vectors of size loc.shape[-1]"""
    arg_constraints = {'loc': constraints.real_vector,
                       'covariance_matrix': constraints.positive_definite,
                       'precision_matrix': constraints.positive_definite,
                       'scale_tril': constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        given = next(m for m in (scale_tril, covariance_matrix, precision_matrix)
                     if m is not None)
        name = ('scale_tril' if scale_tril is not None else
                'covariance_matrix' if covariance_matrix is not None else 'precision_matrix')
        if given.dim() < 2:
            what = 'scale_tril matrix' if name == 'scale_tril' else name.replace('_', ' ')
            raise ValueError(f"{what} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = tg.broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, given.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = tg.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tg.Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ('covariance_matrix', 'scale_tril', 'precision_matrix'):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def precision_matrix(self):
        # (L L^T)^-1 of the whole matrix L, as PyTorch's cholesky_inverse,
        # whose gradient reaches L's (zero) upper triangle too
        L = self._unbroadcasted_scale_tril
        return tg.linalg.inv(L @ L.mT).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = tg.randn(tuple(shape), dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(
            dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(
            dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
