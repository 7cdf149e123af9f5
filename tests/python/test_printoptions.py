"""repr of tensors as PyTorch prints them, under tg.set_printoptions
(precision, threshold, edgeitems, linewidth, sci_mode, profile): the
format chosen from the values shown, summarization, row wrapping and the
suffixes' line breaks, grad_fn names; dtype names are tensorgraph's
("float64" where PyTorch says "torch.float64")."""
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

OPTIONS = [dict(), dict(precision=2), dict(precision=8), dict(precision=0), dict(threshold=5),
           dict(edgeitems=1, threshold=10), dict(linewidth=30), dict(sci_mode=True),
           dict(sci_mode=False), dict(profile='short'), dict(profile='full'),
           dict(profile='short', precision=6)]
CASES = {
    'fractions': lambda L: L.tensor([1.12345, 2.5]),
    'ints': lambda L: L.arange(10),
    'summarized': lambda L: L.arange(2000.).reshape(40, 50) / 3,
    'small': lambda L: L.tensor([1e-5, 1.]),
    'range': lambda L: L.tensor([123.456, 0.001]),
    '3d': lambda L: L.arange(24.).reshape(2, 3, 4),
    'float64': lambda L: L.tensor([1., 2.], dtype=L.float64),
    '0d': lambda L: L.tensor(3.14159),
    'nan': lambda L: L.tensor([float('nan'), 1.5]),
    'column': lambda L: L.arange(12.).reshape(12, 1),
    'rows': lambda L: L.tensor([[1.5, -2.25]] * 8),
    'long_float64': lambda L: L.linspace(0, 1, 50, dtype=L.float64),
    'signed_zeros': lambda L: L.tensor([-0.0, 0.0]),
    'grad_fn': lambda L: L.ones(2, requires_grad=True) * 2,
    'requires_grad': lambda L: L.ones(2, 3, requires_grad=True),
    'empty': lambda L: L.zeros(0, 3),
    'empty_int': lambda L: L.zeros(0, dtype=L.int64),
    'bool': lambda L: L.tensor([True, False]),
    'int32': lambda L: L.arange(10, dtype=L.int32),
    'big': lambda L: L.tensor([1e10, 1.]),
    'inf': lambda L: L.tensor([0.1, 0.25, float('nan'), float('inf')]),
    'int_valued_large': lambda L: L.tensor([1e8, 1.]),
}


@pytest.fixture
def default_options():
    yield
    tg.set_printoptions(profile='default')
    if torch is not None:
        torch.set_printoptions(profile='default')


@needs_torch
@pytest.mark.parametrize('opts', OPTIONS, ids=lambda o: ','.join(f'{k}={v}' for k, v in o.items()))
def test_repr_as_torch(opts, default_options):
    tg.set_printoptions(**opts)
    torch.set_printoptions(**opts)
    for name, make in CASES.items():
        want = repr(make(torch)).replace('torch.', '')
        assert repr(make(tg)) == want, name
        assert str(make(tg)) == want, name


def test_profile_default_restores(default_options):
    tg.set_printoptions(precision=1, threshold=3)
    assert repr(tg.tensor([1.26, 2.])) == 'tensor([1.3, 2.0])'
    assert repr(tg.arange(5)) == 'tensor([0, 1, 2, 3, 4])'  # 5 elements > 3: summarized
    tg.set_printoptions(threshold=2)
    assert repr(tg.arange(10)) == 'tensor([0, 1, 2,  ..., 7, 8, 9])'
    tg.set_printoptions(profile='default')
    assert repr(tg.tensor([1.12345])) == 'tensor([1.1235])'
    with pytest.raises(ValueError, match="profile"):
        tg.set_printoptions(profile='wide')


def test_symbolic_tensors_print_through_the_library():
    seen = []
    tg.function(lambda x: seen.append(repr(x)) or x * 2)(tg.ones(2))
    assert seen and 'symbolic' in seen[0]
