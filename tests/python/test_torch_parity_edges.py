"""Edge cases found by a differential sweep against PyTorch 1.13: result
dtypes of binary functions with a 0-d tensor operand, gradients that
broadcast to a 0-d input, in-place ops whose other operand has a wider
dtype of the same kind, bool operands of mul_, errors PyTorch raises as
RuntimeError (repeated dims, flatten's dims), mode on 0-d and empty
inputs, cumsum's dtype, `in`, list indices read as tuples, arange of a 0-d
tensor, nn.Softmax's implicit dim, fill_ with a tensor value."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, needs_torch, torch
from torch_compare import compare_with_torch

R = np.random.RandomState(0)
F32 = R.randn(3, 4).astype(np.float32)
F64 = R.randn(3, 4)
I32 = R.randint(-5, 6, (3, 4)).astype(np.int32)
I64 = I32.astype(np.int64)
B = R.rand(3, 4) > 0.5
Z64 = np.array(2.5)            # a 0-d float64 tensor
ZI = np.array(3)               # a 0-d int64 tensor


def _both(fn, *arrays):
    """fn(L, *tensors) for L = torch and tensorgraph"""
    return [fn(L, *[L.tensor(a) for a in arrays]) for L in (torch, tg)]


def _same_dtype_values(fn, *arrays):
    want, got = _both(fn, *arrays)
    assert str(got.dtype).split('.')[-1] == str(want.dtype).split('.')[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.numpy().astype(np.float64),
                               rtol=1e-6, atol=1e-6)


# -- binary functions with a 0-d operand ---------------------------------------------
# PyTorch: a 0-d tensor decides the dtype only when its kind is higher
# (float32 with a 0-d float64 stays float32; int32 with it becomes float64)
_BINARY = {
    'atan2': lambda L, a, b: L.atan2(a, b),
    'copysign': lambda L, a, b: L.copysign(a, b),
    'fmax': lambda L, a, b: L.fmax(a, b),
    'fmin': lambda L, a, b: L.fmin(a, b),
    'xlogy': lambda L, a, b: L.xlogy(a, b),
    'xlog1py': lambda L, a, b: L.special.xlog1py(a, b),
    'nextafter': lambda L, a, b: L.nextafter(a.to(b.dtype) if not a.dtype.is_floating_point
                                             else a, b),
    'ldexp': lambda L, a, b: L.ldexp(a, b),
    'logaddexp': lambda L, a, b: L.logaddexp(a, b),
    'hypot': lambda L, a, b: L.hypot(a, b),
    'where': lambda L, a, b: L.where(L.ones(3, 4, dtype=L.bool), a, b),
}


@needs_torch
@pytest.mark.parametrize('name', sorted(_BINARY))
@pytest.mark.parametrize('dense,zero', [(F32, Z64), (I32, Z64), (B, Z64), (F64, Z64),
                                        (I32, ZI), (F32, ZI)],
                         ids=['f32-z64', 'i32-z64', 'bool-z64', 'f64-z64', 'i32-zi', 'f32-zi'])
def test_binary_dtype_with_zero_dim(name, dense, zero):
    fn = _BINARY[name]
    if name in ('logaddexp', 'hypot', 'nextafter') and not (
            dense.dtype.kind == 'f' or zero.dtype.kind == 'f'):
        pytest.skip("PyTorch has no integer kernel")
    if name == 'nextafter' and dense.dtype.kind != 'f':
        pytest.skip("nextafter takes floats")
    if name == 'hypot' and dense.dtype.kind in 'iu' and zero.dtype.kind in 'iu':
        pytest.skip("PyTorch has no integer kernel")
    _same_dtype_values(fn, dense, zero)
    _same_dtype_values(lambda L, a, b: fn(L, b, a), dense, zero)


@needs_torch
def test_hypot_and_logaddexp_of_bools_compute_in_float():
    _same_dtype_values(lambda L, a, b: L.hypot(a, b), B, F32)
    _same_dtype_values(lambda L, a, b: L.hypot(a, b), F64, B)


@needs_torch
@pytest.mark.parametrize('other', [Z64, np.array(-1.5), R.randn(4), R.randn(3, 1)],
                         ids=['0d', '0d-neg', 'row', 'col'])
def test_atan2_gradient_broadcasts_to_each_input(other):
    compare_with_torch(lambda L, a, b: L.atan2(a, b), F64, other, grad=(0, 1))
    compare_with_torch(lambda L, a, b: L.atan2(b, a), F64, other, grad=(0, 1))


def test_atan2_of_numbers_is_a_type_error():
    with pytest.raises(TypeError, match="must be Tensor"):
        tg.atan2(tg.ones(2), 2.0)
    with pytest.raises(TypeError, match="must be Tensor"):
        tg.logaddexp(tg.ones(2), 1)


# -- in-place ops: a wider dtype of the same kind is fine, a higher kind is not ---------
@needs_torch
@pytest.mark.parametrize('op', ['div_', 'pow_', 'floor_divide_', 'remainder_', 'fmod_', 'mul_',
                                'add_', 'sub_'])
def test_inplace_float32_with_float64_other(op):
    def f(L, x, y):
        x = x.abs() + 0.5
        r = getattr(x, op)(y.abs() + 0.5)
        assert r is x
        return x
    compare_with_torch(f, F32, F64)


@needs_torch
def test_inplace_clamp_and_pow_with_wider_operands():
    compare_with_torch(lambda L, x, lo: x.clamp_(min=lo), F32, R.randn(4))
    compare_with_torch(lambda L, x, lo: x.clamp_(min=lo), I32, I64[0])
    compare_with_torch(lambda L, x, e: x.pow_(e), I32, np.abs(I64))


def test_inplace_refuses_a_higher_kind():
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tg.ones(3, dtype=tg.int64).div_(tg.tensor(2.0))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tg.ones(3, dtype=tg.int32).pow_(tg.tensor([0.5, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tg.ones(3, dtype=tg.int32).clamp_(min=tg.tensor([0.5, 1.0, 2.0]))


@needs_torch
@pytest.mark.parametrize('dst', [F64, F32, I64, B], ids=['f64', 'f32', 'i64', 'bool'])
def test_mul_inplace_by_a_bool_tensor(dst):
    compare_with_torch(lambda L, x, m: x.mul_(m), dst, B)
    compare_with_torch(lambda L, x, m: x.div_(m | True) if x.dtype.is_floating_point else x,
                       dst, B)


@needs_torch
def test_mul_inplace_by_a_bool_tensor_gradient():
    def f(L, x, m):
        y = x * 1
        y.mul_(m)
        return y
    compare_with_torch(f, F64, B, grad=(0,))


# -- where with a 0-d float64 operand -----------------------------------------------
@needs_torch
def test_where_zero_dim_float64_value_gradient():
    def f(L, x, z):
        return L.where(x > 0, z, x.long())
    compare_with_torch(f, F64, Z64, grad=(1,))
    compare_with_torch(lambda L, x, z: L.where(x > 0, x, z), F64, Z64, grad=(0, 1))


# -- errors that PyTorch raises as RuntimeError -------------------------------------------
@pytest.mark.parametrize('op', ['sum', 'mean', 'amax', 'amin', 'std', 'var', 'logsumexp',
                                'nansum'])
def test_repeated_dims_are_a_runtime_error(op):
    x = tg.ones(2, 3, 4)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        getattr(tg, op)(x, (0, -3))
    with pytest.raises(RuntimeError, match="dim 2 appears multiple times"):
        getattr(x, op)((2, -1))


def test_repeated_dims_error_class_is_not_index_error():
    with pytest.raises(RuntimeError) as e:
        tg.ones(2, 3).sum((1, 1))
    assert not isinstance(e.value, IndexError)


def test_flatten_start_after_end_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim") as e:
        tg.ones(2, 3, 4).flatten(2, 1)
    assert not isinstance(e.value, IndexError)
    with pytest.raises(IndexError, match="Dimension out of range"):
        tg.ones(2, 3, 4).flatten(0, 3)


@pytest.mark.skipif(SANITIZED or torch is None, reason="PyTorch's error paths")
def test_error_classes_match_torch():
    for f in (lambda L: L.ones(2, 3).sum((1, -1)), lambda L: L.ones(2, 3, 4).flatten(2, 1),
              lambda L: L.ones(2, 3).mode(2), lambda L: L.zeros(2, 0).mode(1),
              lambda L: L.ones(3).fill_(L.ones(2))):
        classes = []
        for L in (torch, tg):
            with pytest.raises(Exception) as e:
                f(L)
            classes.append(type(e.value))
        assert classes[1] is classes[0]


# -- mode ------------------------------------------------------------------------------
@needs_torch
def test_mode_of_zero_dim_tensor():
    for dim in (0, -1):
        compare_with_torch(lambda L, x, d=dim: L.mode(x, d).values, Z64, grad=(0,))
        compare_with_torch(lambda L, x, d=dim: x.mode(d, keepdim=True).indices, Z64)
    compare_with_torch(lambda L, x: x.mode().values, Z64, grad=(0,))


def test_mode_dim_checks():
    with pytest.raises(IndexError, match=r"expected to be in range of \[-2, 1\], but got 2"):
        tg.ones(2, 3).mode(2)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        tg.tensor(1.0).mode(1)
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        tg.zeros(2, 0, 3).mode(1)
    v, i = tg.zeros(2, 0, 3).mode(0)
    assert v.shape == (0, 3) and i.shape == (0, 3)


@needs_torch
def test_mode_negative_dim_values_and_gradient():
    x = np.array([[1.0, 2.0, 2.0, 3.0], [0.0, 0.0, 5.0, 5.0], [4.0, 1.0, 1.0, 1.0]])
    compare_with_torch(lambda L, t: L.mode(t, -1).values, x, grad=(0,))
    compare_with_torch(lambda L, t: L.mode(t, -2, keepdim=True).indices, x)


# -- cumsum's dtype ----------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize('dtype', ['int32', 'int64', 'float32', 'float64'])
def test_cumsum_dtype_argument(dtype):
    for a in (I32, I64, B):
        compare_with_torch(lambda L, x: L.cumsum(x, 1, dtype=getattr(L, dtype)), a)
        compare_with_torch(lambda L, x: x.cumsum(0, dtype=getattr(L, dtype)), a)


# -- `in` --------------------------------------------------------------------------------
@needs_torch
def test_contains():
    for L in (torch, tg):
        x = L.tensor([[1, 2], [3, 4]])
        assert 3 in x and 7 not in x and 2.0 in x and L.tensor(4) in x
        assert (L.tensor([1, 9]) in x) is True  # any element equal, as PyTorch
        assert 1.5 not in L.tensor([1.0, 2.0])
        with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
            'a' in x


# -- a list index holding sequences is a tuple -----------------------------------------------
@needs_torch
@pytest.mark.parametrize('index', [
    lambda L: [[0, 1], [2, 0]],
    lambda L: [[0, 2], slice(1, 3)],
    lambda L: [slice(None), [1, 3]],
    lambda L: [None, 0],
    lambda L: [Ellipsis, [0, 3]],
    lambda L: [L.tensor([0, 2]), L.tensor([1, 1])],
    lambda L: [0, 2],
    lambda L: [[0, 1]],
], ids=['lists', 'list-slice', 'slice-list', 'none', 'ellipsis', 'tensors', 'ints', 'one'])
def test_list_index_read_as_tuple(index):
    compare_with_torch(lambda L, x: x[index(L)], F64, grad=(0,))

    def put(L, x):
        y = x * 1
        y[index(L)] = -1.0
        return y
    compare_with_torch(put, F64, grad=(0,))


# -- arange of 0-d tensors and numpy numbers ----------------------------------------------
@needs_torch
def test_arange_of_tensor_bounds():
    for args in [(np.array(3),), (np.array(1), np.array(6), np.array(2)), (np.array(2.5),),
                 (np.array(0), np.array(1.0), np.array(0.25))]:
        want = torch.arange(*[torch.tensor(a) for a in args])
        got = tg.arange(*[tg.tensor(a) for a in args])
        assert str(got.dtype).split('.')[-1] == str(want.dtype).split('.')[-1]
        np.testing.assert_allclose(got.numpy(), want.numpy())
    assert tg.arange(np.int64(4)).dtype == tg.int64
    assert tg.arange(np.float64(2.0)).dtype == tg.float32


# -- nn.Softmax / LogSoftmax without dim ---------------------------------------------------
@needs_torch
@pytest.mark.parametrize('shape', [(5,), (2, 5), (2, 3, 4), (2, 3, 4, 5)])
@pytest.mark.parametrize('module', ['Softmax', 'LogSoftmax'])
def test_softmax_module_implicit_dim(shape, module):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        compare_with_torch(lambda L, x: getattr(L.nn, module)()(x), R.randn(*shape), grad=(0,))
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        getattr(tg.nn, module)()(tg.ones(*shape))


# -- fill_ with a tensor value ---------------------------------------------------------
@needs_torch
def test_fill_with_tensor_value_gradient():
    def f(L, x, v):
        y = x * 1
        y.fill_(v)
        return y
    compare_with_torch(f, F64, Z64, grad=(0, 1))
    compare_with_torch(lambda L, x, v: x.fill_(v), I64, Z64)


def test_fill_with_a_dimensioned_tensor_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but "
                                           "got tensor with 1 dimensions"):
        tg.ones(3).fill_(tg.ones(2))
    x = tg.ones(2, 2)
    assert x.fill_(tg.tensor(3)) is x
    np.testing.assert_array_equal(x.numpy(), np.full((2, 2), 3.0, np.float32))


# -- advanced-index writes refuse a value tensor of another dtype ---------------------------
@pytest.mark.parametrize('index', [
    lambda L: [0, 2],
    lambda L: L.tensor([0, 2]),
    lambda L: (slice(None), [1]),
    lambda L: [[0, 1], [2, 0]],
    lambda L: L.tensor([[True, False, True, False]] * 3),
], ids=['list', 'tensor', 'slice-list', 'lists', 'full-mask'])
def test_setitem_value_dtype_must_match_with_tensor_indices(index):
    x = tg.zeros(3, 4, dtype=tg.float64)
    shape = x[index(tg)].shape
    with pytest.raises(RuntimeError, match="Index put requires the source and destination "
                                           "dtypes match, got Double for the destination and "
                                           "Float for the source"):
        x[index(tg)] = tg.ones(shape, dtype=tg.float32)
    with pytest.raises(RuntimeError, match="got Long for the destination and Int"):
        tg.zeros(3, 4, dtype=tg.int64)[index(tg)] = tg.ones(shape, dtype=tg.int32)
    # the shape is checked first, as PyTorch
    with pytest.raises(RuntimeError, match="shape mismatch: value tensor of shape"):
        x[index(tg)] = tg.ones(5, dtype=tg.float32)


@needs_torch
def test_setitem_conversions_that_torch_allows():
    def f(L, x):
        x = x * 1
        x[0] = L.tensor([1, 2, 3, 4])                     # basic index: converted
        x[1:, ::2] = L.tensor(7.0)                         # basic index: converted
        x[x > 5] = L.tensor(-1.0, dtype=L.float32)         # a mask and one value: masked_fill
        x[L.tensor([True, False, True])] = L.tensor([0.5], dtype=L.float32)
        x[[2]] = 3                                         # Python numbers take x's dtype
        x[[0], [1]] = L.tensor(9.0, dtype=L.float64)
        return x
    compare_with_torch(f, F64, grad=(0,))


def test_index_put_value_dtype_must_match():
    x = tg.zeros(3, dtype=tg.float64)
    for acc in (False, True):
        with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
            x.index_put((tg.tensor([0, 1]),), tg.tensor([1.0, 2.0]), accumulate=acc)
        with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
            x.index_put_((tg.tensor([0, 1]),), tg.tensor([1.0, 2.0]), accumulate=acc)
    y = x.index_put((tg.tensor([0, 0]),), tg.tensor([1.0, 2.0], dtype=tg.float64), accumulate=True)
    np.testing.assert_array_equal(y.numpy(), [3.0, 0.0, 0.0])


# -- empty inputs ------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize('shape,chunks,dim', [((0, 3), 2, 0), ((0, 3), 3, 1), ((2, 0), 2, 1),
                                              ((0,), 1, 0)])
def test_chunk_of_an_empty_dim(shape, chunks, dim):
    want = torch.zeros(shape).chunk(chunks, dim)
    got = tg.zeros(shape).chunk(chunks, dim)
    assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in want]
    assert len(tg.chunk(tg.zeros(shape), chunks, dim)) == len(want)


@needs_torch
def test_median_of_nothing_is_nan():
    for shape in [(0,), (2, 0)]:
        for dt in ('float32', 'float64'):
            want = torch.zeros(shape, dtype=getattr(torch, dt)).median()
            got = tg.zeros(shape, dtype=getattr(tg, dt)).median()
            assert got.shape == () and got.dtype == getattr(tg, dt)
            assert np.isnan(got.item()) and np.isnan(want.item())
    assert np.isnan(tg.zeros(0).nanmedian().item())


# -- containers and dotted lookups ---------------------------------------------------------
def _names(mods):
    return [type(m).__name__ for m in mods]


@needs_torch
def test_module_dict_update_pop_clear():
    for L in (torch, tg):
        d = L.nn.ModuleDict([('b', L.nn.ReLU()), ('a', L.nn.Tanh())])
        d.update({'c': L.nn.Sigmoid()})
        d.update([('e', L.nn.ReLU())])
        d.update(L.nn.ModuleDict({'f': L.nn.Tanh()}))
        assert list(d.keys()) == ['b', 'a', 'c', 'e', 'f']
        assert type(d.pop('a')).__name__ == 'Tanh' and 'a' not in d
        with pytest.raises(ValueError, match="has length 3; 2 is required"):
            d.update([('x', L.nn.ReLU(), 1)])
        with pytest.raises(TypeError):
            d.update(5)
        d.clear()
        assert len(d) == 0 and list(d.parameters()) == []


@needs_torch
def test_sequential_insert_extend_pop_add_mul():
    got = []
    for L in (torch, tg):
        s = L.nn.Sequential(L.nn.ReLU(), L.nn.Tanh())
        s.insert(1, L.nn.Sigmoid())
        s.insert(-1, L.nn.Identity())
        s.insert(0, L.nn.ELU())
        popped = s.pop(1)
        s.extend(L.nn.Sequential(L.nn.ReLU()))
        t = s + L.nn.Sequential(L.nn.Tanh())
        u = s * 2
        s += L.nn.Sequential(L.nn.Sigmoid())
        with pytest.raises(IndexError):
            s.insert(10, L.nn.ReLU())
        with pytest.raises(ValueError):
            s + L.nn.ReLU()
        got.append((_names(s), [n for n, _ in s.named_children()], type(popped).__name__,
                    _names(t), _names(u), [n for n, _ in u.named_children()]))
    assert got[1] == got[0]


@needs_torch
def test_get_submodule_parameter_buffer():
    for L in (torch, tg):
        m = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.Sequential(L.nn.BatchNorm1d(3)))
        assert type(m.get_submodule('1.0')).__name__ == 'BatchNorm1d'
        assert m.get_submodule('') is m
        assert tuple(m.get_parameter('0.weight').shape) == (3, 2)
        assert m.get_parameter('0.bias') is m[0].bias
        assert m.get_buffer('1.0.running_var') is m[1][0].running_var
        with pytest.raises(AttributeError, match="has no attribute `foo`"):
            m.get_submodule('0.foo')
        with pytest.raises(AttributeError, match="is not an nn.Module"):
            m.get_submodule('0.weight')
        with pytest.raises(AttributeError, match="is not an nn.Parameter"):
            m.get_parameter('1.0.running_mean')
        with pytest.raises(AttributeError, match="is not a buffer"):
            m.get_buffer('0.weight')
        assert m.share_memory() is m


# -- numpy's argument names, as PyTorch's parser takes them -----------------------------------
_AXIS_OPS = {
    'sum': (), 'mean': (), 'prod': (), 'amax': (), 'amin': (), 'argmax': (), 'argmin': (),
    'std': (), 'var': (), 'logsumexp': (), 'median': (), 'nansum': (), 'nanmean': (),
    'cumsum': (), 'cumprod': (), 'softmax': (), 'log_softmax': (), 'max': (), 'min': (),
    'sort': (), 'argsort': (), 'topk': (2,), 'kthvalue': (2,), 'unbind': (), 'chunk': (2,),
    'mode': (), 'count_nonzero': (), 'quantile': (0.5,), 'std_mean': (), 'var_mean': (),
    'unsqueeze': (), 'all': (), 'any': (),
}


@needs_torch
@pytest.mark.parametrize('op', sorted(_AXIS_OPS))
def test_axis_for_dim(op):
    args = _AXIS_OPS[op]

    def f(L, x):
        x = x > 0 if op in ('all', 'any') else x
        r = getattr(L, op)(x, *args, axis=1)
        return r if isinstance(r, L.Tensor) else r[0]
    compare_with_torch(f, F64)

    if op in ('std_mean', 'var_mean'):
        return  # functions only, in PyTorch too

    def m(L, x):
        x = x > 0 if op in ('all', 'any') else x
        r = getattr(x, op)(*args, axis=0)
        return r if isinstance(r, L.Tensor) else r[0]
    compare_with_torch(m, F64)


@needs_torch
@pytest.mark.parametrize('op', ['sum', 'mean', 'amax', 'max', 'std', 'var', 'logsumexp', 'all',
                                'any', 'median', 'nansum', 'prod', 'argmax'])
def test_keepdims_for_keepdim(op):
    def f(L, x):
        x = x > 0 if op in ('all', 'any') else x
        r = getattr(L, op)(x, axis=1, keepdims=True)
        return r if isinstance(r, L.Tensor) else r[0]
    compare_with_torch(f, F64)


@needs_torch
def test_cat_and_stack_take_axis():
    compare_with_torch(lambda L, x: L.cat([x, x], axis=1), F64, grad=(0,))
    compare_with_torch(lambda L, x: L.stack([x, x], axis=-1), F64, grad=(0,))


def test_axis_with_dim_is_a_type_error():
    x = tg.ones(2, 3)
    for f in (lambda: x.sum(0, axis=1), lambda: tg.sort(x, dim=0, axis=1),
              lambda: x.std(dim=0, axis=1)):
        with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
            f()


# -- size= for the factories -------------------------------------------------------------
@needs_torch
def test_factories_take_size_keyword():
    for L in (torch, tg):
        assert tuple(L.zeros(size=(2, 3)).shape) == (2, 3)
        assert tuple(L.ones(size=[4]).shape) == (4,)
        assert tuple(L.empty(size=(1, 2)).shape) == (1, 2)
        assert tuple(L.rand(size=(3,)).shape) == (3,)
        assert tuple(L.randn(size=(2, 2), dtype=L.float64).shape) == (2, 2)
        x = L.ones(2, dtype=L.int32)
        assert tuple(x.new_zeros(size=(3,)).shape) == (3,) and x.new_ones(size=(1,)).dtype == x.dtype
        assert tuple(x.new_empty(size=(2, 1)).shape) == (2, 1)
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        tg.zeros(2, size=(3,))


# -- gradcheck without an input that requires grad ------------------------------------------
def test_gradcheck_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        tg.autograd.gradcheck(lambda t: t * 2, (tg.ones(2, dtype=tg.float64),))
    assert tg.autograd.gradcheck(lambda t: t * t,
                                 (tg.ones(2, dtype=tg.float64, requires_grad=True),))


# -- numpy numbers keep their dtype -----------------------------------------------------------
@needs_torch
@pytest.mark.parametrize('value', [np.float64(2.5), np.float32(1.5), np.int32(3), np.int64(-2),
                                   np.uint8(7), np.bool_(True), [np.float64(1.0), np.float64(2)],
                                   [[np.int32(1)], [np.int32(2)]], [1.5, 2.0], [1, 2]],
                         ids=lambda v: type(v).__name__ if not isinstance(v, list) else
                         'list-' + type(np.asarray(v).flat[0]).__name__)
def test_tensor_of_numpy_numbers(value):
    want, got = torch.tensor(value), tg.tensor(value)
    assert str(got.dtype).split('.')[-1] == str(want.dtype).split('.')[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert str(tg.as_tensor(value).dtype).split('.')[-1] == str(want.dtype).split('.')[-1]


# -- DataLoader(batch_size=None) converts each sample as PyTorch's default_convert ------------
@needs_torch
def test_default_convert_and_unbatched_loader():
    import collections
    P = collections.namedtuple('P', 'x y')
    samples = [(np.array([1.0, 2.0]), 3), {'a': np.int32(4), 'b': 'text'},
               P(np.zeros(2, np.float32), [np.arange(2)]), np.float64(2.5), 'plain']

    def norm(o):
        if hasattr(o, 'numpy'):
            return ('T', str(o.dtype).split('.')[-1], o.numpy().tolist())
        if isinstance(o, dict):
            return {k: norm(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return (type(o).__name__, [norm(v) for v in o])
        return o
    for s in samples:
        assert norm(tg.utils.data.default_convert(s)) == \
            norm(torch.utils.data.default_convert(s))
    got = [norm(b) for b in tg.utils.data.DataLoader(samples[:1] * 2, batch_size=None)]
    want = [norm(b) for b in torch.utils.data.DataLoader(samples[:1] * 2, batch_size=None)]
    assert got == want


# -- clamp with tensor bounds: ties keep the input's gradient -----------------------------------
@needs_torch
def test_clamp_tensor_bounds_ties_and_nan():
    x = np.array([0.0, 1.0, 2.0, 3.0, -1.0])
    lo = np.array([0.0, 0.5, 2.0, 3.5, -2.0])
    hi = np.array([1.0, 1.0, 2.0, 4.0, 0.0])
    compare_with_torch(lambda L, a, b, c: L.clamp(a, b, c), x, lo, hi, grad=(0, 1, 2))
    compare_with_torch(lambda L, a, b: L.clamp(a, min=b), x, lo, grad=(0, 1))
    compare_with_torch(lambda L, a, b: L.clamp(a, max=b), x, hi, grad=(0, 1))
    compare_with_torch(lambda L, a, b: a.clamp_min(b), x, x, grad=(0, 1))
    compare_with_torch(lambda L, a, b: a.clip(b, b), x, x, grad=(0, 1))
    compare_with_torch(lambda L, a, b, c: L.clamp(a, b, c), x, hi, lo)   # min > max: max
    compare_with_torch(lambda L, a, b: L.clamp(a, min=b),
                       np.array([1.0, np.nan, 5.0]), np.array([2.0, 0.0, np.nan]))
    compare_with_torch(lambda L, a, b: L.clamp(a, min=b), I64[0], Z64)


# -- small API gaps ---------------------------------------------------------------------------
@needs_torch
def test_take_along_dim_without_dim_is_flat():
    idx = np.array([[0, 5], [11, 2]])
    compare_with_torch(lambda L, x, i: L.take_along_dim(x, i), F64, idx, grad=(0,))


@needs_torch
def test_histogram_default_bins_and_layout():
    for L in (torch, tg):
        h = L.histogram(L.arange(5.0))
        assert tuple(h.hist.shape) == (100,) and tuple(h.bin_edges.shape) == (101,)
        assert L.ones(2).layout == L.strided and L.ones(2).layout is L.strided
        assert L.zeros_like(L.ones(2), layout=L.strided).shape == (2,)
    assert repr(tg.strided) == 'tensorgraph.strided'


@needs_torch
def test_igamma_broadcast_gradient_and_dtype():
    a = np.array([[0.5, 1.0, 2.0, 3.0]])
    for x in (Z64, np.array([[0.3], [1.2], [2.5]])):
        compare_with_torch(lambda L, p, q: L.special.gammainc(p, q), a, x, grad=(1,))
        compare_with_torch(lambda L, p, q: L.special.gammaincc(p, q), a, x, grad=(1,))
    _same_dtype_values(lambda L, p, q: L.special.gammainc(p, q), a.astype(np.float32), Z64)


# -- more distributions: Poisson, Geometric, Binomial, LogNormal, HalfNormal ----------------------
@needs_torch
def test_count_and_transformed_distributions():
    r, p, mu, s = (R.randn(4) for _ in range(4))

    def f(L, r, p, mu, s):
        D = L.distributions
        k = L.tensor([0.0, 1, 2, 5], dtype=r.dtype)
        po, ge = D.Poisson(r.abs() + 0.5), D.Geometric(probs=p.sigmoid())
        bi = D.Binomial(L.tensor([5.0, 6, 7, 8], dtype=p.dtype), logits=p)
        ln, hn = D.LogNormal(mu, s.abs() + 0.2), D.HalfNormal(s.abs() + 0.2)
        parts = [po.log_prob(k), po.mean, po.variance, po.mode, ge.log_prob(k), ge.mean,
                 ge.variance, ge.entropy(), D.Geometric(logits=p).log_prob(k),
                 D.Binomial(10, probs=p.sigmoid()).log_prob(k), bi.log_prob(k), bi.mean,
                 bi.variance, bi.mode, ln.log_prob(r.abs() + 0.1), ln.mean, ln.variance,
                 ln.entropy(), ln.cdf(r.abs() + 0.1), ln.icdf(p.sigmoid()), ln.mode,
                 hn.log_prob(r.abs()), hn.mean, hn.variance, hn.entropy(), hn.cdf(r.abs()),
                 hn.icdf(p.sigmoid()), ln.expand((3, 4)).log_prob(r.abs() + 0.1).sum(0),
                 D.kl_divergence(po, D.Poisson(s.abs() + 0.5)),
                 D.kl_divergence(ge, D.Geometric(logits=s)),
                 D.kl_divergence(D.Binomial(5, p.sigmoid()), D.Binomial(5, s.sigmoid())),
                 D.kl_divergence(ln, D.LogNormal(s, r.abs() + 0.3)),
                 D.kl_divergence(hn, D.HalfNormal(r.abs() + 0.2))]
        return L.stack(parts)
    compare_with_torch(f, r, p, mu, s, grad=(0, 1, 2, 3))
    for L in (torch, tg):
        D = L.distributions
        assert tuple(D.Poisson(L.ones(3)).sample((2,)).shape) == (2, 3)
        assert tuple(D.Binomial(4, L.full((2,), 0.5)).sample().shape) == (2,)
        assert tuple(D.LogNormal(0.0, 1.0).rsample((5,)).shape) == (5,)
        assert tuple(D.HalfNormal(L.ones(2)).expand((3, 2)).batch_shape) == (3, 2)
        assert (D.HalfNormal(L.ones(2)).sample((50,)) >= 0).all()
        assert (D.Geometric(L.full((3,), 0.3)).sample((20,)) >= 0).all()
        with pytest.raises(ValueError):
            D.Poisson(-1.0)
        with pytest.raises(ValueError):
            D.Geometric(probs=0.5, logits=0.0)
        with pytest.raises(NotImplementedError):
            D.kl_divergence(D.Binomial(3, L.tensor(0.5)), D.Binomial(5, L.tensor(0.5)))
    for L in (torch, tg):
        hn = L.distributions.HalfNormal(L.tensor([1.0]), validate_args=False)
        assert hn.log_prob(L.tensor([-1.0])).item() == -float('inf')
        with pytest.raises(ValueError, match="within the support"):
            L.distributions.HalfNormal(L.tensor([1.0])).log_prob(L.tensor([-1.0]))


# -- grad-mode decorators on generator functions ------------------------------------------------
@needs_torch
def test_no_grad_decorates_a_generator():
    got = []
    for L in (torch, tg):
        x = L.ones(2, requires_grad=True)

        @L.no_grad()
        def gen(t):
            r = yield t * 2
            yield t * 3, r, L.is_grad_enabled()
            return 7

        @L.enable_grad()
        def on(t):
            yield t * 2

        g = gen(x)
        a = next(g)
        b = g.send(5)
        assert L.is_grad_enabled()   # between steps the caller's mode holds
        with pytest.raises(StopIteration) as stop:
            next(g)
        with L.no_grad():
            c = next(on(x))
        got.append((a.requires_grad, b[0].requires_grad, b[1], b[2], stop.value.value,
                    c.requires_grad, gen.__name__))
    assert got[1] == got[0] == (False, False, 5, False, 7, True, 'gen')


# -- Function context: mark_non_differentiable, mark_dirty, set_materialize_grads ----------------
@needs_torch
def test_function_ctx_marks():
    got = []
    for L in (torch, tg):
        class Idx(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                i = a.argmax(-1).to(a.dtype)
                ctx.mark_non_differentiable(i)
                ctx.set_materialize_grads(False)
                return i

            @staticmethod
            def backward(ctx, g):
                return None

        class Scale(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.mark_non_differentiable()   # nothing marked: differentiable
                ctx.set_materialize_grads(True)
                return a * 3

            @staticmethod
            def backward(ctx, g):
                return g * 3

        x = L.tensor([[1.0, 3.0, 2.0]], requires_grad=True)
        i = Idx.apply(x)
        y = Scale.apply(x)
        y.sum().backward()
        got.append((i.requires_grad, i.grad_fn is None, i.tolist(), y.requires_grad,
                    x.grad.tolist()))
        if SANITIZED and L is torch:  # torch's C++ errors abort a process under ASan
            continue
        with pytest.raises(RuntimeError, match="only accepts variable arguments, but got float"):
            class Bad(L.autograd.Function):
                @staticmethod
                def forward(ctx, a):
                    ctx.mark_non_differentiable(1.0)
                    return a * 1

                @staticmethod
                def backward(ctx, g):
                    return g
            Bad.apply(x)
    assert got[1] == got[0]


@needs_torch
def test_sign_of_bools_is_bools():
    compare_with_torch(lambda L, m: L.sign(m), B)
    compare_with_torch(lambda L, m: m.sign(), B)
    compare_with_torch(lambda L, m: L.sgn(m), B)


@needs_torch
def test_to_copy_true_always_copies():
    for L in (torch, tg):
        x = L.ones(2, dtype=L.float64, requires_grad=True)
        y = x.to(L.float64, copy=True)
        assert y is not x and y.requires_grad and x.to(L.float64) is x
        assert x.to('cpu', copy=True) is not x and x.to(dtype=L.float64, copy=False) is x
        y.sum().backward()
        assert x.grad.tolist() == [1.0, 1.0]


@needs_torch
def test_type_with_a_legacy_type():
    for L in (torch, tg):
        x = L.ones(2, dtype=L.float64)
        assert x.type(L.FloatTensor).dtype == L.float32
        assert x.type(L.LongTensor).tolist() == [1, 1]
        assert x.type(L.DoubleTensor) is x


@needs_torch
def test_second_backward_through_nodes_without_saved_tensors():
    got = []
    for L in (torch, tg):
        x = L.ones(2, dtype=L.float64, requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()                      # add and sum saved nothing: PyTorch reruns them
        v = x.view(2, 1).sum()
        v.backward()
        v.backward()
        got.append(x.grad.tolist())
    assert got[1] == got[0] == [4.0, 4.0]
    x = tg.ones(2, requires_grad=True)
    for make in (lambda: (x * x).sum(), lambda: x.exp().sum(), lambda: (x * 2).sum()):
        w = make()
        w.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            w.backward()


def test_logsumexp_of_bool_is_float():
    x = tg.tensor([[True], [False], [True]])
    np.testing.assert_allclose(tg.logsumexp(x, 0).numpy(), [np.log(2 * np.e + 1)], rtol=1e-6)
    np.testing.assert_array_equal(tg.logsumexp(x, 1).numpy(), [1, 0, 1])
    assert tg.logsumexp(x, 1).dtype == tg.float32


def test_elu_in_place_takes_scales():
    """torch.nn.functional.elu_(input, alpha, scale, input_scale)"""
    x = tg.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = x.clone()
    tg.nn.functional.elu_(y, 2, 1.5, 0.5)
    np.testing.assert_allclose(y.detach().numpy(),
                               [1.5 * 2 * np.expm1(-0.5), 0.75, 3.0], rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.5 * 2 * 0.5 * np.exp(-0.5), 1.5, 1.5],
                               rtol=1e-6)


def test_loss_dtypes_with_mixed_float_operands():
    """PyTorch 1.13's result dtypes: huber and soft margin take input's,
    BCE with logits target's, the others promote"""
    F = tg.nn.functional
    f32, f64 = tg.tensor([0.3, -0.2]), tg.tensor([0.5, 1.0], dtype=tg.float64)
    for a, b in ((f32, f64), (f64, f32)):
        assert F.huber_loss(a, b).dtype == a.dtype
        assert F.soft_margin_loss(a, b).dtype == a.dtype
        assert F.binary_cross_entropy_with_logits(a, b).dtype == b.dtype
        assert F.mse_loss(a, b).dtype == tg.float64
    x = f32.clone().requires_grad_()
    F.binary_cross_entropy_with_logits(x, f64).backward()
    assert x.grad.dtype == tg.float32
    np.testing.assert_allclose(F.huber_loss(f32, f64).item(),
                               np.mean([0.5 * 0.2 ** 2, 1.2 - 0.5]), rtol=1e-6)


def test_diag_of_an_empty_vector_keeps_its_dtype():
    for dt in (tg.bool, tg.int32, tg.uint8, tg.float32):
        assert tg.diag(tg.zeros(0, dtype=dt), 1).dtype == dt
        assert tg.diagflat(tg.zeros(0, dtype=dt)).dtype == dt


def test_softplus_with_beta_zero():
    """log(2) / 0 everywhere and PyTorch's slope sigmoid(0) = 0.5 (was NaN)"""
    x = tg.tensor([-1.0, 0.0, 2.0], dtype=tg.float64, requires_grad=True)
    y = tg.nn.functional.softplus(x, beta=0)
    assert np.isposinf(y.detach().numpy()).all()
    assert type(y.grad_fn).__name__ == 'SoftplusBackward0'
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.5, 0.5])


def test_average_pooling_of_int64_truncates():
    """PyTorch's integer average pooling (int64 only): integer division"""
    F = tg.nn.functional
    x = tg.arange(-6, 6).reshape(1, 2, 6)
    y = F.avg_pool1d(x, 2, ceil_mode=True, padding=1, count_include_pad=False)
    assert y.dtype == tg.int64 and y.tolist() == [[[-6, -4, -2, -1], [0, 1, 3, 5]]]
    z = F.avg_pool2d(tg.arange(-8, 8).reshape(1, 1, 4, 4), 2, divisor_override=3)
    assert z.tolist() == [[[[-7, -4], [3, 6]]]]
    assert F.avg_pool3d(tg.arange(-8, 8).reshape(1, 1, 2, 2, 4), 2).tolist() == [[[[[-1, 0]]]]]
    with pytest.raises(RuntimeError):
        F.avg_pool1d(x.int(), 2)


def test_histogram_of_no_data_spans_zero_to_one():
    h, edges = tg.histogram(tg.zeros(0), bins=2)
    np.testing.assert_array_equal(edges.numpy(), [0, 0.5, 1])
    np.testing.assert_array_equal(h.numpy(), [0, 0])


def test_multilabel_margin_loss_of_a_0d_input():
    """one sample of one class, as PyTorch's"""
    F = tg.nn.functional
    x = tg.tensor(0.5, requires_grad=True)
    for t in (tg.tensor(0), tg.tensor(-1)):
        y = F.multilabel_margin_loss(x, t)
        assert y.shape == () and y.item() == 0
        assert type(y.grad_fn).__name__ == 'MultilabelMarginLossBackward0'
    with pytest.raises(Exception):
        F.multilabel_margin_loss(x, tg.tensor(1))


def test_multi_margin_loss_names_its_node_and_keeps_a_1d_sample_0d():
    F = tg.nn.functional
    x = tg.tensor([0.1, 0.5, 0.3], requires_grad=True)
    for reduction in ('none', 'mean', 'sum'):
        y = F.multi_margin_loss(x, tg.tensor(1), reduction=reduction)
        assert y.shape == () and abs(y.item() - 0.4 * 3.5 / 3) < 1e-6
        assert type(y.grad_fn).__name__ == 'MultiMarginLossBackward0'


def test_tensor_of_tensors_reads_them_as_pytorch_does():
    """one-element tensors inside nested data are numbers (detached, so
    also when they require grad), their dtypes promoted with the other
    leaves'; a tensor of more elements is refused"""
    x = tg.tensor(1.5, requires_grad=True)
    for data, dtype, values in (([x, x], tg.float32, [1.5, 1.5]),
                                ([[x]], tg.float32, [[1.5]]),
                                ([tg.tensor(1.5, dtype=tg.float64)], tg.float64, [1.5]),
                                ([tg.tensor(2), 1.5], tg.float32, [2, 1.5]),
                                ([tg.tensor([2])], tg.int64, [2]),
                                ([tg.tensor(3), True], tg.int64, [3, 1]),
                                ((tg.tensor(1, dtype=tg.uint8), 300), tg.int64, [1, 300])):
        for make in (tg.tensor, tg.as_tensor):
            t = make(data)
            assert t.dtype == dtype and not t.requires_grad
            np.testing.assert_array_equal(t.numpy(), values)
    assert tg.tensor([tg.tensor(2)], dtype=tg.float64).dtype == tg.float64
    with pytest.raises(ValueError, match='only one element tensors'):
        tg.tensor([tg.ones(2)])


def test_count_nonzero_method_takes_dims_as_arguments():
    t = tg.tensor([[1., 0., 2.], [0., 0., 3.]])
    assert t.count_nonzero(1, 0).item() == 3 and t.count_nonzero().item() == 3
    np.testing.assert_array_equal(t.count_nonzero(1).numpy(), [2, 1])
    np.testing.assert_array_equal(t.count_nonzero(dim=0).numpy(), [1, 0, 2])
    assert t.count_nonzero((0, 1)).item() == 3
    np.testing.assert_array_equal(t.count_nonzero(axis=1).numpy(), [2, 1])
    with pytest.raises(TypeError):
        t.count_nonzero(dims=0)


def test_zero_norm_through_other_ops_leaves_no_gradient():
    """the 0-norm's backward gives no gradient (PyTorch: None), also to a
    leaf that reaches it through other ops (pairwise_distance's
    difference, norm_except_dim's view)"""
    x = tg.tensor(1.5, requires_grad=True)
    tg.nn.functional.pairwise_distance(x, tg.tensor(0.5), 0).sum().backward()
    assert x.grad is None
    v = tg.tensor([1.5, -2.0], requires_grad=True)
    tg.norm_except_dim(v, 0, 0).sum().backward()
    assert v.grad is None


def test_trapezoid_over_no_samples_keeps_the_dtype():
    for dt in (tg.int64, tg.bool, tg.float32):
        r = tg.trapz(tg.zeros(2, 0, dtype=dt))
        assert r.dtype == dt and r.shape == (2,) and not r.numpy().any()
    assert tg.trapz(tg.zeros(0, 3, dtype=tg.int32)).dtype == tg.float32
