"""tensorgraph.backends: PyTorch's torch.backends switches as a CPU-only
build has them: cudnn and mps are not available; the flags can be set
(code that sets cudnn.benchmark or deterministic runs) and have no effect
here."""
import types

cudnn = types.SimpleNamespace(enabled=True, benchmark=False, deterministic=False,
                              allow_tf32=True, is_available=lambda: False,
                              version=lambda: None)
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
cuda = types.SimpleNamespace(is_built=lambda: False,
                             matmul=types.SimpleNamespace(allow_tf32=False))
