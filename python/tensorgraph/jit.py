"""tensorgraph.jit: torch.jit's names for code written against TorchScript,
mapped onto tensorgraph's two ways from eager code to a graph.

- script(fn or module): tg.function, which converts the Python source
  (its control flow becomes graph cond/while_loop, as TorchScript's
  compiler does) and traces it; a module comes back as a shallow copy
  sharing its parameters and buffers, whose forward is compiled.
- trace(fn or module, example_inputs): the same, traced at once on the
  examples. tensorgraph traces symbolically, so a Python branch on a
  tensor's value cannot be frozen to the examples' path as
  torch.jit.trace freezes it (with its TracerWarning): the converted
  source keeps both branches as a graph cond, which agrees with the
  examples' path on the examples and stays right on other inputs.
- The annotations (ignore, unused, export, interface, Final, annotate,
  Attribute, isinstance) let such code run; is_scripting() is False (code
  runs as Python, even while traced), is_tracing() is True while a
  tg.function traces; fork/wait run the call at once.
- save/load/freeze of TorchScript archives do not exist here: they raise,
  pointing at tg.save (a state dict as safetensors) and tg.onnx.export."""
import copy
import typing

from .function import Function, is_tracing  # noqa: F401 (is_tracing: torch.jit's name)
from .nn import Module

__all__ = ['script', 'trace', 'ignore', 'unused', 'export', 'interface', 'annotate', 'Final',
           'Attribute', 'is_scripting', 'is_tracing', 'fork', 'wait', 'save', 'load', 'freeze',
           'ScriptModule', 'ScriptFunction', 'isinstance', 'Future', 'script_method',
           'script_if_tracing']

Final = typing.Final
ScriptFunction = Function


class ScriptModule(Module):
    """the type scripted and traced modules are instances of (besides
    their own class): isinstance(m, tg.jit.ScriptModule); subclassed, an
    nn.Module (script_method marks nothing)"""


def _compiled_module(module, autograph):
    if not isinstance(module, Module):
        raise TypeError(f"expected a function or an nn.Module, got {type(module).__name__}")
    scripted = copy.copy(module)  # shares the parameter, buffer and module dicts
    cls = type(module)
    if not issubclass(cls, ScriptModule):  # named as the original: repr and messages alike
        cls = type(cls.__name__, (cls, ScriptModule), {'__module__': cls.__module__})
    scripted.__class__ = cls
    object.__setattr__(scripted, 'forward',
                       Function(type(module).forward.__get__(scripted), autograph=autograph))
    return scripted


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """obj compiled with its source converted (tg.function)"""
    if isinstance(obj, Function):
        return obj
    if isinstance(obj, type):
        raise TypeError("tensorgraph.jit.script compiles functions and modules, not classes")
    if isinstance(obj, Module):
        return _compiled_module(obj, autograph=True)
    return Function(obj, autograph=True)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, **_):
    """func compiled as script() does and traced on example_inputs (a
    tensor or a tuple of them)"""
    from ._C import Tensor
    if example_inputs is None:
        raise TypeError("trace() missing required argument 'example_inputs'")
    args = (example_inputs,) if isinstance(example_inputs, Tensor) else tuple(example_inputs)
    traced = script(func) if isinstance(func, Module) or not isinstance(func, Function) \
        else func
    traced(*args)  # traced now, on the examples
    return traced


def _identity_decorator(fn=None, **_):
    if fn is None or isinstance(fn, bool):
        return lambda f: f
    return fn


ignore = unused = export = interface = script_method = _identity_decorator


def annotate(the_type, the_value):
    return the_value


class Attribute:
    """torch.jit.Attribute(value, type): the value"""

    def __new__(cls, value, type=None):
        return value


def is_scripting():
    """False: code runs as Python here, also while tg.function traces it"""
    return False


def isinstance(obj, target_type):  # noqa: A001 - torch.jit's name
    import builtins
    origin = typing.get_origin(target_type)
    return builtins.isinstance(obj, origin or target_type)


class Future:
    """the result of fork: computed at once"""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def value(self):
        return self._value

    def done(self):
        return True


def fork(func, *args, **kwargs):
    return Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


def _no_archives(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"tensorgraph.jit.{name}: tensorgraph has no TorchScript archives; save a module's "
            f"state with tg.save(module.state_dict(), path) (safetensors) or export it with "
            f"tg.onnx.export")
    refuse.__name__ = name
    return refuse


save, load, freeze = _no_archives('save'), _no_archives('load'), _no_archives('freeze')


def script_if_tracing(fn):
    """fn itself: it runs as Python, traced or not"""
    return fn
