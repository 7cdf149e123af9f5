"""tensorgraph.profiler and tensorgraph.autograd.profiler: PyTorch's
profiler API over the eager op profiler (include/tg/profiler.h): events
per op and range, nesting and self times, shapes, key averages, the
table, Chrome traces written whole, schedules, and the misuses."""
import json
import os
import threading
import warnings

import pytest

import tensorgraph as tg
from conftest import torch, needs_torch

P = tg.profiler


def _step(x):
    y = (x @ x).relu().sum()
    y.backward()
    return y


def test_ops_and_ranges_with_children_and_self_times():
    x = tg.randn(16, 16, requires_grad=True)
    with P.profile(record_shapes=True) as prof:
        with P.record_function("step"):
            _step(x)
    events = prof.events()
    step = [e for e in events if e.name == "step"]
    assert len(step) == 1 and step[0].is_user_annotation
    step = step[0]
    ops = [e for e in events if e is not step]
    assert all(e.cpu_parent is step for e in ops)  # everything ran inside the range
    assert sorted(c.id for c in step.cpu_children) == sorted(e.id for e in ops)
    assert step.self_cpu_time_total == pytest.approx(
        step.cpu_time_total - sum(e.cpu_time_total for e in ops))
    names = [e.name for e in ops]
    assert names.count("matmul") == 3  # the forward and the two gradients
    assert "relu" in names and "relu_grad" in names
    mm = next(e for e in ops if e.name == "matmul")
    assert mm.input_shapes == [[16, 16], [16, 16]]
    assert all(e.start_us <= e.end_us for e in events)


def test_key_averages_and_table():
    x = tg.randn(8, 8, requires_grad=True)
    with P.profile() as prof:
        for _ in range(3):
            _step(x)
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["matmul"].count == 9 and avg["sum"].count == 3
    a = avg["matmul"]
    assert a.cpu_time == pytest.approx(a.cpu_time_total / 9)
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=2)
    lines = table.splitlines()
    assert "Self CPU %" in lines[1] and "# of Calls" in lines[1]
    assert len([ln for ln in lines if ln.strip().endswith(tuple("0123456789"))]) == 2
    assert lines[-1].startswith("Self CPU time total:")
    total = prof.events().self_cpu_time_total
    assert total == pytest.approx(sum(e.self_cpu_time_total for e in prof.events()))
    assert prof.key_averages().total_average().count == len(prof.events())


def test_group_by_input_shape():
    with P.profile(record_shapes=True) as prof:
        tg.ones(2, 3).neg()
        tg.ones(4).neg()
        tg.ones(4).neg()
    groups = [g for g in prof.key_averages(group_by_input_shape=True) if g.key == "neg"]
    assert sorted((g.count, str(g.input_shapes)) for g in groups) == [(1, "[[2, 3]]"),
                                                                       (2, "[[4]]")]
    assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()


def test_chrome_trace_whole_or_nothing(tmp_path):
    with P.profile() as prof:
        with P.record_function("outer"):
            tg.ones(3).exp()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert {e["name"] for e in events} >= {"outer", "exp"}
    assert {e["cat"] for e in events} == {"user_annotation", "cpu_op"}
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    with pytest.raises(OSError):
        prof.export_chrome_trace(str(tmp_path / "missing" / "t.json"))
    assert os.listdir(tmp_path) == ["trace.json"]  # no partial file left


def test_other_threads_and_graph_runs():
    x = tg.ones(4)
    f = tg.function(lambda a: (a * 2).sum())
    f(x)  # traced before the profiler starts
    with P.profile() as prof:
        t = threading.Thread(target=lambda: x.neg())
        t.start()
        t.join()
        x.abs()
        f(x)  # a graph run: its nodes are not eager ops
    events = prof.events()
    neg = next(e for e in events if e.name == "neg")
    ab = next(e for e in events if e.name == "abs")
    assert neg.thread != ab.thread
    assert not [e for e in events if e.name == "mul"]


def test_record_function_outside_a_profile_and_as_decorator():
    with P.record_function("nothing"):
        tg.ones(2).neg()  # no profiler: no error, no event

    @P.record_function("decorated")
    def work():
        return tg.ones(2).neg()
    with P.profile() as prof:
        work()
    dec = next(e for e in prof.events() if e.name == "decorated")
    assert [c.name for c in dec.cpu_children] == ["neg"]


def test_one_profiler_at_a_time_and_events_after_the_run():
    prof = P.profile()
    with pytest.raises(AssertionError, match="didn't finish"):
        prof.events()
    with prof:
        with pytest.raises(RuntimeError, match="already on"):
            with P.profile():
                pass
    assert isinstance(prof.events(), P.EventList)


def test_unsupported_options_warn():
    with pytest.warns(UserWarning, match="CUDA"):
        P.profile(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA])
    with pytest.warns(UserWarning, match="with_stack"):
        P.profile(with_stack=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P.profile(activities=[P.ProfilerActivity.CPU], record_shapes=True)


@needs_torch
@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2),
                                dict(wait=0, warmup=2, active=1, repeat=2),
                                dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3)])
def test_schedule_is_pytorchs(kw):
    ours, theirs = P.schedule(**kw), torch.profiler.schedule(**kw)
    assert [ours(s).name for s in range(30)] == [theirs(s).name for s in range(30)]


def test_schedule_records_active_steps_and_hands_over_each_cycle():
    traces = []

    def ready(p):
        traces.append(sorted(e.name for e in p.events()))
    sched = P.schedule(wait=1, warmup=1, active=2, repeat=2)
    ops = ["neg", "abs", "exp", "sin", "cos", "tan", "sqrt", "log", "sigmoid", "tanh"]
    x = tg.ones(3)
    with P.profile(schedule=sched, on_trace_ready=ready) as prof:
        for name in ops:
            getattr(x, name)()
            prof.step()
    # steps 2-3 and 6-7 are recorded (wait 1, warmup 1, active 2, twice)
    assert traces == [sorted(["exp", "sin"]), sorted(["sqrt", "log"])]


def test_tensorboard_handler_writes_one_trace_per_cycle(tmp_path):
    handler = P.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    with P.profile(schedule=P.schedule(wait=0, warmup=1, active=1, repeat=1),
                   on_trace_ready=handler) as prof:
        for _ in range(3):
            tg.ones(2).neg()
            prof.step()
    files = os.listdir(tmp_path / "tb")
    assert files == ["w.2.pt.trace.json"]


def test_legacy_autograd_profiler():
    x = tg.ones(3, requires_grad=True)
    with tg.autograd.profiler.profile(record_shapes=True) as prof:
        (x * 2).sum().backward()
    names = [e.name for e in prof.function_events]
    assert "mul" in names and "sum" in names
    assert "Self CPU time total" in prof.table()
    assert prof.total_average().count == len(prof.function_events)
    assert prof.self_cpu_time_total > 0
    with tg.autograd.profiler.profile(enabled=False) as off:
        x.neg()
    assert off.function_events is None
    import tensorgraph.autograd.profiler as legacy
    assert legacy.record_function is P.record_function
