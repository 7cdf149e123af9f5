"""Adamax, NAdam, RAdam, Rprop and ASGD, written in Python over tensor
ops (no C optimizer has them), with PyTorch's single-tensor formulas in the
parameters' dtype. Each param group is one _Group, which offers the C
optimizers' interface (step, zero_grad, set_lr/get_lr, state/load_state
with the same 'optim.*' names), so Optimizer's param groups, schedulers
and PyTorch-layout state_dicts work unchanged."""
import math

import numpy as np

from .. import _C
from .._creation import ones_like, tensor, zeros_like
from .._grad_mode import no_grad


class _Group:
    kind = None
    buffers = ()             # per parameter, zeros like it at its first step
    scalars = ()             # per parameter, floats kept in the state (NAdam's mu_product)
    meta_keys = ()           # hyper-parameters kept in the metadata ('betas' as beta1/beta2)

    def __init__(self, params, opts):
        self.params, self.opts = list(params), dict(opts)
        self.bufs = [None] * len(self.params)
        self.steps = [0] * len(self.params)

    def step(self):
        o = self.opts
        with no_grad():
            for k, p in enumerate(self.params):
                g = p.grad
                if g is None:
                    continue
                g = -g if o.get('maximize') else g
                if self.bufs[k] is None:  # PyTorch's order: the scalars first
                    self.bufs[k] = {n: 1.0 for n in self.scalars}
                    self.bufs[k].update({n: zeros_like(p) for n in self.buffers})
                self.steps[k] += 1
                if o.get('weight_decay', 0) != 0:
                    g = g + p * o['weight_decay']
                p.copy_(self.update(p, g, self.bufs[k], self.steps[k]))

    def update(self, p, g, s, step):
        """the new value of p; s holds the parameter's buffers (updated in place)"""
        raise NotImplementedError

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def set_lr(self, lr):
        self.opts['lr'] = float(lr)

    def get_lr(self):
        return self.opts['lr']

    def state(self):
        tensors = {}
        for k, (b, n) in enumerate(zip(self.bufs, self.steps)):
            if not n:  # PyTorch's state holds only parameters that have stepped
                continue
            for name, v in b.items():
                tensors[f'optim.state.{k}.{name}'] = v.clone() if isinstance(v, _C.Tensor) \
                    else tensor(float(v))
            tensors[f'optim.state.{k}.step'] = tensor(n)
        meta = {'optim.type': self.kind, 'optim.num_params': str(len(self.params)),
                'optim.maximize': 'true' if self.opts.get('maximize') else 'false'}
        for key in self.meta_keys:
            if key == 'betas':
                meta['optim.beta1'], meta['optim.beta2'] = (repr(float(v))
                                                            for v in self.opts['betas'])
            else:
                meta[f'optim.{key}'] = repr(float(self.opts[key]))
        return tensors, meta

    def load_state(self, tensors, meta):
        if meta.get('optim.type') != self.kind:
            raise ValueError(f"optimizer state is for '{meta.get('optim.type')}', not "
                             f"{self.kind}")
        for k, p in enumerate(self.params):
            if f'optim.state.{k}.step' not in tensors:
                continue
            b = {name: float(tensors[f'optim.state.{k}.{name}'].item())
                 for name in self.scalars}
            for name in self.buffers:
                t = tensors.get(f'optim.state.{k}.{name}')
                if t is None or tuple(t.shape) != tuple(p.shape):
                    raise ValueError(f"optimizer state: '{name}' of parameter {k} is missing "
                                     f"or not shaped like it {tuple(p.shape)}")
                b[name] = t.to(p.dtype).clone()
            self.bufs[k] = b
            self.steps[k] = int(float(tensors[f'optim.state.{k}.step'].item()))
        for key in self.meta_keys:
            if key == 'betas' and 'optim.beta1' in meta:
                self.opts['betas'] = (float(meta['optim.beta1']), float(meta['optim.beta2']))
            elif f'optim.{key}' in meta:
                self.opts[key] = float(meta[f'optim.{key}'])
        self.opts['maximize'] = meta.get('optim.maximize') == 'true'


def _moments(s, g, b1, b2):
    """Adam's running averages of g and g^2 in s, updated in place"""
    s['exp_avg'].copy_(s['exp_avg'] * b1 + g * (1 - b1))
    s['exp_avg_sq'].copy_(s['exp_avg_sq'] * b2 + g * g * (1 - b2))


class AdamaxGroup(_Group):
    kind, buffers = 'adamax', ('exp_avg', 'exp_inf')
    meta_keys = ('lr', 'betas', 'eps', 'weight_decay')

    def update(self, p, g, s, step):
        o = self.opts
        b1, b2 = o['betas']
        s['exp_avg'].copy_(s['exp_avg'] * b1 + g * (1 - b1))
        s['exp_inf'].copy_(_C.maximum(s['exp_inf'] * b2, g.abs() + o['eps']))
        clr = o['lr'] / (1 - b1 ** step)
        return p + (s['exp_avg'] / s['exp_inf']) * -clr


class NAdamGroup(_Group):
    kind, buffers, scalars = 'nadam', ('exp_avg', 'exp_avg_sq'), ('mu_product',)
    meta_keys = ('lr', 'betas', 'eps', 'weight_decay', 'momentum_decay')

    def update(self, p, g, s, step):
        o = self.opts
        b1, b2 = o['betas']
        mu = b1 * (1 - 0.5 * 0.96 ** (step * o['momentum_decay']))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((step + 1) * o['momentum_decay']))
        # PyTorch keeps mu_product in a float32 tensor: its products and
        # the step sizes made of it are rounded to float32
        f32 = np.float32
        s['mu_product'] = float(f32(s['mu_product']) * f32(mu))
        # as PyTorch 1.13 (Debian's, the oracle here), which multiplies by
        # mu once more than the paper (2.0 dropped the extra factor)
        prod_next = f32(s["mu_product"]) * f32(mu) * f32(mu_next)
        _moments(s, g, b1, b2)
        denom = (s['exp_avg_sq'] / (1 - b2 ** step)).sqrt() + o['eps']
        p = p + (g / denom) * float(f32(-o['lr'] * (1 - mu)) / (f32(1) - f32(s['mu_product'])))
        return p + (s['exp_avg'] / denom) * float(f32(-o['lr'] * mu_next) / (f32(1) - prod_next))


class RAdamGroup(_Group):
    kind, buffers = 'radam', ('exp_avg', 'exp_avg_sq')
    meta_keys = ('lr', 'betas', 'eps', 'weight_decay')

    def update(self, p, g, s, step):
        o = self.opts
        b1, b2 = o['betas']
        _moments(s, g, b1, b2)
        bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
        corrected = s['exp_avg'] / bc1
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * step * (b2 ** step) / bc2
        if rho_t <= 5:  # the variance is not tractable yet: plain momentum
            return p + corrected * -o['lr']
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                         ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        adaptive = math.sqrt(bc2) / (s['exp_avg_sq'].sqrt() + o['eps'])
        return p + corrected * adaptive * (-o['lr'] * rect)


class RpropGroup(_Group):
    """PyTorch's Rprop: per-element step sizes grown by etaplus while the
    gradient keeps its sign, shrunk by etaminus (and that step skipped)
    when it flips"""
    kind, buffers = 'rprop', ('prev', 'step_size')
    meta_keys = ('lr',)

    def update(self, p, g, s, step):
        o = self.opts
        etaminus, etaplus = o['etas']
        lo, hi = o['step_sizes']
        if step == 1:
            s['step_size'].copy_(s['step_size'] + o['lr'])
        sign = (g * s['prev']).sign()
        one = ones_like(g)
        factor = _C.where(sign > 0, one * etaplus, _C.where(sign < 0, one * etaminus, one))
        s['step_size'].copy_(_C.clamp(s['step_size'] * factor, lo, hi))
        g = _C.where(sign < 0, g * 0, g)
        s['prev'].copy_(g)
        return p - g.sign() * s['step_size']


class ASGDGroup(_Group):
    """PyTorch's averaged SGD: a decaying step size eta and the running
    average ax of the iterates (kept in the state, as PyTorch's), eta and
    mu rounded to float32 as PyTorch's 0-d tensors are"""
    kind, buffers, scalars = 'asgd', ('ax',), ('eta', 'mu')
    meta_keys = ('lr', 'lambd', 'alpha', 't0', 'weight_decay')

    def update(self, p, g, s, step):
        o = self.opts
        f32 = np.float32
        if step == 1:
            s['eta'], s['mu'] = float(f32(o['lr'])), 1.0
        eta = s['eta']
        p = p * (1 - o['lambd'] * eta) - g * eta
        s['ax'].copy_(s['ax'] + (p - s['ax']) * s['mu'] if s['mu'] != 1 else p)
        s['eta'] = float(f32(o['lr'] / math.pow(1 + o['lambd'] * o['lr'] * step, o['alpha'])))
        s['mu'] = float(f32(1 / max(1, step - o['t0'])))
        return p
