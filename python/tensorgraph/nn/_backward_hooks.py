"""nn.Module's full backward hooks (register_full_backward_hook and
PyTorch 2's register_full_backward_pre_hook), as PyTorch's: a module call with hooks passes its tensor arguments and its
outputs through one identity autograd Function each. At backward the
outputs' runs the pre-hooks, hook(module, grad_output), each of which may
return a replacement for grad_output, and notes it; the arguments' calls each hook(module,
grad_input, grad_output) and passes on what a hook returns in place of
grad_input. When no argument requires grad, the hooks run at the outputs'
node with grad_input all None and may not replace it. Tensors that do not
require grad pass as non-differentiable: zeros in grad_input, None in
grad_output, as outputs nothing was computed from."""
from .. import _C
from .._autograd_function import Function

Tensor = _C.Tensor


class BackwardHookFunction(Function):
    @staticmethod
    def forward(ctx, on_grads, materialize, *tensors):
        ctx.on_grads = on_grads
        ctx.set_materialize_grads(materialize)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors[0] if len(tensors) == 1 else tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, None) + tuple(ctx.on_grads(grads))


def _wrap(values, on_grads, materialize):
    """values (a tuple) with its tensors through one BackwardHookFunction,
    and their positions; unchanged (positions None) when none requires grad"""
    index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    if not (_C.is_grad_enabled() and any(values[i].requires_grad for i in index)):
        return values, None
    r = BackwardHookFunction.apply(on_grads, materialize, *(values[i] for i in index))
    r = (r,) if isinstance(r, Tensor) else r
    res = list(values)
    for i, t in zip(index, r):
        res[i] = t
    return tuple(res), index


def _spread(index, grads, n):
    """one entry per position, None where no tensor was"""
    res = [None] * n
    for i, g in zip(index, grads):
        res[i] = g
    return tuple(res)


class BackwardHook:
    """one module call's hooks (the ones registered when it was called)"""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.n_args, self.in_index, self.grad_outputs = 0, None, None

    def setup_input_hook(self, args):
        self.n_args = len(args)
        args, self.in_index = _wrap(args, self._input_grads, True)
        return args

    def setup_output_hook(self, out):
        one = not isinstance(out, tuple)
        # grad_output as it comes: None for an output nothing was computed from
        values, self.out_index = _wrap((out,) if one else out, self._output_grads, False)
        self.n_out = 1 if one else len(values)
        return values[0] if one else values

    def _output_grads(self, grads):
        self.grad_outputs = _spread(self.out_index, grads, self.n_out)
        for hook in self.pre_hooks:
            r = hook(self.module, self.grad_outputs)
            if r is None:
                continue
            r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
            if len(r) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(r)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = r
        grads = tuple(self.grad_outputs[i] for i in self.out_index)
        if self.in_index is None:  # no argument requires grad: the hooks run now
            none = (None,) * self.n_args
            for hook in self.hooks:
                r = hook(self.module, none, self.grad_outputs)
                if r is not None and not all(g is None for g in r):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return grads

    def _input_grads(self, grads):
        grad_input = _spread(self.in_index, grads, self.n_args)
        for hook in self.hooks:
            r = hook(self.module, grad_input, self.grad_outputs)
            if r is None:
                continue
            r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
            if len(r) != len(grad_input):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(r)}, but expected {len(grad_input)}")
            grad_input = r
        self.grad_outputs = None
        return tuple(grad_input[i] for i in self.in_index)
