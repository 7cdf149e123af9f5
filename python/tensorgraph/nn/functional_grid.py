"""Spatial transformers, composed of ops (so autograd reaches the input and
the grid, and they trace into tg.function): affine_grid, the sampling
grid of affine matrices, and grid_sample: bilinear, nearest or bicubic
sampling of 4-D inputs, trilinear or nearest sampling of 5-D inputs, with
PyTorch's padding modes and align_corners."""
from .. import _C
from .._creation import arange, ones, tensor, zeros

__all__ = ['affine_grid', 'grid_sample']


def _base(n, align_corners, dtype):
    """the normalized coordinates of n pixel centres (or edges' ends)"""
    if n == 1:
        return tensor([0.0], dtype=dtype)
    r = arange(n, dtype=dtype) * (2.0 / (n - 1)) - 1.0
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """the [N, H, W, 2] (or [N, D, H, W, 3]) grid of theta [N, 2, 3] (or
    [N, 3, 4]) applied to the base coordinates of size [N, C, H, W] (or
    [N, C, D, H, W]); x varies along W, as PyTorch"""
    align_corners = bool(align_corners)
    size = list(size)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    nd = len(size) - 2
    if nd not in (2, 3):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if tuple(theta.shape) != (size[0], nd, nd + 1):
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} "
                         f"for size {size}. Got {list(theta.shape)}.")
    if min(size[2:]) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    spatial = size[2:]  # (H, W) or (D, H, W); coordinates are ordered x, y(, z)
    axes = []
    for k, n in enumerate(reversed(spatial)):  # x over the last dim, then y, z
        shape = [1] * nd
        shape[nd - 1 - k] = n
        axes.append(_base(n, align_corners, theta.dtype).reshape(*shape).expand(*spatial))
    axes.append(ones(*spatial, dtype=theta.dtype))
    base = _C.stack(axes, dim=-1).reshape(1, -1, nd + 1)  # [1, P, nd + 1]
    grid = _C.matmul(base, theta.transpose(1, 2))          # [N, P, nd]
    return grid.reshape(size[0], *spatial, nd)


def _unnormalize(coord, n, align_corners):
    if align_corners:
        return (coord + 1.0) * ((n - 1) / 2.0)
    return ((coord + 1.0) * n - 1.0) / 2.0


def _reflect(coord, twice_low, twice_high):
    """coord reflected into [twice_low / 2, twice_high / 2]"""
    if twice_low == twice_high:
        return coord * 0.0
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    c = (coord - low).abs()
    flips = _C.floor(c / span)
    extra = c - flips * span
    even = _C.remainder(flips, 2.0) == 0
    return _C.where(even, extra + low, (span - extra) + low)


def _pad_coord(c, n, padding_mode, align_corners):
    """a pixel coordinate along an axis of n moved inside by the padding mode
    (zeros: unchanged; positions outside read 0)"""
    if padding_mode == 'border':
        return c.clamp(0.0, n - 1.0)
    if padding_mode == 'reflection':
        c = _reflect(c, 0, 2 * (n - 1)) if align_corners else _reflect(c, -1, 2 * n - 1)
        return c.clamp(0.0, n - 1.0)
    return c


def _source(coord, n, padding_mode, align_corners):
    return _pad_coord(_unnormalize(coord, n, align_corners), n, padding_mode, align_corners)


def _pick(flat, idx, dims):
    """flat [N, C, prod(dims)] at the integer coordinates idx (x, y(, z), each
    [N, *out]; dims are the input's spatial sizes, x's last): the values
    [N, C, *out], 0 where a coordinate lies outside"""
    inside, lin, stride = None, None, 1
    for i, n in zip(idx, reversed(dims)):
        ok = (i >= 0) & (i <= n - 1)
        inside = ok if inside is None else inside & ok
        term = i.clamp(0, n - 1) * stride
        lin = term if lin is None else lin + term
        stride *= n
    out = list(idx[0].shape[1:])
    q = 1
    for d in out:
        q *= d
    nb, c = flat.shape[0], flat.shape[1]
    lin = lin.long().reshape(nb, 1, q).expand(nb, c, q)
    v = _C.gather(flat, 2, lin).reshape(nb, c, *out)
    return _C.where(inside.unsqueeze(1), v, zeros(1, dtype=flat.dtype))


def _cubic_weights(t):
    """the four taps' weights (at floor - 1 .. floor + 2) of PyTorch's cubic
    convolution (A = -0.75) at fraction t [N, 1, *out]"""
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def _check(input, grid, mode, padding_mode):
    if mode not in ('bilinear', 'nearest', 'bicubic'):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ('zeros', 'border', 'reflection'):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    nd = input.ndim - 2
    if nd not in (2, 3) or grid.ndim != input.ndim or grid.shape[-1] != nd or \
            grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sample(): expected a 4-D input [N, C, H, W] with a grid "
                           f"[N, H_out, W_out, 2], or a 5-D input [N, C, D, H, W] with a grid "
                           f"[N, D_out, H_out, W_out, 3], of the same batch, got input of shape "
                           f"{list(input.shape)} and grid of shape {list(grid.shape)}")
    if mode == 'bicubic' and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sample(): expected input and grid to have the same dtype, "
                           f"but input has {input.dtype} and grid has {grid.dtype}")


def grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None):
    """input [N, C, H, W] sampled at grid [N, Ho, Wo, 2] (x, y in [-1, 1]), or
    [N, C, D, H, W] at [N, Do, Ho, Wo, 3] (x, y, z); mode 'bilinear'
    (trilinear on 5-D), 'nearest' (halves to even, as PyTorch) or 'bicubic'
    (4-D; each of the 4x4 taps moved inside by the padding mode, as PyTorch),
    padding_mode 'zeros', 'border' or 'reflection'"""
    _check(input, grid, mode, padding_mode)
    align_corners = bool(align_corners)
    dims = list(input.shape[2:])
    nd = len(dims)
    flat = input.reshape(input.shape[0], input.shape[1], -1)
    sizes = list(reversed(dims))  # x's extent first
    if mode == 'bicubic':
        x, y = (_unnormalize(grid[..., j], sizes[j], align_corners) for j in range(2))
        x0, y0 = _C.floor(x), _C.floor(y)
        wx = _cubic_weights((x - x0).unsqueeze(1))
        wy = _cubic_weights((y - y0).unsqueeze(1))
        out = None
        for i in range(4):
            iy = _pad_coord(y0 + (i - 1), sizes[1], padding_mode, align_corners)
            row = None
            for k in range(4):
                ix = _pad_coord(x0 + (k - 1), sizes[0], padding_mode, align_corners)
                term = _pick(flat, [ix, iy], dims) * wx[k]
                row = term if row is None else row + term
            out = row * wy[i] if out is None else out + row * wy[i]
        return out
    src = [_source(grid[..., j], sizes[j], padding_mode, align_corners) for j in range(nd)]
    if mode == 'nearest':
        out = _pick(flat, [_C.round(c) for c in src], dims)
        if grid.requires_grad:  # PyTorch's grid gradient: zeros, not None
            never = zeros((), dtype=_C.bool)
            out = out + _C.where(never, grid.reshape(-1)[:1].sum(), zeros((), dtype=out.dtype))
        return out
    base = [_C.floor(c) for c in src]
    frac = [(c - b).unsqueeze(1) for c, b in zip(src, base)]
    out = None
    for corner in range(1 << nd):
        idx, weight = [], None
        for j in range(nd):
            up = (corner >> j) & 1
            idx.append(base[j] + up)
            f = frac[j] if up else 1.0 - frac[j]
            weight = f if weight is None else weight * f
        term = _pick(flat, idx, dims) * weight
        out = term if out is None else out + term
    return out
