"""tg.distributions: torch.distributions' names over tensorgraph's ops
(gradients by autograd; draws from tensorgraph's generator, so they are
not PyTorch's numbers). See docs/PYTHON.md for what is covered."""
from . import constraints  # noqa: F401
from . import transforms  # noqa: F401
from .beta import Beta
from .gamma import Gamma
from .continuous import Cauchy, Exponential, Laplace, Normal, Uniform
from .counts import Binomial, Geometric, HalfNormal, LogNormal, Poisson
from .dirichlet import Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .gamma_family import Chi2, FisherSnedecor, StudentT
from .independent import Independent
from .kl import kl_divergence, register_kl
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial, NegativeBinomial
from .multivariate_normal import MultivariateNormal
from .transformed_distribution import TransformedDistribution
from .transformed_families import (Gumbel, HalfCauchy, Kumaraswamy, LogisticNormal, Pareto,
                                   Weibull)
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                         IndependentTransform, PowerTransform, ReshapeTransform,
                         SigmoidTransform, SoftmaxTransform, SoftplusTransform,
                         StickBreakingTransform, TanhTransform, Transform, identity_transform)

__all__ = ['AbsTransform', 'AffineTransform', 'Bernoulli', 'Beta', 'Binomial', 'Categorical',
           'Cauchy', 'Chi2', 'ComposeTransform', 'Dirichlet', 'Distribution', 'ExpTransform',
           'Exponential', 'FisherSnedecor', 'Gamma', 'Geometric', 'Gumbel', 'HalfCauchy',
           'HalfNormal', 'Independent', 'IndependentTransform', 'Kumaraswamy', 'Laplace',
           'LogNormal', 'LogisticNormal', 'MixtureSameFamily', 'Multinomial',
           'MultivariateNormal', 'NegativeBinomial', 'Normal', 'OneHotCategorical', 'Pareto',
           'Poisson', 'PowerTransform', 'ReshapeTransform', 'SigmoidTransform',
           'SoftmaxTransform', 'SoftplusTransform', 'StickBreakingTransform', 'StudentT',
           'TanhTransform', 'Transform', 'TransformedDistribution', 'Uniform', 'Weibull',
           'constraints', 'identity_transform', 'kl_divergence', 'register_kl', 'transforms']
