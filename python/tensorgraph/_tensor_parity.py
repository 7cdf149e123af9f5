"""Tensor methods PyTorch has that compose from existing ops: the
conjugate-transposes H / mH / adjoint and the conjugation and negation
bits (tensorgraph has no complex dtype: they are views or the tensor
itself, as PyTorch's on real tensors), the legacy new(), narrow_copy,
float_power_ and renorm_, the samplers random_ / exponential_ /
geometric_ / cauchy_ / log_normal_ (tensorgraph's generator), frexp and
nextafter (host numpy, not differentiable, as PyTorch's), i0 and the
special functions polygamma / igamma / igammac as methods with their
in-place forms, matrix_exp, output_nr; half / bfloat16 / short / char
raise TypeError (tensorgraph has no float16, bfloat16, int16 or int8)."""
import builtins
import math

import numpy as np

from . import _C, _special_extra, _special_zeta
from ._creation import _TG_TO_NP, tensor
from ._tensor import _matrix_transpose, _update, check_leaf_inplace
from ._ops_shape import torch_type_name

Tensor = _C.Tensor
_methods = {}


def _method(fn):
    _methods[fn.__name__] = fn
    return fn


def _H(self):
    if self.ndim == 0:
        return self.view(())
    if self.ndim != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.{hint}")
    return self.transpose(0, 1)


_methods['H'] = property(_H)
_methods['mH'] = property(_matrix_transpose('mH'))
_methods['adjoint'] = _matrix_transpose('adjoint()')


@_method
def resolve_conj(self):
    return self  # never a conjugate view: no complex dtype


@_method
def resolve_neg(self):
    return self  # never a lazily negated view


@_method
def is_neg(self):
    return False


@_method
def conj_physical(self):
    return self  # a real tensor is its own conjugate (PyTorch returns it too)


@_method
def conj_physical_(self):
    check_leaf_inplace(self)  # a no-op on a real tensor, refused as PyTorch refuses it
    return self


def _no_dtype(name, dtype):
    def f(self, memory_format=None):
        raise TypeError(f"{name}(): tensorgraph has no {dtype} dtype (it has float32, float64, "
                        "int32, int64, uint8 and bool)")
    f.__name__ = name
    return f


for _name, _dt in (('half', 'float16'), ('bfloat16', 'bfloat16'), ('short', 'int16'),
                   ('char', 'int8')):
    _methods[_name] = _no_dtype(_name, _dt)


@_method
def new(self, *args, device=None):
    """PyTorch's legacy constructor in self's dtype: new() is empty, new(2, 3)
    or new(torch.Size) a zero tensor of that size, new(sequence) the data,
    new(tensor) that tensor"""
    from ._size import Size
    if len(args) == 1 and isinstance(args[0], Tensor):
        if args[0].dtype != self.dtype:
            raise TypeError(f"expected {self.dtype} (got {args[0].dtype})")
        return args[0]
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if builtins.all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return self.new_zeros(args if args else (0,))
    if len(args) == 1:
        return tensor(args[0], dtype=self.dtype)
    raise TypeError("new(): expected sizes (ints), a torch.Size, a sequence of data or a "
                    "tensor")


@_method
def narrow_copy(self, dim, start, length):
    return self.narrow(dim, start, length).clone()


@_method
def float_power_(self, exponent):
    if self.dtype != _C.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{torch_type_name(self.dtype)} but the operation's result requires "
                           f"dtype Double")
    return _update(self, lambda s, e: s.float_power(e), (exponent,), {})


@_method
def renorm_(self, p, dim, maxnorm):
    return _update(self, lambda s: s.renorm(p, dim, maxnorm), (), {})


# -- samplers: draws in float64 from tensorgraph's generator, copied in ----------

def _draw(self, name, values, floats_only=True):
    if floats_only and not self.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}_cpu\" not implemented for '{torch_type_name(self.dtype)}'")
    shape = tuple(self.shape)
    return self.copy_(tensor(values(shape), dtype=self.dtype))


def _uniform(shape, generator):
    return _C._random("uniform", shape, _C.float64, 0.0, 1.0, generator).numpy()


@_method
def exponential_(self, lambd=1.0, *, generator=None):
    if not lambd >= 0:
        raise RuntimeError(f"exponential_ expects lambda >= 0.0, but found lambda={lambd:g}")
    with np.errstate(divide='ignore'):
        return _draw(self, 'exponential',
                     lambda s: -np.log1p(-_uniform(s, generator)) / lambd)


@_method
def geometric_(self, p, *, generator=None):
    if self.dtype == _C.bool:
        raise RuntimeError("\"geometric_cpu\" not implemented for 'Bool'")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _draw(self, 'geometric', lambda s: np.maximum(
        np.ceil(np.log1p(-_uniform(s, generator)) / math.log1p(-p)), 1), False)


@_method
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    return _draw(self, 'cauchy', lambda s: median + sigma * np.tan(
        math.pi * (_uniform(s, generator) - 0.5)))


@_method
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _draw(self, 'log_normal', lambda s: np.exp(
        mean + std * _C._random("normal", s, _C.float64, 0.0, 1.0, generator).numpy()))


_RANDOM_TOP = {_C.float32: 2 ** 24, _C.float64: 2 ** 53, _C.int32: 2 ** 31 - 1,
               _C.int64: 2 ** 63 - 1, _C.uint8: 255, _C.bool: 1}  # random_()'s inclusive top


@_method
def random_(self, *args, generator=None, **kwargs):
    """random_(): integers in [0, 2^mantissa] (floats) or the dtype's
    non-negative range; random_(to): [0, to); random_(from, to): [from, to)"""
    names = ('from', 'to')
    vals = dict(zip(names, args))
    vals.update(kwargs)
    lo, hi = vals.get('from'), vals.get('to')
    if len(args) == 1 and 'to' not in kwargs:
        lo, hi = 0, args[0]
    lo = 0 if lo is None else lo
    np_type = _TG_TO_NP[self.dtype]
    if hi is None:
        top = _RANDOM_TOP[self.dtype]
    else:
        if lo >= hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={lo} >= to={hi}")
        top = hi - 1
        if not self.dtype.is_floating_point:
            info = np.iinfo(np_type) if np_type != np.bool_ else None
            cname = {_C.uint8: 'unsigned char', _C.bool: 'bool', _C.int32: 'int',
                     _C.int64: 'long int'}[self.dtype]
            low_b, high_b = (0, 1) if info is None else (info.min, info.max)
            if not low_b <= lo <= high_b:
                raise RuntimeError(f"from is out of bounds for {cname}")
            if not low_b <= top <= high_b:
                raise RuntimeError(f"to - 1 is out of bounds for {cname}")
    span = top - lo + 1
    shape = tuple(self.shape)
    if span <= 2 ** 52:  # one float64 uniform per element resolves every integer
        u = _uniform(shape, generator)
        vals = np.minimum(np.floor(u * span), span - 1).astype(np.int64) + lo
    else:  # int64's full range: two draws of 32 bits each
        a = np.floor(_uniform(shape, generator) * 2 ** 32).astype(np.uint64)
        b = np.floor(_uniform(shape, generator) * 2 ** 32).astype(np.uint64)
        vals = (((a << np.uint64(32)) | b) % np.uint64(span)).astype(np.int64) + lo
    return self.copy_(tensor(vals.astype(np_type), dtype=self.dtype))


# -- host numpy: frexp, nextafter -------------------------------------------------

def _host(self, name):
    if self.is_symbolic:
        raise RuntimeError(f"{name}: not available inside tg.function (computed on the host)")
    return self.detach().numpy()


def _frexp_function():
    """the mantissa with PyTorch's gradient, grad / 2^exponent (inf where
    2^-exponent overflows, for the smallest subnormals); built on first
    use, as autograd imports this module's package"""
    global _Frexp
    from .autograd import Function

    class FrexpBackward0(Function):  # the name PyTorch's grad_fn shows
        @staticmethod
        def forward(ctx, x, mantissa, scale):
            ctx.scale = scale
            return mantissa

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.scale, None, None
    _Frexp = FrexpBackward0
    return _Frexp


_Frexp = None


@_method
def frexp(self):
    """mantissa in [0.5, 1) (sign kept) and int32 exponent with self =
    mantissa * 2^exponent; the mantissa's gradient is PyTorch's"""
    from .return_types import frexp as _frexp_type
    if not self.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = np.frexp(_host(self, 'frexp'))
    mantissa = tensor(m, dtype=self.dtype)
    if self.requires_grad and _C.is_grad_enabled():
        with np.errstate(over='ignore'):  # exact powers of two, or inf
            scale = tensor(np.ldexp(1.0, -e.astype(np.int64)), dtype=self.dtype)
        mantissa = (_Frexp or _frexp_function()).apply(self, mantissa, scale)
    return _frexp_type(mantissa, tensor(e.astype(np.int32)))


@_method
def nextafter(self, other):
    """the next representable value after self towards other (floats only)"""
    if not isinstance(other, Tensor):
        raise TypeError(f"nextafter(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    from ._ops_math import _result_dtype
    dt = _result_dtype(self, other)
    if not dt.is_floating_point:
        raise RuntimeError(f"\"nextafter_cpu\" not implemented for '{torch_type_name(dt)}'")
    npdt = _TG_TO_NP[dt]
    r = np.nextafter(_host(self, 'nextafter').astype(npdt), _host(other, 'nextafter').astype(npdt))
    return tensor(r, dtype=dt)


@_method
def nextafter_(self, other):
    return _update(self, lambda s, o: nextafter(s, o), (other,), {})


# -- special functions as methods ---------------------------------------------------

@_method
def i0(self):
    return _special_extra.i0(self)


@_method
def i0_(self):
    return _update(self, lambda s: _special_extra.i0(s), (), {})


@_method
def polygamma(self, n):
    return _special_zeta.polygamma(n, self)


@_method
def polygamma_(self, n):
    return _update(self, lambda s: _special_zeta.polygamma(n, s), (), {})


@_method
def igamma(self, other):
    return _special_zeta.gammainc(self, other)


@_method
def igamma_(self, other):
    return _update(self, _special_zeta.gammainc, (other,), {})


@_method
def igammac(self, other):
    return _special_zeta.gammaincc(self, other)


@_method
def igammac_(self, other):
    return _update(self, _special_zeta.gammaincc, (other,), {})


@_method
def matrix_exp(self):
    from ._linalg_more import matrix_exp as _mexp
    return _mexp(self)


# 0: tensorgraph records each result as its node's only output (PyTorch numbers
# the outputs of multi-output ops such as unbind and split 0, 1, ...)
_methods['output_nr'] = property(lambda self: 0)

# no sparse, quantized, meta, nested or accelerator tensors, no named dims
for _name in ('is_sparse', 'is_quantized', 'is_meta', 'is_mkldnn', 'is_nested', 'is_sparse_csr',
              'is_vulkan', 'is_xpu', 'is_ipu', 'is_mps', 'is_ort'):
    _methods[_name] = property(lambda self: False)
_methods['names'] = property(lambda self: (None,) * self.ndim)


@_method
def has_names(self):
    return False


@_method
def is_pinned(self, device=None):
    return False


@_method
def is_shared(self):
    return False


@_method
def share_memory_(self):
    return self  # one process's memory: nothing to move


@_method
def resize_as_(self, the_template, memory_format=None):
    return self.resize_(*the_template.shape)


@_method
def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False):
    from ._ops_parity import empty_strided
    return empty_strided(size, stride, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _host_map(self, name, fn, others):
    if self.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(f"{name} is not differentiable (it calls a Python function on each "
                           "element): use it on a tensor that does not require grad")
    vals = [np.broadcast_to(_host(o, name), tuple(self.shape)).reshape(-1).tolist()
            for o in (self,) + others]
    out = [fn(*v) for v in zip(*vals)]
    return self.copy_(tensor(np.array(out).reshape(tuple(self.shape)), dtype=self.dtype))


@_method
def apply_(self, callable):
    """each element replaced by callable(element), in place (host Python)"""
    return _host_map(self, 'apply_', callable, ())


@_method
def map_(self, tensor, callable):
    """each element replaced by callable(element, tensor's element) (tensor
    broadcast to self's shape), in place (host Python)"""
    return _host_map(self, 'map_', callable, (tensor,))

# PyTorch's unsafe_ forms (pieces not tracked as views) and the LU/QR
# helpers' method forms: the top-level functions (_ops_parity, _ops_aten)
from ._ops_parity import unsafe_chunk, unsafe_split, unsafe_split_with_sizes  # noqa: E402

_methods.update(unsafe_chunk=unsafe_chunk, unsafe_split=unsafe_split,
                unsafe_split_with_sizes=unsafe_split_with_sizes)


@_method
def lu(self, pivot=True, get_infos=False):
    from ._ops_aten import lu as _lu
    return _lu(self, pivot, get_infos)


@_method
def lu_solve(self, LU_data, LU_pivots):
    from ._ops_aten import lu_solve as _lu_solve
    return _lu_solve(self, LU_data, LU_pivots)


@_method
def orgqr(self, input2):
    from ._ops_aten import orgqr as _orgqr
    return _orgqr(self, input2)


for _name, _fn in _methods.items():
    _C._add_method(_name, _fn)
