"""ParameterList and ParameterDict: parameters held in a list or dict,
registered under their index or key (state_dict keys '0', '1', ... or the
dict's keys), as PyTorch's. Plain tensors become Parameters on insertion,
as in PyTorch."""
from .. import _C
from .module import Module
from .parameter import Parameter


def _as_param(value):
    if isinstance(value, _C.Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _key(self, idx):
        if not -self._size <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % self._size)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(self._size)[idx]])
        key = self._key(idx)
        return self._parameters[key] if key in self._parameters else getattr(self, key)

    def __setitem__(self, idx, param):
        key = self._key(idx)
        param = _as_param(param)
        if isinstance(param, Parameter):
            self.register_parameter(key, param)
        else:
            object.__setattr__(self, key, param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(self._size))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return _entries_repr(enumerate(self), lambda p: p.dtype)


def _entries_repr(items, kind):
    """the containers' extra_repr: one line per entry, PyTorch's words"""
    lines = []
    for k, p in items:
        if isinstance(p, _C.Tensor):
            what = "Parameter" if isinstance(p, Parameter) else "Tensor"
            lines.append(f"  ({k}): {what} containing: [{kind(p)} of size "
                         f"{'x'.join(map(str, p.shape))}]")
        else:
            lines.append(f"  ({k}): Object of type: {type(p).__name__}")
    return '\n'.join(lines)


class ParameterDict(Module):
    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, value):
        value = _as_param(value)
        if not isinstance(value, Parameter) and value is not None:
            raise TypeError(f"cannot assign '{type(value).__name__}' object to parameter "
                            f"'{key}' (nn.Parameter or None required)")
        self.register_parameter(key, value)

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def get(self, key, default=None):
        return self._parameters.get(key, default)

    def pop(self, key):
        return self._parameters.pop(key)

    def clear(self):
        self._parameters.clear()

    def update(self, parameters):
        items = parameters.items() if hasattr(parameters, 'items') else parameters
        for k, v in items:
            self[k] = v

    def extra_repr(self):
        # PyTorch 1.13 names the dict's entries by typename, the list's by dtype
        from .._ops_aten import typename
        return _entries_repr(self.items(), typename)
