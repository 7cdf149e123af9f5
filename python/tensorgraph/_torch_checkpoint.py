"""Reading files written by torch.save (its zip format, PyTorch 1.6 on)
without PyTorch: a zip whose data.pkl pickles the object and whose
data/<key> entries hold the storages' raw little-endian bytes.

The pickle is read by an unpickler that builds only what checkpoints are
made of: tensors and parameters (from their storages), OrderedDicts,
torch.Size, dtypes, NumPy scalars and arrays, besides the builtin containers and
numbers pickle makes itself. Any other class (a whole pickled nn.Module,
an arbitrary object) is refused by name, never imported or called, so a
hostile file cannot run code. Storage types tensorgraph lacks are widened
losslessly, as the ONNX importer does: float16 and bfloat16 to float32,
int8 and int16 to int32."""
import io
import pickle
import zipfile
from collections import OrderedDict

import numpy as np

from . import _C

# the storage classes torch.save names, as NumPy dtypes (little-endian)
# and the dtype each is widened to when tensorgraph lacks it
_STORAGES = {
    "FloatStorage": ("<f4", None), "DoubleStorage": ("<f8", None),
    "HalfStorage": ("<f2", "float32"), "BFloat16Storage": ("<u2", "bfloat16"),
    "LongStorage": ("<i8", None), "IntStorage": ("<i4", None),
    "ShortStorage": ("<i2", "int32"), "CharStorage": ("i1", "int32"),
    "ByteStorage": ("u1", None), "BoolStorage": ("?", None),
}
_DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
           "int64": "int64", "long": "int64", "int32": "int32", "int": "int32",
           "uint8": "uint8", "bool": "bool"}


class CheckpointError(RuntimeError):
    pass


class _Storage:
    """a storage's elements, as a 1-D NumPy array"""

    def __init__(self, array):
        self.array = array


def _widen(a, to):
    if to == "bfloat16":  # the high half of a float32's bits
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(to) if to else a


def _rebuild_tensor(storage, offset, size, stride, requires_grad=False, hooks=None,
                    metadata=None):
    if not isinstance(storage, _Storage):
        raise CheckpointError("a tensor without a storage")
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride) or offset < 0 or any(s < 0 for s in size + stride):
        raise CheckpointError(f"a tensor of size {size}, stride {stride}, offset {offset}")
    a = storage.array
    if all(size):
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= a.size:
            raise CheckpointError(f"a tensor of size {size} reads element {last} of a storage "
                                  f"of {a.size}")
        view = np.lib.stride_tricks.as_strided(a[offset:], size, [s * a.itemsize for s in stride])
    else:
        view = np.zeros(size, dtype=a.dtype)
    t = _C.from_numpy(view.copy(order="C"))
    if requires_grad and t.dtype.is_floating_point:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, hooks, state=None):
    from .nn import Parameter
    return Parameter(data, requires_grad=bool(requires_grad) and data.dtype.is_floating_point)


def _rebuild_from_type(func, new_type, args, state):
    return func(*args)  # a tensor subclass: its data, as a tensor


def _numpy_scalar(dtype, data=None):
    """a NumPy scalar (numpy.core.multiarray.scalar): its dtype and bytes,
    copied so that nothing keeps the pickle's buffer"""
    if not isinstance(dtype, np.dtype) or dtype.hasobject or \
            not isinstance(data, (bytes, bytearray)) or len(data) != dtype.itemsize:
        raise CheckpointError("a damaged NumPy scalar")
    return np.frombuffer(bytes(data), dtype=dtype, count=1)[0]


def _numpy_array(subtype, shape, dtype):
    """an empty NumPy array that pickle's BUILD then fills (its
    __setstate__): plain ndarrays only"""
    if subtype is not np.ndarray:
        raise CheckpointError("a NumPy array subclass")
    return np.ndarray.__new__(np.ndarray, shape, dtype)


def _latin1_bytes(text, encoding="latin1"):
    """_codecs.encode as protocol 2 pickles bytes (a NumPy scalar's)"""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise CheckpointError("an encoded string other than latin-1 bytes")
    return text.encode("latin1")


# every global a checkpoint's pickle may name, and what stands for it
# (the tensor classes only as _rebuild_from_type's type, which it ignores)
_ALLOWED = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type,
    ("torch", "Size"): tuple,
    ("torch", "Tensor"): None, ("torch.nn.parameter", "Parameter"): None,
    ("numpy.core.multiarray", "scalar"): _numpy_scalar,
    ("_codecs", "encode"): _latin1_bytes,
    ("numpy.core.multiarray", "_reconstruct"): _numpy_array,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
    ("builtins", "slice"): slice, ("builtins", "complex"): complex,
}


def _refuse_opcode(self):
    raise CheckpointError("a pickle opcode for mutable or out-of-band buffers")


class _Unpickler(pickle._Unpickler):
    """pickle's Python unpickler (whose opcode table can be changed): a
    bytearray (BYTEARRAY8) under a NumPy array would leave the array on
    freed memory once the pickle drops it, so the buffer opcodes of
    protocol 5, which torch.save never writes, are refused"""
    dispatch = dict(pickle._Unpickler.dispatch)
    for _op in (pickle.BYTEARRAY8, pickle.NEXT_BUFFER, pickle.READONLY_BUFFER):
        dispatch[_op[0]] = _refuse_opcode
    del _op

    def __init__(self, data, read_storage):
        super().__init__(io.BytesIO(data))
        self._read_storage = read_storage
        self._storages = {}

    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return _ALLOWED[(module, name)]
        if module == "torch" and name in _STORAGES:
            return name
        if module == "torch" and name in _DTYPES:
            return getattr(_C, _DTYPES[name])
        raise CheckpointError(
            f"it pickles a '{module}.{name}': tensorgraph reads tensors, parameters, dicts, "
            "lists, tuples and numbers from PyTorch files (save a state_dict, not a module)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise CheckpointError(f"an unknown persistent id {pid!r:.80}")
        kind, key, _location, numel = pid[1:]
        if kind not in _STORAGES:
            raise CheckpointError(f"a storage of type {kind!r:.40} (supported: "
                                  f"{', '.join(sorted(_STORAGES))})")
        if key not in self._storages:
            dt, to = _STORAGES[kind]
            raw = self._read_storage(str(key))
            itemsize = np.dtype(dt).itemsize
            if not isinstance(numel, int) or numel < 0 or len(raw) < numel * itemsize:
                raise CheckpointError(f"storage {key} holds {len(raw)} bytes, less than "
                                      f"{numel!r:.20} elements of {itemsize}")
            self._storages[key] = _Storage(_widen(np.frombuffer(raw, dt, numel), to))
        return self._storages[key]


def is_torch_zip(head):
    return head[:4] == b"PK\x03\x04"


def is_legacy_torch(head):
    """the format before PyTorch 1.6: a pickle (protocol 2) of a magic number"""
    return head[:2] == b"\x80\x02" and head[2:3] == b"\x8a"


def load(path):
    try:
        with zipfile.ZipFile(path) as z:
            pkl = [n for n in z.namelist() if n.endswith("data.pkl") and n.count("/") <= 1]
            if len(pkl) != 1:
                raise CheckpointError("no data.pkl (not a torch.save file)")
            prefix = pkl[0][:-len("data.pkl")]
            if prefix + "byteorder" in z.namelist() and \
                    z.read(prefix + "byteorder").strip() not in (b"little", b""):
                raise CheckpointError("big-endian storages")

            def read_storage(key):
                try:
                    return z.read(prefix + "data/" + key)
                except KeyError:
                    raise CheckpointError(f"storage '{key}' is missing") from None
            return _Unpickler(z.read(pkl[0]), read_storage).load()
    except CheckpointError as e:
        raise RuntimeError(f"load: '{path}' is not a PyTorch checkpoint tensorgraph can read: "
                           f"{e}") from None
    except (zipfile.BadZipFile, pickle.UnpicklingError, EOFError, ValueError, TypeError,
            KeyError, IndexError, AttributeError, OverflowError, MemoryError,
            RecursionError, NotImplementedError, OSError) as e:
        raise RuntimeError(f"load: '{path}' is a damaged PyTorch checkpoint "
                           f"({type(e).__name__}: {e})") from None
