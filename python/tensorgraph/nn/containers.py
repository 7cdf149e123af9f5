"""Sequential, ModuleList, ModuleDict."""
from collections import OrderedDict

from .module import Module


class Sequential(Module):
    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, idx):
        if isinstance(idx, slice):  # keeps the names, as PyTorch's ('1', '2' for [1:])
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key(idx)]

    def _key(self, idx):
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules)[idx % n]

    def __setitem__(self, idx, module):
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx):
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key(idx)]
        for k in keys:
            del self._modules[k]
        # the rest renumbered 0..n-1, as PyTorch's
        mods = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def _renumber(self, mods):
        self._modules.clear()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        mods = list(self._modules.values())
        mods.insert(index + n if index < 0 else index, module)
        self._renumber(mods)
        return self

    def extend(self, sequential):
        for m in sequential:
            self.append(m)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential(*list(self), *list(other))

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return self.extend(list(other))

    def __mul__(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__


class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        for m in modules or []:
            self.append(m)

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def _abs_index(self, idx):
        """PyTorch's check of an integer index, and its key"""
        import operator
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f'index {idx} is out of range')
        return str(idx + len(self) if idx < 0 else idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._abs_index(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._abs_index(idx), module)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(list(self) + list(other)):
            combined.add_module(str(i), module)
        return combined

    def _renumber(self, mods):
        """the modules under the keys '0', '1', ... again, as PyTorch keeps them"""
        self._modules.clear()
        for m in mods:
            self.append(m)

    def insert(self, index, module):
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._renumber(mods)

    def __delitem__(self, idx):
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            del mods[idx]
        else:
            del mods[int(self._abs_index(idx))]
        self._renumber(mods)

    def pop(self, key):
        m = self[key]
        del self[key]
        return m

    def __iadd__(self, modules):
        return self.extend(modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules):
        """adds a mapping's items, or (key, module) pairs, in their order"""
        from collections import abc
        if not isinstance(modules, abc.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (abc.Mapping, ModuleDict)):
            for k, m in modules.items():
                self[k] = m
            return
        for j, m in enumerate(modules):
            if not isinstance(m, abc.Iterable):
                raise TypeError("ModuleDict update sequence element #" + str(j) +
                                " should be Iterable; is" + type(m).__name__)
            if len(m) != 2:
                raise ValueError("ModuleDict update sequence element #" + str(j) +
                                 " has length " + str(len(m)) + "; 2 is required")
            self[m[0]] = m[1]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def clear(self):
        self._modules.clear()

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()
