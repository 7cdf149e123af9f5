"""Shared fixtures: the package under test comes from PYTHONPATH (the build's
build/python, set by ctest) or is installed (scripts/check_wheel.sh); torch
is optional (tests that compare against it skip with a reason when Debian's
python3-torch is missing)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorgraph as tg

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

# PyTorch is an oracle for values, never driven into its error paths: a C++
# exception thrown inside torch aborts the interpreter under the ASan
# runtime that scripts/sanitize.sh preloads (its __cxa_throw interceptor
# finds no real function). Compare our errors with PyTorch's by hand.
needs_torch = pytest.mark.skipif(torch is None, reason="python3-torch is not installed")
SANITIZED = os.environ.get("TG_PY_SANITIZED") == "1"

# scripts/check_wheel.sh runs the suite against an installed wheel: make
# sure that is the copy imported, not a source tree's
if os.environ.get("TG_TEST_PACKAGE_DIR"):
    _imported = os.path.dirname(os.path.abspath(tg.__file__))
    assert _imported == os.path.abspath(os.environ["TG_TEST_PACKAGE_DIR"]), (
        f"the tests import tensorgraph from {_imported}, not the installed "
        f"{os.environ['TG_TEST_PACKAGE_DIR']}")


@pytest.fixture(autouse=True)
def _seed():
    tg.manual_seed(0)
    np.random.seed(0)
    yield
    assert tg.is_grad_enabled(), "a test left grad mode off"


def close(t, expected, rtol=1e-5, atol=1e-6):
    got = t.detach().numpy() if isinstance(t, tg.Tensor) else np.asarray(t)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def runtime_error_text(m, f):
    """the message of the RuntimeError f(m) raises (m: tensorgraph or
    torch), or None when it raises nothing; other exceptions propagate"""
    try:
        f(m)
    except RuntimeError as e:
        return str(e)
    return None


def pair(x, dtype='float64', requires_grad=True):
    """the same data as a tensorgraph and a torch tensor"""
    a = tg.tensor(np.asarray(x), dtype=getattr(tg, dtype), requires_grad=requires_grad)
    b = torch.tensor(np.asarray(x), dtype=getattr(torch, dtype), requires_grad=requires_grad)
    return a, b


def grads_match(out_tg, out_torch, ins_tg, ins_torch, rtol=1e-10, atol=1e-12):
    """equal forward values and shapes; equal gradients of sum(out * w)
    for a fixed random w"""
    close(out_tg, out_torch.detach().numpy(), rtol, atol)
    assert out_tg.shape == tuple(out_torch.shape)
    w = np.random.RandomState(1).uniform(-1, 1, tuple(out_torch.shape))
    (out_tg * tg.tensor(w, dtype=out_tg.dtype)).sum().backward()
    (out_torch * torch.tensor(w, dtype=out_torch.dtype)).sum().backward()
    for a, b in zip(ins_tg, ins_torch):
        close(a.grad, b.grad.numpy(), rtol, atol)


def run_child(code, timeout=60):
    """runs code in a fresh interpreter with the package under test and
    returns its stdout: for calls that may hang or exhaust memory when they
    regress, which then fail this test instead of taking the suite down"""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=timeout, env=dict(os.environ))
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def onnx_model_file(tmp_path, nodes, inputs, outputs, inits=(), opset=13, name="m"):
    """a hand-made ONNX model (onnx.helper nodes and value infos) saved
    under tmp_path; its path"""
    import onnx
    from onnx import helper
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    path = os.fspath(tmp_path / f"{name}.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path
