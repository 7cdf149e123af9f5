"""torch.nn.modules' layout (tg.nn.modules.conv.Conv2d,
`from tensorgraph.nn.modules.batchnorm import _BatchNorm`, ...): module
objects registered in sys.modules, importable, each holding the classes
PyTorch's module of that name defines, which are tg.nn's. PyTorch's private
bases that code tests with isinstance (_BatchNorm, _ConvNd, _Loss,
_MaxPoolNd, ...) are tg.nn's own where it has them, else abstract classes
that tg.nn's members of the family are registered with (isinstance and
issubclass answer as PyTorch's would; they are not for subclassing).
Imported last by nn/__init__.py."""
import abc
import importlib
import sys
import types

from . import module as _module
from . import utils as _utils

_PACKAGE = __package__ + '.modules'

# PyTorch's module name -> its public names (all in tg.nn)
_PUBLIC = {
    'activation': 'Threshold ReLU RReLU Hardtanh ReLU6 Sigmoid Hardsigmoid Tanh SiLU Mish '
                  'Hardswish ELU CELU SELU GLU GELU Hardshrink LeakyReLU LogSigmoid Softplus '
                  'Softshrink MultiheadAttention PReLU Softsign Tanhshrink Softmin Softmax '
                  'Softmax2d LogSoftmax',
    'adaptive': 'AdaptiveLogSoftmaxWithLoss',
    'batchnorm': 'BatchNorm1d LazyBatchNorm1d BatchNorm2d LazyBatchNorm2d BatchNorm3d '
                 'LazyBatchNorm3d SyncBatchNorm',
    'channelshuffle': 'ChannelShuffle',
    'container': 'Container Sequential ModuleList ModuleDict ParameterList ParameterDict',
    'conv': 'Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LazyConv1d '
            'LazyConv2d LazyConv3d LazyConvTranspose1d LazyConvTranspose2d LazyConvTranspose3d',
    'distance': 'PairwiseDistance CosineSimilarity',
    'dropout': 'Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout',
    'flatten': 'Flatten Unflatten',
    'fold': 'Fold Unfold',
    'instancenorm': 'InstanceNorm1d InstanceNorm2d InstanceNorm3d LazyInstanceNorm1d '
                    'LazyInstanceNorm2d LazyInstanceNorm3d',
    'lazy': 'LazyModuleMixin',
    'linear': 'Bilinear Identity LazyLinear Linear',
    'loss': 'L1Loss NLLLoss NLLLoss2d PoissonNLLLoss GaussianNLLLoss KLDivLoss MSELoss BCELoss '
            'BCEWithLogitsLoss HingeEmbeddingLoss MultiLabelMarginLoss SmoothL1Loss HuberLoss '
            'SoftMarginLoss CrossEntropyLoss MultiLabelSoftMarginLoss CosineEmbeddingLoss '
            'MarginRankingLoss MultiMarginLoss TripletMarginLoss TripletMarginWithDistanceLoss '
            'CTCLoss',
    'module': 'Module',
    'normalization': 'LocalResponseNorm CrossMapLRN2d LayerNorm GroupNorm',
    'padding': 'ConstantPad1d ConstantPad2d ConstantPad3d ReflectionPad1d ReflectionPad2d '
               'ReflectionPad3d ReplicationPad1d ReplicationPad2d ReplicationPad3d ZeroPad2d',
    'pixelshuffle': 'PixelShuffle PixelUnshuffle',
    'pooling': 'MaxPool1d MaxPool2d MaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d AvgPool1d '
               'AvgPool2d AvgPool3d FractionalMaxPool2d FractionalMaxPool3d LPPool1d LPPool2d '
               'AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d AdaptiveAvgPool1d '
               'AdaptiveAvgPool2d AdaptiveAvgPool3d',
    'rnn': 'RNNBase RNN LSTM GRU RNNCellBase RNNCell LSTMCell GRUCell',
    'sparse': 'Embedding EmbeddingBag',
    'transformer': 'Transformer TransformerEncoder TransformerDecoder TransformerEncoderLayer '
                   'TransformerDecoderLayer',
    'upsampling': 'Upsample UpsamplingNearest2d UpsamplingBilinear2d',
    'utils': '',
}

# PyTorch's private bases: tg.nn's class of the same role (a class's base
# found through its MRO by name), or the members of an abstract family
_BASES = {
    'batchnorm': {'_NormBase': ('base', 'BatchNorm2d', 'NormStateMixin'),
                  '_BatchNorm': ('base', 'BatchNorm2d', '_BatchNorm'),
                  '_LazyNormBase': ('family', 'LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d '
                                              'LazyInstanceNorm1d LazyInstanceNorm2d '
                                              'LazyInstanceNorm3d')},
    'conv': {'_ConvNd': ('base', 'Conv2d', '_ConvNd'),
             '_ConvTransposeNd': ('base', 'ConvTranspose2d', '_ConvTranspose'),
             '_ConvTransposeMixin': ('family', '')},  # PyTorch's deprecated, unused mixin
    'dropout': {'_DropoutNd': ('family', 'Dropout Dropout1d Dropout2d Dropout3d AlphaDropout '
                                         'FeatureAlphaDropout')},
    'instancenorm': {'_InstanceNorm': ('base', 'InstanceNorm2d', '_InstanceNorm')},
    'loss': {'_Loss': ('base', 'MSELoss', '_Loss'),
             '_WeightedLoss': ('base', 'NLLLoss', '_WeightedLoss')},
    'padding': {'_ConstantPadNd': ('base', 'ConstantPad2d', '_ConstantPadNd'),
                '_ReflectionPadNd': ('family', 'ReflectionPad1d ReflectionPad2d ReflectionPad3d'),
                '_ReplicationPadNd': ('family', 'ReplicationPad1d ReplicationPad2d '
                                                'ReplicationPad3d')},
    'pooling': {'_MaxPoolNd': ('family', 'MaxPool1d MaxPool2d MaxPool3d'),
                '_MaxUnpoolNd': ('base', 'MaxUnpool2d', '_MaxUnpoolNd'),
                '_AvgPoolNd': ('family', 'AvgPool1d AvgPool2d AvgPool3d'),
                '_LPPoolNd': ('base', 'LPPool2d', '_LPPoolNd'),
                '_AdaptiveMaxPoolNd': ('family', 'AdaptiveMaxPool1d AdaptiveMaxPool2d '
                                                 'AdaptiveMaxPool3d'),
                '_AdaptiveAvgPoolNd': ('family', 'AdaptiveAvgPool1d AdaptiveAvgPool2d '
                                                 'AdaptiveAvgPool3d')},
}

# functions PyTorch's modules define besides the classes
_FUNCTIONS = {
    'module': {n: getattr(_module, n) for n in (
        'register_module_forward_pre_hook', 'register_module_forward_hook',
        'register_module_full_backward_hook')},
}


def _base(nn, member, name):
    return next(c for c in getattr(nn, member).__mro__ if c.__name__ == name)


def _family(nn, name, members):
    cls = abc.ABCMeta(name, (), {'__doc__': f"PyTorch's {name}: {members} (isinstance)",
                                 '__module__': _PACKAGE})
    for m in members.split():
        cls.register(getattr(nn, m))
    return cls


def _install():
    nn = sys.modules[__package__]
    package = types.ModuleType(_PACKAGE, "torch.nn.modules' layout over tg.nn")
    package.__path__ = []  # a package: its submodules import
    sys.modules[_PACKAGE] = package
    for name, names in _PUBLIC.items():
        module = types.ModuleType(f'{_PACKAGE}.{name}', f"torch.nn.modules.{name}'s names")
        for n in names.split():
            setattr(module, n, getattr(nn, n))
            setattr(package, n, getattr(nn, n))
        for n, (kind, what, *base) in _BASES.get(name, {}).items():
            setattr(module, n, _base(nn, what, base[0]) if kind == 'base' else
                    _family(nn, n, what))
        for n, f in _FUNCTIONS.get(name, {}).items():
            setattr(module, n, f)
        module.__all__ = names.split() + list(_FUNCTIONS.get(name, {}))
        sys.modules[module.__name__] = module
        setattr(package, name, module)
    package.utils.consume_prefix_in_state_dict_if_present = \
        _utils.consume_prefix_in_state_dict_if_present
    for n, f in _FUNCTIONS['module'].items():
        setattr(package, n, f)
    nn.modules = package


importlib.invalidate_caches()
_install()
