"""tg.device: a device name, as torch.device, and a device scope for tracing.

    with tg.device('cpu:1'):
        h = layer2(h)          # inside a tg.function being traced

Nodes a tg.function traces inside the block are placed on that device
(the C library's tg_device_scope_begin); the function's session then
partitions its graph over the devices, one thread per device, joined by
Send/Recv pairs (docs/DISTRIBUTED.md). Eager code ignores the scope: every
tensor lives in the host's memory, whatever virtual device a graph node
runs on. Names: 'cpu', 'cpu:N', '/rank:R/cpu:N', or device('cpu', N).
"""
from . import _C


def check_eager_target(a, who):
    """to('cuda') & co. on a tensor or module: eager tensors live in host
    memory, so only 'cpu' names a place they can go (PyTorch's RuntimeError
    for a device it does not know)"""
    if isinstance(a, str) and a.split(':')[0] != 'cpu':
        raise RuntimeError(f"{who}: unknown device '{a}' (tensorgraph runs on 'cpu'); for "
                           "a dtype pass tensorgraph.float32 & co.")


class device:
    __slots__ = ('type', 'index', 'rank', '_depth')

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = str(type), None
        if not isinstance(type, str):
            raise TypeError("device(): expected a name such as 'cpu:1', got %r" % (type,))
        name = type if index is None else '%s:%d' % (type, index)
        kind, self.index, self.rank = _C._device_parse(name)
        self.type = kind
        if index is None and ':' not in type.rsplit('/', 1)[-1]:
            self.index = None  # 'cpu' without an index, as torch.device('cpu')
        self._depth = 0

    def _name(self):
        base = '%s:%d' % (self.type, self.index or 0)
        return '/rank:%d/%s' % (self.rank, base) if self.rank else base

    def __str__(self):
        return self._name() if self.index is not None or self.rank else self.type

    def __repr__(self):
        if self.index is None:
            return "device(type='%s')" % self.type
        return "device(type='%s', index=%d)" % (self.type, self.index)

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index or 0, self.rank) == \
            (other.type, other.index or 0, other.rank)

    def __hash__(self):
        return hash((self.type, self.index or 0, self.rank))

    def __enter__(self):
        _C._device_scope_begin(self._name())
        self._depth += 1
        return self

    def __exit__(self, *exc):
        self._depth -= 1
        _C._device_scope_end()
        return False


_CPU = device('cpu')


def _cuda(self, *args, **kwargs):
    from .cuda import _needs_cuda
    _needs_cuda()


# every eager tensor is in host memory: Tensor.device is device('cpu') (equal
# to 'cpu'), Tensor.cuda() raises PyTorch's AssertionError of a CPU-only build
_C._add_method('device', property(lambda self: _CPU, doc="device('cpu')"))
_C._add_method('cuda', _cuda)
