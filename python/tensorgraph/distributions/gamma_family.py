"""Distributions built on Gamma draws: Chi2 (a Gamma with rate 1/2),
StudentT (a Normal over the root of a scaled Chi2) and FisherSnedecor (a
ratio of two scaled Gammas). log_prob, entropy and the moments are
PyTorch 1.13's closed forms; the moments that do not exist for small
degrees of freedom are NaN or inf where PyTorch's are. Draws are
reparameterized through the Gamma sampler's implicit gradient."""
import math
import numbers

import tensorgraph as tg

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ['Chi2', 'FisherSnedecor', 'StudentT']


def _where(cond, value, fill):
    """value where cond, else the constant fill (no gradient there)"""
    return tg.where(cond, value, tg.full_like(value, fill))


class Chi2(Gamma):
    """Chi2(df) = Gamma(df / 2, 1 / 2)"""
    arg_constraints = {'df': constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    """StudentT(df, loc=0., scale=1.)"""
    arg_constraints = {'df': constraints.positive, 'loc': constraints.real,
                       'scale': constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0., scale=1., validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = tg.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return _where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        big = df > 2
        safe_df = tg.where(big, df, tg.full_like(df, 3.))
        var = self.scale.pow(2) * safe_df / (safe_df - 2)
        var = tg.where(big, var, tg.full_like(var, math.inf))  # 1 < df <= 2
        return _where(df > 1, var, math.nan)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = tg.randn(tuple(shape), dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * tg.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) +
             tg.lgamma(0.5 * df) - tg.lgamma(0.5 * (df + 1.)))
        return -0.5 * (df + 1.) * tg.log1p(y ** 2. / df) - z

    def entropy(self):
        df = self.df
        lbeta = tg.lgamma(0.5 * df) + math.lgamma(0.5) - tg.lgamma(0.5 * (df + 1))
        return (self.scale.log() +
                0.5 * (df + 1) * (tg.digamma(0.5 * (df + 1)) - tg.digamma(0.5 * df)) +
                0.5 * df.log() + lbeta)


class FisherSnedecor(Distribution):
    """FisherSnedecor(df1, df2): (X1 / df1) / (X2 / df2), Xi ~ Chi2(dfi)"""
    arg_constraints = {'df1': constraints.positive, 'df2': constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        batch_shape = tg.Size() if scalar else self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = tg.Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = _where(self.df2 > 2, self.df2, math.nan)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self):
        df1 = self.df1
        df2 = _where(self.df2 > 4, self.df2, math.nan)
        return 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = tg.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * tg.log(value)
        t3 = (ct1 + ct2) * tg.log1p(ct3 * value)
        return t1 + t2 - t3
