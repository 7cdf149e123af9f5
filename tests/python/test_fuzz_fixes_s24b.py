"""What fuzz/python/diff_ops.py found against PyTorch 1.13 (the leftovers
of the earlier pass, then first-order seeds 201-, second-order seeds 97-),
each fixed at its root and compared here with PyTorch itself (skipped
where it is not installed; PyTorch is only called where it does not
raise, see conftest)."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, torch

# these cases hand PyTorch odd arguments (tensors as einsum sublists, 0-d
# tensors as dims), on which it throws and catches C++ exceptions inside
# even when the call succeeds; under the ASan runtime any C++ throw in
# torch aborts the interpreter, so there PyTorch is not consulted
needs_torch = pytest.mark.skipif(torch is None or SANITIZED,
                                 reason="python3-torch missing, or under the sanitizers")


def _grads(L, f, arrays, seed=1, second=True):
    """f's value, its first-order gradients for a random output gradient
    (taken with create_graph) and the gradients of their random
    projection, as numpy arrays (None for an unused input)"""
    rng = np.random.default_rng(seed)
    xs = [L.tensor(a, requires_grad=True) for a in arrays]
    y = f(L, *xs)
    G = L.tensor(rng.standard_normal(tuple(y.shape)).astype(arrays[0].dtype))
    gs = L.autograd.grad(y, xs, G, create_graph=second)
    out = [y.detach().numpy()] + [g.detach().numpy() for g in gs]
    if second:
        assert all(g.requires_grad for g in gs)
        W = [L.tensor(rng.standard_normal(tuple(g.shape)).astype(arrays[0].dtype)) for g in gs]
        hs = L.autograd.grad(sum((g * w).sum() for g, w in zip(gs, W)), xs, allow_unused=True)
        out += [None if h is None else h.numpy() for h in hs]
    return out


def _same_as_torch(f, arrays, rtol=1e-9, atol=1e-11, second=True):
    want = _grads(torch, f, arrays, second=second)
    got = _grads(tg, f, arrays, second=second)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def _both(f):
    """f(torch) and f(tg) as (dtype name, shape, values)"""
    out = []
    for L in (torch, tg):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f(L)
        out.append((str(r.dtype).split(".")[-1], tuple(r.shape), r.detach().numpy()))
    return out


def _assert_same(f):
    (dw, sw, vw), (dg, sg, vg) = _both(f)
    assert (dg, sg) == (dw, sw)
    np.testing.assert_allclose(vg, vw, rtol=1e-12, atol=0)


# ---- count_nonzero: a tensor as the dim ------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("call", [
    lambda L, x: L.count_nonzero(x, L.tensor(1)),
    lambda L, x: L.count_nonzero(x, dim=L.tensor(-1)),
    lambda L, x: x.count_nonzero(L.tensor(1)),
    lambda L, x: x.count_nonzero(L.tensor([[0]])),     # the method's `int?`: __index__
    lambda L, x: x.count_nonzero(L.tensor(True)),
    lambda L, x: L.count_nonzero(x, (L.tensor(1), 2)),
])
def test_count_nonzero_takes_an_integer_tensor_as_its_dim(call):
    a = np.array([[[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]], [[1.0, 1.0, 0.0], [4.0, 0.0, 0.0]]])
    _assert_same(lambda L: call(L, L.tensor(a)))


def test_count_nonzero_refuses_what_pytorch_refuses():
    x = tg.ones(2, 3)
    for bad in (tg.tensor([1]), tg.tensor(1.0), tg.tensor(True)):
        with pytest.raises(TypeError):
            tg.count_nonzero(x, bad)
    with pytest.raises(TypeError):
        x.count_nonzero(dim=tg.tensor([1]))


# ---- trapz / trapezoid: x with fewer dims than y, or one sample ---------------------------------
@needs_torch
@pytest.mark.parametrize("ys, xs, dim", [((1,), (), -1), ((1, 2), (), -1), ((1, 2), (), 0),
                                         ((2, 3), (), 0), ((2, 3), (1, 3), -1),
                                         ((2, 3), (2, 1), 0), ((2, 3), (4, 2, 3), 0),
                                         ((2, 3), (2, 3), 1)])
def test_trapz_pads_x_with_leading_dims_as_pytorch(ys, xs, dim):
    rng = np.random.default_rng(3)
    y, x = rng.standard_normal(ys), rng.standard_normal(xs)
    _same_as_torch(lambda L, a, b: L.trapz(a, b, dim=dim), [y, x], second=False)


def test_trapezoid_over_no_samples_is_a_new_zero():
    y = tg.zeros(2, 0, dtype=tg.float64, requires_grad=True)
    r = tg.trapezoid(y, tg.zeros(2, 0, dtype=tg.float64))
    assert r.tolist() == [0.0, 0.0] and not r.requires_grad   # PyTorch's zeros_like_except


# ---- dist: every p over no elements is 0 ------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("p", [-2, -1, -0.5, float("-inf"), float("inf"), 0, 1, 2])
@pytest.mark.parametrize("shape", [(0,), (0, 3), (4, 2, 0)])
def test_dist_of_empty_tensors_for_every_p(p, shape):
    _assert_same(lambda L: L.dist(L.zeros(shape, dtype=L.float64),
                                  L.zeros(shape, dtype=L.float64), p))
    x = tg.zeros(shape, dtype=tg.float64, requires_grad=True)
    r = tg.dist(x, tg.zeros(shape, dtype=tg.float64), p)
    assert r.requires_grad
    g, = tg.autograd.grad(r, x, allow_unused=True)
    assert g is None if p == 0 else g.shape == shape   # p 0: no gradient, as PyTorch's


def test_dist_refuses_a_string_p():
    with pytest.raises(TypeError):
        tg.dist(tg.ones(2), tg.zeros(2), "fro")


# ---- einsum's sublist form with a tensor as the sublist ---------------------------------------
@needs_torch
@pytest.mark.parametrize("sub", [np.array([[True], [False]]), np.array([[1], [0]]),
                                 np.array([[1], [1]])])
def test_einsum_sublist_given_as_a_tensor(sub):
    """PyTorch iterates a tensor sublist into one-element rows and takes
    them as subscripts (comparisons and chr through __index__)"""
    # a repeated subscript (both rows 1) takes the diagonal of a square
    a = np.random.default_rng(4).standard_normal((2, 2) if sub[0, 0] == sub[1, 0] else (2, 3))
    _assert_same(lambda L: L.einsum(L.tensor(a), L.tensor(sub)))


def test_einsum_sublist_of_several_elements_per_row_is_ambiguous():
    with pytest.raises(RuntimeError):
        tg.einsum(tg.ones(2, 3), tg.ones(2, 3))
    with pytest.raises(ValueError):
        tg.einsum(tg.ones(2), [-1])
    assert tg.einsum(tg.ones(2, 3), [np.int64(0), True], [True]).shape == (3,)


# ---- add/sub's deprecated (input, alpha, other) with a 0-d tensor as alpha ------------------
@needs_torch
@pytest.mark.parametrize("name", ["add", "sub"])
@pytest.mark.parametrize("x, alpha, y", [
    (np.array(2), np.array(0), np.array(4.0)),           # int64 input, float64 other
    (np.array(2), np.array(3), np.array(4.0)),
    (np.array([2, 5]), np.array(3), np.array([4, 1])),
    (np.array([2.0, 1.0]), np.array(3.5), np.array([4, 1])),
    (np.array([2.0], dtype=np.float32), np.array(2), np.array([4.0])),
])
def test_deprecated_alpha_overload_with_a_tensor_alpha(name, x, alpha, y):
    _assert_same(lambda L: getattr(L, name)(L.tensor(x), L.tensor(alpha), L.tensor(y)))
    _assert_same(lambda L: getattr(L.tensor(x), name)(L.tensor(alpha), L.tensor(y)))


@needs_torch
@pytest.mark.parametrize("name", ["add", "sub"])
def test_deprecated_alpha_overload_with_a_number_as_other(name):
    """sub(x, t, 0): t is alpha, 0 a wrapped number (no float64 promotion)"""
    x, a = np.array(0.6241302, dtype=np.float32), np.array(1.189011866640244)
    _assert_same(lambda L: getattr(L, name)(L.tensor(x), L.tensor(a), 0))
    _assert_same(lambda L: getattr(L, name)(L.tensor([1.0, 2.0]), L.tensor(2), 3.5))


def test_deprecated_alpha_overload_refuses_other_tensors_as_alpha():
    x = tg.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for alpha in (tg.ones(2), tg.tensor(1.0, requires_grad=True)):
            for fn in (tg.add, tg.sub):
                with pytest.raises(TypeError):
                    fn(x, alpha, x)
        r = tg.ones(2)
        r.sub_(tg.tensor(3.0), tg.tensor([1.0, 2.0]))
    assert r.tolist() == [-2.0, -5.0]


# ---- second derivatives: PyTorch's formulas, where rounding or 0/0 shows --------------------
@needs_torch
@pytest.mark.parametrize("a", [
    np.array([-0.74593884, -0.40651444, -0.52357686], dtype=np.float32),
    np.array([[0.3, -1.2, 2.5]]),
    np.array([1e-3, 2e-3, -5e-4]),
])
def test_corrcoef_second_order_as_pytorch(a):
    """c / c of one variable: div's gradient in the divisor is PyTorch's
    -dy * ((a / b) / b), so the two halves cancel as there"""
    tol = dict(rtol=2e-5, atol=1e-6) if a.dtype == np.float32 else dict(rtol=1e-7, atol=1e-9)
    _same_as_torch(lambda L, x: L.corrcoef(x), [a], **tol)


@needs_torch
def test_division_gradient_in_the_divisor_does_not_square_it():
    """b * b underflows to 0 at 1e-200; (a / b) / b does not"""
    _same_as_torch(lambda L, a, b: a / b, [np.array([1e-200, 3e-190]), np.array([1e-200, 2e-190])],
                   rtol=1e-12, atol=0)


@needs_torch
@pytest.mark.parametrize("a, kw", [
    (np.array([-0.0]), dict(dim=-1)),
    (np.array([0.0, -0.0]), {}),
    (np.array([[0.0, 0.0], [1.0, 2.0]]), dict(dim=1)),
    (np.array([[[-0.43935215, -1.8737421, -1.5703232, -0.06964279],
                [-1.1638021, -0.5943513, 1.0638853, 2.7968254],
                [-0.9640327, 0.93340206, 0.15305468, 0.6610487]]], dtype=np.float32), dict(dim=0)),
    (np.array([[0.0, 0.0], [0.0, 0.0]]), dict(dim=(0, 1))),
    (np.array([[1.0, -2.0], [0.5, 3.0]]), dict(dim=(0, 1), keepdim=True)),
    (np.array([[0.0, 0.0], [0.0, 0.0]]), {}),
])
def test_frobenius_norm_gradients_as_pytorch(a, kw):
    """one dim (or none): PyTorch's norm, whose gradient at a zero norm is
    0 and its second derivative there NaN (0 / 0 through the masked
    quotient); two dims: sqrt(sum(x * x)), NaN already at first order"""
    tol = dict(rtol=2e-5, atol=1e-6) if a.dtype == np.float32 else {}
    _same_as_torch(lambda L, x: L.frobenius_norm(x, **kw), [a], **tol)


@needs_torch
@pytest.mark.parametrize("f", [lambda L, x: L.linalg.vector_norm(x),
                               lambda L, x: L.norm(x, 2, 1),
                               lambda L, x: L.dist(x, L.zeros(x.shape, dtype=x.dtype))])
def test_two_norm_second_derivative_at_a_zero_norm_is_nan(f):
    _same_as_torch(f, [np.array([[0.0, -0.0], [3.0, -4.0]])])


def test_frobenius_norm_dims_checked():
    x = tg.zeros(2, 3, 4)
    with pytest.raises(RuntimeError):
        tg.frobenius_norm(x, (0, 1, 2))
    with pytest.raises(RuntimeError):
        tg.frobenius_norm(x, (0, -3))
    with pytest.raises(IndexError):
        tg.frobenius_norm(x, (0, 5))


# ---- cummax / cummin over no elements --------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("shape, dim", [((0,), 0), ((2, 0), -1), ((0, 3), 0), ((0, 3), 1)])
def test_cummax_of_empty_has_a_gradient_that_requires_grad(name, shape, dim):
    """PyTorch's backward returns the empty input itself"""
    for L in (torch, tg):
        x = L.zeros(shape, dtype=L.float64, requires_grad=True)
        v, i = getattr(L, name)(x, dim)
        assert v.shape == i.shape == shape and v.requires_grad
        g, = L.autograd.grad(v, x, L.ones(shape, dtype=L.float64), create_graph=True)
        assert g.requires_grad and g.shape == shape


@needs_torch
@pytest.mark.parametrize("x, y, alpha", [
    (np.array([2.0, 1.0]), np.array([4, 1]), 3.5),              # integer other, float input
    (np.array([2.0, 1.0], dtype=np.float32), np.array([4, 1]), 0.5),
    (np.array(2.0), np.array([True, False]), 0.5),               # 0-d float64, bool other
    (np.array([1.0, 2.0]), np.array([0.1, 0.7], dtype=np.float32), 0.1),  # in float64
    (np.array([4, 1]), np.array([2.0, 1.0]), 3.5),
])
def test_alpha_scales_other_in_the_result_dtype(x, y, alpha):
    for name in ("add",) if y.dtype == np.bool_ else ("add", "sub"):  # no bool subtraction
        _assert_same(lambda L: getattr(L, name)(L.tensor(x), L.tensor(y), alpha=alpha))
        _assert_same(lambda L: getattr(L.tensor(x), name)(L.tensor(y), alpha=alpha))


# ---- seed 201: topk of a 0-d bool ------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("v, k, largest", [(True, 1, True), (False, 1, False), (True, 0, True)])
def test_topk_of_a_zero_dim_bool(v, k, largest):
    for part in (0, 1):
        _assert_same(lambda L: L.topk(L.tensor(v), k, 0, largest)[part])


def test_topk_of_bools_with_dims_still_refused():
    with pytest.raises(RuntimeError):
        tg.topk(tg.tensor([True, False]), 1)


# ---- second-order seed 97: torch.kl_div's reduction as a 0-d integer tensor -------------------
@needs_torch
@pytest.mark.parametrize("reduction", [-1, 0, 1, 2])
def test_kl_div_reduction_given_as_an_integer_tensor(reduction):
    a, b = np.array([0.8, 0.2, -0.3]), np.array([1.05, 2.0, 0.5])
    _assert_same(lambda L: L.kl_div(L.tensor(a), L.tensor(b), L.tensor(reduction)))
    with pytest.raises(TypeError):
        tg.kl_div(tg.tensor(a), tg.tensor(b), tg.tensor(1.0))


# ---- second-order seed 103: xlogy's derivatives as PyTorch writes them -----------------------
@needs_torch
@pytest.mark.parametrize("x, y", [
    (np.array([[-0.0, 0.0], [-1.0, -0.0], [-3.0, 5.0], [0.0, -1.0], [2.0, 0.0]]),
     np.array([[-0.4], [0.17], [0.0], [np.inf], [-2.0]])),
    (np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 2.5])),
])
def test_xlogy_first_and_second_order(x, y):
    """x's: xlogy(grad, y), 0 where x == 0 and y <= 0; y's: grad * x / y,
    a function of x also where x is 0"""
    _same_as_torch(lambda L, a, b: L.xlogy(a, b), [x, y], rtol=1e-12, atol=0)


# ---- second-order seed 99: erfinv's curvature at -1 is -inf ----------------------------------
@needs_torch
def test_erfinv_second_derivative_at_the_poles():
    _same_as_torch(lambda L, x: L.erfinv(x), [np.array([-1.0, 1.0, -2.0, 2.0, 0.5, -0.5, 0.0])],
                   rtol=1e-12, atol=0)


# ---- seed 206: the 0-norm of no elements has no gradient -------------------------------------
@needs_torch
@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_zero_norm_of_empty_has_no_gradient(shape):
    for f in (lambda L, x: x.norm(0), lambda L, x: L.norm(x, 0, dim=0),
              lambda L, x: L.dist(x, L.zeros(shape, dtype=L.float64), 0)):
        for L in (torch, tg):
            x = L.ones(shape, dtype=L.float64, requires_grad=True)
            r = f(L, x)
            assert not r.detach().numpy().any()
            assert L.autograd.grad(r, x, L.ones(r.shape, dtype=L.float64),
                                   allow_unused=True)[0] is None


# ---- second-order seed 103: all/any's int dim as a 0-d integer tensor -------------------------
@needs_torch
def test_all_any_take_an_integer_tensor_dim():
    a = np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]])
    for name in ("all", "any"):
        _assert_same(lambda L: getattr(L, name)(L.tensor(a), L.tensor(1)))
        _assert_same(lambda L: getattr(L.tensor(a), name)(L.tensor(-2)))
        _assert_same(lambda L: getattr(L.tensor(-0.5), name)(L.tensor(0)))
    with pytest.raises(TypeError):
        tg.all(tg.tensor(a), tg.tensor([1]))


# ---- seed 204: torch.binary_cross_entropy_with_logits broadcasts -------------------------------
@needs_torch
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_top_level_bce_with_logits_broadcasts(reduction):
    x, t = np.array([0.1, -0.3]), np.array([[0.2, 0.7], [0.9, 0.4]])
    _assert_same(lambda L: L.binary_cross_entropy_with_logits(L.tensor(x), L.tensor(t),
                                                              reduction=reduction))
    with pytest.raises(ValueError):
        tg.nn.functional.binary_cross_entropy_with_logits(tg.tensor(x), tg.tensor(t))
