"""Converted branches and loops as graph ops, when their condition is symbolic.

A converted `if` or loop hands over its state: the variables it assigns.
Graph ops carry tensors only, so each state variable is settled to one of:
a tensor of one dtype (and shape), or a Python value that the branches or
iterations leave as it is (passed through, a constant of the trace). A
Python number that becomes a tensor in a branch or an iteration is made a
tensor of that dtype; a variable defined in only one branch is an error,
except the converted function's return value (read only on paths that
returned); a loop variable assigned in the body only starts as zeros of the
type the body gives it. Types are found by tracing the branches or body:
when they show the state needs other types, the trace is abandoned
(_Retry) and made again with them.
"""
import sys

from .. import _C, _ops
from .. import control_flow as cf
from .errors import ConversionError, is_library_file, user_frame
from .undefined import Undefined, UndefinedReturnValue


_where = []  # per open staging: (file, line) of the user's statement


def error_here(message):
    """A ConversionError at the converted statement being staged."""
    if _where:
        return ConversionError(message, *_where[-1])
    f = user_frame(2)
    return ConversionError(message, f.f_code.co_filename, f.f_lineno) if f else \
        ConversionError(message)


def active():
    """a graph branch or loop body is being traced"""
    return bool(_where)


class _Retry(Exception):
    def __init__(self, specs):
        super().__init__("retrace with new state types")
        self.specs = specs


class Spec:
    """A state variable carried as a tensor. shape may hold -1 (a loop
    variable whose size changes); start says how to make the first value
    from a Python one ('number': full of it, 'zeros': it is undefined)."""

    def __init__(self, dtype, shape, start=None):
        self.dtype, self.shape, self.start = dtype, tuple(shape), start

    def __eq__(self, other):
        return isinstance(other, Spec) and (self.dtype, self.shape) == (other.dtype, other.shape)


class Const:
    """A state variable kept as a Python value."""

    def __init__(self, value):
        self.value = value


def _tensor(v):
    return isinstance(v, _C.Tensor)


def _number(v):
    return isinstance(v, (bool, int, float))


def _py_dtype(values):
    import tensorgraph as tg
    if all(isinstance(v, bool) for v in values):
        return tg.bool
    if all(isinstance(v, int) for v in values):
        return tg.int64
    return tg.get_default_dtype()


def _show(name):
    if name == 'ag__retval':
        return "the return value"
    if name.startswith('ag__'):
        return f"the generated flag {name}"
    return f"'{name}'"


def _describe(v):
    if _tensor(v):
        return f"a {v.dtype.name} tensor of shape {tuple(v.shape)}"
    if isinstance(v, Undefined):
        return "not assigned"
    return f"the Python {type(v).__name__} {v!r:.60}"


def _same_python(a, b):
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _materialize(v, spec, like=None):
    """v as a tensor of spec (a Python number filled in, zeros for undefined)"""
    import tensorgraph as tg
    if _tensor(v):
        return v
    fill = 0 if isinstance(v, Undefined) else v
    if like is not None:  # the loop variable's run-time shape may be unknown
        return tg.zeros_like(like) + fill
    return tg.full(spec.shape, fill, dtype=spec.dtype)


# ---- Python side effects in graph branches and loops -------------------------------------
_outer_containers = []  # per open staging: ids of the lists/dicts/sets made before it


def _containers_in_scope():
    ids = set()
    f = sys._getframe(2)
    while f is not None:
        if not is_library_file(f.f_code.co_filename):
            for v in list(f.f_locals.values()):
                if isinstance(v, (list, dict, set, bytearray)):
                    ids.add(id(v))
        f = f.f_back
    return ids


_MUTATORS = {'append', 'extend', 'insert', 'pop', 'remove', 'clear', 'update', 'add',
             'discard', 'setdefault', 'popitem', 'sort', 'reverse', '__setitem__',
             '__delitem__'}


def check_side_effect(f):
    """Refuses a call that changes a Python container made outside the graph
    branch or loop being traced: it would happen once, while tracing."""
    if not _outer_containers:
        return
    owner = getattr(f, '__self__', None)
    if isinstance(owner, (list, dict, set, bytearray)) and \
            getattr(f, '__name__', '') in _MUTATORS and \
            any(id(owner) in ids for ids in _outer_containers):
        at = user_frame(2)
        raise ConversionError(
            f"tg.function: '{f.__name__}' on a Python {type(owner).__name__} made outside this "
            "loop or branch, whose condition is a tensor: the body becomes a graph traced once, "
            "so the call would run once while tracing, not at every iteration. Carry the values "
            "as a tensor instead (e.g. tg.cat), or make the condition a Python value",
            at.f_code.co_filename if at else None, at.f_lineno if at else None)


class _Staging:
    """While a graph branch or loop body is traced: where it is (errors) and
    which containers are outside it (side effects)."""

    def __enter__(self):
        f = user_frame(2)
        _where.append((f.f_code.co_filename, f.f_lineno) if f else None)
        _outer_containers.append(_containers_in_scope())

    def __exit__(self, *exc):
        _outer_containers.pop()
        _where.pop()


# ---- if ---------------------------------------------------------------------------------
def _settle_branches(a, b, name, returned=(False, False)):
    """What a state variable must be, given both branches' values; a branch
    that has returned (returned[k]) may leave variables unassigned: they are
    not read after a return."""
    if isinstance(a, Undefined) and returned[0] and not isinstance(b, Undefined):
        a = UndefinedReturnValue()
    if isinstance(b, Undefined) and returned[1] and not isinstance(a, Undefined):
        b = UndefinedReturnValue()
    if isinstance(a, UndefinedReturnValue) or isinstance(b, UndefinedReturnValue):
        name = 'ag__retval' if name != 'ag__retval' else name
    if _tensor(a) or _tensor(b):
        t, other = (a, b) if _tensor(a) else (b, a)
        if _tensor(other):
            if other.dtype != t.dtype or tuple(other.shape) != tuple(t.shape):
                raise error_here(f"tg.function: {_show(name)} is {_describe(a)} in one branch "
                                 f"and {_describe(b)} in the other; a graph cond needs the same "
                                 "dtype and shape from both")
        elif isinstance(other, Undefined) and name != 'ag__retval':
            raise _one_branch(name)
        elif not _number(other) and not isinstance(other, Undefined):
            raise error_here(f"tg.function: {_show(name)} is {_describe(a)} in one branch and "
                             f"{_describe(b)} in the other")
        return Spec(t.dtype, t.shape)
    if isinstance(a, Undefined) != isinstance(b, Undefined):
        if name == 'ag__retval':
            return Const(b if isinstance(a, Undefined) else a)
        raise _one_branch(name)
    if _same_python(a, b):
        return Const(a)
    if _number(a) and _number(b):
        return Spec(_py_dtype([a, b]), ())
    raise error_here(f"tg.function: {_show(name)} is {_describe(a)} in one branch and "
                     f"{_describe(b)} in the other, under a tensor condition; only tensors and "
                     "numbers may differ between the branches of a graph cond")


def _returned(values, names):
    """the branch has set the converted function's return flag"""
    return any(n == 'ag__do_return' and v is True for v, n in zip(values, names))


def _one_branch(name):
    return error_here(f"tg.function: {_show(name)} is assigned in only one branch of this "
                      "if, whose condition is a tensor, and is used after it; assign it before "
                      "the if or in both branches")


def cond(pred, true_fn, false_fn, inputs, names):
    """Runs a converted if as a graph cond: true_fn(*inputs) and
    false_fn(*inputs) return tuples aligned with names."""
    pred = cf.predicate(pred, 'if')
    specs = {}
    with _Staging():
        for _ in range(len(names) + 2):
            try:
                return _try_cond(pred, true_fn, false_fn, inputs, names, specs)
            except _Retry as r:
                specs = r.specs
    raise error_here("tg.function: the types of this if's variables do not settle")


def _try_cond(pred, true_fn, false_fn, inputs, names, specs):
    first, layout = [], []

    def branch(fn):
        def run():
            out = tuple(fn(*inputs))
            if not first:
                first.append(out)
                layout.extend(specs.get(i) or (Spec(o.dtype, o.shape) if _tensor(o) else None)
                              for i, o in enumerate(out))
            else:
                returned = (_returned(first[0], names), _returned(out, names))
                settled = [_settle_branches(a, b, n, returned)
                           for a, b, n in zip(first[0], out, names)]
                wanted = {i: s for i, s in enumerate(settled) if isinstance(s, Spec)}
                if any(wanted.get(i) != layout[i] for i in range(len(names))):
                    raise _Retry(wanted)
            tensors = tuple(_materialize(o, s) for o, s in zip(out, layout) if s is not None)
            # a graph cond has at least one result: a branch that changes
            # no tensor still gives one (unused)
            return tensors or (_ops.logical_not(pred),)
        return run

    res = iter(cf.cond_tensors(pred, branch(true_fn), branch(false_fn)))
    return tuple(next(res) if s is not None else v for v, s in zip(first[0], layout))


# ---- while ----------------------------------------------------------------------------------
def _start_spec(v):
    if _tensor(v):
        return Spec(v.dtype, v.shape)
    if _number(v):
        return Spec(_py_dtype([v]), (), 'number')
    return Const(v)  # Undefined included: it stays so unless the body assigns it


def _settle_iteration(spec, start, out, name):
    """spec again if the body keeps the variable's type, else the new spec
    (a _Retry follows), or an error."""
    if isinstance(spec, Spec):
        if _number(out):
            return spec
        if not _tensor(out):
            raise error_here(f"tg.function: loop variable {_show(name)} is a tensor before an "
                             f"iteration and {_describe(out)} after it")
        if out.dtype != spec.dtype or out.ndim != len(spec.shape):
            if spec.start is not None and not getattr(spec, 'settled', False):
                new = Spec(out.dtype, out.shape, spec.start)
                new.settled = True
                return new
            change = "dtype" if out.dtype != spec.dtype else "rank"
            raise error_here(f"tg.function: loop variable {_show(name)} changes {change} in the "
                             f"loop: {spec.dtype.name} of shape {spec.shape} before an iteration, "
                             f"{_describe(out)} after it; a graph loop keeps each variable's "
                             "dtype and rank")
        shape = tuple(s if s == o else -1 for s, o in zip(spec.shape, out.shape))
        if shape != spec.shape:  # the size changes: carried with unknown dims
            new = Spec(spec.dtype, shape, spec.start)
            new.settled = getattr(spec, 'settled', False)
            return new
        return spec
    value = spec.value
    if _same_python(out, value) or (isinstance(out, Undefined) and isinstance(value, Undefined)):
        return spec
    if isinstance(value, Undefined):
        if _tensor(out):
            return Spec(out.dtype, out.shape, 'zeros')
        if _number(out):
            return Spec(_py_dtype([out]), (), 'zeros')
        return Const(out)
    if _number(value) and (_tensor(out) or _number(out)):
        return Spec(out.dtype if _tensor(out) else _py_dtype([value, out]),
                    tuple(out.shape) if _tensor(out) else (), 'number')
    raise error_here(f"tg.function: loop variable {_show(name)} is {_describe(value)} before an "
                     f"iteration and {_describe(out)} after it; in a loop whose condition is a "
                     "tensor, variables that change must be tensors or numbers")


def while_loop(test, body, state, names, max_iterations=None):
    """Runs a converted loop as a graph while_loop: test(*state) is its
    condition, body(*state) returns the new state."""
    specs = [_start_spec(v) for v in state]
    with _Staging():
        for _ in range(2 * len(names) + 2):
            try:
                return _try_while(test, body, tuple(state), names, specs, max_iterations)
            except _Retry as r:
                specs = r.specs
    raise error_here("tg.function: the types of this loop's variables do not settle")


def _try_while(test, body, state, names, specs, max_iterations):
    carried = [i for i, s in enumerate(specs) if isinstance(s, Spec)]
    start = tuple(_start_value(state[i], specs[i]) for i in carried)
    invariants = [list(specs[i].shape) if -1 in specs[i].shape else None for i in carried]

    def unpack(values):
        out = [s.value if isinstance(s, Const) else None for s in specs]
        for i, v in zip(carried, values):
            out[i] = v
        return out

    def loop_test(*values):
        c = test(*unpack(values))
        return cf.predicate(c, 'while') if _tensor(c) else bool(c)

    def loop_body(*values):
        out = tuple(body(*unpack(values)))
        settled = [_settle_iteration(s, v, o, n) for s, v, o, n in zip(specs, state, out, names)]
        if any(a is not b for a, b in zip(settled, specs)):
            raise _Retry(settled)
        return tuple(_materialize(out[i], specs[i], v) for i, v in zip(carried, values))

    res = cf.while_tensors(loop_test, loop_body, start, max_iterations,
                           invariants if any(invariants) else None)
    return tuple(unpack(res))


def _start_value(v, spec):
    import tensorgraph as tg
    if _tensor(v):
        if v.dtype != spec.dtype:
            raise error_here(f"tg.function: a loop variable is {_describe(v)} before the loop "
                             f"and {spec.dtype.name} after an iteration")
        return v
    shape = tuple(1 if s == -1 else s for s in spec.shape)
    fill = 0 if isinstance(v, Undefined) else v
    return tg.full(shape, fill, dtype=spec.dtype)


# ---- for ------------------------------------------------------------------------------------
def for_range(start, stop, step, extra_test, body, state, names):
    """for i in range(start, stop, step) with symbolic bounds: a while loop
    over an int64 counter."""
    import tensorgraph as tg

    def as_index(v):
        return v.to(tg.int64) if _tensor(v) else tg.tensor(int(v), dtype=tg.int64)

    start, stop, step_t = as_index(start), as_index(stop), as_index(step)

    def more(i):
        if _number(step):
            return i < stop if step > 0 else i > stop
        return tg.where(step_t > 0, i < stop, i > stop)

    return _counted(more, lambda i: i, start, step_t, extra_test, body, state, names, None)


def for_tensor(xs, extra_test, body, state, names):
    """for x in xs with symbolic xs: a while loop over its first dimension."""
    import tensorgraph as tg
    if xs.ndim == 0:
        raise error_here("tg.function: iteration over a 0-d tensor")
    n = xs.shape[0]

    def item(i):
        return tg.index_select(xs, 0, i.reshape(1)).squeeze(0)

    return _counted(lambda i: i < n, item, tg.tensor(0, dtype=tg.int64),
                    tg.tensor(1, dtype=tg.int64), extra_test, body, state, names, n)


def _counted(more, item, start, step, extra_test, body, state, names, max_iterations):
    import tensorgraph as tg

    def test(i, *st):
        c = more(i)
        if extra_test is None:
            return c
        return tg.logical_and(c, cf.predicate(extra_test(*st), 'for'))

    def loop_body(i, *st):
        return (i + step,) + tuple(body(item(i), *st))

    out = while_loop(test, loop_body, (start,) + tuple(state), ('ag__index',) + tuple(names),
                     max_iterations)
    return out[1:]


# ---- and / or ----------------------------------------------------------------------------
def lazy_bool(a, b_fn, is_and):
    """a and b_fn() / a or b_fn() with a symbolic: b_fn runs in a branch, as
    Python evaluates it only when needed (a boolean tensor results)."""
    import tensorgraph as tg
    pred = cf.predicate(a, 'and' if is_and else 'or')

    def rest():
        return (cf.predicate(b_fn(), 'and' if is_and else 'or'),)

    def fixed():  # the branch where a decides: a itself (False for and, True for or)
        return (_ops.logical_and(pred, pred),)

    with _Staging():
        return cf.cond_tensors(pred, rest if is_and else fixed, fixed if is_and else rest)[0]


__all__ = ['cond', 'while_loop', 'for_range', 'for_tensor', 'lazy_bool', 'check_side_effect',
           'ConversionError', 'UndefinedReturnValue']
