"""The module names of torch.distributions (tg.distributions.normal,
.bernoulli, ...) for the distributions whose code here shares a file
with others (continuous.py holds Normal, Laplace, ...): each is a module
object registered in sys.modules, importable, with the classes PyTorch's
module of that name defines. Imported last by __init__.py."""
import importlib
import sys
import types

__all__ = []

# module name -> (file here, the names PyTorch's module of that name exports)
_ALIASES = {
    'bernoulli': ('discrete', ['Bernoulli']),
    'binomial': ('counts', ['Binomial']),
    'categorical': ('discrete', ['Categorical']),
    'cauchy': ('continuous', ['Cauchy']),
    'chi2': ('gamma_family', ['Chi2']),
    'exponential': ('continuous', ['Exponential']),
    'fishersnedecor': ('gamma_family', ['FisherSnedecor']),
    'geometric': ('counts', ['Geometric']),
    'gumbel': ('transformed_families', ['Gumbel']),
    'half_cauchy': ('transformed_families', ['HalfCauchy']),
    'half_normal': ('counts', ['HalfNormal']),
    'kumaraswamy': ('transformed_families', ['Kumaraswamy']),
    'laplace': ('continuous', ['Laplace']),
    'log_normal': ('counts', ['LogNormal']),
    'logistic_normal': ('transformed_families', ['LogisticNormal']),
    'negative_binomial': ('multinomial', ['NegativeBinomial']),
    'normal': ('continuous', ['Normal']),
    'one_hot_categorical': ('discrete', ['OneHotCategorical',
                                         'OneHotCategoricalStraightThrough']),
    'pareto': ('transformed_families', ['Pareto']),
    'poisson': ('counts', ['Poisson']),
    'studentT': ('gamma_family', ['StudentT']),
    'uniform': ('continuous', ['Uniform']),
    'weibull': ('transformed_families', ['Weibull']),
}


def _install():
    package = sys.modules[__package__]
    for name, (source, names) in _ALIASES.items():
        full_name = f'{__package__}.{name}'
        source_module = importlib.import_module(f'.{source}', __package__)
        module = types.ModuleType(full_name, f'{", ".join(names)} (defined in {source}.py)')
        for n in names:
            setattr(module, n, getattr(source_module, n))
        module.__all__ = list(names)
        sys.modules[full_name] = module
        setattr(package, name, module)


_install()
