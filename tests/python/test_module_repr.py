"""Every nn module tensorgraph and PyTorch both have prints as PyTorch's,
with the constructor's defaults and with other arguments (ARGS below: per
module, the argument sets to try). Without torch the expected strings of
a few modules are checked literally."""
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

E = {'embed_dim': 8, 'num_heads': 2}
ARGS = {
    'AdaptiveLogSoftmaxWithLoss': [(16, 20, [5, 10]), (16, 20, (5, 10, 15), 2.0, True)],
    'AdaptiveAvgPool1d': [(3,), ((None,),)],
    'AdaptiveAvgPool2d': [((2, 3),), (4,), ((None, 2),)],
    'AdaptiveAvgPool3d': [(2,), ((None, 2, 3),)],
    'AdaptiveMaxPool1d': [(3,), (3, True)],
    'AdaptiveMaxPool3d': [(2,), ((3, None, 4),)],
    'FractionalMaxPool2d': [(2, 3), (3, None, 0.5)],
    'FractionalMaxPool3d': [(2, 3), ((2, 3, 2), None, (0.5, 0.5, 0.7))],
    'AlphaDropout': [(), (0.3, True)],
    'BatchNorm3d': [(3,), (3, 1e-3, 0.2, False, False)],
    'Bilinear': [(3, 4, 5), (3, 4, 5, False)],
    'Container': [()],
    'CrossMapLRN2d': [(3,), (4, 1e-3, 0.5, 2)],
    'FeatureAlphaDropout': [(), (0.2,)],
    'LazyBatchNorm1d': [(), (1e-3, 0.2, False, False)],
    'LazyBatchNorm2d': [()],
    'LazyBatchNorm3d': [()],
    'LazyConv1d': [(4, 3), (4, 3, 2, 1, 1, 1, False)],
    'LazyConv2d': [(4, 3), (4, (3, 2), 2, 1)],
    'LazyConv3d': [(4, 3)],
    'LazyConvTranspose1d': [(4, 3), (4, 3, 2, 1, 1)],
    'LazyConvTranspose2d': [(4, 3)],
    'LazyConvTranspose3d': [(4, 3)],
    'LazyInstanceNorm1d': [(), (1e-3, 0.2, False, False)],
    'LazyInstanceNorm2d': [()],
    'LazyInstanceNorm3d': [()],
    'LazyLinear': [(4,), (4, False)],
    'LocalResponseNorm': [(2,), (3, 1e-3, 0.5, 2.0)],
    'MaxUnpool3d': [(2,), ((3, 2, 1), (2, 1, 1), 1)],
    'NLLLoss2d': [(), ({'ignore_index': 3, 'reduction': 'sum'},)],
    'ReflectionPad1d': [(2,), ((1, 2),)],
    'ReflectionPad2d': [(2,), ((1, 2, 3, 4),)],
    'ReflectionPad3d': [(1,), ((1, 2, 1, 2, 0, 1),)],
    'ReplicationPad1d': [(2,), ((1, 2),)],
    'ReplicationPad2d': [(2,), ((1, 2, 3, 4),)],
    'ReplicationPad3d': [(1,), ((1, 2, 1, 2, 0, 1),)],
    'Softmax2d': [()],
    'AdaptiveMaxPool2d': [((2, 3),), (4,), (4, True)],
    'AvgPool1d': [(2,), (3, 2, 1, True, False)],
    'AvgPool2d': [(2,), ((2, 3), 1, 1, True, False), (2, 2, 0, False, True, None)],
    'AvgPool3d': [(2,), (3, 2, 1, True, False)],
    'BCELoss': [(), ({'reduction': 'sum'})],
    'BCEWithLogitsLoss': [(), ({'reduction': 'none'})],
    'BatchNorm1d': [(4,), (4, 1e-3, 0.2, False, False), (4, 1e-5, None)],
    'BatchNorm2d': [(3,), (3, 1e-3, 0.2, False, False)],
    'CELU': [(), (2.0,), (1.0, True)],
    'ConstantPad1d': [(2, 1.5), ((1, 2), 0.0)],
    'ConstantPad2d': [(2, 1.5), ((1, 2, 3, 4), -1.0)],
    'ConstantPad3d': [(2, 1.5), ((1, 2, 3, 4, 5, 6), 0.0)],
    'Conv1d': [(2, 4, 3), (2, 4, 3, 2, 1, 1, 2, False, 'reflect'), (2, 4, 3, 1, 'same')],
    'Conv2d': [(2, 4, 3), (2, 4, (3, 2), (2, 1), 1, 2, 2, False), (2, 4, 3, 1, 'valid'),
               (2, 4, 3, {'padding_mode': 'circular', 'padding': 1})],
    'Conv3d': [(2, 4, 3), (2, 4, 3, 2, 1, 1, 1, False)],
    'ConvTranspose1d': [(2, 4, 3), (2, 4, 3, 2, 1, 1, 2, False, 2)],
    'ConvTranspose2d': [(2, 4, 3), (2, 4, 3, 2, 1, 1, 1, False)],
    'ConvTranspose3d': [(2, 4, 3), (2, 4, 3, 2, 1)],
    'CosineEmbeddingLoss': [(), (0.5,)],
    'CosineSimilarity': [(), (0, 1e-6)],
    'CrossEntropyLoss': [(), ({'ignore_index': 3, 'label_smoothing': 0.1})],
    'CTCLoss': [(), (3, 'sum', True)],
    'ChannelShuffle': [(2,)],
    'LPPool1d': [(2, 3), (1.5, 2, 1, True)],
    'LPPool2d': [(2, 3), (3, (2, 3), 1)],
    'MaxUnpool1d': [(2,), (3, 2, 1)],
    'MaxUnpool2d': [(2,), ((3, 2), (2, 1), 1)],
    'MultiLabelMarginLoss': [(), ({'reduction': 'sum'})],
    'MultiMarginLoss': [(), (2, 0.5)],
    'RReLU': [(), (0.1, 0.2, True)],
    'Dropout': [(), (0.3, True)],
    'Dropout1d': [(), (0.3,)],
    'Dropout2d': [(), (0.3,)],
    'Dropout3d': [(), (0.3,)],
    'ELU': [(), (0.5,), (1.0, True)],
    'Embedding': [(10, 3), (10, 3, 0, 1.0), (10, 3, None, None, 2.0, True, False)],
    'EmbeddingBag': [(10, 3), (10, 3, 1.0, 2.0, False, 'sum'), (10, 3, None, 3.0, False, 'max')],
    'Flatten': [(), (0, 2)],
    'Fold': [((4, 5), 2), ((4, 5), (2, 3), 2, 1, 2)],
    'GELU': [(), ('tanh',)],
    'GLU': [(), (0,)],
    'GRU': [(3, 4), (3, 4, 2, False, True, 0.1, True)],
    'GRUCell': [(3, 4), (3, 4, False)],
    'GaussianNLLLoss': [(), ({'full': True, 'eps': 1e-3})],
    'GroupNorm': [(2, 4), (2, 4, 1e-3, False)],
    'Hardshrink': [(), (0.3,)],
    'Hardsigmoid': [(), (True,)],
    'Hardswish': [(), (True,)],
    'Hardtanh': [(), (-2.0, 3.0), (-1.0, 1.0, True)],
    'HingeEmbeddingLoss': [(), (2.0,)],
    'HuberLoss': [(), ({'delta': 0.5})],
    'Identity': [()],
    'InstanceNorm1d': [(3,), (3, 1e-3, 0.2, True)],  # track_running_stats: not supported
    'InstanceNorm2d': [(3,), (3, 1e-3, 0.2, True)],
    'InstanceNorm3d': [(3,)],
    'KLDivLoss': [(), ({'log_target': True})],
    'L1Loss': [(), ({'reduction': 'sum'})],
    'LSTM': [(3, 4), (3, 4, 2, False, True, 0.1, True)],
    'LSTMCell': [(3, 4), (3, 4, False)],
    'LayerNorm': [(4,), ((2, 4), 1e-3, False)],
    'LeakyReLU': [(), (0.2,), (0.01, True)],
    'Linear': [(3, 4), (3, 4, False)],
    'LogSigmoid': [()],
    'LogSoftmax': [(), (1,)],
    'MSELoss': [(), ({'reduction': 'sum'})],
    'MarginRankingLoss': [(), (0.5,)],
    'MaxPool1d': [(2,), (3, 2, 1)],
    'MaxPool2d': [(2,), ((2, 3), 1, 1), (3, 2, 1, 1, False, True)],
    'MaxPool3d': [(2,), (3, 2, 1)],
    'Mish': [(), (True,)],
    'MultiLabelSoftMarginLoss': [(), ({'reduction': 'sum'})],
    'MultiheadAttention': [(8, 2), (8, 2, 0.1, False, True, True, 4, 5)],
    'NLLLoss': [(), ({'ignore_index': 1})],
    'PReLU': [(), (3, 0.1)],
    'PairwiseDistance': [(), (1.0, 1e-5, True)],
    'PixelShuffle': [(2,)],
    'PixelUnshuffle': [(2,)],
    'PoissonNLLLoss': [(), (False, True)],
    'RNN': [(3, 4), (3, 4, 2, {'nonlinearity': 'relu', 'bias': False, 'batch_first': True,
                               'dropout': 0.1, 'bidirectional': True})],
    'RNNCell': [(3, 4), (3, 4, False, 'relu')],
    'ReLU': [(), (True,)],
    'ReLU6': [(), (True,)],
    'SELU': [(), (True,)],
    'SiLU': [(), (True,)],
    'SyncBatchNorm': [(3,), (3, 1e-3, 0.2, False, False)],
    'Sigmoid': [()],
    'SmoothL1Loss': [(), ({'beta': 0.5})],
    'SoftMarginLoss': [()],
    'Softmax': [(), (1,)],
    'Softmin': [(), (1,)],
    'Softplus': [(), (2.0, 10.0)],
    'Softshrink': [(), (0.3,)],
    'Softsign': [()],
    'Tanh': [()],
    'Tanhshrink': [()],
    'Threshold': [(0.1, 2.0), (0.1, 2.0, True)],
    'TransformerDecoderLayer': [(8, 2, 16, 0.0)],
    'TransformerEncoderLayer': [(8, 2, 16, 0.0), (8, 2, 16, 0.1, 'gelu', 1e-3, True, True)],
    'TripletMarginLoss': [(), (2.0, 1.0)],
    'TripletMarginWithDistanceLoss': [(), ({'margin': 2.0, 'swap': True},)],
    'Unflatten': [(1, (2, 3))],
    'Unfold': [(2,), ((2, 3), 2, 1, 2)],
    'Upsample': [({'scale_factor': 2.0},), ({'size': (4, 5), 'mode': 'bilinear',
                                               'align_corners': True},)],
    'UpsamplingBilinear2d': [({'scale_factor': 2.0},)],
    'UpsamplingNearest2d': [({'size': 4},)],
    'ZeroPad2d': [(2,), ((1, 2, 3, 4),)],
}


def _make(lib, name, args):
    if isinstance(args, dict):
        return getattr(lib.nn, name)(**args)
    if args and isinstance(args[-1], dict):
        return getattr(lib.nn, name)(*args[:-1], **args[-1])
    return getattr(lib.nn, name)(*args)


@needs_torch
@pytest.mark.parametrize("name", sorted(ARGS))
def test_repr_equals_torch(name):
    for args in ARGS[name]:
        got = repr(_make(tg, name, args))
        want = repr(_make(torch, name, args))
        assert got == want, (args, got, want)


@needs_torch
def test_every_shared_module_is_listed():
    skip = {'Module', 'ModuleDict', 'ModuleList', 'Sequential', 'ParameterDict',
            'ParameterList', 'RNNBase', 'RNNCellBase', 'Transformer', 'TransformerEncoder',
            'TransformerDecoder', 'DataParallel'}  # containers: their reprs are their children's
    shared = {n for n in dir(tg.nn) if isinstance(getattr(tg.nn, n), type)
              and issubclass(getattr(tg.nn, n), tg.nn.Module) and hasattr(torch.nn, n)}
    assert shared - skip - set(ARGS) == set()


def test_reprs_literally():
    assert repr(tg.nn.MaxPool2d(2)) == ("MaxPool2d(kernel_size=2, stride=2, padding=0, "
                                        "dilation=1, ceil_mode=False)")
    assert repr(tg.nn.Linear(3, 4, bias=False)) == ("Linear(in_features=3, out_features=4, "
                                                    "bias=False)")
    assert repr(tg.nn.Conv2d(2, 4, 3)) == "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1))"
    assert repr(tg.nn.ReLU(inplace=True)) == "ReLU(inplace=True)"


@pytest.mark.parametrize("name,args", [('ReLU', ()), ('LeakyReLU', (0.1,)), ('ELU', (1.0,)),
                                        ('SELU', ()), ('Hardswish', ()), ('Hardsigmoid', ())])
def test_inplace_modules_write_their_input(name, args):
    x = tg.tensor([-1.5, -0.2, 0.0, 0.7, 3.0])
    want = getattr(tg.nn, name)(*args)(x.clone())
    y = getattr(tg.nn, name)(*args, inplace=True)(x)
    assert y is x
    assert x.tolist() == want.tolist()
    if torch is not None:
        t = torch.tensor([-1.5, -0.2, 0.0, 0.7, 3.0])
        getattr(torch.nn, name)(*args, inplace=True)(t)
        assert x.tolist() == pytest.approx(t.tolist(), rel=1e-6, abs=1e-7)
