"""tensorgraph.nn.functional: PyTorch's torch.nn.functional names over the
op table. Most are the C ops themselves; the few here add PyTorch's extra
arguments (inplace=..., pad's last-dim-first order)."""
from .. import _C

linear = _C.linear
conv2d = _C.conv2d
conv_transpose2d = _C.conv_transpose2d
max_pool2d = _C.max_pool2d
avg_pool2d = _C.avg_pool2d
batch_norm = _C.batch_norm
layer_norm = _C.layer_norm
softmax = _C.softmax
log_softmax = _C.log_softmax
mse_loss = _C.mse_loss
cross_entropy = _C.cross_entropy
nll_loss = _C.nll_loss
binary_cross_entropy_with_logits = _C.binary_cross_entropy_with_logits
sigmoid = _C.sigmoid
tanh = _C.tanh
gelu = _C.gelu
softplus = _C.softplus
leaky_relu = _C.leaky_relu
elu = _C.elu


def relu(input, inplace=False):
    return input.relu_() if inplace else _C.relu(input)


def _maybe_inplace(input, out, inplace):
    """inplace=True writes the result into input (recorded as in-place
    ops are) and returns input, as PyTorch does"""
    return input.copy_(out) if inplace else out


def hardswish(input, inplace=False):
    return _maybe_inplace(input, _C.hardswish(input), inplace)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6"""
    return _maybe_inplace(input, _C._hardsigmoid(input, 1.0 / 6.0, 0.5), inplace)


def selu(input, inplace=False):
    return _maybe_inplace(input, _C.selu(input), inplace)


def dropout(input, p=0.5, training=True, inplace=False, generator=None):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _C.dropout(input, p, training, False, generator)


def embedding(input, weight, padding_idx=None):
    if padding_idx is not None:
        raise NotImplementedError("embedding: padding_idx is not supported")
    return _C.embedding(input, weight)


def adaptive_avg_pool2d(input, output_size):
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if size != (1, 1):
        raise NotImplementedError("adaptive_avg_pool2d: only output_size 1 is supported")
    return _C._global_avg_pool2d(input)


def pad(input, pad, mode='constant', value=0.0):
    """pad lists (before, after) pairs from the LAST dim backwards, as PyTorch"""
    if mode != 'constant':
        raise NotImplementedError(f"pad: mode '{mode}' is not supported (only 'constant')")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError("Padding length must be divisible by 2 and at most twice the dims")
    pairs = [tuple(pad[i:i + 2]) for i in range(0, len(pad), 2)]
    full = [(0, 0)] * (input.ndim - len(pairs)) + pairs[::-1]
    return _C._pad(input, [v for p in full for v in p], value)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps), as PyTorch (whose gradient is
    finite at a zero vector: the norm's is 0 there)"""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    from ..linalg import vector_norm
    denom = _C.clamp(vector_norm(input, p, dim, True), eps)
    return input / denom.expand_as(input)


def one_hot(tensor, num_classes=-1):
    if num_classes < 0:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    return _C._one_hot(tensor, num_classes)


def flatten(input, start_dim=0, end_dim=-1):
    return _C.flatten(input, start_dim, end_dim)
