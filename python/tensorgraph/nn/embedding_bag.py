"""nn.EmbeddingBag and F.embedding_bag as PyTorch's: each bag of indices
(the rows of a 2-D input, or the runs of a 1-D input between offsets)
looked up with embedding and reduced by sum, mean or max, with
per_sample_weights (sum) and padding_idx (left out of the reduction and
its count). Composed of ops, so gradients reach the weight; the offsets
are read on the host."""
from .._creation import zeros
from . import init
from ._factory_kwargs import factory_kwargs
from .module import Module
from .parameter import Parameter
from .sparse import embedding

__all__ = ['embedding_bag', 'EmbeddingBag']


def _reduce(rows, keep, mode):
    """one bag: rows [n, D] of which keep [n] (bool) count; zeros when none
    (a sum of no rows, so that the weight still gets its zero gradient, as
    PyTorch's)"""
    if keep is not None:
        rows = rows[keep] if bool(keep.any()) else rows[:0]
    if rows.shape[0] == 0:
        return rows.sum(0)
    if mode == 'sum':
        return rows.sum(0)
    if mode == 'mean':
        return rows.mean(0)
    # max: the first of equal rows takes the gradient, as PyTorch's kernel
    return rows.gather(0, rows.argmax(0, keepdim=True)).reshape(-1)


def _check_offsets(offsets, n):
    """PyTorch's conditions on the offsets of a 1-D input of n indices"""
    if offsets and offsets[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                           f"mini-batch has to start from position 0. However, got "
                           f"{offsets[0]}")
    if offsets and offsets[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {offsets[-1]}")
    if any(a > b for a, b in zip(offsets, offsets[1:])):
        raise RuntimeError(f"embedding_bag: offsets must not decrease, got {offsets}")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode='mean', sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    if mode not in ('sum', 'mean', 'max'):
        raise ValueError("mode has to be one of sum, mean or max")
    if scale_grad_by_freq and mode == 'max':
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if per_sample_weights is not None and mode != 'sum':
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences.")
        n, length = input.shape
        bounds = [(b * length, (b + 1) * length) for b in range(n)]
        flat = input.reshape(-1)
        weights = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
    elif input.ndim == 1:
        if offsets is None or offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor but got None" if offsets is None
                             else "offsets has to be a 1D Tensor")
        starts = [int(v) for v in offsets.tolist()]
        _check_offsets(starts, input.shape[0])
        ends = starts[1:] + ([] if include_last_offset else [input.shape[0]])
        if include_last_offset:
            starts = starts[:-1]
        bounds = list(zip(starts, ends))
        flat, weights = input, per_sample_weights
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq)
    if weights is not None:
        rows = rows * weights.reshape(-1, 1).to(rows.dtype)
    keep = None
    if padding_idx is not None:
        keep = flat != padding_idx % weight.shape[0]
    bags = [_reduce(rows[s:e], keep[s:e] if keep is not None else None, mode)
            for s, e in bounds]
    if not bags:
        return rows[:0]  # [0, D], connected to the weight as the bags above
    from .. import stack
    return stack(bags, 0)


class EmbeddingBag(Module):
    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode='mean', sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.mode = max_norm, norm_type, mode
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.include_last_offset = include_last_offset
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
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
            from .._grad_mode import no_grad
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode='mean', sparse=False,
                        include_last_offset=False, padding_idx=None):
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def forward(self, input, offsets=None, per_sample_weights=None):
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f'{self.num_embeddings}, {self.embedding_dim}'
        if self.max_norm is not None:
            s += f', max_norm={self.max_norm}'
        if self.norm_type != 2:
            s += f', norm_type={self.norm_type}'
        if self.scale_grad_by_freq:
            s += f', scale_grad_by_freq={self.scale_grad_by_freq}'
        s += f', mode={self.mode}'
        if self.padding_idx is not None:
            s += f', padding_idx={self.padding_idx}'
        return s
