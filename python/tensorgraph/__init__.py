"""tensorgraph: a deep-learning framework with a C core, used like PyTorch.

    import tensorgraph as tg
    x = tg.randn(3, 4, requires_grad=True)
    (x * x).sum().backward()
    x.grad

The C extension tensorgraph._C holds tensors, ops (one generic calling
path driven by an op table), autograd and static graphs; the pure-Python
modules add PyTorch's bookkeeping (nn.Module, optimizers, DataLoader).
See docs/PYTHON.md for what is covered and what differs from PyTorch.
"""
from . import _C
from ._C import (Tensor, Generator, dtype, float32, float64, int32, int64, uint8,
                 promote_types, set_num_threads, get_num_threads, from_numpy,
                 default_generator, is_grad_enabled)
from ._creation import (tensor, as_tensor, zeros, ones, full, empty, arange, linspace, logspace,
                        zeros_like, ones_like, full_like, empty_like, rand, randn, randint,
                        randperm, rand_like, randn_like, manual_seed, seed, initial_seed,
                        get_rng_state, set_rng_state,
                        bernoulli, from_dlpack)
from ._ops import *  # noqa: F401,F403  (the op table's functions, PyTorch's names)
from ._ops import __all__ as _ops_all
from ._ops_shape import *  # noqa: F401,F403  (composed shape/array functions)
from ._ops_math import *  # noqa: F401,F403  (composed elementwise math)
from ._ops_more import *  # noqa: F401,F403  (more composed functions)
from ._ops_stats import *  # noqa: F401,F403  (order statistics, cov, histc, ...)
from ._ops_bits import *  # noqa: F401,F403  (shifts, index_put)
from ._ops_cover import *  # noqa: F401,F403  (aliases, erfc, scans, bitwise ops, ...)
from ._ops_special import *  # noqa: F401,F403  (lgamma, digamma, erfinv)
from ._ops_misc import *  # noqa: F401,F403  (ldexp, vander, gcd, result_type, ...)
from ._ops_windows import *  # noqa: F401,F403  (masked_scatter, unique_consecutive, ...)
from ._ops_scatter import *  # noqa: F401,F403  (scatter_reduce, index_reduce, put, take, ...)
from ._grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                         is_inference_mode_enabled)
from ._indexing import _getitem, _setitem  # used by Tensor.__getitem__
from ._tensor_str import set_printoptions  # noqa: E402
from ._memory_format import (memory_format, preserve_format, contiguous_format,  # noqa: E402
                             channels_last, channels_last_3d, clone)
from ._memory_format import layout, strided, sparse_coo  # noqa: E402,F401  (Tensor.layout)
from . import _tensor  # noqa: F401  (Python-level Tensor methods)
from . import _tensor_extra  # noqa: F401  (more methods, gradient hooks)
from . import _tensor_reinterpret  # noqa: F401,E402  (view(dtype), resize_)
from ._size import Size  # noqa: F401,E402  (the type of Tensor.shape)
from ._dtype_info import finfo, iinfo  # noqa: F401,E402
from ._legacy_types import (FloatTensor, DoubleTensor, IntTensor, LongTensor,  # noqa: F401,E402
                            ByteTensor, BoolTensor, set_default_tensor_type)
from . import autograd
from ._autograd_extra import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402,F401
from . import linalg  # noqa: E402
from . import special  # noqa: E402  (torch.special's names)
from ._special_extra import i0  # noqa: E402,F401
from ._special_zeta import gammainc as igamma, gammaincc as igammac, polygamma  # noqa: E402,F401

bool = _C.bool  # noqa: A001  (PyTorch's tg.bool)
float = float32  # noqa: A001
double = float64
int = int32  # noqa: A001
long = int64
__version__ = _C.__version__  # the C library's TG_VERSION: one version everywhere


def show_config():
    """Prints how this tensorgraph was built and how its kernels run here:
    the version, the build's target (portable baseline or native), the
    CPU's instruction set and the one the kernels use (and why: TG_CPU),
    which kernels are chosen per instruction set at run time, the BLAS,
    the thread count and where the package lives (as torch.show_config)."""
    import os
    print(f"tensorgraph {__version__}")
    print(_C._kernels_report())
    print(f"threads: {_C.get_num_threads()}")
    print(f"package: {os.path.dirname(os.path.abspath(__file__))}")

from . import nn, optim, utils  # noqa: E402
# torch.conv2d & co. take padding='same' | 'valid' as F.conv2d does
from .nn.functional_conv import conv1d, conv2d, conv3d  # noqa: E402,F401,F811
# unbatched inputs ([C, L], [C, H, W], ...) too, as PyTorch's top-level pools
from .nn.functional import (max_pool1d, max_pool2d, max_pool3d,  # noqa: E402,F401,F811
                            avg_pool1d)
from .serialization import save, load  # noqa: E402
from .function import function  # noqa: E402
from . import jit  # noqa: E402,F401  (torch.jit's names: script/trace as tg.function)
from . import random  # noqa: E402,F401  (torch.random's names, fork_rng)
from ._device import device  # noqa: E402
from . import cuda, backends  # noqa: E402,F401  (CPU-only answers, as PyTorch without CUDA)
from . import testing  # noqa: E402,F401  (assert_close, make_tensor)
from . import profiler  # noqa: E402,F401  (torch.profiler's names over the eager op profiler)
from ._amp import autocast, is_autocast_enabled  # noqa: E402,F401
from ._determinism import (use_deterministic_algorithms,  # noqa: E402,F401
                           are_deterministic_algorithms_enabled)
from .control_flow import cond, while_loop, scan  # noqa: E402
from . import autograph  # noqa: E402
from . import onnx, datasets  # noqa: E402
from . import distributed  # noqa: E402  (torch.distributed's names, over MPI)
from . import distributions  # noqa: E402  (torch.distributions' names)
from . import _tensor_parity  # noqa: E402,F401  (H, mH, new, samplers, frexp, ...)
from ._ops_parity import *  # noqa: E402,F401,F403  (torch.relu_ & co., windows, losses)
from ._ops_aten import *  # noqa: E402,F401,F403  (lu, convolution, typename, settings)
from ._lowrank import svd_lowrank, pca_lowrank  # noqa: E402,F401

from ._numpy_names import install as _install_numpy_names  # noqa: E402
_install_numpy_names(globals())  # axis= / keepdims= as PyTorch's parser takes them
del _install_numpy_names
from ._factory import install as _install_factory_keywords  # noqa: E402
_install_factory_keywords(globals())  # device=, layout=, pin_memory=, out= of the factories
del _install_factory_keywords
from ._argcheck import install as _install_argcheck  # noqa: E402
for _ns in (globals(), nn.functional.__dict__, linalg.__dict__, special.__dict__, Tensor):
    _install_argcheck(_ns)  # PyTorch's TypeError for an argument of the wrong type
del _install_argcheck, _ns
