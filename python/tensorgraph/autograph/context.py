"""What is being traced right now: the graph branches and loop bodies open.

While a converted `if` or loop with a symbolic condition is traced into a
graph cond or while_loop, this records where it is in the user's code (so
errors found inside it name that statement) and which Python containers
existed before it (so that changing one inside is refused: the body runs
once while tracing, not once per iteration).
"""
import sys

from .errors import ConversionError, is_library_file, user_frame

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


class Staging:
    """While a graph branch or loop body is traced: where it is (errors) and
    which containers are outside it (side effects)."""

    def __enter__(self):
        f = user_frame(2)
        _where.append((f.f_code.co_filename, f.f_lineno) if f else None)
        _outer_containers.append(_containers_in_scope())

    def __exit__(self, *exc):
        _outer_containers.pop()
        _where.pop()


