"""squeeze(dim) on a dim whose size is not 1 (PyTorch: unchanged, a view;
the C tg_squeeze keeps its error for ONNX), squeeze/unsqueeze with
negative dims, and `x.data = y` (values copied in; identity,
requires_grad and .grad kept; another shape or dtype refused)."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
from conftest import needs_torch, torch

SHAPES = [(2, 1, 3), (1, 1), (3,), (1,), (), (0, 1, 2), (4, 1)]


def _np_squeeze(a, d):
    """PyTorch's rule in numpy: remove dim d only when its size is 1"""
    if a.ndim == 0:
        return a
    d = d % a.ndim
    return np.squeeze(a, d) if a.shape[d] == 1 else a


@pytest.mark.parametrize("shape", SHAPES)
def test_squeeze_dims_against_numpy(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = tg.tensor(a)
    nd = max(a.ndim, 1)
    for d in range(-nd, nd):
        want = _np_squeeze(a, d)
        for got in (x.squeeze(d), tg.squeeze(x, d), tg.squeeze(x, dim=d)):
            assert got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want)
    for d in (nd, -nd - 1):
        with pytest.raises(IndexError):
            x.squeeze(d)
    for d in range(-a.ndim - 1, a.ndim + 1):
        assert x.unsqueeze(d).shape == np.expand_dims(a, d).shape
    for d in (a.ndim + 1, -a.ndim - 2):
        with pytest.raises(IndexError):
            x.unsqueeze(d)


def test_squeeze_non_one_is_a_view_with_gradient():
    x = tg.zeros(2, 3, requires_grad=True)
    y = x.squeeze(1)
    assert y.shape == (2, 3) and y.data_ptr() == x.data_ptr()
    (y * tg.tensor([[1.0, 2, 3]])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 2, 3], [1, 2, 3]])
    z = tg.zeros(2, 3)
    z.squeeze(0)[0, 1] = 7  # writes through the view
    assert z[0, 1].item() == 7
    w = tg.zeros(2, 3).squeeze_(1)
    assert w.shape == (2, 3)


def test_squeeze_tuple_dims_is_a_type_error_as_torch_1_13():
    with pytest.raises(TypeError):
        tg.zeros(1, 2).squeeze((0, 1))


def test_squeeze_in_graph_mode():
    f = tg.function(lambda x: x.squeeze(0) * 2)
    np.testing.assert_array_equal(f(tg.ones(2, 3)).numpy(), np.full((2, 3), 2.0))


@needs_torch
@pytest.mark.parametrize("shape", SHAPES)
def test_squeeze_unsqueeze_against_torch(shape):
    a = np.asarray(np.random.rand(*shape), dtype=np.float32)
    x, t = tg.tensor(a), torch.tensor(a)
    nd = max(a.ndim, 1)
    for d in range(-nd, nd):
        assert tuple(t.squeeze(d).shape) == x.squeeze(d).shape
        assert tuple(torch.squeeze(t, d).shape) == tg.squeeze(x, d).shape
    for d in range(-a.ndim - 1, a.ndim + 1):
        assert tuple(t.unsqueeze(d).shape) == x.unsqueeze(d).shape
    # (PyTorch raises IndexError here too; its own error paths are not run,
    # since a C++ exception thrown by torch aborts under the ASan runtime)
    with pytest.raises(IndexError):
        x.squeeze(nd)


def test_data_setter_keeps_identity_grad_and_flag():
    p = nn.Parameter(tg.ones(2, 3))
    p.grad = tg.full((2, 3), 4.0)
    ident = id(p)
    p.data = tg.arange(6.0).reshape(2, 3)
    assert id(p) == ident and p.requires_grad and p.is_leaf
    np.testing.assert_array_equal(p.detach().numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(p.grad.numpy(), np.full((2, 3), 4.0))
    with pytest.raises(NotImplementedError, match="shape and dtype"):
        p.data = tg.ones(3)
    with pytest.raises(NotImplementedError):
        p.data = tg.ones(2, 3, dtype=tg.float64)
    with pytest.raises(TypeError):
        p.data = [1.0, 2.0]


def test_data_setter_is_seen_by_modules_and_optimizers():
    lin = nn.Linear(3, 2)
    opt = tg.optim.SGD(lin.parameters(), lr=0.5)
    lin.weight.data = tg.ones(2, 3)
    lin.bias.data = tg.zeros(2)
    out = lin(tg.tensor([[1.0, 2.0, 3.0]]))
    np.testing.assert_array_equal(out.detach().numpy(), [[6.0, 6.0]])
    out.sum().backward()
    opt.step()  # the optimizer updates the replaced values
    np.testing.assert_allclose(lin.weight.detach().numpy(),
                               1 - 0.5 * np.array([[1.0, 2, 3], [1, 2, 3]]))


@needs_torch
def test_data_setter_against_torch():
    a = np.random.rand(2, 3).astype(np.float32)
    b = np.random.rand(2, 3).astype(np.float32)
    p, q = nn.Parameter(tg.tensor(a)), torch.nn.Parameter(torch.tensor(a))
    (p * p).sum().backward()
    (q * q).sum().backward()
    p.data, q.data = tg.tensor(b), torch.tensor(b)
    np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert p.requires_grad == q.requires_grad and p.is_leaf == q.is_leaf
