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
(requires_grad_) since the trace, and a change of the default dtype
(set_default_dtype: Python floats in the trace took the old one). (Writes into the same tensors, an
optimizer's step or load_state_dict, change nothing here: the graph reads
them when it runs.)"""
import weakref

from . import _C

stack = []  # per active trace (traces nest): id(module) -> module
steps = []  # per active trace: the optimizer steps it compiled, (optimizer, group, lr)
# bumped wherever a module's parameters, buffers or training flag may change
# (Module's __setattr__, __delattr__, register_*, train/eval, dtype
# conversions, set_default_dtype): while it stays, the flags and tensors a trace noted hold
epoch = [0]


def changed():
    epoch[0] += 1


def note(module):
    """called by Module.__call__: module takes part in the trace on top"""
    if stack:
        stack[-1][id(module)] = module


def begin():
    stack.append({})
    steps.append([])


def note_step(optimizer, group, lr):
    """called by an optimizer's step() inside the trace on top: the
    update of param group `group` is compiled, with lr the float64 tensor
    the graph reads its learning rate from"""
    if steps:
        steps[-1].append((optimizer, group, lr))


def _fixed_keys(group):
    """the keys of what a compiled update fixed of a param group: all but
    the parameters and the lr"""
    return tuple(k for k in group if k != 'params' and k != 'lr')


class _Step:
    """one compiled optimizer update: its group's other hyper-parameters
    as traced, and the lr tensor each call sets to the group's lr"""
    __slots__ = ('opt', 'group', 'lr', 'lr_value', 'n_groups', 'keys', 'fixed')

    def __init__(self, opt, group, lr):
        g = opt.param_groups[group]
        self.opt, self.group, self.lr = weakref.ref(opt), group, lr
        self.lr_value, self.n_groups = g['lr'], len(opt.param_groups)
        self.keys = _fixed_keys(g)
        self.fixed = tuple(map(g.get, self.keys))  # map: no Python frame per key

    def hold(self):
        opt = self.opt()
        if opt is None:
            return True
        if len(opt.param_groups) != self.n_groups:
            return False
        g = opt.param_groups[self.group]
        if len(g) != len(self.keys) + 2 or tuple(map(g.get, self.keys)) != self.fixed:
            return False
        if g['lr'] != self.lr_value:
            self.lr.fill_(float(g['lr']))  # requires no grad
            self.lr_value = g['lr']
        return True


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
    __slots__ = ('flags', 'tensors', 'grads', 'seen', 'seen_grads', 'steps', 'default_dtype')

    def __init__(self, modules, steps=()):
        self.steps = tuple(_Step(*s) for s in steps)
        self.flags = tuple((weakref.ref(m), bool(m.training)) for m in modules)
        self.tensors = tuple(_tensors(m) for m in modules)
        self.grads = tuple(_requires_grad(m) for m in modules)
        self.seen = epoch[0]
        self.seen_grads = _C._requires_grad_epoch()
        self.default_dtype = _C._get_default_dtype()

    def hold(self):
        """whether every module still has its flag and its tensors (a module
        gone since cannot be called again: it holds)"""
        if self.seen != epoch[0]:  # train()/eval() and assignments move the epoch
            if self.default_dtype != _C._get_default_dtype():
                return False
            for (ref, training), tensors in zip(self.flags, self.tensors):
                m = ref()
                if m is not None and (bool(m.training) != training or _tensors(m) != tensors):
                    return False
            self.seen = epoch[0]
        now = _C._requires_grad_epoch()
        if self.seen_grads != now:
            for (ref, _), grads in zip(self.flags, self.grads):
                m = ref()
                if m is not None and _requires_grad(m) != grads:
                    return False
            self.seen_grads = now
        for step in self.steps:
            if not step.hold():
                return False
        return True


def end():
    """the guards of the trace that ends"""
    return Guards(list(stack.pop().values()), steps.pop())
