"""Custom autograd Functions in graph mode (tg.function) and the 0-norm's
gradient, as PyTorch gives it."""
import numpy as np
import pytest

import tensorgraph as tg


class _StraightThrough(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_custom_function_inside_tg_function():
    """traced, a Function's forward ops are graph nodes (it used to crash the
    process); its backward cannot be part of a graph, so differentiating
    through it fails, naming it, rather than using the forward ops' gradient"""
    x = tg.tensor([0.4, 1.6, 2.2])
    f = tg.function(lambda x: _StraightThrough.apply(x).sum())
    assert f(x).item() == 4.0
    x.requires_grad_()
    for _ in range(2):  # the same error again, not a half-built gradient's
        with pytest.raises(NotImplementedError, match="custom_function"):
            f(x).backward()
    x.grad = None
    _StraightThrough.apply(x).sum().backward()  # eagerly its own backward
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3, 3])


def test_zero_norm_gives_no_gradient_eagerly_and_zeros_traced():
    x = tg.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]], requires_grad=True)
    y = tg.norm(x, 0)
    assert y.item() == 3 and y.requires_grad and type(y.grad_fn).__name__ == 'NormBackward1'
    y.backward()
    assert x.grad is None  # PyTorch's
    assert type(tg.linalg.vector_norm(x, 0, 1).grad_fn).__name__ == 'LinalgVectorNormBackward0'
    assert type(tg.nn.functional.pairwise_distance(x, 2 * x, 0).grad_fn).__name__ == \
        'NormBackward1'
    f = tg.function(lambda x: tg.linalg.vector_norm(x, 0) + x.sum())
    f(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))
