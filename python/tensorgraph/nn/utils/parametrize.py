"""nn.utils.parametrize, as PyTorch's: register_parametrization(module,
'weight', p) moves the parameter to module.parametrizations.weight.original
and makes module.weight a property computing p(original) at each access
(the module's class becomes a subclass, Parametrized<Class>, holding the
properties); assigning module.weight = X stores right_inverse(X) when the
parametrizations have one. cached() computes each parametrized tensor
once inside its block."""
from contextlib import contextmanager

from ... import _C
from ..._grad_mode import no_grad
from ..containers import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = ['ParametrizationList', 'cached', 'is_parametrized', 'register_parametrization',
           'remove_parametrizations', 'transfer_parametrizations_and_params',
           'type_before_parametrizations']

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """inside, each parametrized tensor is computed once and reused"""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


class ParametrizationList(ModuleList):
    """the parametrizations of one tensor, applied in order to `original`"""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, 'right_inverse'):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass   # as PyTorch's: taken as the identity
        if not isinstance(new, _C.Tensor):
            raise ValueError("'right_inverse' must return a Tensor (a sequence of tensors is "
                             "not supported here)")
        if not unsafe and (new.dtype != original.dtype):
            raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the "
                             f"dtype.\noriginal.dtype: {original.dtype}\n"
                             f"right_inverse(original).dtype: {new.dtype}")
        with no_grad():
            if isinstance(original, Parameter) and new.shape == original.shape:
                original.copy_(new)
                self.register_parameter('original', original)
            else:
                self.register_parameter('original', Parameter(
                    new.detach().clone(), requires_grad=original.requires_grad))
        if not unsafe:
            z = self()
            if z.dtype != original.dtype or tuple(z.shape) != tuple(original.shape):
                raise ValueError("Registering a parametrization may not change the shape or "
                                 f"dtype of the tensor.\nunparametrized shape: "
                                 f"{tuple(original.shape)}, dtype {original.dtype}\n"
                                 f"parametrized shape: {tuple(z.shape)}, dtype {z.dtype}")

    def right_inverse(self, value):
        """original set so that the parametrizations give value"""
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, 'right_inverse'):
                    value = module.right_inverse(value)
            if value.dtype != self.original.dtype:
                raise ValueError(f"The tensor returned by right_inverse has dtype {value.dtype} "
                                 f"while `original` has dtype {self.original.dtype}")
            self.original.copy_(value)

    def forward(self):
        x = self.original
        for module in self:
            x = module(x)
        return x


def _parametrized_value(module, name):
    key = (id(module), name)
    if _cache_enabled and key in _cache:
        return _cache[key]
    value = module.parametrizations[name]()
    if _cache_enabled:
        _cache[key] = value
    return value


def _add_property(module, name):
    def getter(self):
        return _parametrized_value(self, name)

    def setter(self, value):
        self.parametrizations[name].right_inverse(value)
    setattr(type(module), name, property(getter, setter))


def _inject_class(module):
    cls = type(module)
    param_cls = type(f"Parametrized{cls.__name__}", (cls,), {
        '__module__': cls.__module__, '_tg_original_class': cls})
    module.__class__ = param_cls


def is_parametrized(module, tensor_name=None):
    """whether module (or its tensor_name) has parametrizations"""
    parametrizations = module.__dict__.get('_modules', {}).get('parametrizations')
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def type_before_parametrizations(module):
    """the module's class before register_parametrization changed it"""
    if is_parametrized(module):
        return type(module)._tg_original_class
    return type(module)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """module.tensor_name becomes parametrization(original); a second
    registration on the same tensor appends to its list"""
    if not isinstance(parametrization, Module):
        raise TypeError("parametrization must be an nn.Module")
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if x.dtype != y.dtype or tuple(x.shape) != tuple(y.shape):
                raise ValueError("Registering a parametrization may not change the shape or "
                                 "dtype of the tensor.")
        plist.append(parametrization)
        return module
    if tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        if original is None:
            raise ValueError(f"Module '{module}' parameter or buffer with name "
                             f"'{tensor_name}' is None")
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        if tensor_name in module._parameters:
            del module._parameters[tensor_name]
        else:
            del module._buffers[tensor_name]
        if not is_parametrized(module):
            _inject_class(module)
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = plist
        _add_property(module, tensor_name)
        return module
    raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                     f"parametrized element with name '{tensor_name}'")


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """tensor_name back as a plain parameter: its parametrized value
    (leave_parametrized) or the original"""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    original = plist.original
    with no_grad():
        value = getattr(module, tensor_name) if leave_parametrized else original
        if leave_parametrized:
            if value.dtype != original.dtype:
                raise ValueError("The parametrization changes the dtype of the tensor: "
                                 "use leave_parametrized=False")
            if tuple(value.shape) == tuple(original.shape):
                original.copy_(value)
                value = original
            else:
                value = Parameter(value.detach().clone(), requires_grad=original.requires_grad)
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, value if isinstance(value, Parameter)
                              else Parameter(value))
    if not is_parametrized(module):
        del module._modules['parametrizations']
        module.__class__ = type(module)._tg_original_class
    return module


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """to_module gets from_module's parametrizations (of tensor_name, or
    all) with the same original values"""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        if not hasattr(to_module, name):
            to_module.register_parameter(name, Parameter(getattr(from_module, name).detach()))
        for p in from_module.parametrizations[name]:
            if not is_parametrized(to_module, name):
                register_parametrization(to_module, name, p)
            else:
                to_module.parametrizations[name].append(p)
        with no_grad():
            to_module.parametrizations[name].original.copy_(
                from_module.parametrizations[name].original)
    return to_module
