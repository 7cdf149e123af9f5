"""nn.Embedding with PyTorch's full constructor (padding_idx, max_norm,
scale_grad_by_freq, sparse, from_pretrained, freeze) and F.embedding's options,
over the embedding op. tensorgraph has no sparse
tensors: sparse=True is accepted and the weight's gradient is dense (the same
values)."""
from .. import _C
from .._creation import zeros
from .._grad_mode import no_grad
from . import init
from ._factory_kwargs import factory_kwargs
from .module import Module
from .parameter import Parameter


def _renorm_(weight, input, max_norm, norm_type):
    """rows of weight that input looks up rescaled in place to norm <= max_norm
    (PyTorch's embedding_renorm_: not recorded by autograd)"""
    import numpy as np
    rows = np.unique(input.detach().numpy().reshape(-1))
    with no_grad():
        w = weight.detach().numpy()  # shares the weight's memory
        for r in rows:
            n = float(np.sum(np.abs(w[r]) ** norm_type) ** (1.0 / norm_type))
            if n > max_norm:
                w[r] *= max_norm / (n + 1e-7)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """rows of weight; the padding_idx row gets no gradient; with scale_grad_by_freq
    each row's gradient is divided by how often input looks it up"""
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= n
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    w = weight
    if padding_idx is not None and weight.requires_grad:
        # the padding row enters as a constant: its gradient is 0
        w = _C.where(_arange_col(n) == padding_idx, weight.detach(), weight)
    if scale_grad_by_freq and weight.requires_grad:
        if sparse:  # PyTorch raises this in the backward
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with "
                               "sparse gradients")
        w = _grad_scaled_by_freq(w, input)
    return _C.embedding(input, w)


def _grad_scaled_by_freq(w, input):
    """w's values, with the gradient of row r divided by r's count in input
    (w.detach() + (w - w.detach()) * s adds an exact zero forward); counted
    with ops, so it traces into tg.function"""
    from .._creation import ones, zeros
    n = w.shape[0]
    flat = input.reshape(-1).long()
    counts = zeros(n, dtype=w.dtype).scatter_add(0, flat, ones(flat.shape[0], dtype=w.dtype))
    scale = (1.0 / counts.clamp(min=1.0)).reshape(n, 1)
    base = w.detach()
    return base + (w - base) * scale


def _arange_col(n):
    from .._creation import arange
    return arange(n).reshape(n, 1)


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 device=None, dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(zeros(num_embeddings, embedding_dim, dtype=dtype))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f'{self.num_embeddings}, {self.embedding_dim}'
        if self.padding_idx is not None:
            s += f', padding_idx={self.padding_idx}'
        if self.max_norm is not None:
            s += f', max_norm={self.max_norm}'
        if self.norm_type != 2:
            s += f', norm_type={self.norm_type}'
        if self.scale_grad_by_freq:
            s += f', scale_grad_by_freq={self.scale_grad_by_freq}'
        if self.sparse:
            s += ', sparse=True'
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        # PyTorch 1.13's: built around the tensor, then frozen (no _freeze argument)
        embedding = cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq,
                        sparse, _weight=embeddings)
        embedding.weight.requires_grad = not freeze
        return embedding
