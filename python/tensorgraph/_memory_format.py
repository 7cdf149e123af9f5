"""Memory formats as PyTorch's (torch.preserve_format, contiguous_format,
channels_last, channels_last_3d): which order of dims, outermost first, a
new tensor's memory takes. clone() and the *_like creators keep a dense,
non-overlapping input's layout (a transposed tensor's clone is
transposed), contiguous() makes C order or the channels-last order asked
for. A layout is made as a contiguous tensor of the permuted shape,
permuted back (views and copies the C core already has)."""
from . import _C

__all__ = ['memory_format', 'preserve_format', 'contiguous_format', 'channels_last',
           'channels_last_3d', 'layout', 'strided', 'sparse_coo']


class memory_format:
    """one of PyTorch's memory formats (compared by identity)"""
    __slots__ = ('_name',)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f'tensorgraph.{self._name}'

    def __reduce__(self):  # pickles as the module constant
        return self._name


class layout:
    """PyTorch's torch.layout: every tensor here is strided (Tensor.layout)"""
    __slots__ = ('_name',)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f'tensorgraph.{self._name}'

    def __reduce__(self):
        return self._name


strided = layout('strided')
sparse_coo = layout('sparse_coo')  # named for comparisons; no sparse tensors exist here
_C._add_method('layout', property(lambda self: strided))

preserve_format = memory_format('preserve_format')
contiguous_format = memory_format('contiguous_format')
channels_last = memory_format('channels_last')
channels_last_3d = memory_format('channels_last_3d')
_CHANNELS_LAST = {channels_last: 4, channels_last_3d: 5}
_c_is_contiguous = _C.Tensor.is_contiguous  # the C method, before is_contiguous replaces it
_c_clone = _C.clone


def _check(fmt):
    if not isinstance(fmt, memory_format):
        raise TypeError(f"memory_format must be a tensorgraph.memory_format, not "
                        f"{type(fmt).__name__}")


def _channels_last_order(ndim):
    return (0,) + tuple(range(2, ndim)) + (1,)


def _dense_order(t):
    """the dims outermost first when t's elements fill one block without
    gaps or overlaps (PyTorch's is_non_overlapping_and_dense), else None.
    A size-1 dim goes after a larger dim of the same stride, where it
    gets that stride back."""
    shape, strides = t.shape, t.stride()
    order = sorted(range(t.ndim), key=lambda d: (-strides[d], shape[d] == 1, d))
    expected = 1
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != expected:
            return None
        expected *= shape[d]
    return tuple(order)


def _strides_like_channels_last(t):
    """PyTorch's suggest_memory_format for a tensor that is not dense: the
    channels-last order when its strides run that way"""
    if t.ndim not in (4, 5):
        return False
    s = t.stride()
    order = _channels_last_order(t.ndim)
    return all(s[a] >= s[b] for a, b in zip(order, order[1:])) and s[1] < s[order[-2]]


def layout_order(t, fmt):
    """the dims, outermost first, of a new tensor in format fmt like t"""
    _check(fmt)
    if fmt is preserve_format:
        dense = _dense_order(t)
        if dense is not None:
            return dense
        if _strides_like_channels_last(t):
            return _channels_last_order(t.ndim)
        return tuple(range(t.ndim))
    if fmt is contiguous_format:
        return tuple(range(t.ndim))
    want = _CHANNELS_LAST[fmt]
    if t.ndim != want:
        raise RuntimeError(f"required rank {want} tensor to use {fmt._name} format")
    return _channels_last_order(want)


def _inverse(order):
    inv = [0] * len(order)
    for i, d in enumerate(order):
        inv[d] = i
    return tuple(inv)


def in_layout(shape, order, make):
    """make(shape permuted to order), a contiguous tensor, seen in shape"""
    if order == tuple(range(len(order))):
        return make(tuple(shape))
    t = make(tuple(shape[d] for d in order))
    return t.permute(*_inverse(order))


def clone(input, *, memory_format=preserve_format):
    """a copy in memory_format (by default the input's own dense layout)"""
    order = layout_order(input, memory_format)
    if order == tuple(range(input.ndim)):
        return _c_clone(input)
    return _c_clone(input.permute(*order)).permute(*_inverse(order))


def contiguous(self, memory_format=contiguous_format):
    """self when already laid out in memory_format, else a copy that is"""
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if is_contiguous(self, memory_format):
        return self
    return clone(self, memory_format=memory_format)


def is_contiguous(self, memory_format=contiguous_format):
    """are the strides those of memory_format's order (size-1 dims free)?"""
    _check(memory_format)
    if memory_format is preserve_format:
        raise RuntimeError("is_contiguous: preserve memory format is unsupported")
    if memory_format is contiguous_format:  # PyTorch: every empty tensor is
        return self.numel() == 0 or _c_is_contiguous(self)
    if self.ndim != _CHANNELS_LAST[memory_format]:
        return False
    expected = 1
    for d in reversed(_channels_last_order(self.ndim)):
        if self.shape[d] != 1 and self.stride()[d] != expected:
            return False
        expected *= self.shape[d]
    return True
