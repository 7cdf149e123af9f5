"""tensorgraph.autograd.Function (also tensorgraph.autograd.function):
custom differentiable operations as torch.autograd.Function, over the C
engine's custom nodes, which have one output (_C._function_apply).

A forward that returns a tuple still makes one node: its differentiable
outputs (floating-point tensors not marked non-differentiable) are packed
into one flat tensor, the node's output, and handed back as views of it;
at backward the node's gradient is cut back into one per output. Outputs
without gradient get zeros (None once ctx.set_materialize_grads(False):
then each output passes through a tap that notes it was reached), other
outputs None, as PyTorch's. once_differentiable."""
import functools
import threading

from . import _C
from ._creation import zeros as _zeros
from ._grad_mode import no_grad

Tensor = _C.Tensor
FunctionCtx = _C.FunctionCtx
_local = threading.local()  # contexts of forwards whose apply has not returned yet


def _pending():
    s = getattr(_local, 'stack', None)
    if s is None:
        s = _local.stack = []
    return s


def _differentiable(o, marked):
    return isinstance(o, Tensor) and o.is_floating_point() and not any(o is m for m in marked)


def _pack(ctx, outputs):
    """the differentiable outputs flattened into one tensor; the layout on ctx"""
    marked = getattr(ctx, '_tg_non_differentiable', ())
    metas = tuple((o.shape, o.dtype, _differentiable(o, marked)) if isinstance(o, Tensor)
                  else None for o in outputs)
    parts = [o.reshape(-1) for o, m in zip(outputs, metas) if m and m[2]]
    ctx._tg_layout = metas
    if not parts:
        return _zeros((0,))
    dtype = parts[0].dtype
    for p in parts[1:]:
        dtype = _C.promote_types(dtype, p.dtype)
    return _C.cat([p.to(dtype) for p in parts])


def _unpack(cls, ctx, packed, outputs):
    """forward's outputs for apply: the differentiable ones views of packed"""
    taps = getattr(ctx, 'materialize_grads', True) is False
    if taps:
        ctx._tg_reached = set()
    res, off = list(outputs), 0
    for i, m in enumerate(ctx._tg_layout):
        if m is None:
            continue
        if not m[2]:
            res[i] = res[i].detach() if res[i].requires_grad else res[i]
            continue
        n = m[0].numel()
        piece = packed[off:off + n].view(m[0])
        off += n
        if piece.dtype != m[1]:
            piece = piece.to(m[1])
        if taps and piece.requires_grad:
            piece = _Tap.apply(piece, ctx._tg_reached, i)
        res[i] = _C._set_grad_fn_name(piece, cls.__name__)
    return tuple(res)


def _write_dirty(name, dirty, raw, res):
    """the arguments forward wrote in place (ctx.mark_dirty) and returned
    are handed back themselves when the node is recorded, their history now
    the node's (a recorded copy of the output onto them), as PyTorch's"""
    one = not isinstance(raw, tuple)
    raws, outs = ((raw,), [res]) if one else (raw, list(res))
    for d in dirty:
        if not any(d is r for r in raws):
            raise RuntimeError("Some elements marked as dirty during the forward method were "
                               "not returned as output. The inputs that are modified inplace "
                               "must all be outputs of the Function.")
    for k, r in enumerate(raws):
        if not any(r is d for d in dirty):
            continue
        if outs[k].requires_grad:
            if r.is_leaf and r.requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            r.copy_(outs[k])
            _C._name_inplace(r, name)
            outs[k] = r  # (unrecorded, PyTorch hands back the output)
    return outs[0] if one else tuple(outs)


def _unpack_grads(ctx, g):
    """the gradient of the packed output as one per forward output"""
    reached = getattr(ctx, '_tg_reached', None)
    materialize = getattr(ctx, 'materialize_grads', True) is not False
    grads, off = [], 0
    for i, m in enumerate(ctx._tg_layout):
        if m is None:
            grads.append(None)
        elif not m[2]:
            grads.append(_zeros(tuple(m[0]), dtype=m[1]) if materialize else None)
        else:
            n = m[0].numel()
            piece = g[off:off + n].view(m[0])
            off += n
            if reached is not None and i not in reached:
                piece = None
            elif piece.dtype != m[1]:
                piece = piece.to(m[1])
            grads.append(piece)
    if reached is not None:
        reached.clear()  # the next backward through the node starts afresh
    return grads


def _check_grads(name, inputs, r):
    """backward's result as one gradient per argument, PyTorch's checks:
    extra Nones dropped, a gradient larger than its input summed down to
    its shape when the input broadcasts to it"""
    r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
    n = len(inputs)
    if len(r) > n and all(x is None for x in r[n:]):
        r = r[:n]
    if len(r) != n:
        raise RuntimeError(f"function {name}Backward returned an incorrect number of "
                           f"gradients (expected {n}, got {len(r)})")
    res = list(r)
    for i, (g, shape) in enumerate(zip(r, inputs)):
        if g is None:
            continue
        if shape is None:
            raise RuntimeError(f"function {name}Backward returned a gradient different than "
                               f"None at position {i + 1}, but the corresponding forward input "
                               "was not a Variable")
        if isinstance(g, Tensor) and g.shape != shape:
            if not _expands_to(shape, g.shape):
                raise RuntimeError(f"Function {name}Backward returned an invalid gradient at "
                                   f"index {i} - got {list(g.shape)} but expected shape "
                                   f"compatible with {list(shape)}")
            res[i] = g.sum_to_size(shape)
    return tuple(res)


def _expands_to(shape, to):
    return len(shape) <= len(to) and all(a in (b, 1) for a, b in zip(shape[::-1], to[::-1]))


def _node_class(cls):
    """what _C._function_apply runs for cls: its forward and backward
    around the user's, under the user's class name"""
    def forward(ctx, *args):
        ctx._tg_inputs = tuple(a.shape if isinstance(a, Tensor) else None for a in args)
        r = cls.forward(ctx, *args)
        ctx._tg_outputs = r
        _pending().append(ctx)
        # one tensor: the node's output as it is; a tuple: packed
        return _pack(ctx, r) if isinstance(r, tuple) else r

    def backward(ctx, g):
        grads = _unpack_grads(ctx, g) if hasattr(ctx, '_tg_layout') else (g,)
        r = cls.backward(ctx, *grads)
        return _check_grads(cls.__name__, ctx._tg_inputs, r)

    return type(cls.__name__, (), {'_tg_function': _C._function_def(cls.__name__),
                                   'forward': staticmethod(forward),
                                   'backward': staticmethod(backward)})


class _FunctionMeta(type):
    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        cls._tg_node = _node_class(cls)


class Function(metaclass=_FunctionMeta):
    """Custom differentiable operations, as torch.autograd.Function:

        class Exp(Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                y, = ctx.saved_tensors
                return grad * y

        Exp.apply(x)

    forward runs with grad mode off and returns a tensor or a tuple (of
    tensors and other values); backward gets one gradient per output and
    returns one (or None) per forward argument. Saved tensors are checked
    for in-place changes at backward."""

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            raise TypeError("apply() takes no keyword arguments")
        pending = _pending()
        depth = len(pending)
        try:
            out = _C._function_apply(cls._tg_node, args)
        except BaseException:
            del pending[depth:]
            raise
        if len(pending) == depth:
            return out
        ctx = pending.pop()
        raw = ctx._tg_outputs
        del ctx._tg_outputs
        res = _unpack(cls, ctx, out, raw) if isinstance(raw, tuple) else out
        dirty = getattr(ctx, '_tg_dirty', None)
        return _write_dirty(cls.__name__, dirty, raw, res) if dirty else res

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")


class _Tap(Function):
    """identity that notes, at backward, that output k got a gradient"""
    @staticmethod
    def forward(ctx, x, reached, k):
        ctx.reached, ctx.k = reached, k
        return x

    @staticmethod
    def backward(ctx, g):
        ctx.reached.add(ctx.k)
        return g, None, None


class _DelayedError(Function):
    """identity whose backward raises: the gradients of a once_differentiable
    backward, when something would differentiate them"""
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


def once_differentiable(fn):
    """backward decorator: it runs without recording, and differentiating
    its results again raises, as PyTorch's"""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _C.is_grad_enabled() or \
                not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        one = not isinstance(outputs, tuple)
        res = tuple(_DelayedError.apply(o.detach().requires_grad_())
                    if isinstance(o, Tensor) and o.is_floating_point() else o
                    for o in ((outputs,) if one else outputs))
        return res[0] if one else res
    return wrapper
