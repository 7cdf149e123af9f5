"""What a tg.function trace assumed about modules: their training flag.

A trace bakes in whatever Python decided while it ran. A module's
`training` flag decides dropout (masks or identity) and batch norm (batch
statistics and running-stat updates, or the running statistics): a graph
traced in training mode is wrong after `model.eval()`. And the graph holds
the parameter and buffer tensors it read: after `module.weight =
Parameter(...)` it would go on reading the old one. So every module
called while a trace runs is noted with its flag and the identity of its
own parameters and buffers, and a traced graph is reused only while those
hold (as torch.compile guards on them); otherwise the function traces
again, once per combination; so does a parameter frozen or unfrozen
(requires_grad_) since the trace. (Writes into the same tensors, an
optimizer's step or load_state_dict, change nothing here: the graph reads
them when it runs.)"""
import weakref

from . import _C

stack = []  # per active trace (traces nest): id(module) -> module
# bumped wherever a module's parameters or buffers may be replaced (Module's
# __setattr__, __delattr__, register_*, dtype conversions): while it stays,
# the tensors a trace noted are still the modules' own
epoch = [0]


def changed():
    epoch[0] += 1


def note(module):
    """called by Module.__call__: module takes part in the trace on top"""
    if stack:
        stack[-1][id(module)] = module


def begin():
    stack.append({})


def _tensors(m):
    """the identities of m's own parameters and buffers (None included)"""
    return tuple(map(id, m._parameters.values())) + tuple(map(id, m._buffers.values()))


def _requires_grad(m):
    """which of m's parameters require grad (a frozen one is a constant of
    the trace, which then computes no gradient for it)"""
    return tuple(p is not None and p.requires_grad for p in m._parameters.values())


class Guards:
    """the modules a trace called: their flags, and their tensors as of
    epoch `seen`"""
    __slots__ = ('flags', 'tensors', 'grads', 'seen', 'seen_grads')

    def __init__(self, modules):
        self.flags = tuple((weakref.ref(m), bool(m.training)) for m in modules)
        self.tensors = tuple(_tensors(m) for m in modules)
        self.grads = tuple(_requires_grad(m) for m in modules)
        self.seen = epoch[0]
        self.seen_grads = _C._requires_grad_epoch()

    def hold(self):
        """whether every module still has its flag and its tensors (a module
        gone since cannot be called again: it holds)"""
        for ref, training in self.flags:
            m = ref()
            if m is not None and m.training is not training and bool(m.training) != training:
                return False
        if self.seen != epoch[0]:
            for (ref, _), tensors in zip(self.flags, self.tensors):
                m = ref()
                if m is not None and _tensors(m) != tensors:
                    return False
            self.seen = epoch[0]
        now = _C._requires_grad_epoch()
        if self.seen_grads != now:
            for (ref, _), grads in zip(self.flags, self.grads):
                m = ref()
                if m is not None and _requires_grad(m) != grads:
                    return False
            self.seen_grads = now
        return True


def end():
    """the guards of the trace that ends"""
    return Guards(list(stack.pop().values()))
