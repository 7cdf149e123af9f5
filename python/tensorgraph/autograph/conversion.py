"""Converting a function: source -> lowered, rewritten AST -> a new function.

The new function is compiled from the rewritten source with the user's file
name and line numbers (tracebacks and autograph's errors point at the
original lines) and shares the original's globals, defaults and closure
cells, so it sees the same variables. Converted code objects are cached by
the original code object; functions by the original function.

What is converted: plain functions and methods of user code, and what they
call (see converted_callable). Not converted: tensorgraph itself, numpy,
torch and every library installed in the interpreter or the standard
library, builtins, lambdas, generators and coroutines, functions whose
source is not available, and anything marked do_not_convert.
"""
import ast
import functools
import inspect
import os
import sys
import sysconfig
import textwrap
import types
import warnings
import weakref

from . import analysis, lowering
from .errors import ConversionError, is_library_file
from .transformer import Statements

_code_cache = {}                          # original code -> (new code, source) or None
_fn_cache = weakref.WeakKeyDictionary()   # original function -> converted function
_LIBRARY_ROOTS = {'tensorgraph', 'numpy', 'torch', 'onnx', 'pytest', '_pytest', 'pluggy'}
_LIBRARY_DIRS = tuple(os.path.abspath(p) + os.sep for p in {
    sysconfig.get_paths()[k] for k in ('stdlib', 'platstdlib', 'purelib', 'platlib')} if p)


def do_not_convert(fn):
    """Decorator: tg.function runs fn (and what it calls) as plain Python,
    traced but not converted."""
    fn.__ag_do_not_convert__ = True
    return fn


def _is_library(fn):
    root = (getattr(fn, '__module__', None) or '').split('.')[0]
    if root in _LIBRARY_ROOTS or root in sys.stdlib_module_names:
        return True
    filename = os.path.abspath(fn.__code__.co_filename)
    return is_library_file(filename) or filename.startswith(_LIBRARY_DIRS) or \
        'site-packages' in filename or 'dist-packages' in filename


def convertible(fn):
    """fn is user code that conversion handles"""
    if not isinstance(fn, types.FunctionType) or getattr(fn, '__ag_do_not_convert__', False):
        return False
    flags = fn.__code__.co_flags
    if flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return False
    return fn.__name__ != '<lambda>' and not getattr(fn, '__ag_converted__', False) and \
        not _is_library(fn)


def convert(fn):
    """The converted version of user function fn (fn itself when it cannot
    be converted; a warning says so when its source is missing)."""
    if not convertible(fn):
        return fn
    done = _fn_cache.get(fn)
    if done is not None:
        return done
    code = fn.__code__
    if code not in _code_cache:
        _code_cache[code] = _convert_code(fn)
    entry = _code_cache[code]
    if entry is None:
        return fn
    new_code, source = entry
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    from . import operators
    cells['ag__'] = types.CellType(operators)
    new = types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                             tuple(cells[n] for n in new_code.co_freevars))
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__dict__.update(fn.__dict__)
    for attr in ('__qualname__', '__module__', '__doc__', '__annotations__'):
        setattr(new, attr, getattr(fn, attr))
    new.__ag_converted__ = True
    new.__ag_source__ = source
    # weakly: the cache's value must not keep its key alive (a strong
    # reference here kept every converted function's closure, models and
    # optimizers included, alive for the life of the process)
    new.__ag_original__ = weakref.ref(fn)
    _fn_cache[fn] = new
    return new


def _convert_code(fn):
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        warnings.warn(f"tg.function: the source of {fn.__qualname__} is not available, so its "
                      "Python control flow is traced, not converted", RuntimeWarning,
                      stacklevel=_user_stacklevel())
        return None
    filename = fn.__code__.co_filename
    source = textwrap.dedent(''.join(lines))
    indent = len(lines[0]) - len(lines[0].lstrip())
    tree = ast.parse(source)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        return None
    ast.increment_lineno(tree, first - 1)
    for n in ast.walk(tree):
        if hasattr(n, 'col_offset'):
            n.col_offset += indent
            if getattr(n, 'end_col_offset', None) is not None:
                n.end_col_offset += indent
    _strip_def_time_parts(node)
    names = lowering.Names()
    lowering.lower(node, names, filename)
    analysis.annotate(node.body, set())
    params = _parameters(node.args)
    positional = node.args.posonlyargs + node.args.args
    statements = Statements(names, analysis.declared_outside(node),
                            positional[0].arg if positional else None)
    node.body = statements.block(node.body, set(params))
    ast.fix_missing_locations(tree)
    converted = ast.unparse(node)
    # compiled inside a factory whose parameters are the original's free
    # variables (and ag__), so the code object refers to them as closure cells
    free = ['ag__'] + [v for v in fn.__code__.co_freevars if v != 'ag__']
    factory = ast.FunctionDef(name='ag__factory', args=ast.arguments(
        posonlyargs=[], args=[ast.arg(arg=v) for v in free], vararg=None, kwonlyargs=[],
        kw_defaults=[], kwarg=None, defaults=[]),
        body=[node, ast.Return(value=ast.Name(id=node.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(factory, node)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, 'exec')
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts
                 if isinstance(c, types.CodeType) and c.co_name == node.name)
    return inner, converted


def _user_stacklevel():
    """warnings' stacklevel of the innermost frame outside tensorgraph"""
    level, f = 2, sys._getframe(2)
    while f is not None and is_library_file(f.f_code.co_filename):
        level, f = level + 1, f.f_back
    return level


def _strip_def_time_parts(node):
    """Decorators, defaults and annotations are the original's already."""
    node.decorator_list = []
    node.returns = None
    a = node.args
    a.defaults, a.kw_defaults = [], [None] * len(a.kwonlyargs)
    for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if arg is not None:
            arg.annotation = None


def _parameters(a):
    return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
            if x is not None]


def source_of(fn):
    """The converted source of fn (what tg.function(fn).code shows)."""
    return getattr(fn, '__ag_source__', None)


def converted_callable(f):
    """What converted code calls in place of f: f converted when it is user
    code (functions, methods, functools.partial, nn.Module instances whose
    forward is user code, objects with a user __call__), else f itself."""
    from . import context, operators
    context.check_side_effect(f)
    if f is range:
        return operators.range_
    if isinstance(f, types.FunctionType):
        return convert(f)
    if isinstance(f, types.MethodType):
        fn = f.__func__
        return types.MethodType(convert(fn), f.__self__) if convertible(fn) else f
    if isinstance(f, functools.partial):
        return functools.partial(converted_callable(f.func), *f.args, **f.keywords)
    if isinstance(f, type) or getattr(f, '__ag_do_not_convert__', False):
        return f
    from ..nn.module import Module
    if isinstance(f, Module):
        forward = type(f).forward
        if not convertible(forward):
            return f
        return functools.partial(f._call_with_forward, types.MethodType(convert(forward), f))
    call = getattr(type(f), '__call__', None)
    if isinstance(call, types.FunctionType) and convertible(call):
        return types.MethodType(convert(call), f)
    return f


__all__ = ['convert', 'convertible', 'do_not_convert', 'converted_callable', 'source_of',
           'ConversionError']
