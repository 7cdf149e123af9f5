"""The transforms of torch.distributions.transforms that act on pieces or
matrices: CatTransform and StackTransform (one transform per piece along
a dim), CorrCholeskyTransform (R^(D(D-1)/2) onto the Cholesky factors of
correlation matrices), LowerCholeskyTransform (square matrices onto lower
triangular ones with a positive diagonal) and
CumulativeDistributionTransform (a distribution's cdf). transforms.py
exports them."""
import math

import tensorgraph as tg

from . import constraints
from .transforms import Transform
from .utils import sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ['CatTransform', 'CorrCholeskyTransform', 'CumulativeDistributionTransform',
           'LowerCholeskyTransform', 'StackTransform']


def _check_dim(x, dim, size):
    assert -x.dim() <= dim < x.dim()
    assert x.size(dim) == size


class CatTransform(Transform):
    """tseq[i] applied to the i-th piece (lengths[i] long, 1 by default)
    along dim, the results concatenated"""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        assert all(isinstance(t, Transform) for t in tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        assert len(self.lengths) == len(self.transforms)
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, z):
        start = 0
        for t, length in zip(self.transforms, self.lengths):
            yield t, z.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        _check_dim(x, self.dim, self.length)
        return tg.cat([t(piece) for t, piece in self._pieces(x)], dim=self.dim)

    def _inverse(self, y):
        _check_dim(y, self.dim, self.length)
        return tg.cat([t.inv(piece) for t, piece in self._pieces(y)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim(x, self.dim, self.length)
        _check_dim(y, self.dim, self.length)
        terms = []
        for (t, x_piece), (_, y_piece) in zip(self._pieces(x), self._pieces(y)):
            term = t.log_abs_det_jacobian(x_piece, y_piece)
            terms.append(sum_rightmost(term, self.event_dim - t.event_dim))
        # dim, counted from the right of the batch dims the terms keep
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:
            return tg.cat(terms, dim=dim)
        return sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """tseq[i] applied to index i of dim, the results stacked"""

    def __init__(self, tseq, dim=0, cache_size=0):
        assert all(isinstance(t, Transform) for t in tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        _check_dim(x, self.dim, len(self.transforms))
        return tg.stack([t(s) for s, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        _check_dim(y, self.dim, len(self.transforms))
        return tg.stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)],
                        dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim(x, self.dim, len(self.transforms))
        _check_dim(y, self.dim, len(self.transforms))
        return tg.stack([t.log_abs_det_jacobian(xs, ys) for xs, ys, t in
                         zip(self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CorrCholeskyTransform(Transform):
    """an unconstrained vector of D(D-1)/2 numbers onto the lower Cholesky
    factor of a D x D correlation matrix: tanh maps each onto (-1, 1), and
    each row of the factor takes these fractions of what its unit norm has
    left (stick breaking), its diagonal entry the rest"""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = tg.tanh(x)
        eps = tg.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # the norm left in each row before each entry: the product of the
        # sqrt(1 - r^2) to its left
        left = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + tg.eye(r.shape[-1], dtype=r.dtype)
        return r * tg.nn.functional.pad(left[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        left = 1 - tg.cumsum(y * y, dim=-1)
        left_shifted = tg.nn.functional.pad(left[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        left_vec = tril_matrix_to_vec(left_shifted, diag=-1)
        t = y_vec / left_vec.sqrt()
        return ((1 + t) / (1 - t)).log() / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # stick breaking: 1/2 log of what each row has left, below the
        # diagonal; tanh: log(1 - tanh(x)^2) in a stable form
        left = 1 - (y * y).cumsum(dim=-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + tg.nn.functional.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return tg.Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tg.Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))


class LowerCholeskyTransform(Transform):
    """a square matrix onto a lower triangular one with a positive
    diagonal: the part below the diagonal kept, the diagonal exponentiated
    (not bijective: the upper part is dropped)"""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class CumulativeDistributionTransform(Transform):
    """x onto distribution.cdf(x) in the unit interval (its inverse the
    icdf, its log|det J| the log density)"""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
