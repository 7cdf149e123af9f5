"""finfo / iinfo (PyTorch's torch.finfo, torch.iinfo): the numeric limits
of a dtype, from numpy's."""
import numpy as np

from . import _C

__all__ = ['finfo', 'iinfo']

_NP = {_C.float32: np.float32, _C.float64: np.float64, _C.int32: np.int32,
       _C.int64: np.int64, _C.uint8: np.uint8, _C.bool: np.bool_}


def _dtype_arg(name, dtype):
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"{name}(): argument 'type' must be tensorgraph.dtype, not "
                        f"{type(dtype).__name__}")
    return dtype


class finfo:
    """bits eps max min tiny (smallest_normal) resolution dtype of a
    floating-point dtype (default: the default dtype)"""

    def __init__(self, type=None):
        dt = _C._get_default_dtype() if type is None else _dtype_arg('finfo', type)
        if not dt.is_floating_point:
            raise TypeError("finfo() requires a floating point input type. Use iinfo to "
                            "handle 'finfo'")  # PyTorch's words
        f = np.finfo(_NP[dt])
        self.bits, self.dtype = int(f.bits), dt.name
        self.eps, self.max, self.min = float(f.eps), float(f.max), float(f.min)
        self.tiny = self.smallest_normal = float(f.tiny)
        self.resolution = 10.0 ** -int(f.precision)  # 1e-06, as PyTorch (not float32 1e-06)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """bits max min dtype of an integer dtype (bool is refused, as PyTorch)"""

    def __init__(self, type):
        dt = _dtype_arg('iinfo', type)
        if dt == _C.bool:
            raise TypeError("tensorgraph.bool is not supported by iinfo")
        if dt.is_floating_point:
            raise TypeError("iinfo() requires an integer input type. Use finfo to handle "
                            "'iinfo'")
        i = np.iinfo(_NP[dt])
        self.bits, self.max, self.min, self.dtype = int(i.bits), int(i.max), int(i.min), dt.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
