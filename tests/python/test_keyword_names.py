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
