"""tg.autograph: converting Python control flow into graph control flow.

tg.function(fn) runs fn's converted source (as TensorFlow's AutoGraph
does): an `if`, `while` or `for` whose condition or range is a symbolic
tensor becomes tg.cond / tg.while_loop in the graph, so one compiled
function follows the data; Python values keep Python's meaning (evaluated
once while tracing). The package, one job per file:

- conversion.py: source -> converted function, the cache, what is user code
- lowering.py:   return / break / continue -> flags
- analysis.py:   names read and written, liveness (a branch's or loop's state)
- transformer.py: statements and expressions -> calls of the operators
- operators.py:  the run-time operators (Python now, or graph ops)
- staging.py:    graph cond / while_loop for converted state (types, errors)
- loops.py:      for over a symbolic range or tensor, as a while loop
- context.py:    the branches and loops being traced (error locations, side effects)
- undefined.py:  unassigned variables
- errors.py:     ConversionError, located in the user's file and line
"""
from .conversion import convert, do_not_convert, source_of
from .errors import ConversionError


def to_code(fn):
    """The converted source of fn, as text."""
    new = convert(fn)
    src = source_of(new)
    if src is None:
        raise ValueError(f"{getattr(fn, '__qualname__', fn)!r} is not converted (library code, "
                         "a lambda, a generator, no source, or marked do_not_convert)")
    return src


__all__ = ['convert', 'do_not_convert', 'to_code', 'ConversionError']
