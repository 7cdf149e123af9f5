"""tensorgraph.optim: PyTorch's optimizers over the C ones (fused update
loops with PyTorch's formulas). param_groups work as in PyTorch: each group
is one C optimizer, and its 'lr' is read at every step (schedulers change it)."""
from .. import _C
from .._creation import tensor
from .._grad_mode import zero_grads
from . import lr_scheduler  # noqa: F401
from . import swa_utils  # noqa: F401,E402  (AveragedModel, SWALR, update_bn)
from ._params import param_list
from .lbfgs import LBFGS  # noqa: F401  (its own step(closure), one group)


# PyTorch's implementation switches, kept in param_groups as its are;
# foreach (a speed choice) has no effect here, the others are refused when on
_FLAGS = ('foreach', 'differentiable', 'capturable', 'fused')
# the optimizers whose state 'step' PyTorch 1.13 keeps as a float32 tensor;
# the others as a Python int (SGD has none)
_FLOAT_STEP = ('adam', 'adamw', 'adamax', 'nadam', 'radam', 'asgd', 'adagrad')


def _check_flags(name, differentiable=False, capturable=False, fused=False):
    if fused or capturable:
        raise RuntimeError(f"{name}: {'fused' if fused else 'capturable'}=True requires CUDA "
                           f"tensors; tensorgraph's optimizers run on the CPU")
    if differentiable:
        raise NotImplementedError(f"{name}: differentiable=True (a step recorded by autograd) "
                                  f"is not supported by tensorgraph")


class _Required:
    """PyTorch's `required`: a hyper-parameter without a default (SGD's lr)"""

    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    _kind = None
    _defaults = {}  # in PyTorch's order: param_groups and state_dict keep it

    def __init__(self, params, **options):
        params = param_list(params)
        groups = params if isinstance(params[0], dict) else [{'params': params}]
        self.defaults = dict(self._defaults, **options)
        self.param_groups = []
        self._c = []
        self._lrs = []  # the lr each C optimizer has
        self._hyper = []  # and its momentum/betas (cyclic schedulers change them)
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group):
        if not isinstance(group, dict):
            raise AssertionError("param group must be a dict")
        group = dict(group)
        params = group['params']
        if isinstance(params, set):
            raise TypeError('optimizer parameters need to be organized in ordered collections, '
                            'but the ordering of tensors in sets will change between runs. '
                            'Please use a list instead.')
        group['params'] = [params] if isinstance(params, _C.Tensor) else list(params)
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {k}")
            group.setdefault(k, v)
        self._validate(group)
        self.param_groups.append(group)
        self._c.append(self._make(group))
        self._lrs.append(group['lr'])
        self._hyper.append(self._hyper_of(group))

    def _make(self, group):
        """the object that updates the group: a C optimizer"""
        return _C.Optimizer(self._kind, group['params'], self._options(group))

    # PyTorch's constructor checks (ValueError, raised in its Python layer):
    # (option, what its message calls it, the valid range as (low, high, high
    # included)). The C optimizers check the same ranges again, for C callers.
    _ranges = (('lr', 'learning rate', (0, None, True)),)

    def _validate(self, group):
        for key, what, (low, high, closed) in self._ranges:
            values = group[key] if key == 'betas' else (group[key],)
            for i, v in enumerate(values):
                if v < low or (high is not None and (v > high if closed else v >= high)):
                    name = f"beta parameter at index {i}" if key == 'betas' else what
                    raise ValueError(f"Invalid {name}: {v}")
        if group.get('nesterov') and (group['momentum'] <= 0 or group['dampening'] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        seen = {id(p) for g in self.param_groups for p in g['params']}
        for p in group['params']:
            if not isinstance(p, _C.Tensor):
                from .._ops_aten import typename
                raise TypeError("optimizer can only optimize Tensors, but one of the params "
                                f"is {typename(p)}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
            if id(p) in seen:  # within a group PyTorch 1.13 warns (a future error)
                raise ValueError("some parameters appear in more than one parameter group")
            seen.add(id(p))

    def _options(self, group):
        """the hyper-parameters the update takes (not PyTorch's
        implementation flags foreach, differentiable, capturable, fused)"""
        return {k: v for k, v in group.items() if k != 'params' and k not in _FLAGS}

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with _C_enable_grad():
                loss = closure()
        if _C._tracing_step():
            self._graph_step()
            return loss
        for i, (group, c) in enumerate(zip(self.param_groups, self._c)):
            self._sync(i, group, c)
            c.step()
        return loss

    def _sync(self, i, group, c):
        """the C optimizer of group i takes the group's lr and momentum/betas"""
        if group['lr'] != self._lrs[i]:  # a scheduler (or the user) changed it
            c.set_lr(group['lr'])
            self._lrs[i] = group['lr']
        hyper = self._hyper_of(group)
        if hyper != self._hyper[i]:
            self._set_hyper(c, hyper)
            self._hyper[i] = hyper

    def _graph_step(self):
        """step() while a tg.function traces: each group's update becomes
        nodes of the function's graph, run at every call (the gradients are
        the trace's: see tensorgraph.function). The learning rate is a
        float64 tensor of the group, which each call sets to group['lr']
        first, so schedulers work; the other hyper-parameters are the
        trace's, and a call after one changed traces again."""
        from .. import _trace_guards
        for i, (group, c) in enumerate(zip(self.param_groups, self._c)):
            if not isinstance(c, _C.Optimizer):
                raise NotImplementedError(
                    f"{type(self).__name__}.step() inside tg.function: this optimizer has no "
                    "graph form (SGD, Adam, AdamW, Adadelta and RMSprop have one); call "
                    "step() outside the function")
            self._sync(i, group, c)
            _trace_guards.note_step(self, i, c._graph_step(float(group['lr'])))

    @staticmethod
    def _hyper_of(group):
        return {k: group[k] for k in ('momentum', 'betas') if k in group}

    @staticmethod
    def _set_hyper(c, hyper):
        """The C optimizers take momentum and betas at construction only;
        their state's metadata carries them, so a changed value (CyclicLR,
        OneCycleLR) goes in through a state round trip (buffers unchanged).
        repr() of a float reads back exactly."""
        tensors, meta = c.state()
        if 'momentum' in hyper and 'optim.momentum' in meta:
            meta['optim.momentum'] = repr(float(hyper['momentum']))
        if 'betas' in hyper and 'optim.beta1' in meta:
            meta['optim.beta1'] = repr(float(hyper['betas'][0]))
            meta['optim.beta2'] = repr(float(hyper['betas'][1]))
        c.load_state(tensors, meta)

    def zero_grad(self, set_to_none=False):
        for group in self.param_groups:
            zero_grads(group['params'], set_to_none)

    @property
    def state(self):
        """PyTorch's per-parameter state, parameter -> {'step': ..., buffer
        name: tensor}, read from the groups' updates (a defaultdict(dict)
        made at each access: edit it through load_state_dict)"""
        from collections import defaultdict
        params = [p for g in self.param_groups for p in g['params']]
        out = defaultdict(dict)
        for i, entry in self.state_dict()['state'].items():
            out[params[i]] = entry
        return out

    def state_dict(self):
        """PyTorch's layout: {'state': {parameter index (counted over all
        groups): {buffer name: tensor, 'step': tensor}}, 'param_groups':
        [hyper-parameters with 'params': the group's indices]}; only
        parameters that have stepped have state (and SGD's has no step)"""
        state, groups, offset = {}, [], 0
        for c, g in zip(self._c, self.param_groups):
            tensors, meta = c.state()
            n = len(g['params'])
            for k in range(n):
                prefix = f'optim.state.{k}.'
                entry = {name[len(prefix):]: t for name, t in tensors.items()
                         if name.startswith(prefix)}
                if entry:
                    state[offset + k] = self._pytorch_entry(entry)
            groups.append(dict({k: v for k, v in g.items() if k != 'params'},
                               params=list(range(offset, offset + n))))
            offset += n
        return {'state': state, 'param_groups': groups}

    def _pytorch_entry(self, entry):
        """one parameter's state as PyTorch 1.13 has it: 'step' first, a
        float32 tensor or an int by optimizer; SGD without momentum has
        momentum_buffer None (and no step)"""
        step = entry.pop('step', None)
        n = int(float(step.item())) if isinstance(step, _C.Tensor) else step
        if self._kind == 'sgd':
            if n is not None and n > 0:
                entry.setdefault('momentum_buffer', None)
            return entry
        if n is None:
            return entry
        return dict(step=tensor(float(n)) if self._kind in _FLOAT_STEP else n, **entry)

    def load_state_dict(self, state_dict):
        """a state_dict of this optimizer's kind, by PyTorch's layout (or
        this package's former per-group one); buffers are copied in, the
        hyper-parameters of each group taken"""
        saved_groups = state_dict['param_groups']
        if len(saved_groups) != len(self._c):
            raise ValueError("loaded state dict has a different number of parameter groups")
        per_group = state_dict['state']
        for i, (c, g, saved) in enumerate(zip(self._c, self.param_groups, saved_groups)):
            if isinstance(per_group, list):  # the former layout: (tensors, meta) per group
                tensors, meta = per_group[i]
            else:
                tensors, meta = self._group_state(c, g, saved, per_group)
            c.load_state(tensors, meta)
            g.update({k: v for k, v in saved.items() if k != 'params'})
            if 'lr' in saved:  # the group's lr: a scheduler may have moved it after the last step
                c.set_lr(saved['lr'])
            self._lrs[i] = g['lr'] = c.get_lr()
            self._hyper[i] = self._hyper_of(g)
            self._set_hyper(c, self._hyper[i])

    @staticmethod
    def _group_state(c, g, saved, state):
        """one group's C state from PyTorch's layout: the buffers of its
        parameters' indices, this optimizer's metadata with the saved
        hyper-parameters"""
        ids = saved.get('params', [])
        if len(ids) != len(g['params']):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        _, meta = c.state()
        for k, v in saved.items():
            if k == 'betas' and 'optim.beta1' in meta:
                meta['optim.beta1'], meta['optim.beta2'] = repr(float(v[0])), repr(float(v[1]))
            elif isinstance(v, bool) and f'optim.{k}' in meta:
                meta[f'optim.{k}'] = 'true' if v else 'false'
            elif isinstance(v, (int, float)) and f'optim.{k}' in meta:
                meta[f'optim.{k}'] = repr(float(v))
        tensors = {}
        for k, pid in enumerate(ids):
            entry = state.get(pid, state.get(str(pid)))  # str keys after a JSON round trip
            for name, t in (entry or {}).items():
                if t is None:  # SGD's momentum_buffer without momentum
                    continue
                if name == 'step':  # PyTorch keeps a float tensor; the C state an int64
                    t = tensor(int(float(t.item() if isinstance(t, _C.Tensor) else t)))
                elif isinstance(t, _C.Tensor) and t.dtype.is_floating_point:
                    p = g['params'][k]  # PyTorch casts floating state to its parameter's dtype
                    if p.dtype.is_floating_point and t.dtype != p.dtype:
                        t = t.to(p.dtype)
                tensors[f'optim.state.{k}.{name}'] = t
            if entry and meta.get('optim.type') == 'sgd' and 'step' not in entry:
                tensors[f'optim.state.{k}.step'] = tensor(1)  # it has stepped
        return tensors, meta

    def __repr__(self):
        s = type(self).__name__ + ' ('
        for i, g in enumerate(self.param_groups):
            s += f'\nParameter Group {i}'
            for k in sorted(g):
                if k != 'params':
                    s += f'\n    {k}: {g[k]}'
        return s + '\n)'


class _C_enable_grad:
    def __enter__(self):
        self._prev = _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


class SGD(Optimizer):
    _kind = 'sgd'
    _ranges = (('lr', 'learning rate', (0, None, True)),
               ('momentum', 'momentum value', (0, None, True)),
               ('weight_decay', 'weight_decay value', (0, None, True)))
    _defaults = dict(lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                     maximize=False, foreach=None, differentiable=False)

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False):
        _check_flags('SGD', differentiable)
        super().__init__(params, lr=lr, momentum=momentum, dampening=dampening,
                         weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                         foreach=foreach, differentiable=differentiable)


class Adam(Optimizer):
    _kind = 'adam'
    _ranges = (('lr', 'learning rate', (0, None, True)),
               ('eps', 'epsilon value', (0, None, True)),
               ('betas', 'beta parameter', (0, 1, False)),
               ('weight_decay', 'weight_decay value', (0, None, True)))
    _defaults = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
                     maximize=False, foreach=None, capturable=False, differentiable=False,
                     fused=False)
    _flags = ('capturable', 'differentiable', 'fused')  # PyTorch's AdamW: capturable only

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=False):
        _check_flags(type(self).__name__, differentiable, capturable, fused)
        given = dict(capturable=capturable, differentiable=differentiable, fused=fused)
        flags = {k: given[k] for k in self._flags}
        super().__init__(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, maximize=maximize, foreach=foreach, **flags)


class AdamW(Adam):
    _kind = 'adamw'
    _defaults = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                     foreach=None, maximize=False, capturable=False)
    _flags = ('capturable',)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         foreach=foreach, capturable=capturable)


class Adadelta(Optimizer):
    _kind = 'adadelta'
    _ranges = (('lr', 'learning rate', (0, None, True)),
               ('rho', 'rho value', (0, 1, True)),
               ('eps', 'epsilon value', (0, None, True)),
               ('weight_decay', 'weight_decay value', (0, None, True)))
    _defaults = dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False, foreach=None)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 maximize=False):
        super().__init__(params, lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                         foreach=foreach, maximize=maximize)


class RMSprop(Optimizer):
    _kind = 'rmsprop'
    _ranges = (('lr', 'learning rate', (0, None, True)),
               ('eps', 'epsilon value', (0, None, True)),
               ('momentum', 'momentum value', (0, None, True)),
               ('weight_decay', 'weight_decay value', (0, None, True)),
               ('alpha', 'alpha value', (0, None, True)))
    _defaults = dict(lr=1e-2, momentum=0, alpha=0.99, eps=1e-8, centered=False,
                     weight_decay=0, foreach=None, maximize=False, differentiable=False)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, foreach=None, maximize=False, differentiable=False):
        _check_flags('RMSprop', differentiable)
        super().__init__(params, lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                         momentum=momentum, centered=centered, foreach=foreach,
                         maximize=maximize, differentiable=differentiable)


class Adagrad(Optimizer):
    """PyTorch's Adagrad (its update written with tensor ops in adagrad.py)"""
    _kind = 'adagrad'
    _defaults = dict(lr=1e-2, lr_decay=0, eps=1e-10, weight_decay=0,
                     initial_accumulator_value=0, foreach=None, maximize=False)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False):
        for name, v in (('learning rate', lr), ('lr_decay value', lr_decay),
                        ('weight_decay value', weight_decay),
                        ('initial_accumulator_value', initial_accumulator_value),
                        ('epsilon value', eps)):
            if not 0.0 <= v:
                raise ValueError(f"Invalid {name}: {v}")
        super().__init__(params, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                         initial_accumulator_value=initial_accumulator_value, eps=eps,
                         foreach=foreach, maximize=maximize)

    def _make(self, group):
        from .adagrad import _GroupState
        return _GroupState(group['params'], self._options(group))


class _PyOptimizer(Optimizer):
    """an optimizer whose groups are py_algos' Python updates"""
    _group = None

    def _make(self, group):
        from . import py_algos
        return getattr(py_algos, self._group)(group['params'], self._options(group))


_ADAM_RANGES = (('lr', 'learning rate', (0, None, True)),
                ('eps', 'epsilon value', (0, None, True)),
                ('betas', 'beta parameter', (0, 1, False)),
                ('weight_decay', 'weight_decay value', (0, None, True)))


class Adamax(_PyOptimizer):
    """PyTorch's Adamax (its update written with tensor ops in py_algos.py)"""
    _kind, _group, _ranges = 'adamax', 'AdamaxGroup', _ADAM_RANGES
    _defaults = dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None,
                     maximize=False)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False):
        super().__init__(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                         foreach=foreach, maximize=maximize)


class NAdam(_PyOptimizer):
    """PyTorch's NAdam (its update written with tensor ops in py_algos.py)"""
    _kind, _group = 'nadam', 'NAdamGroup'
    _ranges = _ADAM_RANGES + (('momentum_decay', 'momentum_decay value', (0, None, True)),)
    _defaults = dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                     momentum_decay=4e-3, foreach=None)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, foreach=None):
        super().__init__(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                         momentum_decay=momentum_decay, foreach=foreach)


class RAdam(_PyOptimizer):
    """PyTorch's RAdam (its update written with tensor ops in py_algos.py)"""
    _kind, _group, _ranges = 'radam', 'RAdamGroup', _ADAM_RANGES
    _defaults = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None):
        super().__init__(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                         foreach=foreach)


class Rprop(_PyOptimizer):
    """PyTorch's Rprop (its update written with tensor ops in py_algos.py)"""
    _kind, _group = 'rprop', 'RpropGroup'
    _ranges = (('lr', 'learning rate', (0, None, True)),)
    _defaults = dict(lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None,
                     maximize=False)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None,
                 maximize=False):
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                         foreach=foreach, maximize=maximize)


class ASGD(_PyOptimizer):
    """PyTorch's averaged SGD (its update written with tensor ops in py_algos.py)"""
    _kind, _group = 'asgd', 'ASGDGroup'
    _ranges = (('lr', 'learning rate', (0, None, True)),
               ('weight_decay', 'weight_decay value', (0, None, True)))
    _defaults = dict(lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                     maximize=False)

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False):
        super().__init__(params, lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                         weight_decay=weight_decay, foreach=foreach, maximize=maximize)
