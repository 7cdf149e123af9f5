"""What fuzz/python/diff_ops.py found against PyTorch, each fixed: the
expected values are written out (PyTorch 1.13's), and compared with
PyTorch itself where it is installed."""
import math

import numpy as np
import pytest

import tensorgraph as tg
from conftest import torch, needs_torch

INF, NAN = math.inf, math.nan


def _same(got, want):
    np.testing.assert_array_equal(np.asarray(got, dtype=np.float64),
                                  np.asarray(want, dtype=np.float64))


@pytest.mark.parametrize('eps,value,slope', [
    (None, [NAN, -INF, INF, NAN], [NAN, INF, INF, NAN]),
    (0.0, [-INF, -INF, INF, INF], [0, INF, INF, 0]),
    (1.0, [INF, INF, -INF, -INF], [0, 0, 0, 0]),  # PyTorch's kernel: below eps first
    (2.0, [NAN, NAN, NAN, NAN], [0, 0, 0, 0]),
    (0.25, [math.log(1 / 3), math.log(1 / 3), math.log(3), math.log(3)], [0, 0, 0, 0]),
    (-1.0, [NAN, -INF, INF, NAN], [NAN, INF, INF, NAN]),  # a negative eps is none
])
def test_logit_eps_moves_x_as_pytorch_and_has_no_slope_where_it_moved(eps, value, slope):
    x = tg.tensor([-1.0, 0.0, 1.0, 2.0], dtype=tg.float64, requires_grad=True)
    y = tg.logit(x, eps)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), value, rtol=1e-15)
    _same(x.grad.numpy(), slope)


def test_logit_eps_inside_and_nan():
    x = tg.tensor([0.3, NAN], dtype=tg.float64, requires_grad=True)
    y = tg.logit(x, 0.1)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), [math.log(0.3 / 0.7), NAN], rtol=1e-15)
    np.testing.assert_allclose(x.grad.numpy(), [1 / 0.21, NAN], rtol=1e-14)


def test_frexp_mantissa_gradient():
    x = tg.tensor([3.0, 5.0, 0.0, INF, NAN, -0.75, 5e-324], dtype=tg.float64,
                  requires_grad=True)
    m, e = tg.frexp(x)
    assert type(m.grad_fn).__name__ == 'FrexpBackward0'
    _same(e.numpy(), [2, 3, 0, 0, 0, 0, -1073])
    m.backward(tg.ones(7, dtype=tg.float64))
    _same(x.grad.numpy(), [0.25, 0.125, 1, 1, 1, 1, INF])  # grad / 2^e
    with tg.no_grad():
        assert not tg.frexp(x)[0].requires_grad


def test_copysign_gives_other_a_zero_gradient():
    a = tg.tensor([1.0, -2.0, 0.0], requires_grad=True)
    b = tg.tensor([-1.0, -0.0, INF], requires_grad=True)
    y = tg.copysign(a, b)
    _same(y.detach().numpy(), [-1.0, -2.0, 0.0])
    assert math.copysign(1, y[1].item()) == -1  # -0.0's sign read, -2 kept
    y.sum().backward()
    _same(a.grad.numpy(), [-1, 1, 0])
    _same(b.grad.numpy(), [0, 0, 0])


def test_cov_and_corrcoef_of_one_variable_are_0d():
    x = tg.tensor([[1.0, 2.0, 4.0]])
    assert tg.cov(x).shape == () and tg.corrcoef(x).shape == ()
    np.testing.assert_allclose(tg.cov(x).item(), np.cov([1, 2, 4]), rtol=1e-6)
    assert tg.cov(tg.ones(2, 3)).shape == (2, 2)


def test_quantile_of_a_0d_q_has_no_q_dim():
    x = tg.tensor([1.0, 2.0, 4.0])
    assert tg.quantile(x, tg.tensor(0.5)).shape == ()
    assert tg.nanquantile(tg.tensor(2.0), tg.tensor(0.3)).shape == ()
    assert tg.quantile(x, tg.tensor([0.5])).shape == (1,)
    with pytest.raises(RuntimeError, match='same dtype'):
        tg.quantile(x, tg.tensor(0.5, dtype=tg.float64))


def test_kron_of_0d_tensors():
    _same(tg.kron(tg.tensor(2.0), tg.tensor(3.0)).numpy(), 6.0)
    _same(tg.kron(tg.tensor(2.0), tg.tensor([3.0, 4.0])).numpy(), [6, 8])
    assert tg.kron(tg.ones(2, 2), tg.tensor(3.0)).shape == (2, 2)


def test_diag_embed_of_an_empty_last_dim_reaches_the_input():
    x = tg.ones(1, 3, 0, requires_grad=True)
    y = tg.diag_embed(x, 2, 2)
    assert y.shape == (1, 3, 2, 2) and y.requires_grad and not y.detach().numpy().any()
    y.sum().backward()
    assert x.grad.shape == (1, 3, 0)


def test_top_level_pools_take_unbatched_inputs():
    x = tg.arange(8.0).reshape(2, 4)
    _same(tg.avg_pool1d(x, 2).numpy(), [[0.5, 2.5], [4.5, 6.5]])
    _same(tg.max_pool1d(x, 2).numpy(), [[1, 3], [5, 7]])
    assert tg.max_pool2d(tg.ones(3, 4, 4), 2).shape == (3, 2, 2)
    assert tg.max_pool3d(tg.ones(2, 4, 4, 4), 2).shape == (2, 2, 2, 2)


def test_small_api_forms():
    assert tg.ones(1).broadcast_to(2).shape == (2,)
    x = tg.tensor([1.0, 1.0, 2.0], requires_grad=True)
    _same(x.unique_consecutive().numpy(), [1, 2])


@needs_torch
def test_against_pytorch():
    cases = [
        lambda L: L.logit(L.tensor([-1.0, 0.0, 0.3, 1.0, 2.0], dtype=L.float64), 1.0),
        lambda L: L.frexp(L.tensor([3.0, -0.75, 0.0], dtype=L.float64))[0],
        lambda L: L.cov(L.tensor([[1.0, 2.0, 4.0]], dtype=L.float64)),
        lambda L: L.quantile(L.tensor([1.0, 2.0, 4.0]), L.tensor(0.3)),
        lambda L: L.kron(L.tensor(2.0), L.tensor([3.0, 4.0])),
        lambda L: L.avg_pool1d(L.arange(8.0).reshape(2, 4), 2),
    ]
    for make in cases:
        want, got = make(torch), make(tg)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_cholesky_solve_gradients_read_the_whole_factor_as_pytorch():
    """values from the factor's triangle; gradients PyTorch's, with the
    factor as given (here not triangular): written out from PyTorch 1.13"""
    f = tg.tensor([[3.0, 1.0], [0.5, 2.0]], dtype=tg.float64, requires_grad=True)
    b = tg.tensor([[1.0], [2.0]], dtype=tg.float64, requires_grad=True)
    x = tg.cholesky_solve(b, f)
    x.sum().backward()
    # A = L L^T with L = [[3, 0], [0.5, 2]]
    L = np.array([[3.0, 0.0], [0.5, 2.0]])
    inv = np.linalg.inv(L @ L.T)
    xv = inv @ np.array([[1.0], [2.0]])
    s = inv @ np.ones((2, 1))
    np.testing.assert_allclose(x.detach().numpy(), xv, rtol=1e-14)
    np.testing.assert_allclose(b.grad.numpy(), s, rtol=1e-14)
    full = np.array([[3.0, 1.0], [0.5, 2.0]])
    np.testing.assert_allclose(f.grad.numpy(), -(s @ xv.T + xv @ s.T) @ full, rtol=1e-13)


def test_integer_masks_of_zeros_and_ones():
    x = tg.zeros(3)
    _same(x.masked_fill(tg.tensor([1, 0, 1]), 5.0).numpy(), [5, 0, 5])
    with pytest.raises(RuntimeError, match='0 and 1 values only'):
        x.masked_fill(tg.tensor([2, 0, 1]), 5.0)
    with pytest.raises(RuntimeError, match='bool mask'):
        x.masked_fill(tg.tensor([1.0, 0.0, 1.0]), 5.0)


def test_bool_running_extremes_and_0d_sizes():
    v, i = tg.cummax(tg.tensor([False, True, False]), 0)
    assert v.dtype == tg.bool and v.tolist() == [False, True, True] and i.tolist() == [0, 1, 1]
    assert tg.cummin(tg.tensor([True, False, True]), 0)[0].tolist() == [True, False, False]
    with pytest.raises(RuntimeError, match='Bool'):
        tg.kthvalue(tg.tensor([True, False]), 1)
    assert tg.zeros(tg.tensor(3)).shape == (3,)


def test_dist_with_a_negative_p_is_the_vector_norm():
    a = tg.tensor([1.0, 2.0, 0.0], dtype=tg.float64)
    assert tg.dist(a, tg.zeros(3, dtype=tg.float64), -2).item() == 0.0
    np.testing.assert_allclose(tg.dist(a + 1, tg.zeros(3, dtype=tg.float64), -2).item(),
                               (1 + 1 / 4 + 1 / 9) ** -0.5, rtol=1e-15)


def test_split_of_an_empty_dim_is_one_empty_part():
    for size in (0, 2):
        parts = tg.split(tg.zeros(0, 3), size)
        assert [tuple(p.shape) for p in parts] == [(0, 3)]
    with pytest.raises(RuntimeError, match='split_size'):
        tg.split(tg.zeros(2, 3), 0)


def test_cosine_similarity_normalises_the_broadcast_vectors():
    """a size-1 dim broadcast along the reduced dim counts with its
    repeats in the norm, as PyTorch's"""
    x = tg.tensor([[3.0, 4.0], [1.0, 0.0]], dtype=tg.float64)
    for y in (tg.tensor(0.7, dtype=tg.float64), tg.full((1, 2), 0.7, dtype=tg.float64)):
        np.testing.assert_allclose(tg.nn.functional.cosine_similarity(x, y).numpy(),
                                   [7 / (5 * math.sqrt(2)), 1 / math.sqrt(2)], rtol=1e-14)
    y = tg.tensor([[2.0], [-1.0]], dtype=tg.float64, requires_grad=True)
    out = tg.nn.functional.cosine_similarity(x, y)
    np.testing.assert_allclose(out.detach().numpy(), [7 / (5 * math.sqrt(2)), -1 / math.sqrt(2)],
                               rtol=1e-14)
    out.sum().backward()  # the cosine does not change with the scale of y
    np.testing.assert_allclose(y.grad.numpy(), [[0.0], [0.0]], atol=1e-15)


def test_stride_takes_dim_as_a_keyword():
    t = tg.zeros(2, 3)
    assert t.stride(dim=-1) == 1 and t.stride(0) == 3 and t.stride() == (3, 1)
    assert t.size(dim=1) == 3
    with pytest.raises(IndexError, match='Dimension out of range'):
        t.stride(dim=2)
    with pytest.raises(TypeError):
        t.stride(dim=1, other=2)


def test_multilabel_soft_margin_loss_divides_by_the_input_classes():
    """a [1] input broadcast against [3] targets: the sum over the loss's
    3 elements divided by the input's 1 class (PyTorch's)"""
    x, t = np.array([-1.0]), np.array([0.8, -1.2, -1.1])
    lsig = lambda v: -np.log1p(np.exp(-v))  # noqa: E731
    want = -(t * lsig(x) + (1 - t) * lsig(-x)).sum()
    got = tg.nn.functional.multilabel_soft_margin_loss(tg.tensor(x), tg.tensor(t))
    np.testing.assert_allclose(got.item(), want, rtol=1e-12)


@pytest.mark.parametrize('shape,fn,out', [((2, 1), 'adaptive_avg_pool2d', (1, 1)),
                                          ((3, 4, 5), 'adaptive_avg_pool2d', (3, 1, 1)),
                                          ((2, 1, 2), 'adaptive_avg_pool3d', (1, 1, 1)),
                                          ((2, 3, 4, 5), 'adaptive_avg_pool3d', (2, 1, 1, 1))])
def test_adaptive_avg_pool_to_ones_is_a_mean_of_any_rank(shape, fn, out):
    """PyTorch's shortcut for an output of ones: the mean over the last
    dims, kept, whatever the rank"""
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    y = getattr(tg.nn.functional, fn)(tg.tensor(a), 1)
    nd = 2 if fn.endswith('2d') else 3
    assert tuple(y.shape) == out
    np.testing.assert_allclose(y.numpy(), a.mean(tuple(range(-nd, 0)), keepdims=True))


@pytest.mark.parametrize('fn,arg,want', [('leaky_relu', 0.2, [-0.2, 2.0]),
                                         ('elu', 0.5, [0.5 * (math.exp(-1) - 1), 2.0])])
def test_leaky_relu_and_elu_take_inplace(fn, arg, want):
    x = tg.tensor([-1.0, 2.0], dtype=tg.float64)
    y = getattr(tg.nn.functional, fn)(x, arg, True)
    assert y is x
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-15)


def test_logical_inplace_on_a_leaf_that_requires_grad():
    """PyTorch's logical_*_ record nothing: a leaf that requires grad
    takes the 1/0 values and stays a leaf"""
    x = tg.tensor([1.0, 0.0, 2.0], requires_grad=True)
    assert x.logical_not_() is x
    assert x.tolist() == [0.0, 1.0, 0.0] and x.requires_grad and x.grad_fn is None
    x.logical_or_(tg.tensor([0.0, 0.0, 3.0]))
    assert x.tolist() == [0.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.gt_(0.5)  # comparisons do record, as PyTorch's


def test_pdist_zero_norm_keeps_the_graph():
    x = tg.tensor([[1.0, 2.0], [1.0, 3.0], [0.0, 0.0]], requires_grad=True)
    y = tg.pdist(x, 0)
    assert y.requires_grad and y.tolist() == [1.0, 2.0, 2.0]


def test_mvlgamma_has_no_domain_check():
    """PyTorch 1.13 sums the lgammas anywhere: log|gamma| below (p - 1) / 2,
    inf at the poles"""
    x = tg.tensor([0.1, -0.4, 0.0, 0.5], dtype=tg.float64)
    want = [sum(math.lgamma(v - j / 2) if (v - j / 2) % 1 or v - j / 2 > 0 else INF
                for j in range(2)) + 0.5 * math.log(math.pi) for v in [0.1, -0.4, 0.0, 0.5]]
    np.testing.assert_allclose(tg.mvlgamma(x, 2).numpy(), want, rtol=1e-12)


def test_cosine_similarity_of_integer_vectors():
    """norms in floating point: a zero integer vector gives 0, not 0 / 0"""
    a = tg.tensor([[1.0, 0.0], [0.5, 2.0]], dtype=tg.float64)
    b = tg.tensor([[2, 0], [0, 0]])
    np.testing.assert_allclose(tg.nn.functional.cosine_similarity(a, b, 0).numpy(),
                               [2 / math.sqrt(5), 0.0], rtol=1e-12)


@pytest.mark.parametrize('pow,want', [(0, [1.0, 0.0, 1.0]), (1, [1.5, 0.0, 2.0]),
                                      (2, [1.5, 0.0, 2.0])])
def test_norm_except_dim_of_a_vector(pow, want):
    """each element is its own row (PyTorch's view(n, -1).norm(pow, 1))"""
    got = tg.norm_except_dim(tg.tensor([-1.5, 0.0, 2.0], dtype=tg.float64), pow, 0)
    _same(got.numpy(), want)


@pytest.mark.parametrize('name', ['mT', 'mH', 'adjoint'])
def test_matrix_transposes_of_a_0d_tensor_are_the_tensor(name):
    x = tg.tensor(2.5, requires_grad=True)
    y = getattr(x, name)
    y = y() if name == 'adjoint' else y
    assert y.shape == () and y.item() == 2.5
    y.backward()
    assert x.grad.item() == 1
    with pytest.raises(RuntimeError, match="only supported on matrices or batches"):
        r = getattr(tg.ones(2), name)
        r() if name == 'adjoint' else r


@pytest.mark.parametrize('f', ['argmax', 'argmin'])
def test_argmax_of_bools_only_where_no_kernel_runs(f):
    b = tg.tensor([[True], [False]])
    assert getattr(tg, f)(b, dim=-1).tolist() == [0, 0]  # a dim of 1: zeros
    assert getattr(tg, f)(b, -1, keepdim=True).tolist() == [[0], [0]]
    assert getattr(tg, f)(tg.zeros(2, 0, dtype=tg.bool), 0).shape == (0,)
    for call in (lambda: getattr(tg, f)(b), lambda: getattr(tg, f)(b, 0),
                 lambda: getattr(tg, f)(tg.tensor(True), 0)):
        with pytest.raises(RuntimeError, match=f"\"{f}_cpu\" not implemented for 'Bool'"):
            call()


def test_pdist_of_one_row_is_empty_and_a_function_of_input():
    x = tg.ones(1, 3, requires_grad=True)
    p = tg.pdist(x)
    assert p.shape == (0,) and p.requires_grad
    p.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0]]


@pytest.mark.parametrize('f', ['cummax', 'cummin'])
def test_cummax_of_a_0d_tensor_takes_any_dim(f):
    v, i = getattr(tg.tensor(2.0), f)(3)
    assert v.item() == 2.0 and i.item() == 0 and i.dtype == tg.int64


def test_hardtanh_with_min_above_max_has_a_zero_tied_gradient():
    x = tg.tensor([5.0, -5.0, 0.5], requires_grad=True)
    y = tg.nn.functional.hardtanh(x, 1.0, 0.0)
    assert y.tolist() == [0.0, 0.0, 0.0]
    g, = tg.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [0.0, 0.0, 0.0] and g.requires_grad


@pytest.mark.parametrize('name,shape,out,want', [
    ('adaptive_max_pool2d', (0, 3, 4, 4), 2, (0, 3, 2, 2)),
    ('adaptive_avg_pool2d', (2, 0, 4, 4), 2, (2, 0, 2, 2)),   # its spatial dims only
    ('adaptive_avg_pool1d', (2, 0, 4), 2, (2, 0, 2)),
    ('adaptive_avg_pool1d', (3, 0), 1, (3, 1)),                # the mean shortcut
    ('adaptive_max_pool3d', (0, 1, 2, 2, 2), 1, (0, 1, 1, 1, 1)),
])
def test_adaptive_pools_of_empty_batches(name, shape, out, want):
    assert getattr(tg.nn.functional, name)(tg.zeros(*shape), out).shape == want


@pytest.mark.parametrize('name,shape,words', [
    ('adaptive_max_pool1d', (2, 0, 4), "adaptive_max_pool2d(): Expected input to have non-zero "
     "size for non-batch dimensions, but input has sizes [2, 0, 1, 4] with dimension 1"),
    ('adaptive_avg_pool3d', (2, 0, 4, 4, 4), "sizes [2, 0, 4, 4, 4] with dimension 1"),
    ('adaptive_max_pool2d', (3, 4, 0), "sizes [3, 4, 0] with dimension 2 being empty"),
])
def test_adaptive_pools_refuse_empty_non_batch_dims(name, shape, words):
    with pytest.raises(RuntimeError) as e:
        getattr(tg.nn.functional, name)(tg.zeros(*shape), 2)
    assert words in str(e.value)


def test_tensordot_broadcasts_contracted_dims_of_size_one():
    a = tg.tensor([[1.0], [2.0]], requires_grad=True)        # [2, 1]
    b = tg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])      # [3, 2]
    # a's dim 1 (size 1) against b's dim 0 (size 3): b summed over it first
    r = tg.tensordot(a, b, dims=([0, 1], [1, 0]))
    assert r.item() == 1 * (1 + 3 + 5) + 2 * (2 + 4 + 6)
    r.backward()
    assert a.grad.tolist() == [[9.0], [12.0]]
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        tg.tensordot(tg.ones(2, 3), tg.ones(2, 2), dims=([1], [0]))


def test_soft_margin_loss_takes_a_bool_target_as_0_and_1():
    x = tg.tensor([[0.5, -1.0, 2.0]])
    got = tg.nn.functional.soft_margin_loss(x, tg.tensor([[True, False, True]]))
    want = np.mean(np.log1p(np.exp(-np.array([0.5, 0.0, 2.0]))))
    np.testing.assert_allclose(got.item(), want, rtol=1e-6)
    with pytest.raises(RuntimeError, match="Negation"):  # a bool input is still refused
        tg.nn.functional.soft_margin_loss(tg.tensor([[True]]), x[:, :1])


def test_cummax_of_an_empty_tensor_takes_any_dim_and_keeps_the_graph():
    x = tg.zeros(0, 3, 2, requires_grad=True)
    v, i = tg.cummin(x, 3)
    assert v.shape == i.shape == (0, 3, 2) and v.requires_grad and i.dtype == tg.int64


def test_empty_adaptive_pool_keeps_the_input_dtype():
    b = tg.tensor([[True, False, True]] * 2)
    assert tg.nn.functional.adaptive_avg_pool1d(b, 0).dtype == tg.bool


@pytest.mark.parametrize('f', ['fmod', 'remainder'])
def test_mod_second_derivative_at_a_zero_divisor_is_zero(f):
    a = tg.tensor([2.5, -3.7], dtype=tg.float64, requires_grad=True)
    b = tg.tensor(0.0, dtype=tg.float64, requires_grad=True)
    ga, gb = tg.autograd.grad(getattr(tg, f)(a, b).sum(), (a, b), create_graph=True)
    assert ga.tolist() == [1.0, 1.0]
    assert math.isnan(gb.item())  # -sum of a // 0: PyTorch's NaN/inf mix
    gga, ggb = tg.autograd.grad((ga * tg.tensor([0.3, 0.7], dtype=tg.float64)).sum() + gb * 0.5,
                                (a, b), allow_unused=True)
    assert (gga is None or gga.tolist() == [0.0, 0.0]) and ggb.item() == 0.0


def test_remainder_slope_in_the_divisor_is_minus_pytorchs_floor_division():
    # 1 // 0.1 is 9 in PyTorch (from fmod): the slope -9, not -floor(1 / 0.1) = -10
    a = tg.tensor(1.0, dtype=tg.float64)
    b = tg.tensor(0.1, dtype=tg.float64, requires_grad=True)
    tg.remainder(a, b).backward()
    assert b.grad.item() == -9.0


def test_add_and_sub_take_pytorchs_deprecated_alpha_first_overload():
    a, b = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
    with pytest.warns(UserWarning, match="This overload of add is deprecated"):
        assert tg.add(a, 2, b).tolist() == [7.0, 10.0]
    with pytest.warns(UserWarning, match="This overload of sub is deprecated"):
        assert a.sub(2, b).tolist() == [-5.0, -6.0]
    with pytest.warns(UserWarning, match="This overload of add_ is deprecated"):
        assert a.clone().add_(2, b).tolist() == [7.0, 10.0]
    assert tg.add(a, b, alpha=2).tolist() == [7.0, 10.0]


def test_pdist_with_p_zero_gives_zero_gradients():
    x = tg.tensor([[1.0], [2.0], [4.0]], dtype=tg.float64, requires_grad=True)
    y = tg.pdist(x, 0)
    assert y.tolist() == [1.0, 1.0, 1.0] and y.grad_fn.name() == 'PdistBackward0'
    y.sum().backward()
    assert x.grad.tolist() == [[0.0], [0.0], [0.0]]


def test_sum_to_size_of_bools_counts_in_int64():
    b = tg.tensor([[True, False], [True, True]])
    r = b.sum_to_size(1, 2)
    assert r.tolist() == [[2, 1]] and r.dtype == tg.int64
    assert b.sum_to_size(2, 2).dtype == tg.bool  # nothing summed: itself
    assert tg.zeros(2, 0, dtype=tg.bool).sum_to_size(1, 1).tolist() == [[0]]


def test_hypot_derivatives_are_those_of_the_root_of_squares():
    a = tg.tensor([0.0, 1.0, -3.0], dtype=tg.float64, requires_grad=True)
    b = tg.tensor([0.0, 0.0, 4.0], dtype=tg.float64, requires_grad=True)
    ga, gb = tg.autograd.grad(tg.hypot(a, b).sum(), (a, b), create_graph=True)
    assert math.isnan(ga[0].item()) and math.isnan(gb[0].item())  # PyTorch's 0 / 0
    np.testing.assert_allclose(ga.detach().numpy()[1:], [1.0, -0.6])
    np.testing.assert_allclose(gb.detach().numpy()[1:], [0.0, 0.8])
    gga, ggb = tg.autograd.grad((ga[1:] * 1.3 + gb[1:] * 0.7).sum(), (a, b))
    # d2h/db2 at b = 0 is 1 / |a|: 0.7 there (the composition through |b| gave 0)
    np.testing.assert_allclose(ggb.numpy()[1:], [0.7, 1.3 * 12 / 125 + 0.7 * 9 / 125])
    assert tg.hypot(tg.tensor(1e200, dtype=tg.float64), tg.tensor(1e200, dtype=tg.float64)).item() \
        == pytest.approx(1.4142135623730951e200)


def test_broadcast_to_method_takes_sizes_as_arguments():
    x = tg.arange(3.0)
    assert x.broadcast_to(1, -1).shape == (1, 3)
    assert x.broadcast_to((2, 3)).shape == x.broadcast_to(size=[2, 3]).shape == (2, 3)
    assert tg.tensor(1.0).broadcast_to(tg.tensor(2), 0).shape == (2, 0)
    with pytest.raises(TypeError):
        tg.broadcast_to(x, 2, 3)


def test_frobenius_norm_of_zeros_has_a_zero_gradient():
    x = tg.tensor([[0.0, 1.0, 0.0, 2.0]], dtype=tg.float64, requires_grad=True)
    tg.frobenius_norm(x, -2).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0, 1.0]]


def test_combinations_with_no_subsets_keep_the_graph():
    y = tg.combinations(tg.tensor([1.0], requires_grad=True), 2)
    assert y.shape == (0, 2) and y.requires_grad
    assert not tg.combinations(tg.tensor([1.0, 2.0], requires_grad=True), 0).requires_grad


def test_prod_takes_an_integer_0d_tensor_as_its_dim():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.prod(tg.tensor(1)).tolist() == [2.0, 12.0]
    assert tg.prod(x, tg.tensor(0), keepdim=True).tolist() == [[3.0, 8.0]]


def test_max_pool_with_indices_of_an_empty_batch():
    v, i = tg.nn.functional.max_pool1d(tg.zeros(0, 2, 4), 2, return_indices=True)
    assert v.shape == i.shape == (0, 2, 2) and i.dtype == tg.int64
    v, i = tg.nn.functional.max_pool2d(tg.zeros(0, 2, 4, 4), 2, return_indices=True)
    assert v.shape == (0, 2, 2, 2)
    with pytest.raises(RuntimeError, match="with optional 0 dim batch size"):
        tg.nn.functional.max_pool2d(tg.zeros(2, 0, 4, 4), 2, return_indices=True)


@pytest.mark.parametrize('col,want', [([1.0, 0.0, 4.0], [12.0, 9.0, 3.0]),   # one zero
                                      ([0.0, 0.0, 4.0], [12.0, 4.0, 0.0]),   # two zeros
                                      ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
                                      ([1.0, 3.0, 4.0], [27.0, 9.0, 6.0])])
def test_prod_second_derivative_with_zeros(col, want):
    # S = sum_i w_i prod_(j != i) x_j, w = (1, 3, 5): dS/dx is the Hessian's rows
    x = tg.tensor(col, dtype=tg.float64, requires_grad=True)
    g, = tg.autograd.grad(tg.prod(x, 0), x, create_graph=True)
    gg, = tg.autograd.grad((g * tg.tensor([1.0, 3.0, 5.0], dtype=tg.float64)).sum(), x)
    np.testing.assert_allclose(gg.numpy(), want, rtol=1e-14)
