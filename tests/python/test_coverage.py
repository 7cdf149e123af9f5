"""Every public op function of the C library (include/tg/ops.h) is bound
in Python (its name appears in the extension's sources, python/src) or is
listed here as deliberately unbound with the reason; and the ops added
for PyTorch parity match PyTorch."""
import os
import re

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

UNBOUND = {
    "tg_add_scalar": "Python numbers go through add as 0-d tensors typed as PyTorch types them",
    "tg_mul_scalar": "the same, through mul (and mul_ by a number uses tg_mul_scalar_)",
    "tg_pow_scalar": "the same, through pow",
    "tg_split": "Tensor.split / tg.split make views with slices (no copies)",
}


def public_ops():
    text = open(os.path.join(ROOT, "include", "tg", "ops.h")).read()
    return set(re.findall(r"^\s*(?:tg_tensor\s*\*|tg_status\s+)(tg_\w+)\(", text, re.M))


def bound_names():
    src = os.path.join(ROOT, "python", "src")
    text = "".join(open(os.path.join(src, f)).read() for f in os.listdir(src)
                   if f.endswith((".c", ".h")))
    return set(re.findall(r"\btg_\w+", text))


def test_every_public_op_is_bound_or_listed():
    ops = public_ops()
    assert len(ops) > 80, "the declarations of include/tg/ops.h were not found"
    missing = sorted(ops - bound_names() - set(UNBOUND))
    assert not missing, f"public ops without a Python binding (bind them or list them in " \
                        f"UNBOUND with the reason): {missing}"
    stale = sorted(set(UNBOUND) - ops)
    assert not stale, f"UNBOUND lists functions ops.h no longer declares: {stale}"


X = np.linspace(-4, 4, 17)  # hits the kinks at -3, 0, 3


@needs_torch
@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid", "selu"])
def test_new_activations_match_torch(name):
    # PyTorch 1.13's hardswish gradient at exactly +-3 differs between its
    # vectorised and scalar loops; tensorgraph takes the scalar loop's
    xs = X[np.abs(np.abs(X) - 3) > 0.1] if name == "hardswish" else X
    x = tg.tensor(xs, requires_grad=True)
    t = torch.tensor(xs, requires_grad=True)
    y, yt = getattr(F, name)(x), getattr(torch.nn.functional, name)(t)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    y.backward(tg.arange(len(xs), dtype=tg.float64))
    yt.backward(torch.arange(len(xs), dtype=torch.float64))
    # (PyTorch computes hardsigmoid's 1/6 in float32)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-15)
    module = {"hardswish": nn.Hardswish, "hardsigmoid": nn.Hardsigmoid, "selu": nn.SELU}[name]
    np.testing.assert_allclose(module()(tg.tensor(xs)).numpy(), yt.detach().numpy(), rtol=1e-12)
    z = tg.tensor(xs) * 1
    assert getattr(F, name)(z, inplace=True) is z
    np.testing.assert_allclose(z.numpy(), yt.detach().numpy(), rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_losses_with_ignore_index_match_torch(fn, reduction):
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((6, 4, 3))  # [N, C, d]: the general path
    labels = rng.integers(0, 4, (6, 3))
    labels[0, 1] = labels[3, 2] = -100
    weight = np.array([0.5, 1.0, 2.0, 0.25])
    for lg, lb, kw in ((logits, labels, {}), (logits[:, :, 0], labels[:, 0], {}),
                       (logits, labels, {"weight": weight}),
                       (logits[:, :, 0], np.where(labels[:, 0] == 1, 7, labels[:, 0]),
                        {"ignore_index": 7})):
        x, t = tg.tensor(lg, requires_grad=True), torch.tensor(lg, requires_grad=True)
        kt = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        kg = {k: tg.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        y = getattr(F, fn)(x, tg.tensor(lb), reduction=reduction, **kg)
        yt = getattr(torch.nn.functional, fn)(t, torch.tensor(lb), reduction=reduction, **kt)
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10)
        y.sum().backward()
        yt.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-14)
    loss = nn.CrossEntropyLoss(weight=tg.tensor(weight), ignore_index=-100)
    lt = torch.nn.CrossEntropyLoss(weight=torch.tensor(weight))
    np.testing.assert_allclose(loss(tg.tensor(logits), tg.tensor(labels)).item(),
                               lt(torch.tensor(logits), torch.tensor(labels)).item(), rtol=1e-10)


def test_loss_arguments_pytorch_deprecated():
    # size_average / reduce stand for a reduction, with PyTorch's warning
    # (test_torch_parity_nn_losses.py compares the values)
    x, y = tg.zeros(2, 3), tg.tensor([0, 1])
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert F.cross_entropy(x, y, size_average=False, label_smoothing=0.1).ndim == 0
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert nn.NLLLoss(reduce=False).reduction == 'none'


@needs_torch
def test_addmm_and_sum_to_size_match_torch():
    rng = np.random.default_rng(2)
    c, a, b = rng.standard_normal((3,)), rng.standard_normal((2, 4)), rng.standard_normal((4, 3))
    got = tg.addmm(tg.tensor(c), tg.tensor(a), tg.tensor(b), beta=0.5, alpha=2.0)
    want = torch.addmm(torch.tensor(c), torch.tensor(a), torch.tensor(b), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(tg.tensor(c).addmm(tg.tensor(a), tg.tensor(b)).numpy(),
                               torch.tensor(c).addmm(torch.tensor(a), torch.tensor(b)).numpy(),
                               rtol=1e-12)
    z = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(tg.tensor(z).sum_to_size(3, 1).numpy(),
                               torch.tensor(z).sum_to_size(3, 1).numpy(), rtol=1e-12)
