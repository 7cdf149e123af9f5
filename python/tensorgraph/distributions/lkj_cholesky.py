"""LKJCholesky(dim, concentration=1.): the law of the lower Cholesky
factor L of a correlation matrix L L^T whose density is proportional to
det(L L^T)^(concentration - 1) (Lewandowski, Kurowicka and Joe). Draws by
the onion method: row i is a uniform direction scaled by the root of a
Beta draw, its diagonal entry completing the unit norm (not
reparameterized, as PyTorch's)."""
import math

import tensorgraph as tg

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ['LKJCholesky']


class LKJCholesky(Distribution):
    arg_constraints = {'concentration': constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1., validate_args=None):
        if dim < 2:
            raise ValueError(f'Expected dim to be an integer greater than or equal to 2. '
                             f'Found dim={dim}.')
        self.dim = dim
        self.concentration, = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = tg.Size((dim, dim))
        # the squared norm of row i's part below the diagonal is
        # Beta(i / 2, concentration + (dim - 2 - (i - 1)) / 2); row 0 gets a
        # placeholder Beta(1/2, ...) whose draw is multiplied by zero
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = tg.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = tg.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tg.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with tg.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = tg.randn(tuple(self._extended_shape(sample_shape)),
                                dtype=y.dtype).tril(-1)
            norms = u_normal.norm(dim=-1, keepdim=True)
            rows = tg.arange(self.dim).view(-1, 1)
            # row 0 has no entries below the diagonal (its 0 / 0 is dropped)
            u_hypersphere = tg.where(rows > 0, u_normal / tg.where(rows > 0, norms,
                                                                   tg.ones_like(norms)),
                                     tg.zeros_like(u_normal))
            w = tg.sqrt(y) * u_hypersphere
            tiny = tg.finfo(w.dtype).tiny
            diagonal = tg.clamp(1 - tg.sum(w ** 2, dim=-1), min=tiny).sqrt()
            return w + tg.diag_embed(diagonal)

    def log_prob(self, value):
        """sum over i >= 1 of (2 (concentration - 1) + dim - i - 1) log L_ii,
        less the log normalizer"""
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = tg.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = tg.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + tg.mvlgamma(alpha - 0.5, dm1) - \
            tg.lgamma(alpha) * dm1
        return unnormalized - normalize
