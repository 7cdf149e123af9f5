"""PyTorch's shape and array functions that compose existing ops (and
tril/triu, which call the C op),
flip/roll/rot90, diag/diagonal/trace, repeat_interleave, narrow/select/
unbind, movedim, unflatten, broadcast_to, meshgrid, the stacks, outer/dot/
tensordot, scatter/scatter_add/index_add, nonzero/masked_select. Index
tensors are built with arange and used through index_select/gather/where,
so the results are differentiable (and traceable by tg.function) wherever
PyTorch's are differentiable; the data-dependent ones (nonzero,
masked_select, repeat_interleave with tensor repeats) read values on the
host and run eagerly only."""
import builtins

import numpy as np

from . import _C
from ._size import Size
from ._creation import _one_size, arange, full, tensor, zeros

Tensor = _C.Tensor

__all__ = ['tril', 'triu', 'flip', 'fliplr', 'flipud', 'roll', 'rot90', 'diag', 'diagonal', 'as_strided',
           'diag_embed', 'trace', 'repeat_interleave', 'narrow', 'select', 'unbind', 'movedim',
           'moveaxis', 'unflatten', 'broadcast_to', 'broadcast_tensors', 'broadcast_shapes',
           'meshgrid', 'atleast_1d', 'atleast_2d', 'atleast_3d', 'hstack', 'vstack', 'dstack',
           'column_stack', 'row_stack', 'outer', 'ger', 'dot', 'vdot', 'inner', 'tensordot',
           'scatter', 'scatter_add', 'index_add', 'index_fill', 'index_copy', 'nonzero',
           'argwhere', 'masked_select', 'count_nonzero', 't']


def _dim(d, ndim, name='dim'):
    """d wrapped into [0, ndim) with PyTorch's IndexError"""
    n = builtins.max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {d})")
    return d % n


def _dims(dims, ndim):
    dims = [dims] if isinstance(dims, int) else list(dims)
    out = [_dim(d, ndim) for d in dims]
    if len(set(out)) != len(out):
        raise RuntimeError(f"dims has duplicates: {dims}")
    return out


def _zero(x):
    return zeros((), dtype=x.dtype)


def tril(input, diagonal=0):
    """the lower triangle (column - row <= diagonal) of the last two dims
    (the C op tril; a Python function so that Tensor.tril_ can wrap it)"""
    return _C.tril(input, diagonal)


def triu(input, diagonal=0):
    """the upper triangle (column - row >= diagonal) of the last two dims"""
    return _C.triu(input, diagonal)


def _reversed_index(n):
    return arange(n - 1, -1, -1) if n else arange(0)


def flip(input, dims):
    """a copy with the order of the given dims reversed"""
    picked = _dims(dims, input.ndim)  # checked also for a 0-d input (dim 0 or -1)
    if input.ndim == 0:
        return input.clone()
    for d in picked:
        input = _C.index_select(input, d, _reversed_index(input.shape[d]))
    return _C._set_grad_fn_name(input, 'FlipBackward0') if dims else input.clone()


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def roll(input, shifts, dims=None):
    """elements shifted along dims, wrapping around (dims None: the
    flattened tensor, shape kept)"""
    if dims is None:
        if not isinstance(shifts, int):
            if len(shifts) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                                   f"dims:0")
            shifts = shifts[0]
        return _C._untrack_view(_C._set_grad_fn_name(
            roll(input.flatten(), shifts, 0).view(input.shape), 'RollBackward0'))
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    given = input
    for s, d in zip(shifts, dims):
        d = _dim(d, input.ndim)
        n = input.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            input = _C.cat([input.narrow(d, n - s, s), input.narrow(d, 0, n - s)], d)
    return input if input is given else _C._set_grad_fn_name(input, 'RollBackward0')


def rot90(input, k=1, dims=(0, 1)):
    """rotation by 90 degrees k times in the plane dims, from the first
    towards the second"""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _dim(dims[0], input.ndim), _dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:  # a copy, as PyTorch's: no view of the flipped temporary
        r = _C._untrack_view(flip(input, [d1]).transpose(d0, d1))
    elif k == 2:
        r = flip(input, [d0, d1])
    elif k == 3:
        r = _C._untrack_view(flip(input, [d0]).transpose(d0, d1))
    else:
        r = input.clone()
    return _C._set_grad_fn_name(r, 'Rot90Backward0')


def diagonal(input, offset=0, dim1=0, dim2=1):
    """the diagonal of the (dim1, dim2) planes as the last dim: a view, as
    PyTorch's (writes through it reach input)"""
    return _C._diagonal(input, offset, dim1, dim2)


def as_strided(input, size, stride, storage_offset=None):
    """a view of input's memory with these sizes and strides, starting at
    storage_offset (input's own by default), as PyTorch's. The view must
    lie within the memory input spans (PyTorch allows the rest of the
    storage too); its gradient is PyTorch's as_strided_backward"""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} sizes, "
                           f"{len(stride)} strides")
    base = input.storage_offset()
    offset = base if storage_offset is None else storage_offset
    return _C._as_strided(input, size, stride, offset - base)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """the last dim of input as diagonals of new (dim1, dim2) planes"""
    n = input.shape[-1] + builtins.abs(offset)
    i = arange(n).unsqueeze(1)
    j = arange(n).unsqueeze(0)
    # value for (i, j) on the diagonal: input[..., min(i, j)]
    k = _C.minimum(i, j).clamp(None, builtins.max(input.shape[-1] - 1, 0))
    # an empty last dim: zeros that still reach input (its zero gradient)
    v = unflatten(_C.index_select(input, -1, k.flatten()), -1, (n, n)) if input.shape[-1] else \
        input.sum(-1, keepdim=True).to(input.dtype).unsqueeze(-1).expand(*input.shape[:-1], n, n)
    out = _C.where((j - i) == offset, v, _zero(input))
    nd = out.ndim
    r = movedim(out, (nd - 2, nd - 1), (_dim(dim1, nd), _dim(dim2, nd)))
    del out  # r is a copy, as PyTorch's: no view of the temporary
    return _C._untrack_view(r)


def diag(input, diagonal=0):
    """1-D: a square matrix with input on the given diagonal; 2-D: that
    diagonal as a 1-D tensor"""
    if not isinstance(diagonal, int):
        raise TypeError(f"diag(): argument 'diagonal' must be int, not {type(diagonal).__name__}")
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return globals()['diagonal'](input, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    from ._ops import sum as _sum
    return _C._set_grad_fn_name(_sum(diagonal(input)), 'TraceBackward0')


def _repeat_index(repeats, n):
    r = np.asarray(repeats.detach().numpy() if isinstance(repeats, Tensor) else repeats)
    if r.ndim == 0:
        r = np.full(n, int(r))
    if r.ndim != 1 or (r.size != n and r.size != 1):
        raise RuntimeError("repeats must have the same size as input along dim")
    if r.size == 1:
        r = np.full(n, int(r[0]))
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    return tensor(np.repeat(np.arange(n), r), dtype=_C.int64)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """each element (slice along dim) repeated repeats times in place;
    repeat_interleave(r) alone gives the indices 0..len(r)-1 repeated"""
    if repeats is None:  # torch.repeat_interleave(repeats_tensor)
        if input.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return _repeat_index(input, input.shape[0])
    if isinstance(repeats, Tensor) and repeats.dtype.is_floating_point:
        raise RuntimeError("repeat_interleave: repeats must be an integer tensor")
    if dim is None:
        input, dim = input.flatten(), 0
    dim = _dim(dim, input.ndim)
    idx = _repeat_index(repeats, input.shape[dim])
    if output_size is not None and idx.shape[0] != output_size:
        raise RuntimeError("repeat_interleave: output_size does not match the repeats")
    return _C.index_select(input, dim, idx)


def narrow(input, dim, start, length):
    """a view of length elements from start along dim (negative start
    counts from the end)"""
    dim = _dim(dim, input.ndim)
    n = input.shape[dim]
    if isinstance(start, Tensor):
        start = int(start.item())
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but "
                         f"got {start})")
    start %= builtins.max(n, 1) if start < 0 else n + 1
    if length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({n}).")
    return input[(slice(None),) * dim + (slice(start, start + length),)]


def select(input, dim, index):
    """the slice at index along dim, that dim removed (a view)"""
    dim = _dim(dim, input.ndim)
    n = input.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return input[(slice(None),) * dim + (index % n,)]


def unbind(input, dim=0):
    dim = _dim(dim, input.ndim)
    return _C._mark_multi_output(tuple(select(input, dim, i) for i in range(input.shape[dim])),
                                 'unbind')


def movedim(input, source, destination):
    """dims source moved to positions destination, the others keeping
    their order"""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    nd = input.ndim
    src, dst = _dims(src, nd), _dims(dst, nd)
    perm = [-1] * nd
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    perm = [p if p >= 0 else next(rest) for p in perm]
    return input.permute(*perm) if nd else input


moveaxis = movedim


def unflatten(input, dim, sizes):
    dim = _dim(dim, input.ndim)
    sizes = list(sizes)
    return _C._set_grad_fn_name(input.reshape(*input.shape[:dim], *sizes, *input.shape[dim + 1:]),
                                'ViewBackward0')


def broadcast_shapes(*shapes):
    out = []
    for s in shapes:
        s = (s,) if isinstance(s, int) else tuple(s)
        out = [1] * (len(s) - len(out)) + out
        s = (1,) * (len(out) - len(s)) + s
        for i, (a, b) in enumerate(zip(out, s)):
            if a != b and a != 1 and b != 1:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single "
                                   f"shape.  Mismatch is between {a} and {b} at dim {i}")
            out[i] = b if a == 1 else a
    return Size(out)


def broadcast_to(input, size):
    return input.expand(*_one_size(size))


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t.shape for t in tensors))
    # all 0-d: views of themselves (expand takes at least one size)
    return tuple(t.expand(*shape) if shape else t.view(()) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """coordinate grids; indexing 'ij' (PyTorch's default) or 'xy'"""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = indexing or 'ij'
    if indexing not in ('ij', 'xy'):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list")
    ts = [t.reshape(-1) for t in tensors]
    swap = indexing == 'xy' and len(ts) >= 2  # 'ij' grids with the first two dims swapped
    shape = [t.shape[0] for t in ts]
    n = len(ts)
    out = [t.reshape(*([1] * i + [-1] + [1] * (n - i - 1))).expand(*shape) for i, t in enumerate(ts)]
    if swap:
        out = [o.transpose(0, 1) for o in out]
    return tuple(out)


def _atleast(n):
    def f(*tensors):
        single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
        if len(tensors) == 1 and not single:
            tensors = tuple(tensors[0])
        out = []
        for t in tensors:
            if t.ndim < n:
                shape = {1: (1,) + t.shape, 2: (1,) * (2 - t.ndim) + t.shape,
                         3: {0: (1, 1, 1), 1: (1,) + t.shape + (1,), 2: t.shape + (1,)}.get(t.ndim)}
                t = t.reshape(*shape[n])
            out.append(t)
        return out[0] if single else tuple(out)
    f.__name__ = f'atleast_{n}d'
    return f


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def _check_list(tensors, name):
    if isinstance(tensors, Tensor) or not len(tensors):
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return list(tensors)


def hstack(tensors):
    ts = atleast_1d(*_check_list(tensors, 'hstack'))
    ts = ts if isinstance(ts, tuple) else (ts,)
    return _C.cat(list(ts), 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    ts = atleast_2d(*_check_list(tensors, 'vstack'))
    return _C.cat(list(ts) if isinstance(ts, tuple) else [ts], 0)


row_stack = vstack


def dstack(tensors):
    ts = atleast_3d(*_check_list(tensors, 'dstack'))
    return _C.cat(list(ts) if isinstance(ts, tuple) else [ts], 2)


def column_stack(tensors):
    ts = [t.reshape(-1, 1) if t.ndim <= 1 else t for t in _check_list(tensors, 'column_stack')]
    return _C.cat(ts, 1)


def outer(input, vec2):
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError("outer: expected 1-D tensors")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer


def dot(input, other):
    """the inner product of two 1-D tensors of one dtype (one matmul)"""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors")
    if input.dtype != other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{input.dtype} and {other.dtype}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{other.shape[0]}] to have the same number of elements, but "
                           f"got {input.shape[0]} and {other.shape[0]} elements respectively")
    return _C.matmul(input, other)


vdot = dot  # real dtypes only: no conjugation to do


def inner(input, other):
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def tensordot(a, b, dims=2, out=None):
    """sums products over dims of a and b (an int n: a's last n with b's
    first n; or two lists) as one matmul"""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = _dims(range(-dims, 0), a.ndim), _dims(range(dims), b.ndim)
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da, db = _dims(da, a.ndim) if da else [], _dims(db, b.ndim) if db else []
    for i, j in zip(da, db):
        # a size 1 against another broadcasts: the other side summed over
        # that dim first, as PyTorch's
        if b.shape[j] == 1 and a.shape[i] != 1:
            a = a.sum(i, keepdim=True)
        elif a.shape[i] == 1 and b.shape[j] != 1:
            b = b.sum(j, keepdim=True)
        elif a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in "
                               f"dim {j}")
    fa = [i for i in range(a.ndim) if i not in da]
    fb = [i for i in range(b.ndim) if i not in db]
    k = int(np.prod([a.shape[i] for i in da]))
    am = a.permute(*fa, *da).reshape(-1, k) if a.ndim else a.reshape(1, 1)
    bm = b.permute(*db, *fb).reshape(k, -1) if b.ndim else b.reshape(1, 1)
    r = _C.matmul(am, bm).reshape(tuple([a.shape[i] for i in fa] + [b.shape[i] for i in fb]))
    if out is None:
        return r
    from ._out_arg import write_out
    return write_out('tensordot', out, r)


# PyTorch's scalar type names, which its index dtype messages use
_TORCH_NAMES = {'float32': 'Float', 'float64': 'Double', 'int32': 'Int', 'int64': 'Long',
                'uint8': 'Byte', 'bool': 'Bool'}


def torch_type_name(dtype):
    return _TORCH_NAMES.get(str(dtype).split('.')[-1], str(dtype))


def _check_scatter(name, input, dim, index, src):
    if index.dtype != _C.int64:  # PyTorch 1.13: int64 only, and says scatter() for all
        raise RuntimeError("scatter(): Expected dtype int64 for index" if name != 'gather'
                           else "gather(): Expected dtype int64 for index")
    if index.ndim != input.ndim or (isinstance(src, Tensor) and src.ndim != input.ndim):
        raise RuntimeError("Index tensor must have the same number of dimensions as self "
                           "tensor")
    for d in range(index.ndim):
        if index.shape[d] > (input.shape[d] if d != dim else np.inf) or \
                (isinstance(src, Tensor) and index.shape[d] > src.shape[d]):
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(index.shape)} to be smaller than self "
                               f"{list(input.shape)} apart from dimension {dim} and to be "
                               f"smaller size than src {list(src.shape) if isinstance(src, Tensor) else []}")


def check_index_bounds(index, n, dim):
    """every index within [0, n) (read on the host; a trace cannot)"""
    if index.numel() and not index.is_symbolic:
        lo, hi = int(_C.amin(index).item()), int(_C.amax(index).item())
        if lo < 0 or hi >= n:
            raise RuntimeError(f"index {hi if hi >= n else lo} is out of bounds for dimension "
                               f"{dim} with size {n}")


def _src_part(src, index):
    return src[tuple(slice(0, n) for n in index.shape)]


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """a copy of input with input[index[i][j]][j] = src[i][j] (dim 0): the C
    op scatter; reduce 'add' / 'multiply' combine instead (PyTorch's
    deprecated form)"""
    if src is None:
        src = value
    dim = _dim(dim, input.ndim)
    _check_scatter('scatter', input, dim, index, src)
    if reduce is None:  # the C op scatter
        s = src if isinstance(src, Tensor) else full(tuple(index.shape), src, dtype=input.dtype)
        return _C._set_grad_fn_name(_C._scatter(input, dim, index, s),  # PyTorch's value form: 1
                                    'ScatterBackward0' if isinstance(src, Tensor) else
                                    'ScatterBackward1')
    if reduce not in ('add', 'multiply'):
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    from ._ops_scatter import scatter_reduce
    s = _src_part(src, index) if isinstance(src, Tensor) else \
        full(tuple(index.shape), src, dtype=input.dtype)
    return scatter_reduce(input, dim, index, s, 'sum' if reduce == 'add' else 'prod')


def scatter_add(input, dim, index, src):
    """input plus src[i][j] added at [index[i][j]][j] (dim 0), repeated
    positions summed: a where over index == position for each position,
    summed along dim (exact: no products, so no NaN leaks between
    positions)"""
    dim = _dim(dim, input.ndim)
    _check_scatter('scatter_add', input, dim, index, src)
    n = input.shape[dim]
    check_index_bounds(index, n, dim)
    s = _src_part(src, index)
    pos = arange(n).reshape(*([1] * index.ndim), n)
    hit = index.to(_C.int64).unsqueeze(-1) == pos           # index.shape + [n]
    contrib = _C.where(hit, s.unsqueeze(-1), zeros((), dtype=s.dtype))
    contrib = _C.sum(contrib, dim)                            # dim summed away, n last
    contrib = movedim(contrib, -1, dim).to(input.dtype)
    pads = []
    for d in range(input.ndim):
        pads += [0, input.shape[d] - contrib.shape[d]]
    if builtins.any(pads):
        contrib = _C._pad(contrib, pads, 0)
    return _C._set_grad_fn_name(input + contrib, 'ScatterAddBackward0')


def _check_slice_index(name, index):
    """the index dtypes PyTorch 1.13 takes, each op with its own words"""
    if name == 'index_copy_' and index.dtype != _C.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{torch_type_name(index.dtype)}")
    if index.dtype not in (_C.int64, _C.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{torch_type_name(index.dtype)}")


def slice_index(name, input, dim, index, source):
    """(dim, index expanded to source's shape, as int64) for the index_*
    ops, which take whole slices of source along dim to positions index"""
    _check_slice_index(name, index)
    index = index.to(_C.int64)
    dim = _dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if source.ndim != builtins.max(input.ndim, 1) or source.shape[dim] != index.numel():
        raise RuntimeError(f"{name}(): Number of indices should be equal to source.size(dim)")
    idx = index.reshape(*([1] * dim), -1, *([1] * (source.ndim - dim - 1))).expand(*source.shape)
    return dim, idx


def index_add(input, dim, index, source, *, alpha=1):
    """input with alpha * source's slices added at index along dim"""
    dim, idx = slice_index('index_add_', input, dim, index, source)
    return _C._set_grad_fn_name(scatter_add(input, dim, idx, source * alpha if alpha != 1
                                            else source), 'IndexAddBackward0')


def index_copy(input, dim, index, source):
    dim, idx = slice_index('index_copy_', input, dim, index, source)
    return scatter(input, dim, idx, source)


def index_fill(input, dim, index, value):
    if index.dtype != _C.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    dim = _dim(dim, input.ndim)
    hit = _C.sum((index.reshape(-1, 1) == arange(input.shape[dim]).reshape(1, -1)).to(_C.int32), 0) > 0
    hit = hit.reshape(*([1] * dim), -1, *([1] * (input.ndim - dim - 1)))
    return _C.where(hit, value if isinstance(value, Tensor) else tensor(value, dtype=input.dtype),
                    input)


def _host(input, name):
    if input.is_symbolic:
        raise RuntimeError(f"{name}: the result's shape depends on the values, which a "
                           f"tg.function trace cannot read (run it eagerly)")
    return input.detach().numpy()


def nonzero(input, *, out=None, as_tuple=False):
    """the indices of nonzero elements: [n, ndim] int64; inside tg.function
    the C op, whose n is known when the graph runs"""
    if input.is_symbolic:
        y = _C._nonzero(input)
        if not as_tuple:
            return y
        return (y.reshape(-1),) if input.ndim == 0 else tuple(y[:, k] for k in range(input.ndim))
    a = _host(input, 'nonzero')
    if as_tuple:
        if a.ndim == 0:
            return (tensor(np.nonzero(np.atleast_1d(a))[0], dtype=_C.int64),)
        return tuple(tensor(i, dtype=_C.int64) for i in np.nonzero(a))
    if a.ndim == 0:  # PyTorch: [1, 0] when nonzero, [0, 0] when not
        return zeros((1 if a.item() else 0, 0), dtype=_C.int64)
    return tensor(np.argwhere(a).reshape(-1, a.ndim), dtype=_C.int64)


def argwhere(input):
    return nonzero(input)


def masked_select(input, mask):
    """the elements where mask (broadcast with input) is true, as 1-D"""
    if mask.dtype != _C.bool:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask")
    x, m = broadcast_tensors(input, mask)
    idx = nonzero(m.reshape(-1)).reshape(-1)
    return _C.index_select(x.reshape(-1), 0, idx)


def count_nonzero(input, dim=None):
    from ._argcheck import need_tensor
    need_tensor("count_nonzero", "input", 1, input)  # a list != 0 is a Python bool
    from ._ops import sum as _sum
    if isinstance(dim, _C.Tensor):
        # PyTorch's `int dim` takes a 0-d integer tensor (not a bool one)
        if dim.ndim != 0 or dim.dtype.is_floating_point or dim.dtype == _C.bool:
            raise TypeError("count_nonzero(): argument 'dim' must be int or tuple of ints, "
                            "not Tensor")
        dim = int(dim)
    return _sum((input != 0).to(_C.int64), dim)


def t(input):
    return input.t()
