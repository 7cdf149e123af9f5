"""PyTorch's argument names as keywords: torch.det(input=m),
torch.zeros_like(input=x), torch.equal(input=a, other=b) ... Every torch
function tensorgraph has whose first parameter is `input` (the rest having
defaults) takes input= when PyTorch does: the list of such functions
comes from torch.overrides.get_testing_overrides(), PyTorch's own table of
signatures, so new functions are checked as they are added."""
import inspect
import warnings

import pytest

import tensorgraph as tg
from conftest import torch, needs_torch, SANITIZED


def _unary_functions():
    from torch.overrides import get_testing_overrides
    for f, sig in get_testing_overrides().items():
        name = getattr(f, '__name__', None)
        if name is None or getattr(torch, name, None) is not f or not hasattr(tg, name):
            continue
        try:
            params = list(inspect.signature(sig).parameters.values())
        except (TypeError, ValueError):
            continue
        if params and params[0].name == 'input' and all(
                p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                for p in params[1:]):
            yield name


def _square(lib):
    return lib.tensor([[2., 1., 0.5], [1., 3., 0.2], [0.1, 0.2, 4.]])


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
def test_input_keyword_where_pytorch_takes_it():
    missing = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for name in _unary_functions():
            try:
                getattr(torch, name)(input=_square(torch))
            except Exception:  # noqa: BLE001 - PyTorch refuses: nothing to compare
                continue
            try:
                getattr(tg, name)(input=_square(tg))
            except TypeError as e:
                if "'input'" in str(e):
                    missing.append(name)
            except Exception:  # noqa: BLE001 - another error: not about the keyword
                pass
    assert missing == []


@pytest.mark.parametrize('call', [
    lambda m: tg.matrix_power(input=m, n=2), lambda m: tg.triangular_solve(input=m, A=m),
    lambda m: tg.equal(input=m, other=m), lambda m: tg.allclose(input=m, other=m),
    lambda m: tg.full_like(input=m, fill_value=2.), lambda m: tg.inverse(input=m),
    lambda m: tg.linalg.det(A=m)])
def test_named_arguments(call):
    call(_square(tg))


def _keyword_cases():
    """(owner, name, keyword, value) for every parameter with a default of
    torch's Tensor methods, functions and nn.functional functions that
    tensorgraph has and that need nothing but the input"""
    from torch.overrides import get_testing_overrides
    for f, sig in get_testing_overrides().items():
        name = getattr(f, '__name__', None) or ''
        for owner in ('Tensor', 'torch', 'F'):
            t_owner = {'Tensor': torch.Tensor, 'torch': torch, 'F': torch.nn.functional}[owner]
            g_owner = {'Tensor': tg.Tensor, 'torch': tg, 'F': tg.nn.functional}[owner]
            if getattr(t_owner, name, None) is f and hasattr(g_owner, name):
                break
        else:
            continue
        try:
            params = list(inspect.signature(sig).parameters.values())
        except (TypeError, ValueError):
            continue
        if not params or any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL,
                                                                      p.VAR_KEYWORD)
                             for p in params[1:]):
            continue
        for p in params[1:]:
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != 'out':
                yield owner, name, p.name, p.default


def _call(lib, owner, name, kw):
    x = _square(lib)
    if owner == 'Tensor':
        return getattr(x, name)(**kw)
    return getattr(lib if owner == 'torch' else lib.nn.functional, name)(x, **kw)


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
def test_keywords_of_methods_and_functions():
    """each keyword PyTorch accepts alone is accepted (x.sum(dtype=...),
    x.float(memory_format=...), x.requires_grad_(requires_grad=...))"""
    refused = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for owner, name, key, value in _keyword_cases():
            try:
                _call(torch, owner, name, {key: value})
            except Exception:  # noqa: BLE001 - PyTorch refuses: nothing to compare
                continue
            try:
                _call(tg, owner, name, {key: value})
            except TypeError as e:
                if key in str(e) and 'keyword' in str(e):
                    refused.append(f'{owner}.{name}({key}=)')
            except Exception:  # noqa: BLE001 - another error: not about the keyword
                pass
    assert refused == []


def test_requires_grad_by_keyword_and_its_errors():
    x = tg.ones(2)
    assert x.requires_grad_(requires_grad=True).requires_grad
    with pytest.raises(TypeError, match='at most 1 argument'):
        x.requires_grad_(True, False)
    with pytest.raises(TypeError, match="unexpected keyword argument 'grad'"):
        x.requires_grad_(grad=True)
    y = tg.ones(2, 3, 4, 5).double(memory_format=tg.channels_last)
    assert y.dtype == tg.float64 and y.stride() == (60, 1, 15, 3)
