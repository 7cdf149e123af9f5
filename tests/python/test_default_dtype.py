"""set_default_dtype(float64), as PyTorch users call it before gradient
checks: every path that makes a float without being told which (Python
floats, factories, new modules' parameters, integers in true division and
math functions, fractional scalars) takes the default; tensors given a
dtype keep theirs; only float dtypes are accepted; tg.function traces again
under a new default."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import torch, needs_torch, SANITIZED


@pytest.fixture
def float64_default():
    tg.set_default_dtype(tg.float64)
    try:
        yield
    finally:
        tg.set_default_dtype(tg.float32)


def _made_dtypes(lib):
    """what each creation path gives under the current default"""
    nn = lib.nn
    return {
        'tensor': lib.tensor([1.5]), 'scalar': lib.tensor(2.0), 'mixed': lib.tensor([1, 2.5]),
        'as_tensor': lib.as_tensor([1.5]), 'zeros': lib.zeros(2), 'ones': lib.ones(2),
        'empty': lib.empty(2), 'full': lib.full((2,), 1.5), 'rand': lib.rand(2),
        'randn': lib.randn(2), 'normal': lib.normal(0., 1., (2,)),
        'arange': lib.arange(0, 1, 0.5), 'arange_int': lib.arange(3),
        'linspace': lib.linspace(0, 1, 3), 'logspace': lib.logspace(0, 1, 3),
        'eye': lib.eye(2), 'hann': lib.hann_window(4), 'scalar_tensor': lib.scalar_tensor(1),
        'Tensor': lib.Tensor(2, 3), 'Tensor_data': lib.Tensor([1, 2]),
        'int_div': lib.arange(3) / 2, 'int_div_int': lib.arange(3) / lib.arange(1, 4),
        'bool_div': lib.tensor([True]) / lib.tensor([True]),
        'int_sqrt': lib.arange(3).sqrt(), 'int_sigmoid': lib.sigmoid(lib.arange(3)),
        'int_atan2': lib.atan2(lib.arange(3), lib.arange(3)),
        'int_angle': lib.angle(lib.arange(3)), 'int_expit': lib.special.expit(lib.arange(3)),
        'int_plus_float': lib.arange(3) + 1.5, 'int_times_float': lib.arange(3) * 0.5,
        'int_pow_float': lib.arange(3) ** 0.5,
        'int_plus_f32_0d': lib.arange(3) + lib.tensor(1.5, dtype=lib.float32),
        'f32_plus_float': lib.ones(2, dtype=lib.float32) + 1.5,
        'f32_kept': lib.zeros(2, dtype=lib.float32), 'float()': lib.zeros(2).float(),
        'linear': nn.Linear(2, 3).weight, 'conv': nn.Conv2d(1, 2, 3).weight,
        'lstm': nn.LSTM(2, 3).weight_ih_l0, 'gru_cell': nn.GRUCell(2, 3).weight_hh,
        'batch_norm': nn.BatchNorm1d(3).running_mean, 'layer_norm': nn.LayerNorm(3).weight,
        'attention': nn.MultiheadAttention(4, 2).in_proj_weight, 'prelu': nn.PReLU().weight,
        'embedding': nn.Embedding(3, 2).weight, 'bilinear': nn.Bilinear(2, 2, 3).weight,
        'parameter': nn.Parameter(),
        'causal_mask': nn.Transformer.generate_square_subsequent_mask(2),
    }


EXPECTED_FLOAT32 = {'arange_int', 'int_plus_f32_0d', 'f32_plus_float', 'f32_kept', 'float()'}


def test_every_creation_path_takes_the_default(float64_default):
    for name, t in _made_dtypes(tg).items():
        want = tg.int64 if name == 'arange_int' else \
            tg.float32 if name in EXPECTED_FLOAT32 else tg.float64
        assert t.dtype == want, name
    assert tg.get_default_dtype() == tg.float64
    assert tg.finfo().bits == 64


def test_float32_again_after_resetting():
    tg.set_default_dtype(tg.float64)
    tg.set_default_dtype(tg.float32)
    assert tg.get_default_dtype() == tg.float32
    assert tg.tensor([1.5]).dtype == tg.float32 and (tg.arange(3) / 2).dtype == tg.float32
    assert tg.nn.Linear(2, 2).weight.dtype == tg.float32


@needs_torch
def test_dtypes_match_pytorch():
    got = {}
    for lib in (torch, tg):
        lib.set_default_dtype(lib.float64)
        try:
            got[lib] = {k: str(v.dtype).split('.')[-1] for k, v in _made_dtypes(lib).items()}
        finally:
            lib.set_default_dtype(lib.float32)
    assert got[tg] == got[torch]


def test_printing_names_the_dtype_that_is_not_the_default(float64_default):
    assert 'dtype' not in repr(tg.tensor([1.5]))
    assert 'dtype=float32' in repr(tg.tensor([1.5], dtype=tg.float32))


@pytest.mark.parametrize('bad', [tg.int64, tg.int32, tg.bool, tg.uint8])
def test_only_float_dtypes(bad):
    with pytest.raises(TypeError, match='only floating-point types'):
        tg.set_default_dtype(bad)
    assert tg.get_default_dtype() == tg.float32


def test_not_a_dtype():
    with pytest.raises(TypeError, match='dtype'):
        tg.set_default_dtype('float64')
    assert tg.get_default_dtype() == tg.float32


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="PyTorch's refusal is a C++ exception (aborts under ASan)")
def test_pytorch_refuses_the_same():
    with pytest.raises(TypeError, match='only floating-point types'):
        torch.set_default_dtype(torch.int64)


@needs_torch
def test_float64_training_step_matches_pytorch(float64_default):
    """a model built under the float64 default trains as PyTorch's does, to
    float64 rounding"""
    torch.set_default_dtype(torch.float64)
    try:
        ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
        x = torch.randn(5, 4)
        y = torch.randn(5, 2)
    finally:
        torch.set_default_dtype(torch.float32)
    model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.Tanh(), tg.nn.Linear(8, 2))
    model.load_state_dict({k: tg.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    opts = (torch.optim.SGD(ref.parameters(), lr=0.1), tg.optim.SGD(model.parameters(), lr=0.1))
    for _ in range(3):
        for m, opt, xs, ys, lib in ((ref, opts[0], x, y, torch),
                                    (model, opts[1], tg.tensor(x.numpy()), tg.tensor(y.numpy()),
                                     tg)):
            opt.zero_grad()
            loss = ((m(xs) - ys) ** 2).mean() * 0.5 + 1e-3
            loss.backward()
            opt.step()
    for (k, a), b in zip(ref.state_dict().items(), model.state_dict().values()):
        assert b.dtype == tg.float64, k
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12, atol=1e-14)


def test_gradcheck_in_float64_by_default(float64_default):
    x = tg.randn(3, 4, requires_grad=True)
    w = tg.randn(4, 2, requires_grad=True)
    assert tg.autograd.gradcheck(lambda a, b: (a @ b).tanh() * 0.5, (x, w))


def test_function_traces_again_under_a_new_default():
    calls = []

    @tg.function
    def f(x):
        calls.append(1)
        return x.sqrt() + 0.5

    ints = tg.arange(4)
    assert f(ints).dtype == tg.float32
    tg.set_default_dtype(tg.float64)
    try:
        out = f(ints)
    finally:
        tg.set_default_dtype(tg.float32)
    assert out.dtype == tg.float64 and len(calls) == 2
    np.testing.assert_allclose(out.numpy(), np.sqrt(np.arange(4)) + 0.5, rtol=1e-15)
    assert f(ints).dtype == tg.float32 and len(calls) == 2  # the first trace again


def test_set_default_tensor_type_the_legacy_form():
    try:
        tg.set_default_tensor_type(tg.DoubleTensor)
        assert tg.get_default_dtype() == tg.float64 and tg.Tensor(2).dtype == tg.float64
        tg.set_default_tensor_type('torch.FloatTensor')
        assert tg.get_default_dtype() == tg.float32
        tg.set_default_tensor_type('tensorgraph.DoubleTensor')
        assert tg.get_default_dtype() == tg.float64
    finally:
        tg.set_default_dtype(tg.float32)
    for bad in (tg.LongTensor, 'torch.LongTensor', 3):
        with pytest.raises(TypeError, match='only floating-point types'):
            tg.set_default_tensor_type(bad)
    with pytest.raises(TypeError, match='invalid type'):
        tg.set_default_tensor_type('foo')
    assert tg.get_default_dtype() == tg.float32
