"""tg.distributions: torch.distributions' names over tensorgraph's ops
(gradients by autograd; draws from tensorgraph's generator, so they are
not PyTorch's numbers). See docs/PYTHON.md for what is covered."""
from . import constraints  # noqa: F401
from . import transforms  # noqa: F401
from .beta import Beta
from .gamma import Gamma
from .continuous import Cauchy, Exponential, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Binomial, Geometric, HalfNormal, LogNormal, Poisson
from .dirichlet import Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma_family import Chi2, FisherSnedecor, StudentT
from .independent import Independent
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial, NegativeBinomial
from .multivariate_normal import MultivariateNormal
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transformed_families import (Gumbel, HalfCauchy, Kumaraswamy, LogisticNormal, Pareto,
                                   Weibull)
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,
                         CorrCholeskyTransform, CumulativeDistributionTransform, ExpTransform,
                         IndependentTransform, LowerCholeskyTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform, SoftmaxTransform,
                         SoftplusTransform, StackTransform, StickBreakingTransform,
                         TanhTransform, Transform, identity_transform)
from .von_mises import VonMises
from .wishart import Wishart
from . import kl_extra  # noqa: F401,E402  (the kl pairs of the classes above)
from .constraint_registry import biject_to, transform_to
from . import _submodules  # noqa: F401,E402  (tg.distributions.normal, ...)

__all__ = ['AbsTransform', 'AffineTransform', 'Bernoulli', 'Beta', 'Binomial', 'CatTransform',
           'Categorical', 'Cauchy', 'Chi2', 'ComposeTransform', 'ContinuousBernoulli',
           'CorrCholeskyTransform', 'CumulativeDistributionTransform', 'Dirichlet',
           'Distribution', 'ExpTransform', 'Exponential', 'ExponentialFamily',
           'FisherSnedecor', 'Gamma', 'Geometric', 'Gumbel', 'HalfCauchy', 'HalfNormal',
           'Independent', 'IndependentTransform', 'Kumaraswamy', 'LKJCholesky', 'Laplace',
           'LogNormal', 'LogisticNormal', 'LowRankMultivariateNormal', 'LowerCholeskyTransform',
           'MixtureSameFamily', 'Multinomial', 'MultivariateNormal', 'NegativeBinomial',
           'Normal', 'OneHotCategorical', 'OneHotCategoricalStraightThrough', 'Pareto',
           'Poisson', 'PowerTransform', 'RelaxedBernoulli', 'RelaxedOneHotCategorical',
           'ReshapeTransform', 'SigmoidTransform', 'SoftmaxTransform', 'SoftplusTransform',
           'StackTransform', 'StickBreakingTransform', 'StudentT', 'TanhTransform',
           'Transform', 'TransformedDistribution', 'Uniform', 'VonMises', 'Weibull', 'Wishart',
           'biject_to', 'constraints', 'identity_transform', 'kl_divergence', 'register_kl',
           'transform_to', 'transforms']
