"""tensorgraph.nn: PyTorch's torch.nn (modules, layers, losses, init)."""
from .parameter import Parameter
from .module import Module
from .layers import (Linear, MaxPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, LayerNorm,
                     Dropout, Identity, Flatten, ReLU, Tanh, Sigmoid, GELU, LeakyReLU,
                     Hardswish, Hardsigmoid, SELU, ELU, Softmax, LogSoftmax)
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
from .conv import (Conv2d, ConvTranspose2d, Conv1d, ConvTranspose1d, MaxPool1d, AvgPool1d, Conv3d,
                   ConvTranspose3d, MaxPool3d, AvgPool3d)
from .containers import Sequential, ModuleList, ModuleDict
# composed modules
from .activation import (SiLU, Mish, Hardtanh, ReLU6, LogSigmoid, Softsign, GLU, Threshold,
                         CELU, Softmin, Tanhshrink, Softshrink, Hardshrink, Softplus,
                         CosineSimilarity, PairwiseDistance, PixelShuffle, PixelUnshuffle,
                         AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveAvgPool1d,
                         AdaptiveAvgPool2d, Unfold, Fold, Dropout1d, Dropout2d, Dropout3d, PReLU,
                         Unflatten, ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d,
                         ZeroPad2d, ZeroPad3d)
from .sparse import Embedding
from .embedding_bag import EmbeddingBag  # noqa: E402
from .layers_misc import (LPPool1d, LPPool2d, ChannelShuffle, RReLU, MaxUnpool1d,  # noqa: E402
                          MaxUnpool2d, MultiMarginLoss, MultiLabelMarginLoss)
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .transformer import (MultiheadAttention, TransformerEncoderLayer, TransformerDecoderLayer,
                          TransformerEncoder, TransformerDecoder, Transformer)
from .param_containers import ParameterList, ParameterDict
from . import parallel  # noqa: F401  (DistributedDataParallel, DataParallel)
from .data_parallel import DataParallel, SyncBatchNorm  # noqa: E402
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from .loss import (MSELoss, NLLLoss, L1Loss, SmoothL1Loss, HuberLoss, BCELoss,
                   BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, MarginRankingLoss,
                   HingeEmbeddingLoss, SoftMarginLoss, CosineEmbeddingLoss, TripletMarginLoss, PoissonNLLLoss,
                   GaussianNLLLoss, MultiLabelSoftMarginLoss, CTCLoss)
from .layers_more import (ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,
                          ReplicationPad2d, ReplicationPad3d, Softmax2d, BatchNorm3d, Bilinear,
                          LocalResponseNorm, LazyLinear, AdaptiveAvgPool3d, AlphaDropout,
                          FeatureAlphaDropout)
from . import functional, init, utils
from .fractional_pool import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: E402,F401
from .lazy import *  # noqa: E402,F401,F403  (LazyConv*, LazyConvTranspose*, LazyBatchNorm*, ...)
from .layers_extra import (AdaptiveMaxPool3d, CrossMapLRN2d, MaxUnpool3d,  # noqa: E402,F401
                           TripletMarginWithDistanceLoss)
from .deprecated import Container, NLLLoss2d  # noqa: E402,F401

__all__ = ['Parameter', 'Module', 'Linear', 'Conv2d', 'ConvTranspose2d', 'Conv1d',
           'ConvTranspose1d', 'MaxPool1d', 'AvgPool1d', 'Conv3d', 'ConvTranspose3d', 'MaxPool3d',
           'AvgPool3d', 'MaxPool2d', 'AvgPool2d',
           'AdaptiveAvgPool2d', 'BatchNorm1d', 'BatchNorm2d', 'LayerNorm', 'Dropout',
           'Embedding', 'Identity', 'Flatten', 'ReLU', 'Hardswish', 'Hardsigmoid', 'SELU', 'Tanh', 'Sigmoid', 'GELU', 'LeakyReLU',
           'ELU', 'Softplus', 'Softmax', 'LogSoftmax', 'MSELoss', 'CrossEntropyLoss', 'NLLLoss',
           'BCEWithLogitsLoss', 'Sequential', 'ModuleList', 'ModuleDict', 'functional', 'init',
           'utils', 'GroupNorm', 'InstanceNorm1d', 'InstanceNorm2d', 'InstanceNorm3d',
           'Upsample', 'UpsamplingNearest2d', 'UpsamplingBilinear2d',
           'SiLU', 'Mish', 'Hardtanh', 'ReLU6', 'LogSigmoid', 'Softsign', 'GLU', 'Threshold',
           'CELU', 'Softmin', 'Tanhshrink', 'Softshrink', 'Hardshrink', 'CosineSimilarity',
           'PairwiseDistance', 'PixelShuffle', 'PixelUnshuffle', 'AdaptiveMaxPool1d',
           'AdaptiveMaxPool2d', 'AdaptiveAvgPool1d', 'Unfold', 'Fold', 'Dropout1d', 'Dropout2d',
           'Dropout3d', 'PReLU', 'Unflatten', 'ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d',
           'ZeroPad1d', 'ZeroPad2d', 'ZeroPad3d', 'L1Loss', 'SmoothL1Loss', 'HuberLoss',
           'BCELoss', 'KLDivLoss', 'MarginRankingLoss', 'HingeEmbeddingLoss', 'SoftMarginLoss',
           'CosineEmbeddingLoss', 'TripletMarginLoss', 'PoissonNLLLoss', 'GaussianNLLLoss',
           'MultiLabelSoftMarginLoss',
           'RNNBase', 'RNN', 'LSTM', 'GRU', 'RNNCellBase', 'RNNCell', 'LSTMCell', 'GRUCell',
           'MultiheadAttention', 'TransformerEncoderLayer', 'TransformerDecoderLayer',
           'TransformerEncoder', 'TransformerDecoder', 'Transformer', 'ParameterList',
           'ParameterDict', 'ReflectionPad1d', 'ReflectionPad2d', 'ReflectionPad3d',
           'ReplicationPad1d', 'ReplicationPad2d', 'ReplicationPad3d', 'Softmax2d',
           'BatchNorm3d', 'Bilinear', 'LocalResponseNorm', 'LazyLinear', 'AdaptiveAvgPool3d',
           'AlphaDropout', 'FeatureAlphaDropout', 'AdaptiveLogSoftmaxWithLoss', 'DataParallel',
           'SyncBatchNorm']

from . import _modules_names  # noqa: E402,F401  (torch.nn.modules' layout: nn.modules.conv ...)
