"""Adagrad, written in Python over tensor ops (no C optimizer has it):
PyTorch's single-tensor update in the parameters' dtype, step by step
    g = grad (+ weight_decay * p);  clr = lr / (1 + (step - 1) * lr_decay)
    sum += g * g;  p += (-clr * g) / (sqrt(sum) + eps)
with PyTorch's roundings in float32 (its fused multiply-adds are emulated
in float64), so float32 parameters follow PyTorch's bit for bit.
Each param group is one _GroupState, which offers the C optimizers'
interface (step, zero_grad, set_lr/get_lr, state/load_state with the same
'optim.*' names), so Optimizer's param groups, schedulers and
state_dict/load_state_dict work unchanged."""
from .. import _C
from .._creation import full, tensor
from .._grad_mode import no_grad


def _scalar(v, dt):
    """v rounded to dt, as PyTorch's kernels take a Python scalar"""
    return tensor(v, dtype=dt)


def _fma(a, b, c):
    """a * b + c rounded once, as PyTorch's vectorized addcmul and
    add(alpha=) kernels (fused multiply-add). float32: exact in float64
    (the product of two float32 is exact there) and rounded back; float64
    has no wider type here, so it is a * b + c (within an ulp of PyTorch)."""
    if a.dtype == _C.float32:
        d = _C.float64
        return (a.to(d) * b.to(d) + c.to(d)).to(_C.float32)
    return a * b + c


class _GroupState:
    def __init__(self, params, opts):
        self.params = list(params)  # checked by Optimizer._validate
        self.opts = dict(opts)
        v = float(self.opts['initial_accumulator_value'])
        self.sums = [full(tuple(p.shape), v, dtype=p.dtype) for p in self.params]
        self.steps = [0] * len(self.params)

    def step(self):
        o = self.opts
        with no_grad():
            for k, p in enumerate(self.params):
                g = p.grad
                if g is None:
                    continue
                if o['maximize']:
                    g = -g
                self.steps[k] += 1
                dt = p.dtype
                if o['weight_decay'] != 0:  # g.add(p, alpha=wd)
                    g = _fma(p, _scalar(o['weight_decay'], dt), g)
                clr = o['lr'] / (1 + (self.steps[k] - 1) * o['lr_decay'])
                self.sums[k].copy_(_fma(g, g, self.sums[k]))  # sum.addcmul_(g, g)
                std = self.sums[k].sqrt() + _scalar(o['eps'], dt)
                # p.addcdiv_(g, std, value=-clr): PyTorch's kernel computes
                # p + (value * g) / std, unfused
                p.copy_(p + (_scalar(-clr, dt) * g) / std)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def set_lr(self, lr):
        self.opts['lr'] = float(lr)

    def get_lr(self):
        return self.opts['lr']

    _META = ('lr', 'lr_decay', 'eps', 'weight_decay', 'initial_accumulator_value')

    def state(self):
        tensors = {}
        for k, (s, n) in enumerate(zip(self.sums, self.steps)):
            # every parameter, stepped or not: PyTorch's Adagrad fills its
            # state (step 0, the initial sum) when it is built
            tensors[f'optim.state.{k}.sum'] = s.clone()
            tensors[f'optim.state.{k}.step'] = tensor(float(n))
        meta = {'optim.type': 'adagrad', 'optim.num_params': str(len(self.params)),
                'optim.maximize': 'true' if self.opts['maximize'] else 'false'}
        meta.update({f'optim.{k}': repr(float(self.opts[k])) for k in self._META})
        return tensors, meta

    def load_state(self, tensors, meta):
        if meta.get('optim.type') != 'adagrad':
            raise ValueError(f"optimizer state is for '{meta.get('optim.type')}', not adagrad")
        if int(meta.get('optim.num_params', -1)) != len(self.params):
            raise ValueError("loaded state has a different number of parameters")
        for k, p in enumerate(self.params):
            s = tensors.get(f'optim.state.{k}.sum')
            if s is None:
                continue
            if tuple(s.shape) != tuple(p.shape):
                raise ValueError(f"optimizer state: sum {k} has shape {tuple(s.shape)}, the "
                                 f"parameter {tuple(p.shape)}")
            self.sums[k] = s.to(p.dtype).clone()
            self.steps[k] = int(float(tensors[f'optim.state.{k}.step'].item()))
        for k in self._META:
            if f'optim.{k}' in meta:
                self.opts[k] = float(meta[f'optim.{k}'])
        self.opts['maximize'] = meta.get('optim.maximize') == 'true'
