"""Spatial transformers, composed of ops (so autograd reaches the input and
the grid, and they trace into tg.function): affine_grid, the sampling
grid of affine matrices, and grid_sample, bilinear or nearest sampling of
4-D inputs with PyTorch's padding modes and align_corners."""
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


def _source(coord, n, padding_mode, align_corners):
    c = _unnormalize(coord, n, align_corners)
    if padding_mode == 'border':
        return c.clamp(0.0, n - 1.0)
    if padding_mode == 'reflection':
        c = _reflect(c, 0, 2 * (n - 1)) if align_corners else _reflect(c, -1, 2 * n - 1)
        return c.clamp(0.0, n - 1.0)
    return c


def _pick(flat, ix, iy, w, h):
    """flat [N, C, H*W] at integer coordinates ix, iy [N, Ho, Wo]: the values
    [N, C, Ho, Wo] and whether each position lies inside"""
    inside = (ix >= 0) & (ix <= w - 1) & (iy >= 0) & (iy <= h - 1)
    idx = (iy.clamp(0, h - 1) * w + ix.clamp(0, w - 1)).long()
    n, c = flat.shape[0], flat.shape[1]
    ho, wo = ix.shape[1], ix.shape[2]
    idx = idx.reshape(n, 1, ho * wo).expand(n, c, ho * wo)
    return _C.gather(flat, 2, idx).reshape(n, c, ho, wo), inside.unsqueeze(1)


def grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None):
    """input [N, C, H, W] sampled at grid [N, Ho, Wo, 2] (x, y in [-1, 1]);
    mode 'bilinear' or 'nearest' (halves to even, as PyTorch), padding_mode
    'zeros', 'border' or 'reflection'"""
    if mode not in ('bilinear', 'nearest', 'bicubic'):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ('zeros', 'border', 'reflection'):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if mode == 'bicubic' or input.ndim == 5:
        raise NotImplementedError("grid_sample: bicubic mode and 5-D inputs are not supported "
                                  "(bilinear and nearest over 4-D inputs are)")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or \
            grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sample(): expected a 4-D input [N, C, H, W] and a grid "
                           f"[N, H_out, W_out, 2] of the same batch, got input of shape "
                           f"{list(input.shape)} and grid of shape {list(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sample(): expected input and grid to have the same dtype, "
                           f"but input has {input.dtype} and grid has {grid.dtype}")
    align_corners = bool(align_corners)
    n, c, h, w = input.shape
    x = _source(grid[..., 0], w, padding_mode, align_corners)
    y = _source(grid[..., 1], h, padding_mode, align_corners)
    flat = input.reshape(n, c, h * w)
    zero = zeros(1, dtype=input.dtype)
    if mode == 'nearest':
        v, inside = _pick(flat, _C.round(x), _C.round(y), w, h)
        return _C.where(inside, v, zero)
    x0, y0 = _C.floor(x), _C.floor(y)
    wx, wy = (x - x0).unsqueeze(1), (y - y0).unsqueeze(1)
    out = None
    for dy, fy in ((0, 1.0 - wy), (1, wy)):
        for dx, fx in ((0, 1.0 - wx), (1, wx)):
            v, inside = _pick(flat, x0 + dx, y0 + dy, w, h)
            term = _C.where(inside, v, zero) * (fx * fy)
            out = term if out is None else out + term
    return out
