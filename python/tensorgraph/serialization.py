"""tg.save / tg.load: safetensors files through the C writer (atomic) and
reader (hostile-input safe). PyTorch pickles arbitrary objects; here the
object is a (possibly nested) dict of tensors, as state_dicts are: nested
keys are joined with '.', and non-tensor leaves (ints, floats, strings,
as optimizer hyper-parameters are) go to the file's metadata."""
import errno
import json
import os
import tempfile
from collections import OrderedDict

from . import _C

_META_KEY = "tensorgraph.nonTensor"


def _flatten(obj, prefix, tensors, other):
    if isinstance(obj, _C.Tensor):
        tensors[prefix] = obj.detach()
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, (str, int)):
                raise TypeError(f"save: dict keys must be str or int, got {type(k).__name__}")
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), tensors, other)
    elif isinstance(obj, (list, tuple)) and any(isinstance(v, (_C.Tensor, dict)) for v in obj):
        for i, v in enumerate(obj):
            _flatten(v, f"{prefix}.{i}" if prefix else str(i), tensors, other)
    else:
        try:
            json.dumps(obj)
        except TypeError:
            raise TypeError(f"save: cannot store a {type(obj).__name__} (only tensors, dicts "
                            "and JSON values: the format is safetensors)") from None
        other[prefix] = obj


def save(obj, f):
    """Writes obj (a tensor or a nested dict of tensors) to the path f, or
    into f when it is a file object opened for binary writing (io.BytesIO)."""
    tensors, other = OrderedDict(), OrderedDict()
    _flatten(obj, "", tensors, other)
    if "" in tensors:
        tensors = OrderedDict([("tensor", tensors.pop(""))])
        other[""] = "__single_tensor__"
    meta = {_META_KEY: json.dumps(other)} if other else {}
    if hasattr(f, 'write') and not isinstance(f, (str, bytes, os.PathLike)):
        with tempfile.TemporaryDirectory() as d:  # a file object: the file's bytes
            path = os.path.join(d, 'tensors.safetensors')
            _C._save_safetensors(path, tensors, meta)
            with open(path, 'rb') as tmp:
                f.write(tmp.read())
        return
    path = os.fspath(f)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):  # PyTorch's RuntimeError, before any work
        raise RuntimeError(f"save: parent directory {parent} of '{path}' does not exist")
    if os.path.isdir(path):  # PyTorch's RuntimeError ("cannot be opened")
        raise RuntimeError(f"save: '{path}' is a directory, not a file")
    _C._save_safetensors(path, tensors, meta)


def load(f, map_location=None, weights_only=True):
    """Reads a file written by save (or any safetensors file) as an
    OrderedDict name -> tensor (nested names stay dotted, as state_dict keys).
    f is a path, or a file object read from its position to the end."""
    if hasattr(f, 'read') and not isinstance(f, (str, bytes, os.PathLike)):
        data = f.read()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'tensors.safetensors')
            with open(path, 'wb') as tmp:
                tmp.write(data)
            return load(path, map_location, weights_only)
    path = os.fspath(f)
    if not os.path.exists(path):  # PyTorch's FileNotFoundError (an OSError)
        raise FileNotFoundError(errno.ENOENT, "load: no such file", path)
    if os.path.isdir(path):  # PyTorch's IsADirectoryError (open() fails)
        raise IsADirectoryError(errno.EISDIR, "load: a directory, not a file", path)
    names, tensors, meta = _C._load_safetensors(path)
    out = OrderedDict(zip(names, tensors))
    other = json.loads(meta.get(_META_KEY, "{}"))
    if other.get("") == "__single_tensor__":
        return out["tensor"]
    out.update(other)
    return out
