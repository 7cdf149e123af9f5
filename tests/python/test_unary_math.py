"""The unary math and activation ops of src/ops/unary_math.c and
unary_act.c against PyTorch: values and gradients in float64 and float32
across each domain (NaN and infinities outside it, the poles, the kinks),
result dtypes of integer inputs, Tensor methods and in-place forms, the
modules; gradcheck inside the smooth domains."""
import math

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch

# 32 points (PyTorch's vectorised loops, which decide its values at kinks
# and NaN, run on whole vectors of 8 or 16): inside and outside the
# domains, the poles, the kinks of the activations, the far tails
XS = np.array([-40, -7, -3, -1.5, -1, -0.9, -0.5, -0.2, -1e-9, 0, 1e-9, 0.3, 0.5, 0.9, 1, 1.7,
               2, 2.5, 6, 7, 40, math.nan, math.inf, -math.inf, -0.3, 0.7, 1.2, -2, 3, 5, 0.1,
               -0.7])

# name: (args) of torch.<name> and tg.<name>
MATH = ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1",
        "log1p", "log2", "log10", "reciprocal", "square"]
# name: args of F.<name> (torch.nn.functional and tensorgraph.nn.functional)
ACT = {"softsign": (), "silu": (), "mish": (), "logsigmoid": (), "celu": (0.7,),
       "hardtanh": (-0.5, 2.0), "relu6": (), "softshrink": (0.5,), "hardshrink": (0.5,),
       "threshold": (1.0, -2.0)}


def _fn(name):
    if name in ACT:
        args = ACT[name]
        return (lambda x: getattr(F, name)(x, *args),
                lambda t: getattr(torch.nn.functional, name)(t, *args))
    return getattr(tg, name), getattr(torch, name)


def _known_differences(name, xs, grad=False):
    """where tensorgraph deliberately differs from PyTorch 1.13: softshrink
    of NaN (NaN, not 0: PyTorch's later versions propagate it too) and
    softsign's gradient at +-inf (0, the limit, not its composite's NaN)"""
    keep = np.ones(xs.shape, bool)
    if name == "softshrink":
        keep &= ~np.isnan(xs)
    if name == "softsign" and grad:
        keep &= ~np.isinf(xs)
    return keep


@needs_torch
@pytest.mark.parametrize("name", MATH + list(ACT))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_and_gradients_match_torch(name, dtype):
    f, ft = _fn(name)
    xs = XS.astype(dtype)
    x = tg.tensor(xs, requires_grad=True)
    t = torch.tensor(xs, requires_grad=True)
    y, yt = f(x), ft(t)
    assert str(y.dtype).split('.')[-1] == str(yt.dtype).split('.')[-1]
    # gradient weights that are not all one, so that a wrong sign shows
    w = np.linspace(0.5, 2, len(xs)).astype(dtype)
    y.backward(tg.tensor(w))
    yt.backward(torch.tensor(w))
    # float32: libm and PyTorch's vectorised functions differ by a few ulps
    # (more where PyTorch's softsign gradient, a composite, cancels);
    # celu: PyTorch's vectorised loop computes exp(x) - 1, not expm1
    # (absolute error ~1 ulp of 1 near 0), and its gradient takes 1 / alpha
    # rounded to float32 (exp(x / alpha) off by 1e-6 relative at x = -40)
    rtol = 1e-12 if dtype == "float64" else 1e-5
    atol = 1e-30
    if name == "celu":
        rtol, atol = max(rtol, 2e-6), (1e-15 if dtype == "float64" else 1e-7)
    keep = _known_differences(name, xs)
    np.testing.assert_allclose(y.detach().numpy()[keep], yt.detach().numpy()[keep], rtol=rtol,
                               atol=atol)
    keep = _known_differences(name, xs, grad=True)
    np.testing.assert_allclose(x.grad.numpy()[keep], t.grad.numpy()[keep], rtol=rtol,
                               atol=atol)


@pytest.mark.parametrize("name", MATH + list(ACT))
def test_gradcheck_inside_the_smooth_domain(name):
    f, _ = (getattr(F, name), None) if name in ACT else (getattr(tg, name), None)
    args = ACT.get(name, ())
    lo, hi = {"asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9),
              "acosh": (1.2, 3), "log2": (0.5, 2), "log10": (0.5, 2), "reciprocal": (0.5, 2),
              "log1p": (-0.5, 2), "tan": (-1.2, 1.2)}.get(name, (-3, 3))
    x = tg.tensor(np.random.default_rng(1).uniform(lo, hi, (3, 4)), requires_grad=True)
    assert tg.autograd.gradcheck(lambda v: f(v, *args), (x,))


@needs_torch
@pytest.mark.parametrize("name", ["tan", "asin", "sinh", "acosh", "expm1", "log1p", "log2",
                                  "log10", "reciprocal"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_integer_inputs_compute_in_float32(name, dtype):
    xs = np.array([0, 1, 2, 7], dtype=dtype)
    y, yt = getattr(tg, name)(tg.tensor(xs)), getattr(torch, name)(torch.tensor(xs))
    assert y.dtype == tg.float32 and yt.dtype == torch.float32
    np.testing.assert_allclose(y.numpy(), yt.numpy(), rtol=1e-6)


@needs_torch
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_dtypes_kept(dtype):
    xs = np.array([0, 1, 2, 7, 200], dtype=dtype)
    for f, ft in [(tg.square, torch.square),
                  (F.relu6, torch.nn.functional.relu6),
                  (lambda v: F.threshold(v, 1.5, 3.7), lambda v: torch.nn.functional.threshold(
                      v, 1.5, 3.7))]:
        y, yt = f(tg.tensor(xs)), ft(torch.tensor(xs))
        assert str(y.dtype).split('.')[-1] == str(yt.dtype).split('.')[-1]
        np.testing.assert_array_equal(y.numpy(), yt.numpy())


def test_methods_aliases_and_inplace():
    xs = np.array([0.1, 0.5, 0.9])
    x = tg.tensor(xs)
    for name in ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh", "expm1",
                 "log1p", "log2", "log10", "reciprocal", "square"]:
        np.testing.assert_allclose(getattr(x, name)().numpy(), getattr(tg, name)(x).numpy())
        z = tg.tensor(xs)
        assert getattr(z, name + "_")() is z
        np.testing.assert_allclose(z.numpy(), getattr(tg, name)(x).numpy())
    for alias, name in [("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
                        ("arcsinh", "asinh"), ("arctanh", "atanh")]:
        np.testing.assert_array_equal(getattr(tg, alias)(x).numpy(), getattr(tg, name)(x).numpy())
        np.testing.assert_array_equal(getattr(x, alias)().numpy(), getattr(tg, name)(x).numpy())
    np.testing.assert_array_equal(tg.arccosh(x + 1).numpy(), tg.acosh(x + 1).numpy())
    np.testing.assert_array_equal(x.hardshrink(0.3).numpy(), [0, 0.5, 0.9])
    z = tg.tensor(xs)
    assert F.hardtanh(z, 0.2, 0.6, inplace=True) is z
    np.testing.assert_allclose(z.numpy(), [0.2, 0.5, 0.6])
    z = tg.tensor(xs)
    assert F.threshold_(z, 0.3, -1.0) is z
    np.testing.assert_allclose(z.numpy(), [-1, 0.5, 0.9])
    z = tg.tensor(-xs)
    assert F.celu_(z, 2.0) is z
    np.testing.assert_allclose(z.numpy(), 2 * np.expm1(-xs / 2))


@needs_torch
def test_modules_match_torch():
    xs = XS[np.isfinite(XS)]
    for name, args in [("SiLU", ()), ("Mish", ()), ("Softsign", ()), ("LogSigmoid", ()),
                       ("CELU", (0.7,)), ("Hardtanh", (-0.5, 2.0)), ("ReLU6", ()),
                       ("Softshrink", (0.3,)), ("Hardshrink", (0.3,)),
                       ("Threshold", (0.5, -1.0))]:
        y = getattr(nn, name)(*args)(tg.tensor(xs))
        yt = getattr(torch.nn, name)(*args)(torch.tensor(xs))
        # (celu: PyTorch's exp(x) - 1 near 0, see above)
        np.testing.assert_allclose(y.numpy(), yt.numpy(), rtol=1e-12, atol=1e-15, err_msg=name)


def test_argument_errors():
    x = tg.tensor([1.0, 2.0])
    # F.hardtanh with min_val > max_val is max_val everywhere (PyTorch's clamp);
    # the module refuses it with PyTorch's assertion
    np.testing.assert_array_equal(F.hardtanh(x, 1.0, -1.0).numpy(), [-1.0, -1.0])
    with pytest.raises(AssertionError):
        nn.Hardtanh(1.0, -1.0)
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
        F.softshrink(x, -0.5)
    with pytest.raises(RuntimeError):
        F.celu(x, 0.0)
    with pytest.raises(Exception, match="unsigned type with negative limits"):
        F.hardtanh(tg.tensor(np.array([3], dtype="uint8")), -1.0, 1.0)


@needs_torch
def test_graph_mode_matches_eager():
    xs = np.random.default_rng(2).uniform(0.2, 0.8, (2, 3))

    @tg.function
    def g(v):
        return (tg.asin(v) + tg.acosh(v + 1) + tg.log1p(v) + F.silu(v) + F.mish(v)
                + F.hardtanh(v, 0.3, 0.6) + F.softshrink(v, 0.4) + F.threshold(v, 0.5, 0.0))

    x = tg.tensor(xs)
    want = (torch.asin(torch.tensor(xs)) + torch.acosh(torch.tensor(xs) + 1)
            + torch.log1p(torch.tensor(xs)) + torch.nn.functional.silu(torch.tensor(xs))
            + torch.nn.functional.mish(torch.tensor(xs))
            + torch.nn.functional.hardtanh(torch.tensor(xs), 0.3, 0.6)
            + torch.nn.functional.softshrink(torch.tensor(xs), 0.4)
            + torch.nn.functional.threshold(torch.tensor(xs), 0.5, 0.0))
    np.testing.assert_allclose(g(x).numpy(), want.numpy(), rtol=1e-12)
