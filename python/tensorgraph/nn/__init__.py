"""tensorgraph.nn: PyTorch's torch.nn (modules, layers, losses, init)."""
from .parameter import Parameter
from .module import Module
from .layers import (Linear, Conv2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, BatchNorm1d,
                     BatchNorm2d, LayerNorm, Dropout, Embedding, Identity, Flatten, ReLU,
                     Tanh, Sigmoid, GELU, LeakyReLU, Hardswish, Hardsigmoid, SELU, ELU, Softplus, Softmax, LogSoftmax,
                     MSELoss, CrossEntropyLoss, NLLLoss, BCEWithLogitsLoss)
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
from .conv import (ConvTranspose2d, Conv1d, ConvTranspose1d, MaxPool1d, AvgPool1d, Conv3d,
                   ConvTranspose3d, MaxPool3d, AvgPool3d)
from .containers import Sequential, ModuleList, ModuleDict
from . import functional, init, utils

__all__ = ['Parameter', 'Module', 'Linear', 'Conv2d', 'ConvTranspose2d', 'Conv1d',
           'ConvTranspose1d', 'MaxPool1d', 'AvgPool1d', 'Conv3d', 'ConvTranspose3d', 'MaxPool3d',
           'AvgPool3d', 'MaxPool2d', 'AvgPool2d',
           'AdaptiveAvgPool2d', 'BatchNorm1d', 'BatchNorm2d', 'LayerNorm', 'Dropout',
           'Embedding', 'Identity', 'Flatten', 'ReLU', 'Hardswish', 'Hardsigmoid', 'SELU', 'Tanh', 'Sigmoid', 'GELU', 'LeakyReLU',
           'ELU', 'Softplus', 'Softmax', 'LogSoftmax', 'MSELoss', 'CrossEntropyLoss', 'NLLLoss',
           'BCEWithLogitsLoss', 'Sequential', 'ModuleList', 'ModuleDict', 'functional', 'init',
           'utils', 'GroupNorm', 'InstanceNorm1d', 'InstanceNorm2d', 'InstanceNorm3d',
           'Upsample', 'UpsamplingNearest2d', 'UpsamplingBilinear2d']
