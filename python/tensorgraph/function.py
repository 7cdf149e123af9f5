"""tg.function: trace a Python function into a static graph.

    @tg.function
    def step(x, y):
        return F.cross_entropy(model(x), y)

    loss = step(x, y)      # first call per signature: traced, then run
    loss.backward()        # gradients flow through the graph to the model

The first call for a given signature (each tensor argument's shape and
dtype, the values of the other arguments) runs fn once on symbolic
tensors, recording every op into a graph; that call and later ones with
the same signature run the graph in a session (plans compiled once and
cached). Tensors fn uses that are not arguments (parameters) are captured
by reference: the graph sees their current values, so an optimizer's
in-place updates apply. When grad mode is on and an argument or a captured
tensor requires grad, each floating-point output is a node of the eager
tape whose backward runs the graph's symbolic gradient.

A whole training step compiles too: `opt.zero_grad()`, `loss.backward()`
and `opt.step()` called inside fn become nodes of its graph (gradients
accumulated into the parameters' .grad as eagerly, the optimizer's
update, the learning rate read at each call), so one call is one session
run; see docs/PYTHON.md, "A whole training step in one call".

Python control flow is converted first (autograph, as tf.function does):
an `if`, `while` or `for` whose condition, bound or iterable is a symbolic
tensor becomes a graph cond / while_loop, so the compiled function takes
the branch and trip count each input needs without retracing; Python
values stay Python (evaluated once while tracing, part of the signature).
`f.code` shows the converted source; `autograph=False` traces fn as it is
(then reading a symbolic tensor's value, as `if x > 0` does, fails the
trace); `set_converter` replaces the converter. See docs/CONTROL_FLOW.md.
"""
import functools
import threading
import warnings

from . import _C, _trace_guards
from . import autograd_forward_ad as _forward_ad
from ._grad_mode import enable_grad

RETRACE_WARNING = 5  # warn once a function has been traced this many times

_converter = None  # None: tensorgraph.autograph's


def set_converter(convert):
    """Replaces the source converter tg.function(fn, autograph=True) uses:
    convert(fn) -> a function equivalent to fn whose tensor-dependent
    control flow is made of graph ops. None restores autograph's."""
    global _converter
    _converter = convert


def _convert(fn):
    if _converter is not None:
        return _converter(fn)
    from .autograph.conversion import converted_callable
    return converted_callable(fn)


def _signature(args, kwargs):
    """(the key of a call's traced graph, its tensor arguments): tensors key
    by shape and dtype, other values by themselves (by repr when they cannot
    be hashed); keyword arguments by name, in sorted order"""
    if not kwargs:
        return _C._call_signature(args, None)
    names = sorted(kwargs)
    return _C._call_signature(args + tuple(map(kwargs.__getitem__, names)),
                              tuple(range(len(args))) + tuple(names))


def _refuse_tangents(name, tensors):
    """a graph run gives its outputs no tangents: refused rather than
    dropped (tg.autograd.forward_ad's dual tensors work op by op)"""
    if _forward_ad._current_level < 0:
        return
    if any(_C._unpack_dual(t)[1] is not None for t in tensors):
        raise RuntimeError(f"tg.function '{name}': an argument carries a forward-mode "
                           "tangent (tg.autograd.forward_ad.make_dual); a compiled graph "
                           "does not propagate tangents. Call the Python function "
                           "eagerly inside the dual level, or use "
                           "tg.autograd.functional.jvp")


def _rebuilder(kind, is_tensor, consts):
    """out (a concrete function's tensors) -> the traced function's result:
    a `kind` sequence with the tensors where is_tensor, consts elsewhere"""
    def rebuild(out):
        it = iter(out if isinstance(out, tuple) else (out,))
        items = [next(it) if t else c for t, c in zip(is_tensor, consts)]
        return kind(*items) if hasattr(kind, '_fields') else kind(items)
    return rebuild


_tracing = threading.local()  # how many tg.function traces run on this thread


def is_tracing():
    """True while a tg.function traces its Python function on this thread
    (torch.jit.is_tracing's question)"""
    return getattr(_tracing, 'depth', 0) > 0


class Function:
    def __init__(self, fn, autograph=True):
        self.autograph = autograph
        self._original = fn
        self.python_function = _convert(fn) if autograph else fn
        self._cache = {}
        self._rebuild = {}  # concrete function -> its outputs' structure
        self._last_sig = None
        self._last = None
        self.trace_count = 0
        functools.update_wrapper(self, fn)
        if not hasattr(self, '__name__'):  # a module or another callable object
            self.__name__ = type(fn).__name__

    @property
    def code(self):
        """The converted source of the function (what is traced)."""
        from .autograph.conversion import source_of
        f = self.python_function
        if isinstance(f, functools.partial):  # a module: its converted forward
            f = f.args[0]
        src = source_of(getattr(f, '__func__', f))
        if src is None:
            why = "autograph=False" if not self.autograph else \
                "it is not converted (library code, a lambda, a generator, no source, " \
                "or marked do_not_convert)"
            raise ValueError(f"tg.function '{self.__name__}' has no converted source: {why}")
        return src

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def get_concrete_function(self, *args, **kwargs):
        return self._concrete(_signature(args, kwargs)[0], args, kwargs)

    def _concrete(self, sig, args, kwargs):
        for guards, cf in self._cache.get(sig, ()):
            # the modules' flags and tensors as traced; a compiled training
            # step's hyper-parameters and the .grad tensors it writes
            if guards.hold() and cf.step_holds():
                break
        else:
            cf = self._trace(sig, args, kwargs)
        self._last = cf
        return cf

    def __call__(self, *args, **kwargs):
        sig, tensors = _signature(args, kwargs)
        _refuse_tangents(self.__name__, tensors)
        cf = self._concrete(sig, args, kwargs)
        out = cf(*tensors)
        rebuild = self._rebuild.get(cf)
        return rebuild(out) if rebuild else out

    def pull_variables(self):
        """Copies the parameters and buffers this function's graphs keep on
        other processes' devices (tg.device('/rank:1/cpu:0') under mpirun,
        see tensorgraph.distributed.serve) back into their tensors here.
        Writes made here (an optimizer step) reach those processes by
        themselves before the next call."""
        for entries in self._cache.values():
            for _, cf in entries:
                cf.pull_variables()

    def _trace(self, sig, args, kwargs):
        count = self.trace_count + 1
        if self._last_sig is not None and count >= RETRACE_WARNING:
            changed = [str(new[0]) for old, new in zip(self._last_sig, sig) if old != new]
            if not changed and sig in self._cache:
                changed = ["(a module's training mode)"]
            warnings.warn(f"tg.function '{self.__name__}' was traced {count} "
                          f"times; argument(s) {', '.join(changed) or '(count)'} changed. "
                          "Retracing is expensive: pass varying Python values as tensors.",
                          RuntimeWarning, stacklevel=3)
        keys = sorted(kwargs)
        positions = [('a', i) for i, a in enumerate(args) if isinstance(a, _C.Tensor)] + \
            [('k', k) for k in keys if isinstance(kwargs[k], _C.Tensor)]
        examples = tuple(args[p] if kind == 'a' else kwargs[p] for kind, p in positions)

        def traced(*symbolic):
            a, kw = list(args), dict(kwargs)
            for (kind, p), s in zip(positions, symbolic):
                if kind == 'a':
                    a[p] = s
                else:
                    kw[p] = s
            _tracing.depth = getattr(_tracing, 'depth', 0) + 1
            try:
                return split_outputs(self.python_function(*a, **kw))
            finally:
                _tracing.depth -= 1

        rebuild = []

        def split_outputs(r):
            """a list, a named tuple or a sequence mixing tensors with Python
            values (constants of the trace, as tf.function returns them):
            the graph's outputs are its tensors, the call puts it back"""
            if not isinstance(r, (tuple, list)) or (
                    type(r) is tuple and all(isinstance(v, _C.Tensor) for v in r)):
                return r
            kinds = tuple(isinstance(v, _C.Tensor) for v in r)
            if not any(kinds):
                raise TypeError(f"tg.function '{self.__name__}' returned no tensor")
            consts = tuple(None if k else v for k, v in zip(kinds, r))
            rebuild.append(_rebuilder(type(r), kinds, consts))
            return tuple(v for v in r if isinstance(v, _C.Tensor))

        _trace_guards.begin()
        try:
            # a trace serves calls in either grad mode: it records with grad
            # mode on, so that only the function's own no_grad blocks are
            # nodes gradients do not flow through
            with enable_grad():
                cf = _C._trace(traced, examples)
        finally:
            guards = _trace_guards.end()
        self._cache.setdefault(sig, []).append((guards, cf))
        if rebuild:
            self._rebuild[cf] = rebuild[0]
        self._last_sig = sig
        self.trace_count += 1
        return cf

    @property
    def graph(self):
        """the graph of the last signature called (dump(), to_dot())"""
        if self._last is None:
            raise RuntimeError("the function has not been called (or traced) yet")
        return self._last.graph


def function(fn=None, *, autograph=True):
    """Decorator (or call) turning fn into a graph-compiled function;
    autograph=False traces fn without converting its control flow."""
    if fn is None:
        return lambda f: Function(f, autograph=autograph)
    return Function(fn, autograph=autograph)
