"""tensorgraph.utils.checkpoint: activation checkpointing, as
torch.utils.checkpoint (1.13). checkpoint(fn, *args) runs fn without
recording and keeps only its arguments; backward runs fn again with grad
mode on (from the same random state) and differentiates that: the
parameters fn uses get their .grad by a backward inside the backward, the
arguments' gradients go on. use_reentrant=False gives the same gradients
(here by the same means: no saved-tensor hooks)."""
import warnings

from .. import _C
from .._autograd_function import Function
from .._grad_mode import enable_grad, no_grad

__all__ = ['checkpoint', 'checkpoint_sequential']

Tensor = _C.Tensor


def _rng_state():
    from .. import get_rng_state
    return get_rng_state()


def _set_rng_state(state):
    from .. import set_rng_state
    set_rng_state(state)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, kwargs, *args):
        ctx.run_function, ctx.kwargs = run_function, kwargs
        ctx.rng = _rng_state() if preserve_rng_state else None
        ctx.args = tuple(None if isinstance(a, Tensor) else a for a in args)
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        saved = iter(ctx.saved_tensors)
        args = [next(saved) if a is None else a for a in ctx.args]
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                  for a in args]
        if ctx.rng is not None:
            now = _rng_state()
            _set_rng_state(ctx.rng)
        try:
            with enable_grad():
                out = ctx.run_function(*inputs, **ctx.kwargs)
        finally:
            if ctx.rng is not None:
                _set_rng_state(now)
        outs = (out,) if isinstance(out, Tensor) else tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        from ..autograd import backward
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None) + tuple(x.grad if isinstance(x, Tensor) else None
                                          for x in inputs)


def checkpoint(function, *args, use_reentrant=True, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), its intermediate results recomputed at
    backward instead of kept"""
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")
    return CheckpointFunction.apply(function, preserve_rng_state, kwargs, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=True, **kwargs):
    """a Sequential (or list of modules) run in `segments` checkpointed
    chunks; the last chunk runs normally, as PyTorch's"""
    preserve = kwargs.pop('preserve_rng_state', True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1

    def run(start, stop):
        def forward(x):
            for j in range(start, stop + 1):
                x = functions[j](x)
            return x
        return forward
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
