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
from .. import _C, _ops
from .. import control_flow as cf
from .context import Staging, error_here
from .undefined import Undefined


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


def is_tensor(v):
    return isinstance(v, _C.Tensor)


def is_number(v):
    return isinstance(v, (bool, int, float))


def _py_dtype(values):
    import tensorgraph as tg
    if all(isinstance(v, bool) for v in values):
        return tg.bool
    if all(isinstance(v, int) for v in values):
        return tg.int64
    return tg.get_default_dtype()


def _kind(dtype_or_number):
    """0 bool, 1 integer, 2 floating point: Python numbers meeting a tensor
    only change its dtype when they are of a higher kind (as in PyTorch)"""
    import tensorgraph as tg
    v = dtype_or_number
    if isinstance(v, bool) or v == tg.bool:
        return 0
    if isinstance(v, int) or (not isinstance(v, float) and not v.is_floating_point):
        return 1
    return 2


def _with_number(dtype, number):
    """the dtype a tensor of dtype and a Python number agree on"""
    if _kind(number) <= _kind(dtype):
        return dtype
    return _py_dtype([number])


def _show(name):
    if name == 'ag__retval':
        return "the return value"
    if name.startswith('ag__'):
        return f"the generated flag {name}"
    return f"'{name}'"


def _describe(v):
    if is_tensor(v):
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
    if is_tensor(v):
        return v if v.dtype == spec.dtype else v.to(spec.dtype)
    fill = 0 if isinstance(v, Undefined) else v
    if like is not None:  # the loop variable's run-time shape may be unknown
        return tg.zeros_like(like) + fill
    return tg.full(spec.shape, fill, dtype=spec.dtype)


# ---- if ---------------------------------------------------------------------------------
def _settle_branches(a, b, name, returned=(False, False)):
    """What a state variable must be, given both branches' values; a branch
    that has returned (returned[k]) may leave variables unassigned: they are
    not read after a return."""
    # never read: the return value before a return, anything after one
    unread = name == 'ag__retval' or any(
        r and isinstance(v, Undefined) for r, v in zip(returned, (a, b)))
    if is_tensor(a) or is_tensor(b):
        t, other = (a, b) if is_tensor(a) else (b, a)
        if is_tensor(other):
            if other.dtype != t.dtype or tuple(other.shape) != tuple(t.shape):
                raise error_here(f"tg.function: {_show(name)} is {_describe(a)} in one branch "
                                 f"and {_describe(b)} in the other; a graph cond needs the same "
                                 "dtype and shape from both")
        elif isinstance(other, Undefined) and not unread:
            raise _one_branch(name)
        elif is_number(other):
            return Spec(_with_number(t.dtype, other), t.shape)
        elif not isinstance(other, Undefined):
            raise error_here(f"tg.function: {_show(name)} is {_describe(a)} in one branch and "
                             f"{_describe(b)} in the other")
        return Spec(t.dtype, t.shape)
    if isinstance(a, Undefined) != isinstance(b, Undefined):
        if unread:
            return Const(b if isinstance(a, Undefined) else a)
        raise _one_branch(name)
    if _same_python(a, b):
        return Const(a)
    if is_number(a) and is_number(b):
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
    with Staging():
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
                layout.extend(specs.get(i) or (Spec(o.dtype, o.shape) if is_tensor(o) else None)
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
    if is_tensor(v):
        return Spec(v.dtype, v.shape)
    if is_number(v):
        return Spec(_py_dtype([v]), (), 'number')
    return Const(v)  # Undefined included: it stays so unless the body assigns it


def _settle_iteration(spec, start, out, name):
    """spec again if the body keeps the variable's type, else the new spec
    (a _Retry follows), or an error."""
    if isinstance(spec, Spec):
        if is_number(out):
            dtype = _with_number(spec.dtype, out)
            if dtype == spec.dtype:
                return spec
            if spec.start is not None and not getattr(spec, 'settled', False):
                new = Spec(dtype, spec.shape, spec.start)
                new.settled = True
                return new
            raise error_here(f"tg.function: loop variable {_show(name)} changes dtype in the "
                             f"loop: a {spec.dtype.name} tensor before an iteration, "
                             f"{_describe(out)} after it")
        if not is_tensor(out):
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
        if is_tensor(out):
            return Spec(out.dtype, out.shape, 'zeros')
        if is_number(out):
            return Spec(_py_dtype([out]), (), 'zeros')
        return Const(out)
    if is_number(value) and (is_tensor(out) or is_number(out)):
        return Spec(out.dtype if is_tensor(out) else _py_dtype([value, out]),
                    tuple(out.shape) if is_tensor(out) else (), 'number')
    raise error_here(f"tg.function: loop variable {_show(name)} is {_describe(value)} before an "
                     f"iteration and {_describe(out)} after it; in a loop whose condition is a "
                     "tensor, variables that change must be tensors or numbers")


def while_loop(test, body, state, names, max_iterations=None):
    """Runs a converted loop as a graph while_loop: test(*state) is its
    condition, body(*state) returns the new state."""
    specs = [_start_spec(v) for v in state]
    with Staging():
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
        return cf.predicate(c, 'while') if is_tensor(c) else bool(c)

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
    if is_tensor(v):
        if v.dtype != spec.dtype:
            raise error_here(f"tg.function: a loop variable is {_describe(v)} before the loop "
                             f"and {spec.dtype.name} after an iteration")
        return v
    shape = tuple(1 if s == -1 else s for s in spec.shape)
    fill = 0 if isinstance(v, Undefined) else v
    return tg.full(shape, fill, dtype=spec.dtype)


# ---- and / or ----------------------------------------------------------------------------
def lazy_bool(a, b_fn, is_and):
    """a and b_fn() / a or b_fn() with a symbolic: b_fn runs in a branch, as
    Python evaluates it only when needed (a boolean tensor results)."""
    pred = cf.predicate(a, 'and' if is_and else 'or')

    def rest():
        return (cf.predicate(b_fn(), 'and' if is_and else 'or'),)

    def fixed():  # the branch where a decides: a itself (False for and, True for or)
        return (_ops.logical_and(pred, pred),)

    with Staging():
        return cf.cond_tensors(pred, rest if is_and else fixed, fixed if is_and else rest)[0]


__all__ = ['cond', 'while_loop', 'lazy_bool']
