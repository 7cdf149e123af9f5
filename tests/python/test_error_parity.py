"""Calls PyTorch refuses: tensorgraph refuses them with the same exception
class (found by fuzz/python/diff_ops.py --errors). PyTorch 1.13's class is
written as data (torch is not called: a torch exception aborts the
interpreter under ASan); each case asserts tensorgraph's class and a key
phrase of its message."""
import pytest

import tensorgraph as tg

F = tg.nn.functional


def _leaf():
    return tg.ones(2, 3, requires_grad=True)


CASES = [
    # (id, call, PyTorch's class, phrase of tensorgraph's message)
    # a number or list for a tensor, in Python-level functions (an
    # AttributeError on int.ndim before): the argument-type TypeError
    ("masked_select_int_mask", lambda: tg.masked_select(tg.ones(2), 3), TypeError,
     "argument 'mask' (position 2) must be Tensor, not int"),
    ("outer_method_int", lambda: tg.ones(3).outer(2), TypeError,
     "argument 'vec2' (position 1) must be Tensor, not int"),
    ("multilabel_margin_int_target", lambda: F.multilabel_margin_loss(tg.ones(1, 4), 1),
     TypeError, "argument 'target' (position 2) must be Tensor"),
    ("atleast_2d_int", lambda: tg.atleast_2d(tg.ones(2), 1), TypeError,
     "expected Tensor as element 1 in argument 0, but got int"),
    ("broadcast_tensors_int", lambda: tg.broadcast_tensors(2, tg.ones(2)), TypeError,
     "expected Tensor as element 0"),
    ("addmv_inplace_int", lambda: tg.ones(3, 3).addmv_(tg.ones(3, 3), 0), TypeError,
     "must be Tensor, not int"),
    ("any_list", lambda: tg.any([tg.ones(2)] * 3), TypeError,
     "argument 'input' (position 1) must be Tensor, not list"),
    ("count_nonzero_list", lambda: tg.count_nonzero([tg.ones(2)]), TypeError,
     "must be Tensor, not list"),
    # a tensor for an int: the argument-type TypeError
    ("kthvalue_tensor_k", lambda: tg.kthvalue(tg.ones(3), tg.ones(2)), TypeError,
     "argument 'k' (position 2) must be int, not Tensor"),
    ("combinations_tensor_r", lambda: tg.combinations(tg.ones(2), tg.ones(1)), TypeError,
     "integer tensors of a single element"),
    # the op table: data that is no tensor's, for a tensor (a ValueError before)
    ("sqrt_list_of_tensors", lambda: tg.sqrt([tg.ones(2), tg.ones(2)]), TypeError,
     "must be Tensor, not list"),
    # in-place view ops parse their arguments before refusing a leaf
    ("t_inplace_extra_arg", lambda: _leaf().t_(-1), TypeError, "argument"),
    ("transpose_inplace_tensor_dim", lambda: _leaf().transpose_(tg.ones(2), 1), TypeError,
     "integer tensors of a single element"),
    ("transpose_inplace_leaf", lambda: _leaf().transpose_(0, 1), RuntimeError,
     "a leaf Variable that requires grad"),
    ("conj_physical_inplace_leaf", lambda: _leaf().conj_physical_(), RuntimeError,
     "a leaf Variable that requires grad"),
    # rank checks PyTorch makes with TORCH_CHECK (RuntimeError), not an
    # IndexError from indexing a missing dim
    ("cholesky_inverse_0d", lambda: tg.cholesky_inverse(tg.ones(())), RuntimeError,
     "must have at least 2 dimensions"),
    ("lu_unpack_1d", lambda: tg.lu_unpack(tg.ones(4), tg.ones(4, dtype=tg.int32)),
     RuntimeError, "Expected tensor with 2 or more dimensions"),
    ("cartesian_prod_0d", lambda: tg.cartesian_prod(tg.ones(4), tg.ones(())), RuntimeError,
     "Expect a 1D vector, but got shape []"),
    ("nuclear_norm_int_dim", lambda: tg.nuclear_norm(tg.ones(3, 1), 0), RuntimeError,
     "dim must be a 2-tuple"),
    ("matrix_norm_one_dim", lambda: tg.linalg.matrix_norm(tg.ones(3, 1), 'nuc', (0,)),
     RuntimeError, "dim must be a 2-tuple"),
    # take_along_dim without dim is gather's (RuntimeError, no negative index)
    ("take_along_dim_out_of_bounds", lambda: tg.take_along_dim(tg.ones(2), tg.tensor([3])),
     RuntimeError, "index 3 is out of bounds for dimension 0 with size 2"),
    ("take_along_dim_negative", lambda: tg.take_along_dim(tg.ones(2), tg.tensor([-1])),
     RuntimeError, "index -1 is out of bounds"),
    # dims out of range: IndexError
    ("quantile_dim_out_of_range", lambda: tg.ones(3).quantile(tg.tensor([0.5]), 1),
     IndexError, "Dimension out of range"),
    ("tensordot_dims_beyond_rank", lambda: tg.tensordot(tg.ones(3), tg.ones(3)), IndexError,
     "Dimension out of range"),
]


@pytest.mark.parametrize("call, torch_class, phrase", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_refused_with_pytorchs_class(call, torch_class, phrase):
    with pytest.raises(torch_class) as info:
        call()
    assert phrase in str(info.value)


def test_numbers_still_stand_for_tensors():
    # the deliberate difference the fuzzer allows: a Python number for a
    # tensor argument (PyTorch: TypeError), so the checks above change no
    # accepted call
    assert tg.logical_xor(tg.tensor([0.0, 1.0]), 1).tolist() == [True, False]
    assert tg.minimum(tg.tensor([0.0, 2.0]), 1).tolist() == [0.0, 1.0]


def test_bool_flags_taken_as_python_takes_them():
    # PyTorch's Python-level functionals read inplace= as a truth value
    x = tg.tensor([-1.0, 1.0])
    assert F.relu6(x, 0).tolist() == [0.0, 1.0]
