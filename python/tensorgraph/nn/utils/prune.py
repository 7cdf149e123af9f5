"""nn.utils.prune, as PyTorch's: pruning a parameter `name` moves it to
the parameter `name_orig`, adds the buffer `name_mask` (ones where entries
are kept) and a forward pre-hook (the pruning method object itself) that
sets module.name = name_orig * name_mask before each forward, so the
gradients reach name_orig through the mask. Pruning the same parameter
again gathers the methods in a PruningContainer, whose newest method
computes its mask only over what the earlier ones kept. `remove` makes
`name` a plain parameter again, holding the pruned values."""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ... import _C
from ..._grad_mode import no_grad

_ALL = slice(None)


def _tg():
    import tensorgraph
    return tensorgraph


class BasePruningMethod(ABC):
    """a pruning method: compute_mask(t, default_mask) is the new mask (it
    keeps default_mask's zeros); apply() reparametrizes a module's tensor"""
    _tensor_name = None

    def __init__(self):
        pass

    def __call__(self, module, inputs):
        # the forward pre-hook: a plain attribute, not a parameter
        object.__setattr__(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """the mask for the importance scores t, on top of default_mask"""

    def apply_mask(self, module):
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        mask = getattr(module, self._tensor_name + '_mask')
        orig = getattr(module, self._tensor_name + '_orig')
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """prunes module.name with cls(*args, **kwargs); an earlier pruning of
        the same tensor and the new one form a PruningContainer"""
        old, old_key = None, []
        for k, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old = hook
                old_key.append(k)
        assert len(old_key) <= 1, (f"Avoid adding multiple pruning hooks to the same tensor "
                                   f"{name} of module {module}. Use a PruningContainer.")
        for k in old_key:
            del module._forward_pre_hooks[k]
        old_methods = old._pruning_methods if isinstance(old, PruningContainer) else None

        method = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            method = old
        elif old is not None:
            container = PruningContainer(old)
            container.add_pruning_method(method)
            method = container

        orig = getattr(module, name)
        if importance_scores is not None:
            assert importance_scores.shape == orig.shape, (
                f"importance_scores should have the same shape as parameter {name} of {module}")
        else:
            importance_scores = orig

        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + '_orig', orig)
            del module._parameters[name]
            default_mask = _tg().ones_like(orig)
        else:
            default_mask = getattr(module, name + '_mask').detach().clone().contiguous()

        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + '_mask', mask)
            object.__setattr__(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:
                module.__dict__.pop(name, None)
                orig = module._parameters.pop(name + '_orig')
                module.register_parameter(name, orig)
            elif old is not None:
                # (PyTorch drops the earlier hook here; tensorgraph keeps it)
                if old_methods is not None:
                    old._pruning_methods = old_methods
                module.register_forward_pre_hook(old)
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """t times the mask compute_mask finds for it (or for importance_scores)"""
        if importance_scores is not None:
            assert importance_scores.shape == t.shape, \
                "importance_scores should have the same shape as tensor t"
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = _tg().ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """makes the pruning permanent: name becomes a parameter again (the
        name_orig parameter object, now holding the pruned values)"""
        assert self._tensor_name is not None, \
            f"Module {module} has to be pruned before pruning can be removed"
        name = self._tensor_name
        weight = self.apply_mask(module)
        module.__dict__.pop(name, None)
        orig = module._parameters[name + '_orig']
        orig.data = weight.detach()
        del module._parameters[name + '_orig']
        del module._buffers[name + '_mask']
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """the sequence of pruning methods applied to one tensor (iterative
    pruning); its mask is the newest method's over what the others kept"""

    def __init__(self, *args):
        self._pruning_methods = tuple()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """the newest method's mask over default_mask's unpruned entries
        (unstructured), unpruned slices along its dim (structured) or all
        of t (global), merged into default_mask"""
        method = self._pruning_methods[-1]
        kind = getattr(method, 'PRUNING_TYPE', None)
        new_mask = default_mask.to(dtype=t.dtype)
        if kind == 'unstructured':
            slc = default_mask == 1
        elif kind == 'structured':
            if not hasattr(method, 'dim'):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     'have the attribute `dim` defined.')
            n_dims = t.dim()
            dim = method.dim
            if dim < 0:
                dim = n_dims + dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            others = [d for d in range(n_dims) if d != dim]
            keep = default_mask.sum(dim=others) != 0 if others else default_mask != 0
            slc = [_ALL] * n_dims
            slc[dim] = keep
            slc = tuple(slc)
        elif kind == 'global':
            slc = tuple([_ALL] * len(t.shape))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """prunes nothing (a mask of ones)"""
    PRUNING_TYPE = 'unstructured'

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """prunes the `amount` entries that _dropped picks (a count or a
    fraction of the tensor's entries)"""
    PRUNING_TYPE = 'unstructured'

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        size = t.nelement()
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        mask = default_mask.clone().contiguous()
        if k != 0:
            mask.view(-1)[self._dropped(t.reshape(-1), k)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """prunes `amount` entries chosen uniformly at random"""

    def _dropped(self, flat, k):
        tg = _tg()
        return tg.topk(tg.rand_like(flat), k=k).indices

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """prunes the `amount` entries of smallest absolute value"""

    def _dropped(self, flat, k):
        return _tg().topk(flat.abs(), k=k, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _slice_at(n_dims, dim, index):
    slc = [_ALL] * n_dims
    slc[dim] = index
    return tuple(slc)


class _Structured(BasePruningMethod):
    """prunes `amount` slices along `dim` (a count or a fraction of them):
    every slice but those _kept picks is zeroed, over the earlier mask"""
    PRUNING_TYPE = 'structured'

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        if k == 0:
            return default_mask
        mask = _tg().zeros_like(t)
        mask[_slice_at(t.dim(), self.dim, self._kept(t, size, k))] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask


class RandomStructured(_Structured):
    """prunes `amount` slices along `dim`, chosen at random"""

    def _kept(self, t, size, k):
        tg = _tg()
        prob = tg.rand(size)
        return prob > tg.kthvalue(prob, k=k).values

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


def _compute_norm(t, n, dim):
    """the n-norm of t over every dim but dim"""
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return _tg().norm(t, p=n, dim=dims)


class LnStructured(_Structured):
    """prunes the `amount` slices along `dim` of smallest n-norm"""

    def __init__(self, amount, n, dim=-1):
        super().__init__(amount, dim)
        self.n = n

    def _kept(self, t, size, k):
        with no_grad():
            norm = _compute_norm(t.detach(), self.n, self.dim)
        return _tg().topk(norm, k=size - k, largest=True).indices

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """prunes where the given mask is 0"""
    PRUNING_TYPE = 'global'

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        assert default_mask.shape == self.mask.shape
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """prunes the (module, name) tensors of `parameters` together, as one
    vector, with pruning_method(**kwargs) (an unstructured method)"""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    tg = _tg()
    scores = _C.cat([importance_scores.get((m, n), getattr(m, n)).reshape(-1)
                     for m, n in parameters], 0)
    default_mask = _C.cat([(getattr(m, n + '_mask') if hasattr(m, n + '_mask')
                            else tg.ones_like(getattr(m, n))).reshape(-1)
                           for m, n in parameters], 0)
    container = PruningContainer()
    container._tensor_name = 'temp'
    method = pruning_method(**kwargs)
    method._tensor_name = 'temp'
    if method.PRUNING_TYPE != 'unstructured':
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the '
                        f'`pruning_method`. Found method {pruning_method} of type '
                        f'{method.PRUNING_TYPE}')
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    at = 0
    for m, n in parameters:
        p = getattr(m, n)
        k = p.numel()
        custom_from_mask(m, n, mask=final_mask[at:at + k].reshape(p.shape))
        at += k


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """makes the pruning of module.name permanent (drops the
    reparametrization; the pruned values stay)"""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before "
                     f"pruning can be removed")


def is_pruned(module):
    """whether module or a submodule holds a pruning hook"""
    for _, sub in module.named_modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or \
            (not isinstance(amount, numbers.Integral)
             and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] "
                         f"or a non-negative integer")


def _validate_pruning_amount(amount, tensor_size):
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                         f"to prune={tensor_size}")


def _validate_structured_pruning(t):
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional "
                         f"tensors. Found tensor of shape {shape} with {len(shape)} dims")


def _compute_nparams_toprune(amount, tensor_size):
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
