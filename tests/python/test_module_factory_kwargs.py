"""PyTorch 1.13's factory keywords of module constructors (device=, dtype=)
and the constructors' signatures against torch.nn's.

Every module class whose PyTorch constructor takes device/dtype takes them
here (nn/_factory_kwargs.py: device through tensorgraph._factory's
check_device, the factories' checker). torch is only inspected, or built
on the CPU: never driven into an error (a torch exception aborts the
interpreter under ASan)."""
import inspect

import pytest

import tensorgraph as tg
from tensorgraph import nn

from conftest import torch, needs_torch

# constructor arguments (besides device/dtype) of every class taking them;
# RNN/LSTM/GRU are here too (PyTorch's take them through **kwargs)
CTOR_ARGS = {
    'AdaptiveLogSoftmaxWithLoss': (16, 10, [4, 8]),
    'BatchNorm1d': (3,), 'BatchNorm2d': (3,), 'BatchNorm3d': (3,),
    'Bilinear': (3, 4, 2),
    'Conv1d': (2, 4, 3), 'Conv2d': (2, 4, 3), 'Conv3d': (2, 4, 3),
    'ConvTranspose1d': (2, 4, 3), 'ConvTranspose2d': (2, 4, 3), 'ConvTranspose3d': (2, 4, 3),
    'Embedding': (10, 3), 'EmbeddingBag': (10, 3),
    'GroupNorm': (2, 4),
    'InstanceNorm1d': (3,), 'InstanceNorm2d': (3,), 'InstanceNorm3d': (3,),
    'LayerNorm': (4,),
    'LazyBatchNorm1d': (), 'LazyBatchNorm2d': (), 'LazyBatchNorm3d': (),
    'LazyConv1d': (4, 3), 'LazyConv2d': (4, 3), 'LazyConv3d': (4, 3),
    'LazyConvTranspose1d': (4, 3), 'LazyConvTranspose2d': (4, 3), 'LazyConvTranspose3d': (4, 3),
    'LazyInstanceNorm1d': (), 'LazyInstanceNorm2d': (), 'LazyInstanceNorm3d': (),
    'LazyLinear': (2,),
    'Linear': (3, 2),
    'MultiheadAttention': (4, 2),
    'PReLU': (),
    'RNNBase': ('LSTM', 3, 4),
    'RNN': (3, 4), 'LSTM': (3, 4), 'GRU': (3, 4),
    'RNNCell': (3, 4), 'LSTMCell': (3, 4), 'GRUCell': (3, 4),
    'RNNCellBase': (3, 4, True, 2),
    'SyncBatchNorm': (3,),
    'Transformer': (), 'TransformerDecoderLayer': (4, 2), 'TransformerEncoderLayer': (4, 2),
}
# small Transformers (the defaults build 44M parameters)
CTOR_KWARGS = {'Transformer': dict(d_model=4, nhead=2, num_encoder_layers=1,
                                   num_decoder_layers=1, dim_feedforward=8),
               'TransformerDecoderLayer': dict(dim_feedforward=8),
               'TransformerEncoderLayer': dict(dim_feedforward=8),
               'InstanceNorm1d': dict(affine=True), 'InstanceNorm2d': dict(affine=True),
               'InstanceNorm3d': dict(affine=True)}
# an input whose channels a Lazy module reads (float32: the parameters
# must still take the dtype given)
LAZY_INPUT = {'LazyBatchNorm1d': (2, 3), 'LazyBatchNorm2d': (2, 3, 4, 4),
              'LazyBatchNorm3d': (2, 3, 4, 4, 4), 'LazyConv1d': (1, 2, 5),
              'LazyConv2d': (1, 2, 5, 5), 'LazyConv3d': (1, 2, 5, 5, 5),
              'LazyConvTranspose1d': (1, 2, 5), 'LazyConvTranspose2d': (1, 2, 5, 5),
              'LazyConvTranspose3d': (1, 2, 5, 5, 5), 'LazyInstanceNorm1d': (1, 3, 5),
              'LazyInstanceNorm2d': (1, 3, 5, 5), 'LazyInstanceNorm3d': (1, 3, 5, 5, 5),
              'LazyLinear': (2, 3)}
NAMES = sorted(CTOR_ARGS)


def _build(name, **kw):
    return getattr(nn, name)(*CTOR_ARGS[name], **CTOR_KWARGS.get(name, {}), **kw)


def _torch_factory_classes():
    return sorted(n for n in dir(torch.nn) if isinstance(getattr(torch.nn, n), type)
                  and issubclass(getattr(torch.nn, n), torch.nn.Module)
                  and {'device', 'dtype'} & set(
                      inspect.signature(getattr(torch.nn, n).__init__).parameters))


@needs_torch
def test_table_covers_every_torch_class_with_factory_kwargs():
    missing = set(_torch_factory_classes()) - set(CTOR_ARGS)
    assert not missing, missing


@pytest.mark.parametrize('name', NAMES)
def test_device_cpu_and_dtype(name):
    for device in (None, 'cpu', 'cpu:0', tg.device('cpu')):
        _build(name, device=device)
    m = _build(name, device='cpu', dtype=tg.float64)
    if name in LAZY_INPUT:
        assert not list(m.parameters())
        m.initialize_parameters(tg.zeros(*LAZY_INPUT[name]))
    params = list(m.parameters())
    assert params, name
    for p in params:
        assert p.dtype == tg.float64, (name, p.dtype)
    for b in m.buffers():
        if b.dtype.is_floating_point:
            assert b.dtype == tg.float64, (name, b.dtype)


@pytest.mark.parametrize('name', NAMES)
def test_device_cuda_raises_as_a_cpu_only_pytorch(name):
    with pytest.raises(AssertionError, match='CUDA'):
        _build(name, device='cuda')
    with pytest.raises(AssertionError, match='CUDA'):
        _build(name, device='cuda:0', dtype=tg.float64)


@pytest.mark.parametrize('name', ['Linear', 'Conv2d', 'LayerNorm', 'Transformer', 'LSTM',
                                  'LazyConv2d'])
def test_unknown_device_type_raises_runtime_error(name):
    with pytest.raises(RuntimeError):
        _build(name, device='tpu')


def test_device_of_an_input_and_forward():
    x = tg.randn(5, 3)
    m = nn.Linear(3, 2, device=x.device)
    assert m(x).shape == (5, 2)
    lazy = nn.LazyLinear(2, device='cpu', dtype=tg.float64)
    assert lazy(x.double()).dtype == tg.float64
    assert type(lazy) is nn.Linear


def test_lazy_modules_keep_the_dtype_given():
    m = nn.LazyConv1d(4, 3, dtype=tg.float64)
    out = m(tg.randn(1, 2, 6, dtype=tg.float64))
    assert type(m) is nn.Conv1d and m.weight.dtype == tg.float64 and out.dtype == tg.float64
    n = nn.LazyBatchNorm1d(dtype=tg.float64)
    n(tg.randn(4, 3, dtype=tg.float64))
    assert n.running_mean.dtype == tg.float64 and n.weight.shape == (3,)


def test_skip_init_takes_device():
    m = nn.utils.skip_init(nn.Linear, 3, 2, device='cpu')
    assert m.weight.shape == (2, 3)
    with pytest.raises(AssertionError, match='CUDA'):
        nn.utils.skip_init(nn.Linear, 3, 2, device='cuda')
    with pytest.raises(RuntimeError, match="'device'"):
        nn.utils.skip_init(nn.ReLU)


@needs_torch
@pytest.mark.parametrize('name', [n for n in NAMES if n not in LAZY_INPUT])
def test_state_dict_shapes_as_torch_in_float64(name):
    """built on the CPU in float64 (never an error path for torch): the
    same entries, shapes and floating dtypes as PyTorch's"""
    ours = _build(name, device='cpu', dtype=tg.float64).state_dict()
    theirs = getattr(torch.nn, name)(*CTOR_ARGS[name], **CTOR_KWARGS.get(name, {}),
                                     device='cpu', dtype=torch.float64).state_dict()
    assert list(ours) == list(theirs)
    for k in ours:
        assert tuple(ours[k].shape) == tuple(theirs[k].shape), k
        assert ours[k].dtype.is_floating_point == theirs[k].dtype.is_floating_point, k


# constructor parameters that deliberately differ from torch.nn's: none.
# (Function-valued defaults, the Transformers' activation=F.relu, are
# compared by name: ours is tensorgraph's relu.)
SIGNATURE_EXCEPTIONS = {}


def _params(cls):
    out = []
    for p in inspect.signature(cls.__init__).parameters.values():
        d = p.default
        if callable(d) and not isinstance(d, type):
            d = ('function', d.__name__)
        out.append((p.name, p.kind, d))
    return out


@needs_torch
def test_constructor_signatures_match_torch():
    diffs = {}
    compared = 0
    for name in dir(torch.nn):
        c = getattr(torch.nn, name)
        if not (isinstance(c, type) and issubclass(c, torch.nn.Module)):
            continue
        ours = getattr(nn, name, None)
        if ours is None or name in SIGNATURE_EXCEPTIONS:
            continue
        compared += 1
        if _params(c) != _params(ours):
            diffs[name] = (str(inspect.signature(c.__init__)),
                           str(inspect.signature(ours.__init__)))
    assert compared > 150
    assert not diffs, diffs


def test_generated_constructors_bind_as_python():
    assert nn.Threshold(0.1, 20).value == 20
    assert nn.LeakyReLU(0.2, True).inplace is True
    assert nn.Softmax(dim=1).dim == 1
    with pytest.raises(TypeError, match='Threshold'):
        nn.Threshold(0.1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'slope'"):
        nn.LeakyReLU(slope=0.1)
    with pytest.raises(TypeError, match='too many positional'):
        nn.ReLU(True, 1)
    with pytest.raises(TypeError):
        nn.PixelShuffle()
    with pytest.warns(UserWarning, match='min_value is deprecated'):
        assert nn.Hardtanh(min_value=-2.0).min_val == -2.0
    with pytest.raises(TypeError):
        nn.AvgPool1d(2, divisor_override=1)  # PyTorch's AvgPool1d has none
    e = nn.Embedding.from_pretrained(tg.ones(3, 2))
    assert not e.weight.requires_grad
    assert nn.Embedding.from_pretrained(tg.ones(3, 2), freeze=False).weight.requires_grad
    rnn = nn.RNN(3, 4, nonlinearity='relu')
    assert rnn.nonlinearity == 'relu' and rnn.mode == 'RNN_RELU'
