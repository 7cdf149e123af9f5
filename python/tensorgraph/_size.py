"""tg.Size: the type of Tensor.shape and Tensor.size(), a tuple of ints
as PyTorch's torch.Size (equal to the plain tuple, slices and sums stay
Sizes, numel())."""
import math
import operator

from . import _C

Tensor = _C.Tensor


class Size(tuple):
    __slots__ = ()

    def __new__(cls, sizes=()):
        items = tuple(sizes)
        for i, s in enumerate(items):
            if isinstance(s, bool) or not isinstance(s, int):
                try:
                    items = items[:i] + (operator.index(s),) + items[i + 1:]
                except TypeError:
                    raise TypeError(f"Size() takes an iterable of 'int' (item {i} is "
                                    f"'{type(s).__name__}')") from None
        return super().__new__(cls, items)

    def numel(self):
        return math.prod(self)

    def __getitem__(self, key):
        r = super().__getitem__(key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def __repr__(self):
        return f"tensorgraph.Size({list(self)})"

    __str__ = __repr__

    def __reduce__(self):
        return (Size, (tuple(self),))


_c_shape = Tensor.shape
_c_size = Tensor.size


_new = tuple.__new__


def _shape(self):
    return _new(Size, _c_shape.__get__(self))  # ints already: no checks


def size(self, dim=None):
    """size() -> Size; size(dim) -> int"""
    return _new(Size, _c_size(self)) if dim is None else _c_size(self, dim)


_C._add_method('shape', property(_shape, doc="The shape, a tg.Size (a tuple of ints)."))
_C._add_method('size', size)
