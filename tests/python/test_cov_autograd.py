"""tg.autograd.Variable, detect_anomaly / set_detect_anomaly and
gradgradcheck, as PyTorch's where tensorgraph can (anomaly mode checks
the gradients autograd.grad returns; it cannot name the function)."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


@needs_torch
def test_variable_as_torch():
    from tensorgraph.autograd import Variable
    t = tg.ones(2)
    v = Variable(t, requires_grad=True)
    tv = torch.autograd.Variable(torch.ones(2), requires_grad=True)
    assert v.requires_grad == tv.requires_grad and not t.requires_grad
    assert isinstance(t, Variable) and isinstance(v, tg.Tensor)
    assert not isinstance(np.ones(2), Variable)
    v.sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [1.0, 1.0])
    with pytest.raises(TypeError):
        Variable([1.0, 2.0])


def test_detect_anomaly_api_and_nan_check():
    assert not tg.is_anomaly_enabled()
    x = tg.tensor([1.0, 0.0], requires_grad=True)
    with pytest.warns(UserWarning, match='Anomaly Detection has been enabled'):
        ctx = tg.autograd.detect_anomaly()
    with ctx:
        assert tg.is_anomaly_enabled() and tg.is_anomaly_check_nan_enabled()
        y = (x.sqrt() * 0).sum()   # 0 * inf in the gradient
        # the engine names the function, as PyTorch's does, for grad and backward
        with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan "
                                               "values in its 0th output"):
            tg.autograd.grad(y, x)
        with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan"):
            (x.sqrt() * 0).sum().backward()
    assert not tg.is_anomaly_enabled()
    # outside anomaly mode the NaN passes silently, as in PyTorch
    g, = tg.autograd.grad((x.sqrt() * 0).sum(), x)
    assert bool(g.isnan().any())
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with tg.autograd.detect_anomaly(check_nan=False):
            assert not tg.is_anomaly_check_nan_enabled()
            tg.autograd.grad((x.sqrt() * 0).sum(), x)
    tg.autograd.set_detect_anomaly(True)
    assert tg.is_anomaly_enabled()
    tg.autograd.set_detect_anomaly(False)
    assert not tg.is_anomaly_enabled()
    with tg.autograd.set_detect_anomaly(True):
        assert tg.is_anomaly_enabled()
    assert not tg.is_anomaly_enabled()

    with warnings.catch_warnings():
        warnings.simplefilter('ignore')

        @tg.autograd.detect_anomaly()
        def inside():
            return tg.is_anomaly_enabled()
    assert inside() and not tg.is_anomaly_enabled()


def test_gradgradcheck():
    x = tg.tensor([0.3, 0.7, -1.2], dtype=tg.float64, requires_grad=True)
    y = tg.tensor([0.5, -0.1, 2.0], dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradgradcheck(lambda a, b: (a.sin() * b).sum(), (x, y))
    assert tg.autograd.gradgradcheck(lambda a: a ** 3, (x,))
    assert tg.autograd.gradgradcheck(lambda a: a.exp() * a, (x,),
                                     (tg.tensor([1.0, 2.0, 3.0], dtype=tg.float64,
                                                requires_grad=True),))

    class FirstOrderOnly(tg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 2

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return g * 2 * a.detach()   # not differentiable again: wrong second derivative

    assert tg.autograd.gradcheck(lambda a: FirstOrderOnly.apply(a), (x,))
    assert not tg.autograd.gradgradcheck(lambda a: FirstOrderOnly.apply(a), (x,),
                                         raise_exception=False)
    with pytest.raises(RuntimeError, match='mismatch'):
        tg.autograd.gradgradcheck(lambda a: FirstOrderOnly.apply(a), (x,))
