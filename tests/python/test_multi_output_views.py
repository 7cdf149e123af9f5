"""The outputs of split, split_with_sizes, chunk and unbind are PyTorch's
multi-output views: while autograd records, writing one in place (or a
view of one), or reading one after its base or another view of it was
written in place, is a RuntimeError with PyTorch's message; with grad
mode off, or when nothing requires grad, the writes are allowed and reach
the base. tensor_split, hsplit and unflatten make plain views in PyTorch
1.13 (their outputs may be written). Each case runs on tensorgraph with
the expected outcome written out, and on PyTorch too (not under the
sanitizer: its C++ errors abort there, see conftest.py)."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, needs_torch, runtime_error_text, torch

WHY = (" This view is the output of a function that returns multiple views. Such functions "
       "do not allow the output views to be modified inplace. You should replace the inplace "
       "operation by an out-of-place one.")


def direct(k, fn):
    return f"Output {k} of {fn} is a view and is being modified inplace." + WHY


def indirect(k, fn):
    return (f"Output {k} of {fn} is a view and its base or another view of its base has "
            f"been modified inplace." + WHY)


NO_GRAD = "A view was created in no_grad mode and is being modified inplace with grad mode enabled." + WHY


def _x(m):
    return m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)


def _c(m):
    return m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)


def _w(m):
    return m.tensor([2.0, 3.0], dtype=m.float64, requires_grad=True)


def _nograd_write(m):
    y = _x(m) * 1
    a, b = y.split(2)
    with m.no_grad():
        a.mul_(2)
    return b.sum()


def _nograd_write_self(m):
    y = _x(m) * 1
    a, _ = y.split(2)
    with m.no_grad():
        a.mul_(2)
    return a.sum()


def _base_write(m):
    y = _x(m) * 1
    a, _ = y.split(2)
    y.mul_(2)
    return a * 3


def _base_write_nograd(m):
    y = _x(m) * 1
    a, _ = y.unbind()[:2], None
    with m.no_grad():
        y.add_(1)
    return a[1] + 1


def _other_view_write(m):
    y = _x(m) * 1
    _, b = y.split(2)
    y[0:1].mul_(2)
    return b.sum()


# (name, function of the module, expected message or None when allowed)
CASES = [
    ('unbind', lambda m: (_x(m) * 1).unbind()[0].mul_(2), direct(0, 'UnbindBackward0')),
    ('unbind dim 1', lambda m: (_x(m) * 1).reshape(2, 2).unbind(1)[1].add_(1),
     direct(1, 'UnbindBackward0')),
    ('split', lambda m: (_x(m) * 1).split(2)[1].mul_(2), direct(1, 'SplitBackward0')),
    ('split one piece', lambda m: (_x(m) * 1).split(4)[0].mul_(2), direct(0, 'SplitBackward0')),
    ('split sizes', lambda m: (_x(m) * 1).split([1, 3])[1].mul_(2),
     direct(1, 'SplitWithSizesBackward0')),
    ('split_with_sizes', lambda m: m.split_with_sizes(_x(m) * 1, [3, 1])[0].zero_(),
     direct(0, 'SplitWithSizesBackward0')),
    ('torch.split', lambda m: m.split(_x(m) * 1, 3)[1].fill_(1), direct(1, 'SplitBackward0')),
    ('chunk', lambda m: (_x(m) * 1).chunk(2)[1].mul_(2), direct(1, 'SplitBackward0')),
    ('torch.chunk', lambda m: m.chunk(_x(m) * 1, 3)[1].sub_(1), direct(1, 'SplitBackward0')),
    ('leaf', lambda m: _x(m).split(2)[1].mul_(2), direct(1, 'SplitBackward0')),
    ('copy_', lambda m: (_x(m) * 1).unbind()[1].copy_(m.tensor(1.0, dtype=m.float64)),
     direct(1, 'UnbindBackward0')),
    ('iadd', lambda m: (_x(m) * 1).unbind()[2].__iadd__(1), direct(2, 'UnbindBackward0')),
    ('view of view', lambda m: (_x(m) * 1).split(2)[1][0:1].mul_(2),
     direct(0, 'SliceBackward0')),
    ('const base, rg operand', lambda m: _c(m).split(2)[1].mul_(_w(m)), NO_GRAD),
    ('const base, rg copy', lambda m: _c(m).unbind()[0].copy_(_x(m)[0]), NO_GRAD),
    ('indirect: view written under no_grad', _nograd_write, indirect(1, 'SplitBackward0')),
    ('indirect: the view itself', _nograd_write_self, indirect(0, 'SplitBackward0')),
    ('indirect: base written', _base_write, indirect(0, 'SplitBackward0')),
    ('indirect: base written under no_grad', _base_write_nograd,
     indirect(1, 'UnbindBackward0')),
    ('indirect: other view written', _other_view_write, indirect(1, 'SplitBackward0')),
    # allowed
    ('const base', lambda m: _c(m).split(2)[1].mul_(2), None),
    ('tensor_split', lambda m: (_x(m) * 1).tensor_split(2)[1].mul_(2), None),
    ('hsplit', lambda m: (_x(m) * 1).hsplit(2)[1].mul_(2), None),
    ('unflatten', lambda m: (_x(m) * 1).unflatten(0, (2, 2)).mul_(2), None),
    ('detached part', lambda m: (_x(m) * 1).split(2)[1].detach().mul_(2), None),
]


@pytest.mark.parametrize('name,f,expected', CASES, ids=[c[0] for c in CASES])
def test_multi_output_view_writes(name, f, expected):
    got = runtime_error_text(tg, f)
    assert got == expected
    if torch is not None and not SANITIZED:
        assert runtime_error_text(torch, f) == expected


def test_error_type_is_runtime_error():
    y = tg.tensor([1.0, 2.0], requires_grad=True) * 1
    with pytest.raises(RuntimeError, match=r"^Output 0 of UnbindBackward0 is a view and is being"):
        y.unbind()[0].mul_(2)
    with pytest.raises(RuntimeError, match="returns multiple views"):
        y.split(1)[1][0] = 3.0  # a view of the output: output 0 of its own op


def _grads(m, write):
    """the gradient of x through writes to the parts that are allowed"""
    x = _x(m)
    y = x * 1
    a, b = y.split(2)
    write(m, a, b)
    loss = (y * m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)).sum()
    loss.backward()
    return y.detach().numpy().copy(), x.grad.numpy().copy()


def _write_nograd(m, a, b):
    with m.no_grad():
        a.mul_(10)
        b[0] = -1.0


@needs_torch
def test_writes_under_no_grad_reach_the_base():
    for write in (_write_nograd,):
        yt, gt = _grads(tg, write)
        yp, gp = _grads(torch, write)
        np.testing.assert_array_equal(yt, yp)
        np.testing.assert_array_equal(gt, gp)
        np.testing.assert_array_equal(yt, [10.0, 20.0, -1.0, 4.0])


def test_constant_parts_written_in_grad_mode():
    c = tg.tensor([1.0, 2.0, 3.0, 4.0])
    a, b = c.chunk(2)
    a.mul_(3)
    b.add_(1)
    assert (a + b).tolist() == [7.0, 11.0]  # reading them again is fine: nothing to differentiate
    assert c.tolist() == [3.0, 6.0, 4.0, 5.0]


@needs_torch
def test_grad_fn_names_and_gradients_as_torch():
    for m_split in (lambda t: t.split(2), lambda t: t.split([1, 3]), lambda t: t.unbind(),
                    lambda t: t.chunk(3), lambda t: t.tensor_split(2)):
        names, grads = [], []
        for m in (tg, torch):
            x = _x(m)
            parts = m_split(x * 1)
            names.append([p.grad_fn.name() for p in parts])
            sum(((i + 1) * p.sum() for i, p in enumerate(parts))).backward()
            grads.append(x.grad.numpy())
        assert names[0] == names[1]
        np.testing.assert_array_equal(grads[0], grads[1])


def test_out_of_place_replacement_works():
    """what the message advises: the out-of-place op"""
    x = tg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = (x * 1).split(2)
    c = a * 2
    (c.sum() + b.sum()).backward()
    assert x.grad.tolist() == [2.0, 2.0, 1.0, 1.0]


def test_symbolic_split_unmarked():
    @tg.function
    def f(t):
        a, b = t.split(2)
        return a * b

    assert f(tg.tensor([1.0, 2.0, 3.0, 4.0])).tolist() == [3.0, 8.0]


def test_mark_multi_output_bad_arguments():
    t = tg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="unknown function 'narrow'"):
        tg._C._mark_multi_output((t,), 'narrow')
    with pytest.raises(TypeError, match="expected a tuple of Tensors"):
        tg._C._mark_multi_output((1,), 'split')
    with pytest.raises(TypeError):
        tg._C._mark_multi_output([t], 'split')


def _meta(op):
    def f(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
        op((x * 1).unbind()[1])
    return f


META = [('unsqueeze_', _meta(lambda a: a.unsqueeze_(0))),
        ('squeeze_', _meta(lambda a: a.squeeze_())),
        ('t_', _meta(lambda a: a.t_())),
        ('transpose_', _meta(lambda a: a.transpose_(0, 0))),
        ('swapdims_', _meta(lambda a: a.swapdims_(0, 0)))]


@pytest.mark.parametrize('name,f', META, ids=[c[0] for c in META])
def test_inplace_view_ops_refused(name, f):
    assert runtime_error_text(tg, f) == direct(1, 'UnbindBackward0')
    if torch is not None and not SANITIZED:
        assert runtime_error_text(torch, f) == direct(1, 'UnbindBackward0')


def test_inplace_view_ops_allowed_without_grad():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a = (x * 1).unbind()[0]
    with tg.no_grad():
        a.unsqueeze_(0)
    assert a.shape == (1, 2)
    c = tg.ones(2, 2).unbind()[0]
    assert c.unsqueeze_(0).shape == (1, 2)
    with pytest.raises(TypeError, match="expected a Tensor"):
        tg._C._check_view_inplace(3)
