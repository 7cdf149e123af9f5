"""Upsample (and the UpsamplingNearest2d / UpsamplingBilinear2d aliases)
over F.interpolate."""
from . import functional as F
from .module import Module


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode='nearest', align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__  # PyTorch's attribute
        self.size, self.mode, self.align_corners = size, mode, align_corners
        self.scale_factor = (tuple(float(s) for s in scale_factor)
                             if isinstance(scale_factor, (tuple, list))
                             else float(scale_factor) if scale_factor else None)
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x):
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        what = (f'scale_factor={self.scale_factor}' if self.scale_factor is not None
                else f'size={self.size}')
        return f"{what}, mode={self.mode}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode='nearest')


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode='bilinear', align_corners=True)
