"""tg.testing.assert_close / assert_allclose / make_tensor: PyTorch's
comparisons and messages (tensorgraph/testing.py)."""
import math
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from tensorgraph.testing import assert_close


def _message(a, b, **kw):
    with pytest.raises(AssertionError) as e:
        assert_close(a, b, **kw)
    return str(e.value)


def test_close_within_each_dtypes_tolerance():
    assert_close(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.0 + 1e-6]))
    assert_close(tg.tensor([1.0, math.inf]), tg.tensor([1.0, math.inf]))
    assert_close(tg.tensor([1.0, math.nan]), tg.tensor([1.0, math.nan]), equal_nan=True)
    assert_close(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.1]), rtol=0.1, atol=0.0)
    assert_close([tg.tensor(1.0), {'a': (1, 2.0)}], [tg.tensor(1.0), {'a': (1, 2.0)}])
    assert_close(np.array([1.0]), np.array([1.0]))


def test_messages_are_pytorchs():
    m = _message(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.1]))
    assert m.startswith("Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
                        "Greatest absolute difference: 0.0999999046325")
    assert "at index (1,) (up to 1e-05 allowed)" in m and "(up to 1.3e-06 allowed)" in m
    m = _message(tg.tensor([1, 2]), tg.tensor([1, 3]))
    assert m.startswith("Tensor-likes are not equal!") and "difference: 1 at index (1,)" in m
    assert _message(tg.tensor([1.0, math.nan]), tg.tensor([1.0, math.nan])).count('nan') == 2
    assert "'dtype' do not match" in _message(tg.tensor([1.0]), tg.tensor([1]))
    assert "'shape' do not match" in _message(tg.zeros(2, 3), tg.zeros(3, 2))
    assert _message(1, 2) == 'Scalars are not equal!\n\nAbsolute difference: 1\nRelative difference: 0.5'
    assert _message(1, 1.0) == "The (d)types do not match: <class 'int'> != <class 'float'>."
    assert _message(True, False) == 'Booleans mismatch: True is not False'
    assert _message([1, 2], [1, 2, 3]) == 'The length of the sequences mismatch: 2 != 3'
    assert _message({'a': tg.tensor(1.0)}, {'a': tg.tensor(2.0)}).endswith(
        "\n\nThe failure occurred for item ['a']")
    assert _message(tg.tensor([1.0]), tg.tensor([2.0]), msg='custom') == 'custom'
    assert 'inf' in _message(tg.tensor([math.inf]), tg.tensor([-math.inf]))


def test_argument_errors():
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified"):
        assert_close(tg.ones(1), tg.ones(1), rtol=0.1)
    with pytest.raises(TypeError, match="No comparison pair was able to handle"):
        assert_close(tg.ones(2), [1.0, 1.0])


def test_assert_allclose_is_deprecated_and_casts():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        tg.testing.assert_allclose(tg.tensor([1.0, 2.0]), [1.0, 2.0])
    assert w[0].category is FutureWarning


def test_make_tensor():
    tg.manual_seed(0)
    t = tg.testing.make_tensor((2, 3), dtype=tg.float32, low=-1, high=1)
    assert t.shape == (2, 3) and bool((t >= -1).all()) and bool((t < 1).all())
    i = tg.testing.make_tensor(4, 5, dtype=tg.int64, low=0, high=3, exclude_zero=True)
    assert i.dtype == tg.int64 and bool((i > 0).all()) and bool((i < 3).all())
    assert tg.testing.make_tensor(3, dtype=tg.float64, requires_grad=True).requires_grad
    with pytest.raises(ValueError, match="low must be weakly less than high"):
        tg.testing.make_tensor(2, dtype=tg.float32, low=2, high=1)
