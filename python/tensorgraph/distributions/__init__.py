"""tg.distributions: torch.distributions' names over tensorgraph's ops
(gradients by autograd; draws from tensorgraph's generator, so they are
not PyTorch's numbers). See docs/PYTHON.md for what is covered."""
from . import constraints  # noqa: F401
from .beta import Beta
from .gamma import Gamma
from .continuous import Cauchy, Exponential, Laplace, Normal, Uniform
from .counts import Binomial, Geometric, HalfNormal, LogNormal, Poisson
from .dirichlet import Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal

__all__ = ['Bernoulli', 'Beta', 'Binomial', 'Categorical', 'Cauchy', 'Dirichlet', 'Distribution',
           'Exponential', 'Gamma', 'Geometric', 'HalfNormal', 'Independent', 'Laplace',
           'LogNormal', 'MultivariateNormal', 'Normal', 'OneHotCategorical', 'Poisson', 'Uniform',
           'constraints', 'kl_divergence', 'register_kl']
