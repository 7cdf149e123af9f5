"""nn.Module: parameters, buffers and children registered by attribute
assignment, PyTorch's naming (state_dict keys), modes and bulk updates."""
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from .. import _C, _trace_guards
from .._device import check_eager_target
from .._grad_mode import no_grad, zero_grads
from .._tensor_extra import RemovableHandle
from ._backward_hooks import BackwardHook
from .parameter import Parameter

_IncompatibleKeys = namedtuple('IncompatibleKeys', ['missing_keys', 'unexpected_keys'])


def _register(hooks, hook):
    """hook added to the dict hooks; the handle's remove() (or leaving it
    as a context manager) takes it out"""
    h = RemovableHandle(hooks)
    hooks[h.id] = hook
    return h


def _no_dtype(name, dtype):
    """Module.half / bfloat16: the casts to dtypes tensorgraph lacks refuse"""
    def cast(self):
        raise TypeError(f"{type(self).__name__}.{name}(): tensorgraph has no {dtype} dtype "
                        f"(its floating point dtypes are float32 and float64)")
    cast.__name__ = name
    return cast


class Module:
    training = True
    _backward_hooks = _backward_pre_hooks = None  # modules whose __init__ has not run

    def __init__(self):
        object.__setattr__(self, '_parameters', OrderedDict())
        object.__setattr__(self, '_buffers', OrderedDict())
        object.__setattr__(self, '_non_persistent', set())
        object.__setattr__(self, '_modules', OrderedDict())
        object.__setattr__(self, '_forward_hooks', OrderedDict())
        object.__setattr__(self, '_forward_pre_hooks', OrderedDict())
        object.__setattr__(self, '_backward_hooks', OrderedDict())
        object.__setattr__(self, '_backward_pre_hooks', OrderedDict())
        object.__setattr__(self, 'training', True)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required "
                                  "\"forward\" function")

    def __call__(self, *args, **kwargs):
        if _trace_guards.stack:  # a tg.function trace depends on self.training
            _trace_guards.note(self)
        if self._backward_hooks or self._backward_pre_hooks:
            return self._call_with_forward(self.forward, *args, **kwargs)
        if self._forward_pre_hooks:
            args = self._run_forward_pre_hooks(args)
        out = self.forward(*args, **kwargs)
        if not self._forward_hooks:  # the common case: no loop, no iterator
            return out
        return self._run_forward_hooks(args, out)

    def _call_with_forward(self, forward, *args, **kwargs):
        """__call__ with another forward (tg.function's converted one)"""
        _trace_guards.note(self)
        if self._forward_pre_hooks:
            args = self._run_forward_pre_hooks(args)
        bw = BackwardHook(self, list(self._backward_hooks.values()),
                          list(self._backward_pre_hooks.values())) \
            if self._backward_hooks or self._backward_pre_hooks else None
        if bw:
            args = bw.setup_input_hook(args)
        out = forward(*args, **kwargs)
        if self._forward_hooks:
            out = self._run_forward_hooks(args, out)
        return bw.setup_output_hook(out) if bw else out

    def _run_forward_pre_hooks(self, args):
        """each hook(module, args) may return new args (a tuple, or one value)"""
        for hook in self._forward_pre_hooks.values():
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        return args

    def _run_forward_hooks(self, args, out):
        for hook in self._forward_hooks.values():
            r = hook(self, args, out)
            if r is not None:
                out = r
        return out

    def register_forward_hook(self, hook):
        return _register(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook):
        """hook(module, args) runs before forward; what it returns (not None)
        replaces the positional arguments"""
        return _register(self._forward_pre_hooks, hook)

    def register_full_backward_hook(self, hook):
        """hook(module, grad_input, grad_output) runs when the gradients of
        the module's tensor arguments are computed (tuples, None for
        non-tensor arguments); a tuple it returns replaces grad_input"""
        return _register(self._backward_hooks, hook)

    def register_full_backward_pre_hook(self, hook):
        """(PyTorch 2's) hook(module, grad_output) runs when the gradients of
        the module's outputs are known, before its own; a tuple it returns
        replaces grad_output"""
        return _register(self._backward_pre_hooks, hook)

    # ---- registration ------------------------------------------------------------
    def __setattr__(self, name, value):
        _trace_guards.changed()  # a parameter or buffer may be replaced
        d = self.__dict__
        if '_parameters' not in d:
            raise AttributeError("cannot assign before Module.__init__() call")
        if isinstance(value, Parameter) and name in d['_parameters'] or \
                isinstance(value, Module) and name in d['_modules']:
            # a replacement keeps its place in the order, as PyTorch's
            (d['_parameters'] if isinstance(value, Parameter) else d['_modules'])[name] = value
        elif isinstance(value, (Parameter, Module)):
            for store in ('_parameters', '_buffers', '_modules'):
                d[store].pop(name, None)
            d.pop(name, None)
            (self._parameters if isinstance(value, Parameter) else self._modules)[name] = value
        elif name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter "
                                f"'{name}' (nn.Parameter or None expected)")
            self._parameters[name] = None
        elif name in self._buffers:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(Tensor or None expected)")
            self._buffers[name] = value
        elif name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (Module or None expected)")
            self._modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ('_parameters', '_buffers', '_modules'):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        _trace_guards.changed()
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    def _check_name(self, kind, name, table):
        """PyTorch's checks of a new parameter's, buffer's or module's name"""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if '.' in name:
            raise KeyError(f"{kind} name can't contain \".\", got: {name}")
        if not name:
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name, param):
        self._check_name('parameter', name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (nn.Parameter or None required)")
        self._parameters[name] = param
        _trace_guards.changed()

    def register_buffer(self, name, tensor, persistent=True):
        self._check_name('buffer', name, self._buffers)
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (Tensor or None required)")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        _trace_guards.changed()
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name, module):
        self._check_name('module', name, self._modules)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    register_module = add_module

    # ---- walking ------------------------------------------------------------------
    def named_modules(self, memo=None, prefix=''):
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, prefix + ('.' if prefix else '') + name)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named(self, store, prefix, recurse):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mp, m in mods:
            for name, t in getattr(m, store).items():
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                yield mp + ('.' if mp else '') + name, t

    def named_parameters(self, prefix='', recurse=True):
        yield from self._named('_parameters', prefix, recurse)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix='', recurse=True):
        yield from self._named('_buffers', prefix, recurse)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- state ----------------------------------------------------------------------
    def state_dict(self, destination=None, prefix='', keep_vars=False):
        """name -> tensor (sharing storage, detached unless keep_vars), in
        PyTorch's order: own parameters, own buffers, then each child"""
        out = OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                out[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(out, prefix + name + '.', keep_vars)
        return out

    def load_state_dict(self, state_dict, strict=True):
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict and (missing or unexpected):
            errors.append(f"Missing key(s): {missing}. Unexpected key(s): {unexpected}.")
        for k, t in own.items():
            if k in state_dict:
                v = state_dict[k]
                if not isinstance(v, _C.Tensor):
                    errors.append(f"While copying the parameter named \"{k}\", expected a "
                                  f"Tensor from the checkpoint but received {type(v)}")
                elif tuple(v.shape) != tuple(t.shape):
                    errors.append(f"size mismatch for {k}: copying a param with shape "
                                  f"{tuple(v.shape)}, the shape in current model is "
                                  f"{tuple(t.shape)}.")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for k, t in own.items():
                if k in state_dict:
                    t.copy_(state_dict[k])
        return _IncompatibleKeys(missing, unexpected)

    # ---- modes and bulk updates --------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        _trace_guards.changed()  # traces guard on the flags
        for m in self.modules():
            object.__setattr__(m, 'training', mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=False):
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _cast(self, dt):
        with no_grad():
            for m in self.modules():
                for name, p in m._parameters.items():
                    if p is not None and p.dtype.is_floating_point:
                        m._parameters[name] = Parameter(p.to(dt), p.requires_grad)
                for name, b in m._buffers.items():
                    if b is not None and b.dtype.is_floating_point:
                        m._buffers[name] = b.to(dt)
        _trace_guards.changed()
        return self

    def to(self, *args, dtype=None, **kwargs):
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            check_eager_target(a, f'{type(self).__name__}.to()')
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                            f"desired dtype={dtype}")
        return self._cast(dtype) if dtype is not None else self

    def float(self):
        return self._cast(_C.float32)

    def double(self):
        return self._cast(_C.float64)

    half = _no_dtype('half', 'float16')
    bfloat16 = _no_dtype('bfloat16', 'bfloat16')

    def cpu(self):
        return self

    def cuda(self, device=None):
        from ..cuda import _needs_cuda
        _needs_cuda()

    def share_memory(self):
        return self  # one process's memory: nothing to move

    # ---- lookup by dotted name ------------------------------------------------------------
    def get_submodule(self, target):
        """the submodule at a dotted path ('' is self), PyTorch's AttributeError
        naming the missing part otherwise"""
        if target == '':
            return self
        mod = self
        for item in target.split('.'):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def _get_name(self):
        return type(self).__name__

    def _get_member(self, target, table, kind):
        """get_parameter / get_buffer: the submodule's entry of `table`
        (its _parameters or _buffers), PyTorch's AttributeErrors else"""
        module_path, _, name = target.rpartition('.')
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        entries = getattr(mod, table)
        if name not in entries:
            raise AttributeError("`" + name + "` is not " + kind)
        return entries[name]

    def get_parameter(self, target):
        return self._get_member(target, '_parameters', 'an nn.Parameter')

    def get_buffer(self, target):
        return self._get_member(target, '_buffers', 'a buffer')

    # ---- printing -------------------------------------------------------------------------
    def extra_repr(self):
        return ''

    def __repr__(self):
        lines = []
        for name, m in self._modules.items():
            sub = repr(m).replace('\n', '\n  ')
            lines.append(f'({name}): {sub}')
        extra = self.extra_repr()
        if not lines:
            return f'{type(self).__name__}({extra})'
        body = '\n  '.join(([extra] if extra else []) + lines)
        return f'{type(self).__name__}(\n  {body}\n)'

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))
