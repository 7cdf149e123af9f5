"""Constructors made from a table of (name, default) pairs (the activation
and simple layer classes built by a factory function) with a real
signature: inspect.signature(cls.__init__) shows PyTorch's parameters,
and arguments bind as Python binds them (too many, unknown or missing ones
are TypeErrors naming the class)."""
import inspect

REQUIRED = inspect.Parameter.empty  # a default meaning: no default, required

_POK = inspect.Parameter.POSITIONAL_OR_KEYWORD


def signature(params):
    """the Signature (self, name=default, ...) of (name, default) pairs"""
    return inspect.Signature([inspect.Parameter('self', _POK)] +
                             [inspect.Parameter(n, _POK, default=d) for n, d in params])


def bind(cls_name, sig, self, args, kwargs):
    """{name: value} of every parameter after self, defaults filled in"""
    try:
        bound = sig.bind(self, *args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{cls_name}.__init__() {e}") from None
    bound.apply_defaults()
    return {k: v for k, v in bound.arguments.items() if k != 'self'}


def init_with_signature(params, body):
    """an __init__ with the signature of params whose body(self, values)
    gets the bound arguments as a dict (a new function for each class, so
    each has its own __signature__)"""
    sig = signature(params)

    def __init__(self, *args, **kwargs):
        body(self, bind(type(self).__name__, sig, self, args, kwargs))
    __init__.__signature__ = sig
    return __init__
