"""Views made with grad mode off, as PyTorch's: with grad mode on, writing
one in place when autograd would record (its base or an operand requires
grad), or reading one after its storage was written in place when its
base requires grad, is a RuntimeError ("A view was created in no_grad
mode ..."), where tensorgraph used to update the view alone and leave
its base's history behind (wrong gradients, silently). Writes inside
no_grad, views of constants, detached views and copies stay allowed.
The expected outcome of each case is written out and, not under the
sanitizer, checked against PyTorch too (conftest.py)."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, needs_torch, runtime_error_text, torch

TAIL = (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
        "your code by moving both the view and the inplace either both inside the no_grad "
        "block (if you don't want the inplace to be tracked) or both outside (if you want the "
        "inplace to be tracked).")
DIRECT = "A view was created in no_grad mode and is being modified inplace with grad mode enabled." + TAIL
INDIRECT = ("A view was created in no_grad mode and its base or another view of its base has "
            "been modified inplace with grad mode enabled." + TAIL)


def _y(m):
    return m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True) * 1


def _view(m, y, make):
    with m.no_grad():
        return make(y)


def _write(make, write):
    def f(m):
        y = _y(m)
        v = _view(m, y, make)
        write(m, v)
    return f


def _base_written(make, write_base):
    def f(m):
        y = _y(m)
        v = _view(m, y, make)
        write_base(m, y)
        return v * 2
    return f


def _const(m):
    return m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)


def _w(m):
    return m.tensor([2.0, 3.0], dtype=m.float64, requires_grad=True)


def _const_view_rg_operand(m):
    with m.no_grad():
        v = _const(m)[0:2]
    v.mul_(_w(m))


def _const_view_const_operand(m):
    with m.no_grad():
        v = _const(m)[0:2]
    v.mul_(2)
    return v


def _const_base_written(m):
    c = _const(m)
    with m.no_grad():
        v = c[0:2]
    c.add_(1)
    (v * _w(m)).sum().backward()


def _written_in_no_grad(m):
    y = _y(m)
    with m.no_grad():
        v = y[0:2]
        v.mul_(2)
        return v * 2


def _detached(m):
    y = _y(m)
    with m.no_grad():
        v = y[0:2]
    v.detach().mul_(2)


def _copied(m):
    y = _y(m)
    with m.no_grad():
        v = y[[0, 1]]  # advanced indexing copies
    v.mul_(2)


def _mul_(m, v):
    v.mul_(2)


def _add_no_grad(m, y):
    with m.no_grad():
        y.add_(1)


CASES = [
    ('slice mul_', _write(lambda y: y[0:2], _mul_), DIRECT),
    ('select fill_', _write(lambda y: y[1], lambda m, v: v.fill_(1)), DIRECT),
    ('view add_', _write(lambda y: y.view(2, 2), lambda m, v: v.add_(1)), DIRECT),
    ('reshape zero_', _write(lambda y: y.reshape(2, 2), lambda m, v: v.zero_()), DIRECT),
    ('unsqueeze copy_', _write(lambda y: y.unsqueeze(0),
                               lambda m, v: v.copy_(m.ones(1, 4, dtype=m.float64))), DIRECT),
    ('transpose iadd', _write(lambda y: y.view(2, 2).t(), lambda m, v: v.__iadd__(1)), DIRECT),
    ('split under no_grad', _write(lambda y: y.split(2)[0], _mul_), DIRECT),
    ('unbind under no_grad', _write(lambda y: y.unbind()[3], lambda m, v: v.sub_(1)), DIRECT),
    ('const view, rg operand', _const_view_rg_operand, DIRECT),
    ('base written, then read', _base_written(lambda y: y[0:2], lambda m, y: y.mul_(2)),
     INDIRECT),
    ('base written under no_grad, then read', _base_written(lambda y: y[1:], _add_no_grad),
     INDIRECT),
    ('read with grad, nothing written', _base_written(lambda y: y[0:2], lambda m, y: None),
     None),
    # allowed
    ('const view, const operand', _const_view_const_operand, None),
    ('const base written, then read', _const_base_written, None),
    ('view written inside no_grad', _written_in_no_grad, None),
    ('detached', _detached, None),
    ('advanced index copy', _copied, None),
    ('contiguous copy', _write(lambda y: y.view(2, 2).t().contiguous(), _mul_), None),
]


@pytest.mark.parametrize('name,f,expected', CASES, ids=[c[0] for c in CASES])
def test_nograd_view_writes(name, f, expected):
    assert runtime_error_text(tg, f) == expected
    assert tg.is_grad_enabled()
    if torch is not None and not SANITIZED:
        assert runtime_error_text(torch, f) == expected
        torch.set_grad_enabled(True)


def test_view_written_inside_no_grad_is_stale_after():
    """written through inside no_grad, the view is stale: a later read
    with grad mode on fails (its base requires grad), as PyTorch's"""
    y = _y(tg)
    with tg.no_grad():
        v = y[0:2]
        v.mul_(2)
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and its base"):
        v * 2
    with tg.no_grad():
        assert (v * 2).tolist() == [4.0, 8.0]  # reading without grad is fine
    assert y.tolist() == [2.0, 4.0, 3.0, 4.0]


@needs_torch
def test_gradients_of_allowed_patterns_as_torch():
    """moving both the view and the write outside no_grad (the advice)"""
    grads = []
    for m in (tg, torch):
        x = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        y = x * 1
        v = y[0:2]
        v.mul_(m.tensor([5.0, 7.0], dtype=m.float64))
        with m.no_grad():
            u = y[2:]
            u.add_(1)  # untracked: y's history is unchanged there
        (y * y).sum().backward()
        grads.append((x.grad.numpy().copy(), y.detach().numpy().copy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


def test_optimizer_style_updates_still_work():
    """parameters updated in place under no_grad, through views too"""
    w = tg.nn.Parameter(tg.ones(2, 3))
    with tg.no_grad():
        w[0].mul_(2)
        w.view(6)[5] = 7.0
    loss = (w * w).sum()
    loss.backward()
    assert w.grad.tolist() == [[4.0, 4.0, 4.0], [2.0, 2.0, 14.0]]
    opt = tg.optim.SGD([w], lr=0.5)
    opt.step()
    assert w.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


def _unsqueeze_nograd_then_write(m):
    x = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
    y = x * 1
    with m.no_grad():
        y.unsqueeze_(0)  # y is no view: it stays writable, and keeps its history
    y.mul_(m.tensor([2.0], dtype=m.float64, requires_grad=True))
    y.sum().backward()
    return x.grad.tolist(), tuple(y.shape)


def _view_unsqueeze_(m):
    y = _y(m)
    with m.no_grad():
        v = y[0:2]
    v.unsqueeze_(0)


def _view_t_(m):
    y = _y(m)
    with m.no_grad():
        v = y.view(2, 2)
    v.t_()


def _const_t_nograd_then_write(m):
    y = m.ones(2, 2, dtype=m.float64)
    with m.no_grad():
        y.t_()
    w = m.tensor([2.0], dtype=m.float64, requires_grad=True)
    y.mul_(w)
    y.sum().backward()
    return w.grad.tolist()


@pytest.mark.parametrize('f,expected', [
    (_unsqueeze_nograd_then_write, ([2.0, 2.0, 2.0, 2.0], (1, 4))),
    (_const_t_nograd_then_write, [4.0]),
])
def test_inplace_view_ops_under_no_grad(f, expected):
    """an in-place view op under no_grad does not make a tensor a no-grad
    view of itself, and keeps its history, as PyTorch's"""
    assert f(tg) == expected
    if torch is not None and not SANITIZED:
        assert f(torch) == expected


@pytest.mark.parametrize('f', [_view_unsqueeze_, _view_t_])
def test_inplace_view_ops_on_nograd_views_refused(f):
    assert runtime_error_text(tg, f) == DIRECT
    if torch is not None and not SANITIZED:
        assert runtime_error_text(torch, f) == DIRECT
