"""Helpers the distributions share: broadcasting parameters, probabilities
and logits converted both ways, lazily computed attributes."""
import numbers

import tensorgraph as tg

__all__ = ['broadcast_all', 'clamp_probs', 'lazy_property', 'logits_to_probs',
           'probs_to_logits', 'sum_rightmost', 'tril_matrix_to_vec', 'vec_to_tril_matrix']


def broadcast_all(*values):
    """tensors and numbers broadcast to one shape; numbers take the first
    tensor's dtype (the default dtype when all are numbers), as PyTorch's"""
    if not all(isinstance(v, (tg.Tensor, numbers.Number)) for v in values):
        raise ValueError('Input arguments must all be instances of numbers.Number, '
                         'torch.Tensor or objects implementing __torch_function__.')
    tensors = [v for v in values if isinstance(v, tg.Tensor)]
    dtype = tensors[0].dtype if tensors else tg.get_default_dtype()
    values = [v if isinstance(v, tg.Tensor) else tg.tensor(float(v), dtype=dtype)
              for v in values]
    shape = tuple(tg.broadcast_shapes(*[tuple(v.shape) for v in values]))
    return tuple(v if tuple(v.shape) == shape else v.expand(shape) for v in values)


def sum_rightmost(value, dim):
    """value summed over its `dim` rightmost dims"""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def clamp_probs(probs):
    eps = tg.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return tg.sigmoid(logits)
    return tg.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return tg.log(ps_clamped) - tg.log1p(-ps_clamped)
    return tg.log(ps_clamped)


def _tril_mask(n, diag):
    """the (n, n) bool mask of the entries on or below diagonal `diag`"""
    arange = tg.arange(n)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """the entries of the last two dims on or below diagonal `diag`, row
    by row, as one last dim"""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f'diag ({diag}) provided is outside [{-n}, {n - 1}].')
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec, diag=0):
    """tril_matrix_to_vec's inverse: an (n, n) matrix, zero above diagonal
    `diag`, whose size n is solved from the vector's length"""
    k = 1 + 2 * diag
    n = (-k + (k ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > tg.finfo(vec.dtype).eps:
        raise ValueError(f'The size of last dimension is {vec.shape[-1]} which cannot be '
                         'expressed as the lower triangular part of a square D x D matrix.')
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag)] = vec
    return mat


class lazy_property:
    """computed on first access and then stored on the instance (as
    PyTorch's, with grad enabled so parameters derived from the given one
    keep their history)"""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with tg.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
