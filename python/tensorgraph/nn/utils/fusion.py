"""nn.utils.fusion: a convolution (or linear layer) followed by a batch norm
in eval mode folded into one layer with the same output."""
import copy

from ... import _C
from ..._grad_mode import no_grad
from ..parameter import Parameter

__all__ = ['fuse_conv_bn_eval', 'fuse_conv_bn_weights', 'fuse_linear_bn_eval',
           'fuse_linear_bn_weights']


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """(weight, bias) of the convolution equal to conv then batch norm
    (its running statistics): w * g / sqrt(var + eps) per output channel"""
    if conv_b is None:
        conv_b = bn_rm * 0
    if bn_w is None:
        bn_w = bn_rm * 0 + 1
    if bn_b is None:
        bn_b = bn_rm * 0
    bn_var_rsqrt = _C.rsqrt(bn_rv + bn_eps)
    shape = [1] * conv_w.ndim
    shape[1 if transpose else 0] = -1
    fused_w = conv_w * (bn_w * bn_var_rsqrt).reshape(shape)
    fused_b = (conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b
    return Parameter(fused_w.detach(), conv_w.requires_grad), \
        Parameter(fused_b.detach(), conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """a copy of conv computing bn(conv(x)), both in eval mode"""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    with no_grad():
        fused.weight, fused.bias = fuse_conv_bn_weights(
            fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
            bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(weight, bias) of the linear layer equal to linear then batch norm"""
    if linear_b is None:
        linear_b = bn_rm * 0
    bn_scale = bn_w * _C.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * bn_scale + bn_b
    return Parameter(fused_w.detach(), linear_w.requires_grad), \
        Parameter(fused_b.detach(), linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """a copy of linear computing bn(linear(x)), both in eval mode"""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    with no_grad():
        fused.weight, fused.bias = fuse_linear_bn_weights(
            fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
            bn.bias)
    return fused
