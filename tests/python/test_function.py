"""tg.function: tracing once per signature, running the cached plan,
gradients through a call (training a model whose step is a tg.function),
the graph's text and DOT, retrace warnings, the converter hook."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from conftest import close


def test_traces_once_per_signature():
    calls = []

    @tg.function
    def f(x, y, scale=2.0):
        calls.append(1)
        return (x * y).sum() * scale

    a, b = tg.arange(3.0), tg.ones(3)
    assert f(a, b).item() == 6.0 and f(a + 1, b).item() == 12.0
    assert len(calls) == 1 and f.trace_count == 1
    assert f(a, b, scale=3.0).item() == 9.0 and f.trace_count == 2  # a Python value: retrace
    assert f(tg.ones(4), tg.ones(4)).item() == 8.0 and f.trace_count == 3  # a new shape
    stats = f.get_concrete_function(a, b).session_stats()
    assert stats["plan_misses"] == 1 and stats["runs"] == 2


def test_graph_text_and_dot(tmp_path):
    @tg.function
    def f(x):
        return tg.relu(x @ x.T).mean()

    f(tg.randn(3, 3))
    text = f.graph.dump()
    assert "matmul" in text and "placeholder" in text
    dot = f.graph.to_dot()
    assert dot.startswith("digraph")
    f.graph.to_dot(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    f.graph.verify()


def test_gradients_match_eager():
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    x, y = tg.randn(16, 4), tg.randint(0, 3, (16,))

    @tg.function
    def loss_fn(x, y):
        return F.cross_entropy(model(x), y)

    F.cross_entropy(model(x), y).backward()
    eager = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    loss_fn(x, y).backward()
    for p, g in zip(model.parameters(), eager):
        close(p.grad, g, rtol=1e-5, atol=1e-6)
    xi = tg.randn(2, 4, requires_grad=True)
    g_graph, = tg.autograd.grad(tg.function(lambda t: (t * t).sum())(xi), xi)
    close(g_graph, 2 * xi.detach().numpy())


def test_train_a_model_whose_step_is_a_function():
    tg.manual_seed(1)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = tg.optim.Adam(model.parameters(), lr=0.05)
    x = tg.randn(64, 2)
    y = ((x[:, 0] * x[:, 1]) > 0).long()

    @tg.function
    def step(x, y):
        return F.cross_entropy(model(x), y)

    first = None
    for _ in range(60):
        opt.zero_grad()
        loss = step(x, y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < first * 0.7 and step.trace_count == 1


def test_multiple_outputs_and_errors():
    @tg.function
    def two(x):
        return x * 2, x.sum()

    a, s = two(tg.ones(2))
    assert a.tolist() == [2.0, 2.0] and s.item() == 2.0

    @tg.function
    def reads_value(x):
        if x.sum().item() > 0:  # data-dependent Python control flow cannot be traced
            return x
        return -x

    with pytest.raises(ValueError, match="symbolic"):
        reads_value(tg.ones(2))

    @tg.function
    def not_a_tensor(x):
        return 3

    with pytest.raises(TypeError, match="must return"):
        not_a_tensor(tg.ones(1))


def test_retrace_warning_names_the_argument():
    @tg.function
    def f(x, n):
        return x * n

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(6):
            f(tg.ones(1), n)
    assert any("argument(s) 1 changed" in str(m.message) for m in w)


def test_converter_hook():
    import sys
    fmod = sys.modules["tensorgraph.function"]  # the module (tg.function is the decorator)
    seen = []
    fmod.set_converter(lambda fn: (seen.append(fn), fn)[1])
    try:
        g = tg.function(lambda x: x + 1, autograph=True)
        assert g(tg.ones(1)).item() == 2.0 and len(seen) == 1
    finally:
        fmod.set_converter(None)  # autograph's converter again
    seen.clear()
    tg.function(lambda x: x + 1)
    assert not seen


def test_onnx_export_and_load(tmp_path):
    tg.manual_seed(2)
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.Flatten(),
                          nn.Linear(2 * 5 * 5, 3))
    x = tg.randn(2, 1, 5, 5)
    path = tmp_path / "m.onnx"
    tg.onnx.export(model, (x,), path)
    assert model.training  # the mode is restored
    m = tg.onnx.load(path)
    assert m.input_names == ["input_0"] and len(m.output_names) == 1
    model.eval()
    close(m(x), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(OSError):
        tg.onnx.load(tmp_path / "missing.onnx")


def test_function_returning_an_input():
    """an input returned as it is (a session cannot fetch what it is fed):
    the output is a copy, and gradients flow to it, also when a gradient is
    the output gradient itself"""
    a = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = tg.tensor([2.0, 2.0, 2.0])
    f = tg.function(lambda x, y: (x, x * y, y))
    x, p, y = f(a, b)
    close(x, [1, 2, 3])
    close(y, [2, 2, 2])
    (x.sum() * 2 + p.sum()).backward()
    close(a.grad, [4, 4, 4])
    ident = tg.function(lambda x: x)
    a.grad = None
    (ident(a) * 3).sum().backward()
    close(a.grad, [3, 3, 3])
    a.grad = None
    tg.function(lambda x, y: x + y)(a, b).sum().backward()
    close(a.grad, [1, 1, 1])
