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

_EXTRA_STATE_KEY_SUFFIX = '_extra_state'


class _IncompatibleKeys(namedtuple('IncompatibleKeys', ['missing_keys', 'unexpected_keys'])):
    """load_state_dict's result, printed as PyTorch's when nothing is off"""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return '<All keys matched successfully>'
        return super().__repr__()

    __str__ = __repr__


def _typename(obj):
    """torch.typename's words for an object in messages"""
    from .._ops_aten import typename
    return typename(obj)


def _hooks(module, name):
    """one of the state-dict hook tables, made on first use (a module
    unpickled from before they existed has none)"""
    d = module.__dict__.get(name)
    if d is None:
        d = OrderedDict()
        object.__setattr__(module, name, d)
    return d


def _register(hooks, hook):
    """hook added to the dict hooks; the handle's remove() (or leaving it
    as a context manager) takes it out"""
    h = RemovableHandle(hooks)
    hooks[h.id] = hook
    return h


# PyTorch's global module hooks (torch.nn.modules.module.register_module_*):
# run for every module's call, before each module's own
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()


def register_module_forward_pre_hook(hook):
    """hook(module, args) before every module's forward (and its own pre
    hooks); what it returns (not None) replaces the positional arguments"""
    return _register(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook):
    """hook(module, args, output) after every module's forward, before its
    own forward hooks; what it returns (not None) replaces the output"""
    return _register(_global_forward_hooks, hook)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) for every module, before its
    own full backward hooks"""
    return _register(_global_backward_hooks, hook)


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
        if self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks:
            return self._call_with_forward(self.forward, *args, **kwargs)
        if self._forward_pre_hooks or _global_forward_pre_hooks:
            args = self._run_forward_pre_hooks(args)
        out = self.forward(*args, **kwargs)
        if not (self._forward_hooks or _global_forward_hooks):  # the common case: no loop
            return out
        return self._run_forward_hooks(args, out)

    def _call_with_forward(self, forward, *args, **kwargs):
        """__call__ with another forward (tg.function's converted one)"""
        _trace_guards.note(self)
        if self._forward_pre_hooks or _global_forward_pre_hooks:
            args = self._run_forward_pre_hooks(args)
        backward_hooks = [*_global_backward_hooks.values(), *self._backward_hooks.values()]
        bw = BackwardHook(self, backward_hooks, list(self._backward_pre_hooks.values())) \
            if backward_hooks or self._backward_pre_hooks else None
        if bw:
            args = bw.setup_input_hook(args)
        out = forward(*args, **kwargs)
        if self._forward_hooks or _global_forward_hooks:
            out = self._run_forward_hooks(args, out)
        return bw.setup_output_hook(out) if bw else out

    def _run_forward_pre_hooks(self, args):
        """each hook(module, args) may return new args (a tuple, or one value)"""
        for hook in (*_global_forward_pre_hooks.values(), *self._forward_pre_hooks.values()):
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        return args

    def _run_forward_hooks(self, args, out):
        for hook in (*_global_forward_hooks.values(), *self._forward_hooks.values()):
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
        """PyTorch's rules: a Parameter or Module registers (before
        __init__ an AttributeError), None or a tensor of the right kind
        replaces a registered one, other values are plain attributes"""
        _trace_guards.changed()  # a parameter or buffer may be replaced, a flag changed
        d = self.__dict__
        params = d.get('_parameters')
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            if name not in params:
                for store in (d, d['_buffers'], d['_modules']):
                    store.pop(name, None)
                d['_non_persistent'].discard(name)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
            return
        modules = d.get('_modules')
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            if name not in modules:  # a replacement keeps its place in the order
                for store in (d, d['_parameters'], d['_buffers']):
                    store.pop(name, None)
                d['_non_persistent'].discard(name)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = None
            return
        buffers = d.get('_buffers')
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = value
            return
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
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def _check_name(self, kind, name, table):
        """PyTorch's checks of a new parameter's or buffer's name (in its order)"""
        if table not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if '.' in name:
            raise KeyError(f"{kind} name can't contain \".\"")
        if not name:
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in self.__dict__[table]:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name, param):
        self._check_name('parameter', name, '_parameters')
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' "
                             "as a function of another Tensor, compute the value in "
                             "the forward() method.")
        self._parameters[name] = param
        _trace_guards.changed()

    def register_buffer(self, name, tensor, persistent=True):
        self._check_name('buffer', name, '_buffers')
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        _trace_guards.changed()
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name, module):
        """PyTorch's checks, in its order (the module's type first)"""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if '.' in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if not name:
            raise KeyError("module name can't be empty string \"\"")
        self._modules[name] = module

    register_module = add_module

    # ---- walking ------------------------------------------------------------------
    def named_modules(self, memo=None, prefix='', remove_duplicate=True):
        """self and its descendants, depth first; a module reached twice is
        yielded once unless remove_duplicate is False (memo: the modules
        already seen)"""
        memo = set() if memo is None else memo
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, prefix + ('.' if prefix else '') + name,
                                           remove_duplicate)

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
    _version = 1  # saved in state_dict()._metadata: loaders of older layouts read it

    def get_extra_state(self):
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called.")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """this module's own entries (not its children's)"""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def _register_state_dict_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) after the module's
        entries are in; what it returns (not None) replaces the dict"""
        return _register(_hooks(self, '_state_dict_hooks'), hook)

    def state_dict(self, *args, destination=None, prefix='', keep_vars=False):
        """name -> tensor (sharing storage, detached unless keep_vars), in
        PyTorch's order: own parameters, own buffers, extra state, then each
        child; the dict's _metadata holds each module's _version"""
        if args:  # PyTorch's deprecated positional form
            import warnings
            destination = args[0] if destination is None else destination
            if len(args) > 1 and prefix == '':
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
            warnings.warn("Positional args are being deprecated, use kwargs instead.")
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, '_metadata'):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + '.',
                             keep_vars=keep_vars)
        for hook in _hooks(self, '_state_dict_hooks').values():
            r = hook(self, destination, prefix, local_metadata)
            if r is not None:
                destination = r
        return destination

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook(state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) before this module loads (the module
        first when with_module)"""
        if with_module:
            import functools
            import weakref
            ref = weakref.ref(self)
            hook = functools.partial(lambda h, *a: h(ref(), *a), hook)
        return _register(_hooks(self, '_load_state_dict_pre_hooks'), hook)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) after the module and its children
        loaded; it may edit the key lists in place (strict checks them after)"""
        return _register(_hooks(self, '_load_state_dict_post_hooks'), hook)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        """copies this module's own entries from state_dict (PyTorch's
        algorithm and messages: each entry copied when it can be, the
        problems collected in error_msgs)"""
        for hook in _hooks(self, '_load_state_dict_pre_hooks').values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update((k, v) for k, v in self._buffers.items()
                           if v is not None and k not in self._non_persistent)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, _C.Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  'torch.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(value)}')
                continue
            if param.ndim == 0 and value.ndim == 1:  # checkpoints from before 0-d tensors
                value = value[0]
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f'size mismatch for {key}: copying a param with shape '
                                  f'{value.shape} from checkpoint, the shape in current model '
                                  f'is {param.shape}.')
                continue
            try:
                with no_grad():
                    param.copy_(value)
            except Exception as ex:  # noqa: BLE001 - reported as PyTorch does
                error_msgs.append(f'While copying the parameter named "{key}", whose '
                                  f'dimensions in the model are {param.shape} and whose '
                                  f'dimensions in the checkpoint are {value.shape}, an '
                                  f'exception occurred : {ex.args}.')
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    first = key[len(prefix):].split('.', 1)[0]  # a child's, or an entry
                    if first not in self._modules and first not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True):
        """PyTorch's: each module's _load_from_state_dict (with its
        _metadata entry), then its children's, then its post hooks; the
        missing and unexpected keys raise when strict, with the other
        problems, after everything that could be copied was"""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, '_metadata', None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local, prefix=''):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            module._load_from_state_dict(local, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    cp = prefix + name + '.'
                    load(child, {k: v for k, v in local.items() if k.startswith(cp)}, cp)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in _hooks(module, '_load_state_dict_post_hooks').values():
                if hook(module, keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are "
                        "not expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, 'Unexpected key(s) in state_dict: {}. '.format(
                    ', '.join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, 'Missing key(s) in state_dict: {}. '.format(
                    ', '.join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
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
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")
        return self._cast(dtype) if dtype is not None else self

    def type(self, dst_type):
        """every parameter and buffer cast to dst_type (a dtype or a type name),
        integer buffers too, as PyTorch's"""
        with no_grad():
            for m in self.modules():
                for name, p in m._parameters.items():
                    if p is not None:
                        m._parameters[name] = Parameter(p.type(dst_type), p.requires_grad)
                for name, b in m._buffers.items():
                    if b is not None:
                        m._buffers[name] = b.type(dst_type)
        _trace_guards.changed()
        return self

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
        """PyTorch's layout: a one-line extra_repr and no children inline,
        otherwise each line of both indented by two"""
        extra = self.extra_repr()
        extra_lines = extra.split('\n') if extra else []
        child_lines = []
        for name, m in self._modules.items():
            sub = repr(m).replace('\n', '\n  ')
            child_lines.append(f'({name}): {sub}')
        lines = extra_lines + child_lines
        main = self._get_name() + '('
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += '\n  ' + '\n  '.join(lines) + '\n'
        return main + ')'

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))
