"""In-place ops on intermediate results, recorded by autograd as PyTorch
records them: the gradient flows through the update (y = sin x; y *= 2
gives 2 cos x), an overwritten value gets none, a tensor a rule saved and
that is then changed is the version-counter error at backward. Each case
runs the same code on tensorgraph and on PyTorch and compares."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, needs_torch, torch

X = [0.5, -1.0, 2.0, 0.25]
W = [1.5, -0.5, 0.75, 2.0]

# (name, update of y given the module (tg or torch) and a second input w)
UPDATES = [
    ("mul_scalar", lambda m, y, w: y.mul_(2)),
    ("mul_tensor", lambda m, y, w: y.mul_(w)),
    ("div_tensor", lambda m, y, w: y.div_(w)),
    ("div_scalar", lambda m, y, w: y.div_(4)),
    ("add_alpha", lambda m, y, w: y.add_(w, alpha=3)),
    ("sub_", lambda m, y, w: y.sub_(w)),
    ("iadd", lambda m, y, w: y.__iadd__(w)),
    ("isub_scalar", lambda m, y, w: y.__isub__(1.5)),
    ("imul", lambda m, y, w: y.__imul__(w)),
    ("itruediv", lambda m, y, w: y.__itruediv__(w)),
    ("clamp_", lambda m, y, w: y.clamp_(-0.5, 0.5)),
    ("pow_", lambda m, y, w: y.pow_(2)),
    ("sigmoid_", lambda m, y, w: y.sigmoid_()),
    ("relu_", lambda m, y, w: y.relu_()),
    ("neg_", lambda m, y, w: y.neg_()),
    ("abs_", lambda m, y, w: y.abs_()),
    ("zero_", lambda m, y, w: y.zero_()),
    ("fill_", lambda m, y, w: y.fill_(3)),
    ("copy_", lambda m, y, w: y.copy_(w * 2)),
    ("masked_fill_", lambda m, y, w: y.masked_fill_(w > 0, 0.0)),
    ("setitem_int", lambda m, y, w: y.__setitem__(1, 7.0)),
    ("setitem_slice_tensor", lambda m, y, w: y.__setitem__(slice(1, 3), w[:2] * 3)),
    ("setitem_mask", lambda m, y, w: y.__setitem__(w > 0, w[w > 0])),
    ("setitem_index", lambda m, y, w: y.__setitem__(m.tensor([3, 0]), w[1:3])),
    ("two_updates", lambda m, y, w: y.mul_(w).add_(1)),
]


def run(m, update, w_grad):
    x = m.tensor(X, requires_grad=True)
    w = m.tensor(W, requires_grad=w_grad)
    y = x.sin()
    update(m, y, w)
    (y * m.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    return y.detach().numpy().copy(), x.grad.numpy().copy(), \
        None if w.grad is None else w.grad.numpy().copy()


@needs_torch
@pytest.mark.parametrize("w_grad", [False, True])
@pytest.mark.parametrize("name,update", UPDATES, ids=[u[0] for u in UPDATES])
def test_update_of_intermediate_matches_torch(name, update, w_grad):
    got = run(tg, update, w_grad)
    want = run(torch, update, w_grad)
    for g, e in zip(got, want):
        if e is None:
            assert g is None or not np.any(g)
        else:
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_mul_by_scalar_gives_twice_the_derivative():
    x = tg.tensor(X, requires_grad=True)
    y = x.sin()
    y.mul_(2)
    y.sum().backward()
    close(x.grad, 2 * np.cos(np.float32(X)))


def test_update_of_a_tensor_without_history_by_one_with():
    """y has no history; y += w (w requires grad) gives y one, as PyTorch"""
    y = tg.zeros(4)
    w = tg.tensor(W, requires_grad=True)
    y += w * 2
    y[0] = w[3]
    assert y.requires_grad
    y.sum().backward()
    close(w.grad, [0, 2, 2, 3])  # y[0] = 2 w[0] was overwritten


def test_saved_result_modified_is_an_error_at_backward():
    """exp saves its result; changing it in place fails at backward"""
    x = tg.tensor(X, requires_grad=True)
    y = x.exp()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="version|in.place|modified"):
        y.sum().backward()
    y = x.exp()
    y[0] = 1.0
    with pytest.raises(RuntimeError, match="version|in.place|modified"):
        y.sum().backward()


def test_saved_input_of_the_update_is_not_an_error():
    """mul_ by a tensor needs self's old value for w's gradient: it keeps
    a copy, so changing self later does not break backward"""
    x = tg.tensor(X, requires_grad=True)
    w = tg.tensor(W, requires_grad=True)
    y = x * 1
    y.mul_(w)
    y.add_(1)
    y.sum().backward()
    close(w.grad, X)
    close(x.grad, W)


def test_leaf_that_requires_grad_is_refused():
    x = tg.tensor(X, requires_grad=True)
    for f in (lambda: x.mul_(2), lambda: x.exp_(), lambda: x.__setitem__(0, 1.0),
              lambda: x.mul_(tg.ones(4))):
        with pytest.raises(RuntimeError, match="leaf"):
            f()
    with tg.no_grad():
        x.exp_()
        x[0] = 1.0
    close(x, [1.0] + list(np.exp(np.float32(X[1:]))))


def _through_views(L):
    """writes through views of a tensor with history, and a view read after
    its base was written: PyTorch rebases and refreshes the histories"""
    x = L.tensor(X, requires_grad=True)
    y = x.sin()
    v, w, u = y[1:], y[:2], y.view(2, 2)
    v.mul_(2)
    w.add_(x[:2] * 3)
    y.mul_(x.cos())
    u[:, 0].clamp_(max=1.5)
    loss = (v * 1.5).sum() + w.sum() + (y * x).sum() + u.sum()
    loss.backward()
    return y.detach().numpy(), x.grad.numpy()


def test_update_of_a_view_of_a_tensor_with_history_as_torch():
    got = _through_views(tg)
    if torch is not None:
        for t, g in zip(_through_views(torch), got):
            close(g, t, 1e-6)
    x = tg.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf"):
        x[1:].mul_(2)


def test_result_dtype_must_fit():
    i = tg.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.div_(2)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.exp_()
    i.mul_(tg.tensor([2, 2, 2]))
    assert i.tolist() == [2, 4, 6] and i.dtype == tg.int64


def test_versions_count_each_update():
    y = tg.tensor(X) * 1
    v = y._version
    y.exp_()
    y.mul_(tg.ones(4))
    y[1:] = 0.0
    y[tg.tensor([0])] = 2.0
    assert y._version == v + 4


def test_product_by_a_constant_then_in_place():
    """mul keeps an input only for the other inputs' gradients (as PyTorch):
    y * c with c constant does not keep y, so y may be modified in place
    before backward; a product whose both sides need grad still refuses"""
    c = tg.tensor(2.0)
    y = tg.ones(3, requires_grad=True)
    w = y.clone()
    z = c * w
    w.sub_(z)
    w.sum().backward()
    assert y.grad.tolist() == [-1.0, -1.0, -1.0]
    a = tg.ones(3, requires_grad=True).clone()
    b = tg.ones(3, requires_grad=True)
    p = a * b
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"^one of the variables needed for gradient "
                                           r"computation has been modified by an inplace "
                                           r"operation: \[torch.FloatTensor \[3\]\], which is "
                                           r"output 0 of AddBackward0, is at version 1; "
                                           r"expected version 0 instead\."):
        p.sum().backward()
