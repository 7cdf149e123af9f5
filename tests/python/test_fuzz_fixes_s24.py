"""What fuzz/python/diff_ops.py found against PyTorch 1.13 (first-order
seeds 151-, second-order seeds 47-), each fixed at its root and compared
here with PyTorch itself (skipped where it is not installed; PyTorch is
only called where it does not raise, see conftest)."""
import math

import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def _grads(L, f, arrays, seed=1, second=True):
    """f's value, its first-order gradients for a random output gradient
    (taken with create_graph) and the gradients of their random
    projection, as numpy arrays (None for an unused input)"""
    rng = np.random.default_rng(seed)
    xs = [L.tensor(a, requires_grad=True) for a in arrays]
    y = f(L, *xs)
    G = L.tensor(rng.standard_normal(tuple(y.shape)))
    gs = L.autograd.grad(y, xs, G, create_graph=second)
    out = [y.detach().numpy()] + [g.detach().numpy() for g in gs]
    if second:
        assert all(g.requires_grad for g in gs)
        W = [L.tensor(rng.standard_normal(tuple(g.shape))) for g in gs]
        hs = L.autograd.grad(sum((g * w).sum() for g, w in zip(gs, W)), xs, allow_unused=True)
        out += [None if h is None else h.numpy() for h in hs]
    return out


def _same_as_torch(f, arrays, rtol=1e-9, atol=1e-11, second=True):
    want = _grads(torch, f, arrays, second=second)
    got = _grads(tg, f, arrays, second=second)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# ---- eigh / svd / pinv: the Jacobi rotations' slope across an exact zero ----------------------
@needs_torch
@pytest.mark.parametrize('a', [
    [[0.0], [3.0], [1.0], [4.0]],            # seed 84 (second order): a zero entry
    [[0.0, 3.0, 1.0]],
    [[0.0, 1.0], [2.0, 3.0], [0.0, 0.0]],    # a zero row
])
def test_pinverse_gradients_across_exact_zeros(a):
    """a zero off-diagonal entry skipped its rotation with t = 0, whose
    slope is not 0: the singular vectors had no gradient across it"""
    _same_as_torch(lambda L, x: L.pinverse(x), [np.array(a)])


@needs_torch
def test_eigh_gradient_across_a_zero_row():
    """eigh(x x^T) with x[0] = 0: the first coordinate's gradient was 0"""
    w = np.arange(16.0).reshape(4, 4)

    def f(L, x):
        e = L.linalg.eigh(x @ x.transpose(0, 1))
        # the eigenvectors' signs are arbitrary: their squares are not
        return (e.eigenvectors[:, -1:] ** 2 * L.tensor(w)).sum(0)
    _same_as_torch(f, [np.array([[0.0], [3.0], [1.0], [4.0]])], rtol=1e-8, atol=1e-10)


# ---- cholesky_solve / cholesky_inverse: differentiable gradients ------------------------------
@needs_torch
@pytest.mark.parametrize('upper', [False, True])
@pytest.mark.parametrize('shapes', [((3, 2), (3, 3)), ((2, 3, 2), (2, 3, 3)),
                                    ((4, 1, 1), (4, 1, 1))])
def test_cholesky_solve_second_order(upper, shapes):
    """B's gradient A^-1 G did not require grad (it depends on the factor)
    and the factor's second derivatives missed S's and X's dependence on
    both (seed 84: cholesky_solve of 1 x 1 matrices); full (not triangular)
    factors count every entry, as PyTorch's formulas do"""
    rng = np.random.default_rng(0)
    b = rng.standard_normal(shapes[0])
    f = rng.standard_normal(shapes[1]) + 3 * np.eye(shapes[1][-1])
    _same_as_torch(lambda L, b, l: L.cholesky_solve(b, l, upper), [b, f])


@needs_torch
@pytest.mark.parametrize('upper', [False, True])
def test_cholesky_inverse_second_order(upper):
    """seed 68: 1 / x^2 of a 1 x 1 factor had the second derivative
    -38.3 instead of 6 / x^4 = 115"""
    x = tg.tensor([[-0.4778804]], dtype=tg.float64, requires_grad=True)
    g, = tg.autograd.grad(tg.cholesky_inverse(x, upper).sum(), x, create_graph=True)
    h, = tg.autograd.grad(g.sum(), x)
    assert math.isclose(h.item(), 6 / 0.4778804 ** 4, rel_tol=1e-12)
    rng = np.random.default_rng(2)
    _same_as_torch(lambda L, l: L.cholesky_inverse(l, upper),
                   [rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)])


# ---- small Python-level ones ------------------------------------------------------------------
@needs_torch
def test_isclose_of_bools_uses_the_tolerances():
    """seed 58: allclose(False, True, rtol=3) is True (|0 - 1| <= 3 * 1)"""
    a, b = [False, True, False, True], [True, False, False, True]
    for rtol, atol in ((3, 1e-8), (0, 1), (0.5, 0.6), (1e-5, 1e-8), (0, 1.5)):
        want = torch.isclose(torch.tensor(a), torch.tensor(b), rtol, atol).numpy()
        got = tg.isclose(tg.tensor(a), tg.tensor(b), rtol, atol).numpy()
        np.testing.assert_array_equal(got, want)
    assert tg.tensor([False]).allclose(tg.tensor([True]), 3)
    assert not tg.tensor([True]).allclose(tg.tensor([False]), 3)


@needs_torch
def test_number_arguments_given_as_one_element_tensors():
    """seed 52: norm's p as a 0-d tensor is a number (a float32 input stays
    float32); seeds 55/74: logit's eps likewise (a bool one too)"""
    x = [0.6927652, -1.1295836, -0.864016]
    want = torch.tensor(x).float().norm(torch.tensor(1.67, dtype=torch.float64))
    got = tg.tensor(x, dtype=tg.float32).norm(tg.tensor(1.67, dtype=tg.float64))
    assert got.dtype == tg.float32
    assert math.isclose(got.item(), want.item(), rel_tol=1e-6)
    v = [0.69, 0.1, -0.86, 0.95]
    for eps in (0.2, True):
        want = torch.logit(torch.tensor(v, dtype=torch.float64), torch.tensor(eps))
        got = tg.logit(tg.tensor(v, dtype=tg.float64), tg.tensor(eps))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@needs_torch
@pytest.mark.parametrize('a,dim', [([0.3], 0), ([[0.3, -1.0]], 0), ([[0.3], [2.0]], 1)])
def test_logcumsumexp_over_one_element_is_differentiable_twice(a, dim):
    """seeds 48/52/66: the gradient (1) was a constant, not a function of x
    that PyTorch can differentiate again (to 0)"""
    _same_as_torch(lambda L, x: L.logcumsumexp(x, dim), [np.array(a)])


@needs_torch
def test_diagonal_scatter_casts_src_to_the_input_dtype():
    """seed 80: PyTorch copies src in (any dtype); tensorgraph refused"""
    for a, s in ((np.zeros((3, 1), dtype=np.int64), np.array([1.7])),
                 (np.zeros((3, 3)), np.array([1, 2, 3]))):
        want = torch.tensor(a).diagonal_scatter(torch.tensor(s))
        got = tg.tensor(a).diagonal_scatter(tg.tensor(s))
        assert str(got.dtype).split('.')[-1] == str(want.dtype).split('.')[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@needs_torch
@pytest.mark.parametrize('x,mask,src', [
    (1.0, True, [2.0, 3.0]),       # seed 160: 0-d input raised TypeError
    (1.0, False, []),              # an empty source with nothing to take
    ([1.0, 2.0], [False, False], []),
    ([1.0, 2.0, 3.0], [True, False, True], [5.0, 6.0, 7.0]),
])
def test_masked_scatter_zero_dim_and_empty_source(x, mask, src):
    out = []
    for L in (torch, tg):
        xt = L.tensor(x, dtype=L.float64, requires_grad=True)
        st = L.tensor(src, dtype=L.float64, requires_grad=True)
        y = L.masked_scatter(xt, L.tensor(mask), st)
        y.sum().backward()
        out.append((y.detach().numpy(), xt.grad.numpy(), st.grad.numpy()))
    for w, g in zip(*out):
        np.testing.assert_array_equal(g, w)


@needs_torch
@pytest.mark.parametrize('shape,reps,method', [
    ((3, 0), (-1,), 'tile'), ((3, 0), (1, -3), 'tile'), ((0, 2), (-2, 1), 'tile'),
    ((3, 0), (1, -1), 'repeat'), ((0,), (-2,), 'repeat'),
])
def test_negative_reps_of_empty_dims(shape, reps, method):
    """seeds 1xx: PyTorch sizes the result by the products, 0 for an empty
    dim whatever its rep, and allows a negative one there"""
    want = getattr(torch.zeros(shape), method)(*reps if method == 'repeat' else (reps,))
    got = getattr(tg.zeros(shape), method)(*reps if method == 'repeat' else (reps,))
    assert tuple(got.shape) == tuple(want.shape)
    x = tg.zeros(shape, requires_grad=True)
    getattr(x, method)(*reps if method == 'repeat' else (reps,)).sum().backward()
    assert tuple(x.grad.shape) == shape


def test_negative_reps_of_nonempty_dims_still_refused():
    with pytest.raises(RuntimeError, match="negative"):
        tg.zeros(2).repeat(3, -1)
    with pytest.raises(RuntimeError, match="negative"):
        tg.zeros(2, 0).tile((-1, 3, -1))
    with pytest.raises(RuntimeError, match="negative"):
        tg.zeros(()).repeat(-2)
