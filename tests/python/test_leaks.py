"""Reference counting is exact: a training loop (eager and through a
tg.function) run for 10 000 steps keeps the process's memory flat, and
Python objects do not pile up (tracemalloc). A leak of one tensor or one
Python object per step would grow memory by far more than the bounds."""
import gc
import os
import tracemalloc

import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from conftest import SANITIZED

STEPS = 10_000


def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def _run(step, n):
    for _ in range(n):
        step()


@pytest.mark.skipif(SANITIZED, reason="ASan's allocator makes RSS meaningless; ASan checks "
                    "use-after-free instead")
@pytest.mark.parametrize("mode", ["eager", "function"])
def test_no_leak_over_10000_training_steps(mode):
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = tg.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = tg.randn(32, 8), tg.randint(0, 4, (32,))
    loss_fn = (lambda a, b: F.cross_entropy(model(a), b))
    if mode == "function":
        loss_fn = tg.function(loss_fn)

    def step():
        opt.zero_grad()
        loss = loss_fn(x[1:], y[1:])  # a view, an op with a scalar, indexing, .item()
        (loss * 1.0).backward()
        opt.step()
        loss.item()

    _run(step, 500)  # warm up caches (buffer cache, plans, interned objects)
    gc.collect()
    tracemalloc.start()
    before_py = tracemalloc.get_traced_memory()[0]
    before = rss_kb()
    _run(step, STEPS)
    gc.collect()
    grown_py = tracemalloc.get_traced_memory()[0] - before_py
    tracemalloc.stop()
    grown = rss_kb() - before
    # one leaked 32x4 float tensor per step would be >= 5 MB over 10 000 steps
    assert grown < 2048, f"RSS grew by {grown} KiB over {STEPS} steps"
    assert grown_py < 256 * 1024, f"Python heap grew by {grown_py} bytes"
