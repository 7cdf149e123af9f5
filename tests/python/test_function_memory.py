"""What a tg.function keeps alive: once the function is gone, its graph,
the tensors the graph captured and the Python objects its closure held
must go too. Two leaks did the opposite: each traced graph was kept by
the handle of every parameter it captured (python/src/graph.c,
capture_as_variable), and autograph's cache of converted functions kept
every converted function's closure, models and optimizers included."""
import gc
import os
import weakref

import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from conftest import SANITIZED


def resident_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def compile_once(x, y, whole_step):
    model = nn.Linear(1024, 1024)  # 4 MB of weights: what a kept graph would hold
    opt = tg.optim.SGD(model.parameters(), lr=0.1)

    def body(x, y):  # a def, not a lambda: autograph converts it
        if whole_step:
            opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        if whole_step:
            loss.backward()
            opt.step()
        return loss
    f = tg.function(body)
    f(x, y)
    return weakref.ref(model), weakref.ref(opt), weakref.ref(body)


@pytest.mark.parametrize("whole_step", [False, True])
def test_closure_is_released(whole_step):
    x, y = tg.randn(2, 1024), tg.randn(2, 1024)
    refs = compile_once(x, y, whole_step)
    gc.collect()
    assert all(r() is None for r in refs)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
@pytest.mark.skipif(SANITIZED, reason="ASan holds freed memory in quarantine: resident "
                    "memory grows without a leak")
def test_graphs_are_released():
    x, y = tg.randn(2, 1024), tg.randn(2, 1024)
    for _ in range(3):
        compile_once(x, y, True)
    gc.collect()
    before = resident_mb()
    for _ in range(25):  # kept graphs would hold 25 x 4 MB of weights
        compile_once(x, y, True)
    gc.collect()
    assert resident_mb() - before < 40
