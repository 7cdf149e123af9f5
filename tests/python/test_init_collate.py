"""nn.init's trunc_normal_, orthogonal_, eye_, dirac_, sparse_ and
calculate_gain('selu') (their defining properties, and PyTorch's values
where deterministic), and default_collate's types against PyTorch:
Python floats as float64, tuples as lists, strings as tuples,
namedtuples kept."""
import collections

import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def test_trunc_normal_stays_inside_and_spreads():
    t = tg.nn.init.trunc_normal_(tg.empty(200, 50), mean=0.5, std=1.0, a=-0.5, b=1.5)
    v = t.numpy()
    assert v.min() >= -0.5 and v.max() <= 1.5
    assert abs(v.mean() - 0.5) < 0.05 and 0.45 < v.std() < 0.65  # truncated N(0.5, 1)


@pytest.mark.parametrize('shape', [(6, 4), (3, 8), (4, 2, 3)])
def test_orthogonal_rows_or_columns(shape):
    t = tg.nn.init.orthogonal_(tg.empty(*shape), gain=2.0)
    m = t.numpy().reshape(shape[0], -1) / 2.0
    small = min(m.shape)
    gram = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)


@needs_torch
def test_deterministic_initialisers_match_torch():
    for shape in ((3, 5), (4, 4)):
        assert tg.nn.init.eye_(tg.empty(*shape)).tolist() == \
            torch.nn.init.eye_(torch.empty(*shape)).tolist()
    for shape, groups in (((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((2, 3, 3, 3, 3), 1)):
        assert tg.nn.init.dirac_(tg.empty(*shape), groups).tolist() == \
            torch.nn.init.dirac_(torch.empty(*shape), groups).tolist()
    for name in ('selu', 'conv1d', 'conv_transpose2d'):
        assert tg.nn.init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    with pytest.raises(ValueError):
        tg.nn.init.dirac_(tg.empty(3, 3))


def test_sparse_zeros_per_column():
    t = tg.nn.init.sparse_(tg.empty(10, 6), 0.3, std=0.5).numpy()
    assert ((t == 0).sum(0) >= 3).all()
    assert (t != 0).sum() >= 6 * 6


@needs_torch
def test_default_collate_types():
    Pair = collections.namedtuple('Pair', 'a b')
    batches = [[1.5, 2.5], [(1, [2.0, 3]), (4, [5.0, 6])], [(0.5, 'x'), (1.5, 'y')],
               [{'k': 1.0, 'n': 2}, {'k': 3.0, 'n': 4}], [Pair(1, 2.0), Pair(3, 4.0)]]

    def shape_of(v):
        if hasattr(v, 'dtype'):
            return ('tensor', str(v.dtype).split('.')[-1], v.tolist())
        if isinstance(v, dict):
            return {k: shape_of(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return (type(v).__name__, [shape_of(x) for x in v])
        return v
    for b in batches:
        t = torch.utils.data.default_collate(b)
        g = tg.utils.data.default_collate(b)
        assert shape_of(g) == shape_of(t)
