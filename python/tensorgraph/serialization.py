"""tg.save / tg.load: safetensors files through the C writer (atomic) and
reader (hostile-input safe). PyTorch pickles arbitrary objects; here the
object is a tensor or (possibly nested) dicts and lists of tensors and
JSON values, as state_dicts and checkpoints ({'model': ..., 'optimizer':
..., 'epoch': 3}) are: tensors are stored under their keys joined with
'.', non-tensor leaves go to the file's metadata, and so does the
object's skeleton, from which load gives back the same structure (a file
without one, from elsewhere, loads as a flat dict of its tensors). load
also reads what torch.save writes (_torch_checkpoint.py)."""
import errno
import json
import os
import tempfile
from collections import OrderedDict

from . import _C, _torch_checkpoint

_META_KEY = "tensorgraph.nonTensor"
_STRUCT_KEY = "tensorgraph.structure"


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


def _skeleton(obj, prefix):
    """obj as JSON with each tensor replaced by its stored name (the names
    _flatten gives)"""
    name = (lambda k: f"{prefix}.{k}" if prefix else str(k))
    if isinstance(obj, _C.Tensor):
        return {"t": prefix}
    if isinstance(obj, dict):
        return {"d": [[k, _skeleton(v, name(k))] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):  # tuples come back as tuples (betas)
        return {"l": [_skeleton(v, name(i)) for i, v in enumerate(obj)],
                "tuple": isinstance(obj, tuple)}
    return {"v": obj}


def _rebuild(node, tensors):
    if "t" in node:
        return tensors[node["t"]]
    if "d" in node:
        return OrderedDict((k, _rebuild(v, tensors)) for k, v in node["d"])
    if "l" in node:
        items = [_rebuild(v, tensors) for v in node["l"]]
        return tuple(items) if node["tuple"] else items
    return node["v"]


def save(obj, f):
    """Writes obj (a tensor or a nested dict of tensors) to the path f, or
    into f when it is a file object opened for binary writing (io.BytesIO)."""
    tensors, other = OrderedDict(), OrderedDict()
    _flatten(obj, "", tensors, other)
    if "" in tensors:
        tensors = OrderedDict([("tensor", tensors.pop(""))])
        other[""] = "__single_tensor__"
    meta = {_META_KEY: json.dumps(other)} if other else {}
    if isinstance(obj, (dict, list, tuple)):
        meta[_STRUCT_KEY] = json.dumps(_skeleton(obj, ""))
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
    """Reads a file written by save as the object saved (dicts as
    OrderedDicts), any other safetensors file as an OrderedDict name ->
    tensor, or a file written by torch.save (PyTorch 1.6 on) as the object
    PyTorch saved, when it is made of tensors, parameters, dicts, lists and
    numbers (_torch_checkpoint.py; nothing in it is run). f is a path, or a
    file object read from its position to the end."""
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
    head = b""
    if os.path.isfile(path):  # a regular file: a FIFO's open would block here
        with open(path, 'rb') as fh:
            head = fh.read(16)
    if _torch_checkpoint.is_torch_zip(head):
        return _torch_checkpoint.load(path)
    if _torch_checkpoint.is_legacy_torch(head):
        raise RuntimeError(f"load: '{path}' is a PyTorch file in the format before PyTorch 1.6, "
                           "which tensorgraph does not read; save it again with torch.save "
                           "(its zip format) or as safetensors")
    names, tensors, meta = _C._load_safetensors(path)
    out = OrderedDict(zip(names, tensors))
    try:  # the metadata is the file's, as hostile as the rest of it
        other = json.loads(meta.get(_META_KEY, "{}"))
        if not isinstance(other, dict):
            raise TypeError(f"{_META_KEY} is not a JSON object")
        if other.get("") == "__single_tensor__":
            return out["tensor"]
        if _STRUCT_KEY in meta:
            return _rebuild(json.loads(meta[_STRUCT_KEY]), out)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        raise RuntimeError(f"load: the structure recorded in '{path}' does not match its "
                           f"tensors ({type(e).__name__}: {e})") from None
    out.update(other)
    return out
