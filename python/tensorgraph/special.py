"""tensorgraph.special: torch.special's names for the functions
tensorgraph has (most are the top-level ones under another name), plus
ndtr, xlog1py and entr composed here; the Bessel functions, erfcx,
log_ndtr, ndtri (_special_extra.py), zeta, polygamma, gammainc/gammaincc
(_special_zeta.py); the orthogonal polynomials, modified_bessel_i0/i1,
spherical_bessel_j0, the Bessel functions J0/J1/Y0/Y1 and K0/K1 (also
scaled) and the Airy function Ai (_special_poly.py)."""
import math

from . import _C
from ._creation import zeros
from ._ops import log_softmax, logsumexp, softmax  # noqa: F401
from ._ops_cover import erfc, exp2, xlogy  # noqa: F401
from ._ops_math import _float, _float_dtype, logit, round  # noqa: F401,A004
from ._ops_misc import mvlgamma as multigammaln  # noqa: F401
from ._ops_special import digamma, erfinv, lgamma as gammaln  # noqa: F401
from ._special_extra import erfcx, i0, i0e, i1, i1e, log_ndtr, ndtri  # noqa: F401
from ._special_zeta import gammainc, gammaincc, polygamma, zeta  # noqa: F401
from ._special_poly import *  # noqa: F401,F403  (orthogonal polynomials, i0/i1/j0 forms)
from ._special_poly import __all__ as _poly_names

__all__ = ['expit', 'logit', 'exp2', 'expm1', 'log1p', 'erf', 'erfc', 'erfinv', 'xlogy',
           'xlog1py', 'sinc', 'gammaln', 'digamma', 'psi', 'multigammaln', 'softmax',
           'log_softmax', 'round', 'logsumexp', 'ndtr', 'entr', 'erfcx', 'i0', 'i0e', 'i1',
           'i1e', 'log_ndtr', 'ndtri', 'gammainc', 'gammaincc', 'polygamma', 'zeta'] + _poly_names

expit = _C.sigmoid
expm1 = _C.expm1
log1p = _C.log1p
erf = _C.erf
psi = digamma


def sinc(input):
    from ._ops_cover import sinc as _sinc
    return _sinc(input)


def ndtr(input):
    """the standard normal's CDF: erfc(-x / sqrt 2) / 2 (accurate in the
    lower tail, where 1 + erf would cancel)"""
    return erfc(-_float(input) * (1 / math.sqrt(2))) * 0.5


def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (unless other is NaN)"""
    if not isinstance(other, _C.Tensor):
        other = _C.add(zeros((), dtype=_float_dtype(input.dtype)), other)
    if not isinstance(input, _C.Tensor):
        input = _C.add(zeros((), dtype=other.dtype), input)
    from ._ops_math import _float_pair
    x, y = _float_pair(input, other)
    zero = zeros((), dtype=y.dtype)
    # where x is 0 no 0 * inf (0 there), but a NaN other stays NaN and the
    # slope in x stays log1p(y), as PyTorch's
    ly = _C.log1p(y)
    return x * _C.where((x == 0) & _C.isinf(ly), zero, ly)


def entr(input):
    """-x log x elementwise: 0 at 0, -inf below 0 (NaN stays NaN)"""
    x = _float(input)
    zero = zeros((), dtype=x.dtype)
    pos = x > 0
    inner = -x * _C.log(_C.where(pos, x, zero + 1))
    r = _C.where(pos, inner, _C.where(x == 0, zero, zero - math.inf))
    return _C.where(x != x, x, r)
