"""tg.function and modules' training flags: a graph traced while a module
was in training mode applied dropout and batch statistics after
`model.eval()` (and went on updating running statistics): every call
reused the first trace. Now a trace notes the modules it called with
their flags, and is reused only while they hold: eval() and train()
switch between two traces, each traced once."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn


def model():
    tg.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(8, 3))


@pytest.mark.parametrize("wrap", ["closure", "module"])
def test_eval_after_a_training_trace(wrap):
    m = model()
    f = tg.function(m) if wrap == "module" else tg.function(lambda x: m(x))
    x = tg.randn(16, 6)
    f(x)  # training: batch statistics, a dropout mask, running stats updated
    m.eval()
    stats = m[1].running_mean.numpy().copy()
    got, want = f(x), m(x)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_array_equal(f(x).detach().numpy(), got.detach().numpy())  # no mask
    np.testing.assert_array_equal(m[1].running_mean.numpy(), stats)  # not updated in eval
    assert f.trace_count == 2
    m.train()
    a, b = f(x), f(x)
    assert (a.detach().numpy() != b.detach().numpy()).any()  # masks again
    assert (m[1].running_mean.numpy() != stats).any()
    assert f.trace_count == 2  # both traces reused


def test_only_the_modules_called_are_guarded():
    m, other = model(), nn.Dropout(0.5)
    f = tg.function(lambda x: m(x))
    x = tg.randn(4, 6)
    f(x)
    other.eval()  # not part of the trace
    f(x)
    assert f.trace_count == 1
    m[3].eval()  # a submodule alone
    f(x)
    assert f.trace_count == 2


def test_a_module_gone_keeps_its_trace():
    f = tg.function(lambda x: nn.Dropout(0.5)(x))  # a new module per trace
    x = tg.ones(100)
    f(x)
    f(x)
    assert f.trace_count == 1


def test_replaced_parameters_and_buffers():
    """a parameter or buffer replaced by another tensor: traced again, so the
    graph reads the new one; writes into the same tensors need no trace"""
    m = model()
    f = tg.function(lambda x: m(x))
    m.eval()
    x = tg.randn(4, 6)
    f(x)
    m[0].weight = nn.Parameter(tg.randn(8, 6))
    np.testing.assert_allclose(f(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    m[1].running_mean = tg.full((8,), 0.5)
    np.testing.assert_allclose(f(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    assert f.trace_count == 3
    with tg.no_grad():
        m[4].weight.mul_(2)  # in place: read when the graph runs
    m.load_state_dict(m.state_dict())
    np.testing.assert_allclose(f(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    assert f.trace_count == 3


def test_frozen_and_unfrozen_parameters():
    """fine-tuning: a layer unfrozen after the function was traced gets its
    gradients (it was a constant of the trace: None before); frozen again,
    none"""
    m = nn.Linear(3, 2)
    m.weight.requires_grad_(False)
    f = tg.function(lambda x: m(x).sum())
    x = tg.ones(1, 3)
    f(x).backward()
    assert m.weight.grad is None and m.bias.grad is not None
    m.weight.requires_grad_(True)
    f(x).backward()
    np.testing.assert_array_equal(m.weight.grad.numpy(), np.ones((2, 3), np.float32))
    m.weight.grad = None
    m.weight.requires_grad = False
    f(x).backward()
    assert m.weight.grad is None
    assert f.trace_count == 2


def test_a_flag_assigned_directly():
    """`module.training = False` (not eval()) is seen as eval() is"""
    m = model()
    f = tg.function(lambda x: m(x))
    x = tg.randn(4, 6)
    f(x)
    m[3].training = False  # the dropout alone, by assignment
    np.testing.assert_array_equal(f(x).detach().numpy(), f(x).detach().numpy())
    assert f.trace_count == 2
    m[3].training = True
    f(x)
    assert f.trace_count == 2  # the first trace again
