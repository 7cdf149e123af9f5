"""Tensor printing with PyTorch's print options (tg.set_printoptions:
precision, threshold, edgeitems, linewidth, sci_mode, profile) and its
rules: one format for the whole tensor, chosen from the nonzero finite
values shown (whole numbers print as "3.", scientific notation past a
dynamic range of 1000, above 1e8 or, for fractions, below 1e-4; sci_mode
forces it either way), columns right-aligned, rows wrapped at linewidth,
more than threshold elements summarized to edgeitems per edge, suffixes
(dtype, grad_fn, requires_grad) wrapped when the line is full.
Symbolic tensors print through the C library (tg_to_string)."""
import math

import numpy as np

from . import _C

__all__ = ['set_printoptions']



class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


OPTS = _PrintOptions()
_PROFILES = {'default': (4, 1000, 3, 80), 'short': (2, 1000, 2, 80),
             'full': (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """PyTorch's torch.set_printoptions: a profile ('default', 'short',
    'full') first, then the options given; sci_mode is always set (None:
    chosen from the values)"""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"unknown print profile {profile!r}: 'default', 'short' or 'full'")
        OPTS.precision, OPTS.threshold, OPTS.edgeitems, OPTS.linewidth = _PROFILES[profile]
    if precision is not None:
        OPTS.precision = precision
    if threshold is not None:
        OPTS.threshold = threshold
    if edgeitems is not None:
        OPTS.edgeitems = edgeitems
    if linewidth is not None:
        OPTS.linewidth = linewidth
    OPTS.sci_mode = sci_mode


def _summarized(a):
    """the elements shown: edgeitems from each edge of every long dim"""
    e = OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * e:
        a = np.concatenate([a[:e], a[-e:]]) if e else a[:0]
    if a.ndim == 1:
        return a
    return np.stack([_summarized(x) for x in a]) if len(a) else a


class _Formatter:
    """one format for all the values shown (PyTorch's _Formatter)"""

    def __init__(self, shown, floating):
        self.floating, self.int_mode, self.sci_mode, self.width = floating, True, False, 1
        flat = shown.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.width = max(self.width, len(str(v)))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64).tolist()
        if not vals:  # nothing to choose from: plain, whatever sci_mode says (PyTorch's)
            return
        self._choose(vals)
        if OPTS.sci_mode is not None:
            self.sci_mode = OPTS.sci_mode

    def _choose(self, vals):
        big, small = max(abs(v) for v in vals), min(abs(v) for v in vals)
        self.int_mode = all(v == math.ceil(v) for v in vals)
        p = OPTS.precision
        if big / small > 1000.0 or big > 1.0e8 or (not self.int_mode and small < 1.0e-4):
            self.sci_mode = True
            self.width = max(len(f'{v:.{p}e}') for v in vals)
        elif self.int_mode:
            self.width = max(len(f'{v:.0f}') + 1 for v in vals)
        else:
            self.width = max(len(f'{v:.{p}f}') for v in vals)

    def format(self, v):
        p = OPTS.precision
        if not self.floating:
            s = str(v)
        elif self.sci_mode:
            s = f'{v:{self.width}.{p}e}'
        elif self.int_mode:
            s = f'{v:.0f}' + ('' if math.isinf(v) or math.isnan(v) else '.')
        else:
            s = f'{v:.{p}f}'
        return ' ' * (self.width - len(s)) + s


def _vector(a, indent, summarize, fmt):
    per_line = max(1, int(math.floor((OPTS.linewidth - indent) / (fmt.width + 2))))
    e = OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        items = [fmt.format(v) for v in a[:e].tolist()] + [' ...'] + \
            [fmt.format(v) for v in a[-e:].tolist()]  # e = 0: all of a, as PyTorch
    else:
        items = [fmt.format(v) for v in a.tolist()]
    lines = [', '.join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return '[' + (',\n' + ' ' * (indent + 1)).join(lines) + ']'


def _nested(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    e = OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        parts = [_nested(a[i], indent + 1, summarize, fmt) for i in range(e)] + ['...'] + \
            [_nested(a[i], indent + 1, summarize, fmt) for i in range(len(a) - e, len(a))]
    else:
        parts = [_nested(x, indent + 1, summarize, fmt) for x in a]
    return '[' + (',' + '\n' * (a.ndim - 1) + ' ' * (indent + 1)).join(parts) + ']'


def _with_suffixes(body, suffixes, indent):
    """body (with its prefix), then ", suffix" each, on a new line when the line would pass
    linewidth; a dtype counts as long as PyTorch's "torch.<dtype>" so that
    lines break where PyTorch's do"""
    out = [body]
    last = len(body) - body.rfind('\n') + 1
    for s in suffixes:
        width = len(s) + (len('torch.') if s.startswith('dtype=') else 0)
        if last + width + 2 > OPTS.linewidth:
            out.append(',\n' + ' ' * indent + s)
            last = indent + len(s)
        else:
            out.append(', ' + s)
            last += len(s) + 2
    return ''.join(out) + ')'


def _dtype_name(dt):
    return str(dt).split('.')[-1]


def tensor_repr(t):
    """repr(t) as PyTorch prints it (tensorgraph's dtype names)"""
    if t.is_symbolic:
        return _C._c_repr(t)
    from ._ops_math import get_default_dtype
    prefix = 'tensor('
    indent = len(prefix)
    a = t.detach().numpy()
    suffixes = []
    if a.size == 0:
        body = '[]'
        if t.ndim != 1:
            suffixes.append('size=' + str(tuple(t.shape)))
        if t.dtype != get_default_dtype():
            suffixes.append('dtype=' + _dtype_name(t.dtype))
    else:
        if t.dtype not in (get_default_dtype(), _C.int64, _C.bool):
            suffixes.append('dtype=' + _dtype_name(t.dtype))
        summarize = a.size > OPTS.threshold
        fmt = _Formatter(_summarized(a) if summarize else a, t.dtype.is_floating_point)
        body = _nested(a, indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f'grad_fn=<{type(t.grad_fn).__name__}>')
    elif t.requires_grad:
        suffixes.append('requires_grad=True')
    return _with_suffixes(prefix + body, suffixes, indent)
