"""The run-time side of converted code (the `ag__` it calls).

Each operator looks at the value a statement depends on: a symbolic tensor
(tg.function is tracing, the value is only known when the graph runs)
makes graph control flow through `staging`; anything else (a Python value,
or a concrete tensor in eager mode) runs exactly as the original Python
statement would, so converted code called eagerly behaves as the source.
"""
import builtins
import operator

from .. import _C
from . import context, loops, staging
from .conversion import converted_callable as cc  # noqa: F401  (calls: ag__.cc(f)(...))
from .undefined import Undefined, UndefinedReturnValue, ld, retval  # noqa: F401


def _symbolic(v):
    return isinstance(v, _C.Tensor) and v.is_symbolic


def if_stmt(test, true_fn, false_fn, state, names):
    if _symbolic(test):
        return staging.cond(test, true_fn, false_fn, state, names)
    return true_fn(*state) if test else false_fn(*state)


def while_stmt(test, body, state, names):
    state = tuple(state)
    while True:
        c = test(*state)
        if _symbolic(c):  # from here on the loop is a graph loop
            return staging.while_loop(test, body, state, names)
        if not c:
            return state
        state = tuple(body(*state))


class TensorRange:
    """range(...) with a tensor bound."""

    def __init__(self, *args):
        bounds = (0,) + args if len(args) == 1 else args
        self.start, self.stop, self.step = (tuple(bounds) + (1,))[:3]

    @property
    def symbolic(self):
        return any(_symbolic(v) for v in (self.start, self.stop, self.step))

    def __iter__(self):
        return iter(builtins.range(int(self.start), int(self.stop), int(self.step)))


def range_(*args):
    """the builtin range, or a TensorRange when a bound is a tensor"""
    if any(isinstance(a, _C.Tensor) for a in args):
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")
        return TensorRange(*args)
    return builtins.range(*args)


def for_stmt(iterable, extra_test, body, state, names):
    if isinstance(iterable, TensorRange) and iterable.symbolic:
        r = iterable
        return loops.for_range(r.start, r.stop, r.step, extra_test, body, state, names)
    if _symbolic(iterable):
        return loops.for_tensor(iterable, extra_test, body, state, names)
    state = tuple(state)
    for item in iterable:
        if extra_test is not None:
            c = extra_test(*state)
            if _symbolic(c):  # a Python loop whose break depends on a tensor: each
                # remaining iteration runs under a graph cond
                state = staging.cond(c, lambda *s: body(item, *s), lambda *s: s, state, names)
                continue
            if not c:
                break
        state = tuple(body(item, *state))
    return state


def and_(a_fn, b_fn):
    a = a_fn()
    if _symbolic(a):
        return staging.lazy_bool(a, b_fn, True)
    return b_fn() if a else a


def or_(a_fn, b_fn):
    a = a_fn()
    if _symbolic(a):
        return staging.lazy_bool(a, b_fn, False)
    return a if a else b_fn()


def not_(a):
    if _symbolic(a):
        from .. import control_flow
        from .._ops import logical_not
        return logical_not(control_flow.predicate(a, 'not'))
    return not a


def if_exp(test, a_fn, b_fn):
    if _symbolic(test):
        return staging.cond(test, lambda: (a_fn(),), lambda: (b_fn(),), (),
                            ('<conditional expression>',))[0]
    return a_fn() if test else b_fn()


_IN_PLACE = {'Add': (operator.iadd, operator.add), 'Sub': (operator.isub, operator.sub),
             'Mult': (operator.imul, operator.mul), 'Div': (operator.itruediv, operator.truediv),
             'FloorDiv': (operator.ifloordiv, operator.floordiv),
             'Mod': (operator.imod, operator.mod), 'Pow': (operator.ipow, operator.pow),
             'MatMult': (operator.imatmul, operator.matmul),
             'BitAnd': (operator.iand, operator.and_), 'BitOr': (operator.ior, operator.or_),
             'BitXor': (operator.ixor, operator.xor),
             'LShift': (operator.ilshift, operator.lshift),
             'RShift': (operator.irshift, operator.rshift)}


def aug_assign(op, x, v):
    """x op= v: Python's in-place form, or x op v for a symbolic tensor"""
    in_place, plain = _IN_PLACE[op]
    if _symbolic(x) or (context.active() and isinstance(x, _C.Tensor)):
        # also a concrete tensor in a traced branch or loop: it may be the
        # constant a number became, which other iterations still read
        return plain(x, v)
    return in_place(x, v)
