"""PyTorch's legacy typed constructors (FloatTensor, LongTensor, ...):
FloatTensor(*sizes) or FloatTensor(size) makes an uninitialized tensor of
that type, FloatTensor(data) one from a list / array, FloatTensor(tensor)
the tensor itself when its type matches (TypeError otherwise).
isinstance(t, FloatTensor) checks the dtype."""
from . import _C
from ._creation import empty, tensor

__all__ = ['FloatTensor', 'DoubleTensor', 'IntTensor', 'LongTensor', 'ByteTensor',
           'BoolTensor', 'set_default_tensor_type']


class _TypedMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype


class _Typed(metaclass=_TypedMeta):
    dtype = None

    def __new__(cls, *args):
        if len(args) == 1 and isinstance(args[0], _C.Tensor):
            if args[0].dtype != cls.dtype:
                raise TypeError(f"expected a tensor of dtype {cls.dtype}, got "
                                f"{args[0].dtype}")
            return args[0]
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return empty(*args, dtype=cls.dtype) if args else empty(0, dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], tuple) and \
                all(isinstance(a, int) for a in args[0]):  # a Size
            return empty(*args[0], dtype=cls.dtype)
        if len(args) == 1:
            return tensor(args[0], dtype=cls.dtype)
        raise TypeError(f"{cls.__name__}(): give sizes, a size, data or a tensor")


def _typed(name, dtype):
    return _TypedMeta(name, (_Typed,), {'dtype': dtype, '__module__': 'tensorgraph'})


FloatTensor = _typed('FloatTensor', _C.float32)
DoubleTensor = _typed('DoubleTensor', _C.float64)
IntTensor = _typed('IntTensor', _C.int32)
LongTensor = _typed('LongTensor', _C.int64)
ByteTensor = _typed('ByteTensor', _C.uint8)
BoolTensor = _typed('BoolTensor', _C.bool)


def set_default_tensor_type(t):
    """PyTorch's legacy form of set_default_dtype: a typed class
    (tg.DoubleTensor) or its name ('torch.DoubleTensor' or
    'tensorgraph.DoubleTensor'); only the float types"""
    if isinstance(t, str):
        module, _, name = t.rpartition('.')
        cls = globals().get(name) if module in ('torch', 'tensorgraph') else None
        if cls is None:
            raise TypeError(f"invalid type: '{t}'")
        t = cls
    if not (isinstance(t, type) and issubclass(t, _Typed)):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    from ._ops_math import set_default_dtype
    set_default_dtype(t.dtype)
