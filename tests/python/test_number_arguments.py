"""A 0-d tensor that does not require grad stands for a number argument
(an integer tensor for an int one), as PyTorch's argument parser takes
it; one that requires grad, has dims or is a float for an int is refused
with PyTorch's TypeError."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, needs_torch, torch

X = np.array([0.3, -2.0, 1.0, 0.7], np.float32)

CASES = {
    'hardshrink': lambda L, x, a: L.nn.functional.hardshrink(x, a),
    'celu': lambda L, x, a: L.nn.functional.celu(x, a),
    'elu': lambda L, x, a: L.nn.functional.elu(x, a),
    'leaky_relu': lambda L, x, a: L.nn.functional.leaky_relu(x, a),
    'threshold': lambda L, x, a: L.nn.functional.threshold(x, a, 2.0),
    'hardtanh': lambda L, x, a: L.nn.functional.hardtanh(x, -a, a),
    'add_alpha': lambda L, x, a: L.add(x, x, alpha=a),
    'clamp': lambda L, x, a: L.clamp(x, max=a),
}


@needs_torch
@pytest.mark.parametrize('name', sorted(CASES))
def test_zero_d_tensor_as_a_number(name):
    f = CASES[name]
    got = f(tg, tg.tensor(X), tg.tensor(0.5))
    want = f(torch, torch.tensor(X), torch.tensor(0.5))
    close(got, want.numpy())


def test_int_arguments_take_integer_tensors():
    x = tg.tensor(X)
    assert tg.topk(x, tg.tensor(2)).values.tolist() == tg.topk(x, 2).values.tolist()
    assert tg.histc(x, 4, tg.tensor(-2.0), tg.tensor(2.0)).tolist() == [1.0, 0.0, 2.0, 1.0]


def test_refused_where_pytorch_refuses():
    x = tg.tensor(X)
    with pytest.raises(TypeError, match="argument 'lambd' must be a number"):
        tg.nn.functional.hardshrink(x, tg.tensor(0.5, requires_grad=True))
    with pytest.raises(TypeError, match="argument 'alpha' must be a number"):
        tg.nn.functional.celu(x, tg.tensor([0.5]))
    with pytest.raises(TypeError):
        tg.topk(x, tg.tensor(2.0))
