"""What a tg.function trace assumed about modules: their training flag.

A trace bakes in whatever Python decided while it ran. A module's
`training` flag decides dropout (masks or identity) and batch norm (batch
statistics and running-stat updates, or the running statistics): a graph
traced in training mode is wrong after `model.eval()`. So every module
called while a trace runs is noted with its flag, and a traced graph is
reused only while those flags hold (as torch.compile guards on them);
otherwise the function traces again, once per combination."""
import weakref

_stack = []  # per active trace (traces nest): id(module) -> module


def note(module):
    """called by Module.__call__: module takes part in the trace on top"""
    if _stack:
        _stack[-1][id(module)] = module


def begin():
    _stack.append({})


def end():
    """the guards of the trace that ends: ((weakref, training), ...)"""
    seen = _stack.pop()
    return tuple((weakref.ref(m), bool(m.training)) for m in seen.values())


def hold(guards):
    """whether every module the guards name still has its flag (a module
    gone since cannot be called again: it holds)"""
    for ref, training in guards:
        m = ref()
        if m is not None and bool(m.training) != training:
            return False
    return True
