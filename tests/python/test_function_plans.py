"""What a tg.function call costs the session, counted rather than timed:
captured parameters are variables the plan reads at run time (an
optimizer writing them compiles nothing again), the backward run is fed
the forward values it needs instead of running the forward again, and
every optimization level gives eager's losses."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F


def twin_models(make, seed=0):
    tg.manual_seed(seed)
    a = make()
    tg.manual_seed(seed)
    return a, make()


def train(model, loss_of, x, y, steps, opt_cls=tg.optim.SGD, **kw):
    opt = opt_cls(model.parameters(), **kw)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_of(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def mlp():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))


@pytest.mark.parametrize("opt_cls,kw", [(tg.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
                                        (tg.optim.Adam, {"lr": 0.01})])
def test_optimizer_steps_compile_nothing_again(opt_cls, kw):
    eager_model, fn_model = twin_models(mlp)
    x, y = tg.randn(8, 16), tg.randint(0, 4, (8,))
    f = tg.function(lambda x, y: F.cross_entropy(fn_model(x), y))
    eager = train(eager_model, lambda x, y: F.cross_entropy(eager_model(x), y), x, y, 10,
                  opt_cls, **kw)
    graph = train(fn_model, f, x, y, 10, opt_cls, **kw)
    np.testing.assert_allclose(graph, eager, rtol=1e-5, atol=1e-6)
    assert graph[-1] < graph[0]  # the parameters did move
    cf = f.get_concrete_function(x, y)
    stats = cf.session_stats()
    # one plan for the forward run (outputs and saved values), one for backward
    assert f.trace_count == 1 and stats["plan_misses"] == 2 and stats["runs"] == 20
    assert cf.num_captured == 4
    assert "variable" in cf.graph.dump()


def test_parameters_changed_in_place_are_read_at_run_time():
    lin = nn.Linear(3, 2)
    f = tg.function(lambda x: lin(x))
    x = tg.randn(4, 3)
    with tg.no_grad():
        first = f(x).numpy().copy()
        lin.weight.mul_(2.0)
        lin.bias.add_(1.0)
        np.testing.assert_allclose(f(x).numpy(), lin(x).numpy(), rtol=1e-6)
    assert not np.allclose(first, f(x).detach().numpy())
    assert f.get_concrete_function(x).session_stats()["plan_misses"] == 1


def op_nodes(graph):
    """op nodes of a dumped graph: lines of the form %v = op(...) that are
    not sources"""
    n = 0
    for line in graph.dump().splitlines():
        if " = " in line:
            op = line.split(" = ", 1)[1].split("(", 1)[0]
            n += op not in ("placeholder", "variable", "constant")
    return n


def test_backward_does_not_run_the_forward_again():
    w = tg.randn(64, requires_grad=True)

    def chain(x):
        for _ in range(8):
            x = (x * w).exp().tanh()
        return x.sum()

    f = tg.function(chain)
    x = tg.randn(64)
    cf = f.get_concrete_function(x)
    cf.set_opt_level(0)  # nodes as built, so that they can be counted
    loss = f(x)
    forward = cf.session_stats()["nodes_last_run"]
    loss.backward()
    backward = cf.session_stats()["nodes_last_run"]
    assert cf.num_saved > 0
    # every op node of the graph runs at most once per step; run again,
    # the forward part would run twice
    assert forward >= 3 * 8 and forward + backward <= op_nodes(cf.graph)
    w_grad = w.grad.numpy().copy()
    w.grad = None
    chain(x).backward()
    np.testing.assert_allclose(w_grad, w.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_backward_sees_the_forward_random_draws():
    """dropout's mask is drawn once per call: backward uses that mask
    (it would not if backward ran the forward again)"""
    f = tg.function(lambda x: F.dropout(x, 0.5, training=True))
    for _ in range(3):
        x = tg.ones(4000, requires_grad=True)
        y = f(x)
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


def small_transformer():
    return nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                      batch_first=True, activation="gelu")


@pytest.mark.parametrize("level", [0, 1, 2])
@pytest.mark.parametrize("make,shape", [(mlp, None), (small_transformer, (2, 5, 16))])
def test_every_level_gives_eager_losses(level, make, shape):
    eager_model, fn_model = twin_models(make, seed=3)
    if shape is None:
        x, y = tg.randn(8, 16), tg.randint(0, 4, (8,))
        loss = F.cross_entropy
    else:
        x, y = tg.randn(*shape), tg.randn(*shape)
        loss = F.mse_loss
    f = tg.function(lambda x, y: loss(fn_model(x), y))
    f.get_concrete_function(x, y).set_opt_level(level)
    eager = train(eager_model, lambda x, y: loss(eager_model(x), y), x, y, 4, lr=0.1)
    graph = train(fn_model, f, x, y, 4, lr=0.1)
    np.testing.assert_allclose(graph, eager, rtol=1e-5, atol=1e-6)
    with tg.no_grad():
        g = tg.function(lambda x: fn_model(x))
        g.get_concrete_function(x).set_opt_level(level)
        np.testing.assert_allclose(g(x).numpy(), eager_model(x).numpy(), rtol=1e-5,
                                   atol=1e-5)
    assert f.get_concrete_function(x, y).session_stats()["plan_misses"] == 2


def test_set_opt_level_checks_its_argument():
    cf = tg.function(lambda x: x + 1).get_concrete_function(tg.ones(2))
    with pytest.raises(ValueError, match="level 3"):
        cf.set_opt_level(3)


def test_reused_buffers_never_overwrite_what_the_caller_holds():
    """the plan reuses the buffers of a call's results and saved values once
    they are let go (runtime/memplan.c): results kept across calls, gradients
    accumulated over calls without zero_grad, and .grad tensors taken by
    the optimizer all stay eager's"""
    eager_model, fn_model = twin_models(mlp)
    xs = [tg.randn(8, 16) for _ in range(4)]
    y = tg.randint(0, 4, (8,))
    f = tg.function(lambda x, y: F.cross_entropy(fn_model(x), y))
    g = tg.function(lambda x: fn_model(x) * 2)
    kept_eager, kept_fn, grads_eager, grads_fn = [], [], [], []
    for x in xs:  # no zero_grad: gradients add up over the calls
        F.cross_entropy(eager_model(x), y).backward()
        f(x, y).backward()
        grads_eager.append([p.grad.clone() for p in eager_model.parameters()])
        grads_fn.append([p.grad for p in fn_model.parameters()])  # held, not copied
        with tg.no_grad():
            kept_eager.append(eager_model(x) * 2)
            kept_fn.append(g(x))
    for a, b in zip(kept_eager, kept_fn):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
    # the .grad of the last call is the running sum; earlier snapshots of
    # .grad are that same tensor (accumulated in place), as in eager
    for p_eager, p_fn in zip(eager_model.parameters(), fn_model.parameters()):
        np.testing.assert_allclose(p_fn.grad.numpy(), p_eager.grad.numpy(),
                                   rtol=1e-5, atol=1e-6)
    first = [t.numpy().copy() for t in grads_fn[0]]
    for _ in range(3):  # more calls must not write into the held gradients
        fn_model.zero_grad(set_to_none=True)
        f(xs[0], y).backward()
    for t, before in zip(grads_fn[0], first):
        np.testing.assert_array_equal(t.numpy(), before)


def test_two_threads_calling_one_function():
    """runs of one function's session take turns (they share its plan's
    memory): every thread gets its own inputs' results"""
    import threading
    f = tg.function(lambda x: (x.exp() * 2).sum(dim=1))
    xs = [tg.randn(64, 256) for _ in range(4)]
    want = [(x.exp() * 2).sum(dim=1).numpy() for x in xs]
    errors = []

    def worker(i):
        try:
            for _ in range(200):
                np.testing.assert_allclose(f(xs[i]).numpy(), want[i], rtol=1e-5)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_trace_of_the_nodes_run(tmp_path):
    """trace_begin / trace_end: one span per op node of the calls between
    them, written as a Chrome trace; None discards them"""
    import json
    f = tg.function(lambda x: (x * 2).relu().sum())
    x = tg.randn(4, 5)
    cf = f.get_concrete_function(x)
    f(x)
    cf.trace_begin()
    for _ in range(3):
        f(x)
    path = tmp_path / "trace.json"
    cf.trace_end(path)
    spans = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("ph") == "X"]
    runs = {e["args"]["run"] for e in spans}
    assert len(runs) == 3 and spans and all(e["dur"] >= 0 for e in spans)
    assert {"sum"} <= {e["cat"] for e in spans}
    cf.trace_begin()
    f(x)
    cf.trace_end(None)
    with pytest.raises(TypeError):
        cf.trace_end(3)
    with pytest.raises(RuntimeError):
        cf.trace_end(None)  # no trace open
