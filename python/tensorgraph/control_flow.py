"""Control flow as functions: tg.cond, tg.while_loop, tg.scan.

    y = tg.cond(x.sum() > 0, lambda x: x * 2, lambda x: -x, (x,))
    i, s = tg.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), (i0, s0))
    carry, ys = tg.scan(lambda c, x: (c + x, c * x), c0, xs)

With concrete tensors or Python values (eager mode, or a Python condition
while tracing) they are Python control flow: the chosen branch or each
iteration runs now, and its ops are recorded on the tape as usual. With a
symbolic tensor (inside tg.function) they append one graph node whose
branches or body are subgraphs (the C primitives: see docs/CONTROL_FLOW.md),
so one compiled function takes either branch or any trip count at run time.
Converted code (tg.function's autograph) calls the same primitives.
"""
from . import _C

__all__ = ['cond', 'while_loop', 'scan']


def _is_symbolic(v):
    return isinstance(v, _C.Tensor) and v.is_symbolic


def _primitive(name):
    fn = getattr(_C, name, None)
    if fn is None:
        raise NotImplementedError(f"graph control flow needs tensorgraph._C.{name}, which this "
                                  "build of tensorgraph does not have")
    return fn


def _one_element(t, what):
    if t.numel() != 1:
        raise ValueError(f"{what}: the condition is a tensor of shape {tuple(t.shape)}; a "
                         "condition must have exactly one element")


def truth(v, what):
    """A concrete condition's truth, as Python's `if` reads it."""
    if isinstance(v, _C.Tensor):
        _one_element(v, what)
        return bool(v.item())
    return bool(v)


def predicate(v, what):
    """A symbolic condition as the scalar bool tensor the primitives take."""
    from . import _ops
    if not isinstance(v, _C.Tensor):
        from ._creation import tensor
        return tensor(bool(v))
    _one_element(v, what)
    if v.dtype != _C.bool:
        v = _ops.ne(v, 0)
    return v.reshape(())


def _flatten(out, what):
    """(tensors, single): a function's result as the primitives' tuple"""
    single = isinstance(out, _C.Tensor)
    flat = (out,) if single else tuple(out)
    for i, t in enumerate(flat):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"{what} must return a Tensor or a tuple of Tensors; item {i} is "
                            f"a {type(t).__name__}")
    return flat, single


def cond_tensors(pred, then_fn, else_fn, operands=()):
    """The primitive: pred a symbolic scalar bool tensor, the branches
    functions of the operands returning tuples of tensors."""
    return tuple(_primitive('_cond')(pred, then_fn, else_fn, tuple(operands)))


def while_tensors(cond_fn, body_fn, loop_vars, max_iterations=None, shape_invariants=None):
    """The primitive: loop_vars a tuple of tensors; cond_fn returns a scalar
    bool tensor and body_fn a tuple like loop_vars."""
    return tuple(_primitive('_while_loop')(cond_fn, body_fn, tuple(loop_vars), max_iterations,
                                           shape_invariants))


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands); a graph cond when
    pred is symbolic (both branches then return tensors of the same dtypes
    and shapes)."""
    operands = tuple(operands)
    if not _is_symbolic(pred):
        return (true_fn if truth(pred, 'cond') else false_fn)(*operands)
    shapes = {}

    def branch(fn, key):
        def run(*ops):
            flat, single = _flatten(fn(*ops), f"cond's {key}")
            shapes[key] = single
            return flat
        return run

    out = cond_tensors(predicate(pred, 'cond'), branch(true_fn, 'true_fn'),
                       branch(false_fn, 'false_fn'), operands)
    if shapes['true_fn'] != shapes['false_fn']:
        raise TypeError("cond: one branch returns a Tensor and the other a tuple")
    return out[0] if shapes['true_fn'] else out


def while_loop(cond_fn, body_fn, carried_inputs, max_iterations=None):
    """Runs carried = body_fn(*carried) while cond_fn(*carried); returns the
    final carried tuple. A loop that would run more than max_iterations
    times stops with an error. Symbolic carried values (or a symbolic
    condition) make one graph while_loop node."""
    carried = tuple(carried_inputs)
    n = 0
    while not any(_is_symbolic(v) for v in carried):
        c = cond_fn(*carried)
        if _is_symbolic(c):
            break
        if not truth(c, 'while_loop'):
            return carried
        if max_iterations is not None and n >= max_iterations:
            raise RuntimeError(f"while_loop: the loop reached max_iterations={max_iterations} "
                               "and its condition still holds")
        carried = _flatten(body_fn(*carried), "while_loop's body_fn")[0]
        n += 1
    for i, v in enumerate(carried):
        if not isinstance(v, _C.Tensor):
            raise TypeError(f"while_loop: carried input {i} is a {type(v).__name__}; in a "
                            "graph the carried values must be tensors")
    left = None if max_iterations is None else max_iterations - n
    return while_tensors(lambda *v: predicate(cond_fn(*v), 'while_loop'),
                         lambda *v: _flatten(body_fn(*v), "while_loop's body_fn")[0],
                         carried, left)


def scan(body_fn, init, xs):
    """carry, y = body_fn(carry, x) for each x along xs' first dimension;
    returns (final carry, the ys stacked). init and the carry are a tensor
    or a tuple of tensors, as are xs and each x, and each y."""
    from ._ops import stack
    carry_single = isinstance(init, _C.Tensor)
    xs_single = isinstance(xs, _C.Tensor)
    init_t, xs_t = ((init,) if carry_single else tuple(init)), ((xs,) if xs_single else tuple(xs))
    if not xs_t or any(x.ndim == 0 for x in xs_t):
        raise ValueError("scan: xs must be one or more tensors with a leading dimension")
    length = xs_t[0].shape[0]
    if any(x.shape[0] != length for x in xs_t):
        raise ValueError("scan: the tensors of xs differ in their first dimension")
    pack = (lambda t: t[0]) if carry_single else tuple
    packx = (lambda t: t[0]) if xs_single else tuple
    y_single = []

    def step(carry, x):
        c, y = body_fn(pack(carry), packx(x))
        c_flat = _flatten(c, "scan's body_fn carry")[0]
        y_flat, single = _flatten(y, "scan's body_fn output")
        y_single[:] = [single]
        return c_flat, y_flat

    if not any(_is_symbolic(v) for v in init_t + xs_t):
        carry, ys = init_t, []
        for k in range(length):
            carry, y = step(carry, tuple(x[k] for x in xs_t))
            ys.append(y)
        if not ys:
            raise ValueError("scan: xs is empty (the stacked outputs' shape is unknown)")
        stacked = tuple(stack([y[j] for y in ys]) for j in range(len(ys[0])))
    else:
        n_carry = len(init_t)

        def body(*vals):  # the primitive's form: (*carry, *x) -> (*carry, *y)
            c, y = step(vals[:n_carry], vals[n_carry:])
            return tuple(c) + tuple(y)

        carry, stacked = _primitive('_scan')(body, init_t, xs_t)
        carry, stacked = tuple(carry), tuple(stacked)
    return pack(carry), (stacked[0] if y_single[0] else stacked)

