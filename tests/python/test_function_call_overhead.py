"""What a steady-state training step costs in Python: counts of Python
function calls (deterministic, unlike times). A compiled step should
replay a plan, not pay Python per module or per parameter; these failed
when tg.function's guards re-read every module's flags at every call
(zero_grad moved the requires_grad epoch) and when backward scanned for
hooked leaves that did not exist."""
import sys

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F


def python_calls(fn):
    """the Python functions fn runs (C functions not counted)"""
    names = []

    def prof(frame, event, arg):
        if event == "call":
            names.append(frame.f_code.co_name)
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return names


def training_loop(depth):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(8, 8), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(8, 2))
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    f = tg.function(lambda x, y: F.cross_entropy(model(x), y))
    x, y = tg.randn(3, 8), tg.tensor([0, 1, 1])
    for _ in range(3):  # traced, compiled, plans cached
        opt.zero_grad()
        f(x, y).backward()
        opt.step()
    return model, opt, f, x, y


def test_a_call_costs_the_same_python_for_any_model_size():
    counts = []
    for depth in (1, 6):
        model, opt, f, x, y = training_loop(depth)
        counts.append(len(python_calls(lambda: f(x, y))))
    assert counts[0] == counts[1], counts  # nothing per module or parameter
    assert counts[0] <= 8, counts


def test_zero_grad_does_not_invalidate_the_guards():
    model, opt, f, x, y = training_loop(2)
    epoch = tg._C._requires_grad_epoch()
    opt.zero_grad()
    assert tg._C._requires_grad_epoch() == epoch
    names = python_calls(lambda: f(x, y))
    assert '_requires_grad' not in names and '_tensors' not in names, names
    # an actual change is still seen: freezing a layer retraces
    before = f.trace_count
    model[0].weight.requires_grad_(False)
    assert tg._C._requires_grad_epoch() != epoch
    f(x, y)
    assert f.trace_count == before + 1


def test_backward_without_hooks_scans_nothing():
    model, opt, f, x, y = training_loop(2)
    loss = f(x, y)
    names = python_calls(loss.backward)
    assert '_hooked_leaves' not in names, names
    assert len(names) <= 3, names
