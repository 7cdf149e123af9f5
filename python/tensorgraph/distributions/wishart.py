"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): the law
of X X^T for df Gaussian columns of covariance S = L L^T, an exponential
family. Everything goes through L (as MultivariateNormal); draws by
Bartlett's decomposition, L A (L A)^T with A lower triangular, sqrt(chi2)
on its diagonal (reparameterized Gamma draws) and normals below, redrawn
where a draw is singular."""
import math
import numbers
import warnings

import tensorgraph as tg

from . import constraints
from .exp_family import ExponentialFamily
from .gamma_family import Chi2
from .multivariate_normal import _ScaleTrilMatrices, _precision_to_scale_tril
from .utils import lazy_property

__all__ = ['Wishart']

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """the multivariate digamma: sum over i < p of digamma(x - i / 2)"""
    assert bool(x.gt((p - 1) / 2).all()), "Wrong domain for multivariate digamma function."
    offsets = tg.arange(p, dtype=x.dtype) / 2
    return tg.digamma(x.unsqueeze(-1) - offsets.expand(tuple(x.shape) + (-1,))).sum(-1)


class Wishart(_ScaleTrilMatrices, ExponentialFamily):
    arg_constraints = {'covariance_matrix': constraints.positive_definite,
                       'precision_matrix': constraints.positive_definite,
                       'scale_tril': constraints.lower_cholesky,
                       'df': constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tg.Size(param.shape[:-2])
            self.df = tg.tensor(df, dtype=param.dtype)
        else:
            batch_shape = tg.Size(tg.broadcast_shapes(tuple(param.shape[:-2]),
                                                      tuple(df.shape)))
            self.df = df.expand(tuple(batch_shape))
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        name = ('scale_tril' if scale_tril is not None else
                'covariance_matrix' if covariance_matrix is not None else 'precision_matrix')
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        # df must exceed p - 1 (PyTorch writes this into the class's dict;
        # here it is the instance's own)
        self.arg_constraints = dict(Wishart.arg_constraints, df=constraints.greater_than(p - 1))
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = tg.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        """Chi2(df - i) for the i-th diagonal entry of Bartlett's factor"""
        p = self._event_shape[-1]
        offsets = tg.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(self.df.unsqueeze(-1) - offsets.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tg.Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new.arg_constraints = self.arg_constraints
        for name in ('covariance_matrix', 'scale_tril', 'precision_matrix'):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    def _df_matrix(self):
        """df with two trailing 1-dims, to scale the batch's matrices"""
        return self.df.view(tuple(self._batch_shape) + (1, 1))

    @lazy_property
    def precision_matrix(self):
        eye = tg.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return tg.cholesky_solve(eye, self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        """(df - p - 1) S, NaN where df <= p + 1"""
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = tg.where(factor <= 0, tg.full_like(factor, math.nan), factor)
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape):
        p = self._event_shape[-1]
        eps = tg.finfo(self._unbroadcasted_scale_tril.dtype).eps
        diagonal = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        shape = tuple(sample_shape) + tuple(self._batch_shape) + (p, p)
        below = tg.randn(shape, dtype=diagonal.dtype).tril(-1)
        chol = self._unbroadcasted_scale_tril @ (tg.diag_embed(diagonal) + below)
        return chol @ chol.mT

    def rsample(self, sample_shape=(), max_try_correction=None):
        """a draw; a singular one (possible for df < p) is drawn again, up to
        max_try_correction (10) times, and may remain singular after that"""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = tg.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.")
            for _ in range(max_try_correction):
                redrawn = self._bartlett_sampling(sample_shape)
                sample = tg.where(singular.unsqueeze(-1).unsqueeze(-1), redrawn, sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _log_det_scale(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        trace = tg.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + self._log_det_scale()) - tg.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * tg.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._log_det_scale())
                + tg.mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-tg.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + tg.mvlgamma(y + (p + 1) / 2, p=p))
