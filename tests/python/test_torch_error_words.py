"""The most common shape errors in PyTorch's words and exception types
(module.c's torch_words rewrites the C library's messages, which keep
their own wording for C callers): a dim out of range (IndexError),
shapes that do not broadcast, 2-D matrices that do not multiply, and a
view or reshape to another number of elements (RuntimeError). Expected
messages are written out and, not under the sanitizer, compared with
PyTorch's."""
import pytest

import tensorgraph as tg
from conftest import SANITIZED, torch


def _a(m):
    return m.ones(2, 3)


CASES = [  # (case, f, exception, message)
    ('sum_dim', lambda m: _a(m).sum(2), IndexError,
     'Dimension out of range (expected to be in range of [-2, 1], but got 2)'),
    ('mean_neg_dim', lambda m: _a(m).mean(-3), IndexError,
     'Dimension out of range (expected to be in range of [-2, 1], but got -3)'),
    ('softmax_dim', lambda m: _a(m).softmax(5), IndexError,
     'Dimension out of range (expected to be in range of [-2, 1], but got 5)'),
    ('unsqueeze_dim', lambda m: _a(m).unsqueeze(4), IndexError,
     'Dimension out of range (expected to be in range of [-3, 2], but got 4)'),
    ('transpose_dim', lambda m: _a(m).transpose(0, 2), IndexError,
     'Dimension out of range (expected to be in range of [-2, 1], but got 2)'),
    ('cumsum_dim', lambda m: _a(m).cumsum(2), IndexError,
     'Dimension out of range (expected to be in range of [-2, 1], but got 2)'),
    ('add', lambda m: _a(m) + m.ones(4, 5), RuntimeError,
     'The size of tensor a (3) must match the size of tensor b (5) at non-singleton '
     'dimension 1'),
    ('add_leading', lambda m: m.ones(4, 3) + m.ones(2, 3), RuntimeError,
     'The size of tensor a (4) must match the size of tensor b (2) at non-singleton '
     'dimension 0'),
    ('mul_ranks', lambda m: m.ones(3) * m.ones(2, 4), RuntimeError,
     'The size of tensor a (3) must match the size of tensor b (4) at non-singleton '
     'dimension 1'),
    ('where', lambda m: m.where(m.ones(4, dtype=m.bool), _a(m), _a(m)), RuntimeError,
     'The size of tensor a (4) must match the size of tensor b (3) at non-singleton '
     'dimension 1'),
    ('mm', lambda m: _a(m).mm(m.ones(4, 5)), RuntimeError,
     'mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)'),
    ('matmul', lambda m: _a(m) @ m.ones(4, 5), RuntimeError,
     'mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)'),
    ('view', lambda m: _a(m).view(4), RuntimeError, "shape '[4]' is invalid for input of size 6"),
    ('reshape', lambda m: _a(m).reshape(4, 2), RuntimeError,
     "shape '[4, 2]' is invalid for input of size 6"),
    ('view_infer', lambda m: _a(m).view(4, -1), RuntimeError,
     "shape '[4, -1]' is invalid for input of size 6"),
    ('mean_int', lambda m: m.arange(3).mean(), RuntimeError,
     'mean(): could not infer output dtype. Input dtype must be either a floating point or '
     'complex dtype. Got: Long'),
    ('mean_int32', lambda m: m.arange(3, dtype=m.int32).mean(0), RuntimeError,
     'mean(): could not infer output dtype. Input dtype must be either a floating point or '
     'complex dtype. Got: Int'),
    ('mean_bool', lambda m: m.ones(3, dtype=m.bool).mean(), RuntimeError,
     'mean(): could not infer output dtype. Input dtype must be either a floating point or '
     'complex dtype. Got: Bool'),
    ('std_int', lambda m: m.arange(3).std(), RuntimeError,
     'std and var only support floating point and complex dtypes'),
    ('var_uint8', lambda m: m.arange(3, dtype=m.uint8).var(0), RuntimeError,
     'std and var only support floating point and complex dtypes'),
    ('item', lambda m: _a(m).item(), ValueError,
     'only one element tensors can be converted to Python scalars'),
    ('view_strides', lambda m: _a(m).t().view(6), RuntimeError,
     "view size is not compatible with input tensor's size and stride (at least one dimension "
     "spans across two contiguous subspaces). Use .reshape(...) instead."),
    ('allclose_dtype', lambda m: m.allclose(m.ones(1), m.ones(1, dtype=m.float64)), RuntimeError,
     'Float did not match Double'),
    ('isclose_dtype', lambda m: m.isclose(m.ones(1, dtype=m.int64), m.ones(1)), RuntimeError,
     'Long did not match Float'),
    ('allclose_shape', lambda m: m.allclose(m.ones(2), m.ones(3)), RuntimeError,
     'The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0'),
    ('max_nothing', lambda m: m.zeros(0, 3).max(), RuntimeError,
     "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
     "reduction dim with the 'dim' argument."),
    ('min_empty_dim', lambda m: m.zeros(0, 3).min(-2), IndexError,
     'min(): Expected reduction dim 0 to have non-zero size.'),
    ('amax_nothing', lambda m: m.zeros(0).amax(), RuntimeError,
     "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
     "reduction dim with the 'dim' argument."),
    ('amin_empty_dim', lambda m: m.zeros(0, 3).amin(-2), IndexError,
     'amin(): Expected reduction dim -2 to have non-zero size.'),
    ('argmax_nothing', lambda m: m.zeros(0).argmax(), IndexError,
     'argmax(): Expected reduction dim to be specified for input.numel() == 0.'),
    ('argmin_empty_dim', lambda m: m.zeros(0, 3).argmin(-2), IndexError,
     'argmin(): Expected reduction dim 0 to have non-zero size.'),
    ('cat_dims', lambda m: m.cat([m.ones(2, 3), m.ones(2)]), RuntimeError,
     'Tensors must have same number of dimensions: got 2 and 1'),
    ('cat_sizes', lambda m: m.cat([m.ones(2, 3), m.ones(4, 5)], 1), RuntimeError,
     'Sizes of tensors must match except in dimension 1. Expected size 2 but got size 4 for '
     'tensor number 1 in the list.'),
    ('cat_sizes_neg', lambda m: m.cat([m.ones(2, 3), m.ones(2, 3), m.ones(3, 4)], -1),
     RuntimeError, 'Sizes of tensors must match except in dimension 1. Expected size 2 but got '
     'size 3 for tensor number 2 in the list.'),
    ('cat_nothing', lambda m: m.cat([]), RuntimeError,
     'torch.cat(): expected a non-empty list of Tensors'),
    ('stack_sizes', lambda m: m.stack([m.ones(2), m.ones(2), m.ones(3)]), RuntimeError,
     'stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 2'),
    ('stack_nothing', lambda m: m.stack([]), RuntimeError, 'stack expects a non-empty TensorList'),
    ('expand', lambda m: _a(m).expand(2, 3, 4), RuntimeError,
     'The expanded size of the tensor (4) must match the existing size (3) at non-singleton '
     'dimension 2.  Target sizes: [2, 3, 4].  Tensor sizes: [2, 3]'),
    ('expand_leading', lambda m: m.ones(1, 3).expand(-1, 3, 3), RuntimeError,
     "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"),
    ('view_two_inferred', lambda m: _a(m).view(-1, -1), RuntimeError,
     'only one dimension can be inferred'),
    ('reshape_two_inferred', lambda m: _a(m).reshape(-1, -1), RuntimeError,
     'only one dimension can be inferred'),
    ('view_negative', lambda m: _a(m).view(-2, 3), RuntimeError, 'invalid shape dimension -2'),
    ('neg_bool', lambda m: -m.tensor([True, False]), RuntimeError,
     'Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert '
     'a mask, use the `~` or `logical_not()` operator instead.'),
    ('int_floordiv_zero', lambda m: m.tensor([1]) // m.tensor([0]), RuntimeError,
     'ZeroDivisionError'),
    ('int_remainder_zero', lambda m: m.tensor([1]) % 0, RuntimeError, 'ZeroDivisionError'),
] + [(f'bool_sub_{i}', f, RuntimeError,
      'Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to '
      'invert a mask, use the `~` or `logical_not()` operator instead.')
     for i, f in enumerate([lambda m: m.tensor([True]) - 1, lambda m: 1 - m.tensor([True]),
                            lambda m: m.ones(2) - m.tensor([True, False]),
                            lambda m: m.ones(2) - True, lambda m: m.sub(m.tensor([True]), 1),
                            lambda m: m.rsub(m.tensor([True]), 1),
                            lambda m: m.ones(2).sub_(m.tensor([True, False])),
                            lambda m: m.ones(2).__isub__(m.tensor([True, False]))])] + [
    ('bool_sub_bool', lambda m: m.tensor([True]) - m.tensor([False]), RuntimeError,
     'Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or '
     '`logical_xor()` operator instead.'),
    ('int_pow_negative', lambda m: m.tensor([2]) ** -1, RuntimeError,
     'Integers to negative integer powers are not allowed.'),
    ('int_requires_grad', lambda m: m.arange(3).requires_grad_(), RuntimeError,
     'only Tensors of floating point dtype can require gradients'),
    ('int_parameter', lambda m: m.nn.Parameter(m.arange(3)), RuntimeError,
     'Only Tensors of floating point and complex dtype can require gradients'),
    ('backward_twice', lambda m: _twice(m), RuntimeError,
     'Trying to backward through the graph a second time (or directly access saved tensors '
     'after they have already been freed). Saved intermediate values of the graph are freed '
     'when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to '
     'backward through the graph a second time or if you need to access saved tensors after '
     'calling backward.'),
]


def _saved_output_written(m):
    y = m.ones(3, requires_grad=True).exp()
    y.add_(1)
    y.sum().backward()


def _saved_input_written(m):
    y = m.ones(2, 3, dtype=m.float64, requires_grad=True) * 1
    z = y.sin()
    y.mul_(2)
    z.sum().backward()


def _saved_constant_written(m):
    w = m.ones(3)
    z = (m.ones(3, requires_grad=True) * w).sum()
    w.add_(1)
    z.backward()


def _saved_scalar_written(m):
    y = m.ones((), requires_grad=True).exp()
    y.mul_(2)
    y.backward()


_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its "
         "gradient, with torch.autograd.set_detect_anomaly(True).")
_MODIFIED = ("one of the variables needed for gradient computation has been modified by an "
             "inplace operation: ")
CASES += [
    ('version_output', _saved_output_written, RuntimeError,
     _MODIFIED + "[torch.FloatTensor [3]], which is output 0 of ExpBackward0, is at version 1; "
     "expected version 0 instead. " + _HINT),
    ('version_input', _saved_input_written, RuntimeError,
     _MODIFIED + "[torch.DoubleTensor [2, 3]], which is output 0 of MulBackward0, is at version "
     "1; expected version 0 instead. " + _HINT),
    ('version_constant', _saved_constant_written, RuntimeError,
     _MODIFIED + "[torch.FloatTensor [3]] is at version 1; expected version 0 instead. " + _HINT),
    ('version_scalar', _saved_scalar_written, RuntimeError,
     _MODIFIED + "[torch.FloatTensor []], which is output 0 of ExpBackward0, is at version 1; "
     "expected version 0 instead. " + _HINT),
]


def _twice(m):
    y = m.ones(2, requires_grad=True).exp().sum()
    y.backward()
    y.backward()

LEAF = 'a leaf Variable that requires grad is being used in an in-place operation.'
VIEW_OF_LEAF = 'a view of ' + LEAF


def _leaf(m):
    return m.ones(2, 3, requires_grad=True)


for _case, _f, _msg in [
        ('add_', lambda x: x.add_(1), LEAF), ('mul_', lambda x: x.mul_(2), LEAF),
        ('sub_', lambda x: x.sub_(1), LEAF), ('div_', lambda x: x.div_(2), LEAF),
        ('iadd', lambda x: x.__iadd__(1), LEAF), ('imul', lambda x: x.__imul__(2), LEAF),
        ('zero_', lambda x: x.zero_(), LEAF), ('fill_', lambda x: x.fill_(1.0), LEAF),
        ('copy_', lambda x: x.copy_(x.detach() * 2), LEAF), ('exp_', lambda x: x.exp_(), LEAF),
        ('clamp_', lambda x: x.clamp_(0, 1), LEAF), ('relu_', lambda x: x.relu_(), LEAF),
        ('masked_fill_', lambda x: x.masked_fill_(x.detach() > 0, 0.0), LEAF),
        ('uniform_', lambda x: x.uniform_(), LEAF),
        ('t_', lambda x: x.t_(), LEAF), ('unsqueeze_', lambda x: x.unsqueeze_(0), LEAF),
        ('setitem', lambda x: x.__setitem__(0, 1.0), VIEW_OF_LEAF),
        ('setitem_slice', lambda x: x.__setitem__((slice(None), 1), 1.0), VIEW_OF_LEAF),
        ('setitem_index', lambda x: x.__setitem__([0], 1.0), LEAF),
        ('view_add_', lambda x: x.view(6).add_(1), VIEW_OF_LEAF),
        ('slice_mul_', lambda x: x[1:].mul_(2), VIEW_OF_LEAF)]:
    CASES.append((f'leaf_{_case}', lambda m, f=_f: f(_leaf(m)), RuntimeError, _msg))


@pytest.mark.parametrize('case,f,exc,msg', CASES, ids=[c[0] for c in CASES])
def test_torch_words(case, f, exc, msg):
    with pytest.raises(exc) as e:
        f(tg)
    assert str(e.value) == msg
    if torch is not None and not SANITIZED:
        with pytest.raises(exc) as e:
            f(torch)
        assert str(e.value) == msg


def test_other_messages_kept():
    """errors without PyTorch's counterpart here keep the library's words"""
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        tg.ones(2, 3, 4) @ tg.ones(2, 5, 4)  # batched: not PyTorch's 2-D words


def test_randint_high_size_form():
    t = tg.randint(5, (3, 2))
    assert t.shape == (3, 2) and t.dtype == tg.int64 and 0 <= t.min() and t.max() < 5
    assert tg.randint(2, 4, (10,)).min() >= 2
