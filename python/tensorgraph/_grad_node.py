"""The recorded graph's nodes as PyTorch shows them: tensor.grad_fn and
its next_functions, name(), and node hooks (register_hook,
register_prehook). A node is a handle on the C engine's node
(tg_grad_node, python/src/autograd_graph.c), which the handle keeps
alive; one Python object per live node, so that
a.grad_fn.next_functions[0][0] is b.grad_fn when b fed a, as in PyTorch.
A leaf that requires grad is reached through its AccumulateGrad node, one
per leaf while something holds it."""
import weakref

from . import _C


class _Hooks(dict):
    """handle id -> hook, in registration order (weak-referenceable)"""


class Node:
    """What made a tensor (PyTorch's grad_fn). Each name is its own
    subclass, named as PyTorch's node classes (type(y.grad_fn).__name__
    is 'MulBackward0')."""
    __slots__ = ('_name', '_c', '__weakref__')

    def __init__(self, name, handle=None):
        self._name = name
        self._c = handle

    def name(self):
        # PyTorch's C++ nodes without the Backward suffix name their namespace
        return self._name if 'Backward' in self._name and self._name != 'CopyBackwards' \
            else 'torch::autograd::' + self._name

    @property
    def next_functions(self):
        """one (node, input_nr) pair per input of the op: the node that made
        the input and which of its outputs it was, the AccumulateGrad of a
        leaf that requires grad, or (None, 0) for an input needing none"""
        if self._c is None:
            return ()
        return tuple((_node_object(o), nr) if o is not None and not isinstance(o, _C.Tensor)
                     else (_accumulate_grad(o), 0) if o is not None else (None, 0)
                     for o, nr in _C._grad_node_next(self._c))

    def _hooks(self, pre):
        if self._c is None:
            raise RuntimeError(f"{type(self).__name__} is not a node of the graph")
        return _C._grad_node_hooks(self._c, (_Hooks(), _Hooks()))[0 if pre else 1]

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after the node's gradient rule,
        grad_inputs the gradients it gives its inputs (None where none),
        grad_outputs those it received; a tuple it returns replaces
        grad_inputs. Returns a handle with remove()."""
        return _add(self._hooks(False), fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before the node's gradient rule; a tuple it
        returns replaces grad_outputs. Returns a handle with remove()."""
        return _add(self._hooks(True), fn)

    def __repr__(self):
        return f'<{type(self).__name__} object at {id(self):#x}>'


def _add(hooks, fn):
    from ._tensor_extra import RemovableHandle
    h = RemovableHandle(hooks)
    hooks[h.id] = fn
    return h


class AccumulateGrad(Node):
    """The node a leaf's gradient goes into (PyTorch's AccumulateGrad):
    .variable is the leaf. Its pre hooks run as the leaf's tensor hooks."""
    __slots__ = ('variable',)

    def __init__(self, variable):
        super().__init__('AccumulateGrad')
        self.variable = variable

    @property
    def next_functions(self):
        return ()

    def register_prehook(self, fn):
        def tensor_hook(grad):
            r = fn((grad,))
            if r is None:
                return None
            if not isinstance(r, tuple):
                raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
            if len(r) != 1:
                raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has returned an "
                                   f"incorrect number of values (got {len(r)}, but "
                                   f"expected 1)")
            return r[0]
        return self.variable.register_hook(tensor_hook)

    def register_hook(self, fn):
        raise NotImplementedError("hooks run after a leaf's accumulation (AccumulateGrad."
                                  "register_hook) are not supported; register_prehook, or "
                                  "the leaf's register_hook, run before it")


# the C ops' names whose PyTorch node has another name, whatever the arguments
_TORCH_NODE_NAMES = {'cast': 'ToCopyBackward0', 'gemm': 'AddmmBackward0',
                     'batch_norm': 'NativeBatchNormBackward0',
                     'max_pool2d': 'MaxPool2DWithIndicesBackward0',
                     'avg_pool2d': 'AvgPool2DBackward0',
                     'tile': 'RepeatBackward0', 'conv2d': 'ConvolutionBackward0',
                     'conv1d': 'ConvolutionBackward0', 'conv3d': 'ConvolutionBackward0',
                     'conv_transpose2d': 'ConvolutionBackward0',
                     'conv_transpose1d': 'ConvolutionBackward0',
                     'conv_transpose3d': 'ConvolutionBackward0',
                     'layer_norm': 'NativeLayerNormBackward0',
                     'vector_norm': 'LinalgVectorNormBackward0', 'log1p': 'Log1PBackward0',
                     'concat': 'CatBackward0'}
_node_types = {}


def _node_type(c_name):
    t = _node_types.get(c_name)
    if t is None:
        if 'Backward' in c_name or c_name == 'CopySlices':  # PyTorch's (_C._set_grad_fn_name)
            name = c_name
        elif c_name[:1].isupper():  # an autograd.Function: PyTorch's MyFnBackward
            name = c_name + 'Backward'
        else:
            name = _TORCH_NODE_NAMES.get(c_name) or \
                ''.join(p.capitalize() for p in c_name.split('_')) + 'Backward0'
        t = _node_types[c_name] = type(name, (Node,), {'__slots__': ()})
    return t


# node key (the C node's address, fixed while a handle holds it) -> its object
_live = weakref.WeakValueDictionary()


def _node_object(handle):
    c_name, key = _C._grad_node_info(handle)
    t = _node_type(c_name)
    n = _live.get(key)
    if n is None or type(n) is not t:  # new, or renamed since (_set_grad_fn_name)
        n = _live[key] = t(t.__name__, handle)
    return n


def grad_fn(t):
    """t.grad_fn: its node, or None for a leaf or a tensor without history"""
    handle = _C._grad_node(t)
    return None if handle is None else _node_object(handle)


def _accumulate_grad(leaf):
    d = leaf.__dict__
    ref = d.get('_tg_accumulate_grad')
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(leaf)
        d['_tg_accumulate_grad'] = weakref.ref(acc)
    return acc
