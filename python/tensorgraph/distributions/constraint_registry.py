"""biject_to and transform_to: from a constraint to a transform whose
codomain it is (biject_to's are bijective, so a log density carries over;
transform_to's may not be, e.g. softmax onto the simplex), with PyTorch
1.13's pairs. register(constraint, factory) adds or replaces a pair for a
constraint class (or an instance's class)."""
import numbers

from . import constraints, transforms

__all__ = ['ConstraintRegistry', 'biject_to', 'transform_to']


class ConstraintRegistry:
    """constraint class -> factory(constraint) returning a Transform"""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """usable as a decorator: @registry.register(constraints.positive)"""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f'Expected constraint to be either a Constraint subclass or '
                            f'instance, but got {constraint}')
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f'Cannot transform {type(constraint).__name__} constraints') from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _register(registries, *constraint_list):
    def decorator(factory):
        for registry in registries:
            for constraint in constraint_list:
                registry.register(constraint, factory)
        return factory
    return decorator


_BOTH = (biject_to, transform_to)


@_register(_BOTH, constraints.real)
def _transform_to_real(constraint):
    return transforms.identity_transform


@_register((biject_to,), constraints.independent)
def _biject_to_independent(constraint):
    return transforms.IndependentTransform(biject_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


@_register((transform_to,), constraints.independent)
def _transform_to_independent(constraint):
    return transforms.IndependentTransform(transform_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


# positive and nonnegative are instances of greater_than and
# greater_than_eq: their classes map to exp shifted by the lower bound
@_register(_BOTH, constraints.greater_than, constraints.greater_than_eq)
def _transform_to_greater_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


@_register(_BOTH, constraints.less_than)
def _transform_to_less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


@_register(_BOTH, constraints.interval, constraints.half_open_interval)
def _transform_to_interval(constraint):
    lower_is_0 = isinstance(constraint.lower_bound, numbers.Number) and \
        constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, numbers.Number) and \
        constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc = constraint.lower_bound
    scale = constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(loc, scale)])


@_register((biject_to,), constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@_register((transform_to,), constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@_register((transform_to,), constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@_register(_BOTH, constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


@_register((biject_to,), constraints.cat)
def _biject_to_cat(constraint):
    return transforms.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim,
                                   constraint.lengths)


@_register((transform_to,), constraints.cat)
def _transform_to_cat(constraint):
    return transforms.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim,
                                   constraint.lengths)


@_register((biject_to,), constraints.stack)
def _biject_to_stack(constraint):
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@_register((transform_to,), constraints.stack)
def _transform_to_stack(constraint):
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq],
                                     constraint.dim)
