"""`for` loops with a symbolic range or iterable, as graph while loops.

`for i in range(start, stop, step)` with a tensor bound and `for x in xs`
with a symbolic tensor become a while loop over an int64 counter carried
with the loop's state; the body receives the counter (or xs' row at the
counter) as its item.
"""
from .. import control_flow as cf
from .context import error_here
from .staging import is_number, is_tensor, while_loop


# ---- for ------------------------------------------------------------------------------------
def for_range(start, stop, step, extra_test, body, state, names):
    """for i in range(start, stop, step) with symbolic bounds: a while loop
    over an int64 counter."""
    import tensorgraph as tg

    def as_index(v):
        return v.to(tg.int64) if is_tensor(v) else tg.tensor(int(v), dtype=tg.int64)

    start, stop, step_t = as_index(start), as_index(stop), as_index(step)

    def more(i):
        if is_number(step):
            return i < stop if step > 0 else i > stop
        return tg.where(step_t > 0, i < stop, i > stop)

    return _counted(more, lambda i: i, start, step_t, extra_test, body, state, names, None)


def for_tensor(xs, extra_test, body, state, names):
    """for x in xs with symbolic xs: a while loop over its first dimension."""
    import tensorgraph as tg
    if xs.ndim == 0:
        raise error_here("tg.function: iteration over a 0-d tensor")
    n = xs.shape[0]
    if n < 0:
        raise error_here("tg.function: iteration over a tensor whose first dimension is not "
                         "known while tracing (a loop variable that changes size); loop over "
                         "range(n) with a counted n instead")

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


