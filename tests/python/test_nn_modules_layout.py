"""torch.nn.modules' layout over tg.nn (nn/_modules_names.py): every
public name of each of PyTorch's submodules, its private bases answering
isinstance/issubclass as PyTorch's do for every class both have, the global
module hooks, and consume_prefix_in_state_dict_if_present."""
import importlib
import inspect
from collections import OrderedDict

import pytest

import tensorgraph as tg
from conftest import torch, needs_torch


# the legacy (non-full) module backward hooks, whose grad_input is that of
# a module's last op (PyTorch deprecates them); the full hooks are here
NOT_HERE = {'register_module_backward_hook'}


def _torch_submodules():
    import types
    for name in sorted(dir(torch.nn.modules)):
        m = getattr(torch.nn.modules, name)
        if isinstance(m, types.ModuleType) and m.__name__.startswith('torch.nn.modules.') \
                and not name.startswith('_'):
            yield name, m


@needs_torch
def test_public_names_of_every_submodule():
    for name, theirs in _torch_submodules():
        ours = importlib.import_module(f'tensorgraph.nn.modules.{name}')
        for n in getattr(theirs, '__all__', []):
            if n in NOT_HERE:
                continue
            assert hasattr(ours, n), f'nn.modules.{name}.{n}'


@needs_torch
def test_private_bases_answer_as_pytorchs():
    classes = [n for n in dir(torch.nn) if inspect.isclass(getattr(torch.nn, n)) and
               issubclass(getattr(torch.nn, n), torch.nn.Module) and hasattr(tg.nn, n)]
    checked = 0
    for name, theirs in _torch_submodules():
        ours = importlib.import_module(f'tensorgraph.nn.modules.{name}')
        for base in [n for n, v in vars(theirs).items() if n.startswith('_') and
                     inspect.isclass(v) and issubclass(v, torch.nn.Module) and
                     v.__module__ == theirs.__name__]:
            for c in classes:
                want = issubclass(getattr(torch.nn, c), getattr(theirs, base))
                assert issubclass(getattr(tg.nn, c), getattr(ours, base)) == want, (base, c)
                checked += 1
    assert checked > 500


@needs_torch
def test_global_hooks_run_first_and_replace():
    def run(lib):
        seen = []
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
        m[0].register_forward_hook(lambda mod, a, o: seen.append(('own', type(mod).__name__)))
        mods = lib.nn.modules.module
        h1 = mods.register_module_forward_pre_hook(
            lambda mod, a: seen.append(('pre', type(mod).__name__)))
        h2 = mods.register_module_forward_hook(
            lambda mod, a, o: (seen.append(('post', type(mod).__name__)),
                               o * 0 if type(mod).__name__ == 'ReLU' else None)[1])
        out = m(lib.ones(1, 2))
        h1.remove()
        h2.remove()
        m(lib.ones(1, 2))  # removed: nothing more is seen
        return seen, out.abs().sum().item()
    assert run(tg) == run(torch)


def test_global_backward_hook():
    seen = []
    h = tg.nn.modules.module.register_module_full_backward_hook(
        lambda mod, gi, go: seen.append(type(mod).__name__))
    x = tg.ones(1, 2, requires_grad=True)
    tg.nn.Linear(2, 3)(x).sum().backward()
    h.remove()
    tg.nn.Linear(2, 3)(x).sum().backward()
    assert seen == ['Linear']


@needs_torch
def test_consume_prefix_as_pytorch():
    def run(lib):
        sd = OrderedDict([('module.a', 1), ('module.b.c', 2), ('x', 3)])
        sd._metadata = OrderedDict([('', {'v': 1}), ('module', {'v': 2})])
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, 'module.')
        return list(sd.items()), list(sd._metadata)
    assert run(tg) == run(torch)
    assert tg.nn.utils.consume_prefix_in_state_dict_if_present is \
        tg.nn.modules.utils.consume_prefix_in_state_dict_if_present


def test_imports_of_the_layout():
    from tensorgraph.nn.modules.batchnorm import _BatchNorm
    from tensorgraph.nn.modules.pooling import _MaxPoolNd
    assert isinstance(tg.nn.BatchNorm1d(2), _BatchNorm)
    assert isinstance(tg.nn.MaxPool2d(2), _MaxPoolNd) and not isinstance(tg.nn.AvgPool2d(2),
                                                                         _MaxPoolNd)
    with pytest.raises(ImportError):
        from tensorgraph.nn.modules.conv import NoSuchThing  # noqa: F401
