"""tensorgraph.profiler: PyTorch's torch.profiler over tensorgraph's eager
op profiler (include/tg/profiler.h).

    with tg.profiler.profile(record_shapes=True) as prof:
        with tg.profiler.record_function("step"):
            loss = model(x).sum(); loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")

Every op that runs eagerly while a profiler records is one event (its
kernel, the autograd record; the ops a backward pass runs too, under their
own names: `matmul`, `relu_grad`, ...), and every record_function range
another; an event's children are the events inside it on its thread, and
its self time is its time less theirs. Names are tensorgraph's op names,
not ATen's. What it does not record: graph runs (tg.function, sessions:
`tg train --profile` and a session's trace cover those), memory, stacks,
FLOPs and modules (asking for them warns), CUDA (there is none). One
profiler records at a time, as in PyTorch."""
import enum
import functools
import json
import os
import warnings

from . import _C

__all__ = ['ProfilerActivity', 'ProfilerAction', 'profile', 'record_function', 'schedule',
           'tensorboard_trace_handler', 'EventList', 'FunctionEvent', 'FunctionEventAvg']


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """PyTorch's schedule: after skip_first steps, cycles of wait steps
    idle, warmup steps warming up and active steps recorded (the last one
    handing the trace to on_trace_ready), repeat cycles (0: forever)"""
    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def _format_time(us):
    if us >= 1e6:
        return f'{us / 1e6:.3f}s'
    if us >= 1e3:
        return f'{us / 1e3:.3f}ms'
    return f'{us:.3f}us'


class FunctionEvent:
    """one op run or record_function range: times in microseconds"""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes, is_range):
        self.id, self.name, self.thread = id, name, thread
        self.start_us, self.end_us = start_us, end_us
        self.input_shapes = input_shapes
        self.is_user_annotation = is_range
        self.cpu_children, self.cpu_parent = [], None
        self.count = 1

    key = property(lambda self: self.name)
    cpu_time_total = property(lambda self: self.end_us - self.start_us)
    cpu_time = cpu_time_total
    self_cpu_time_total = property(
        lambda self: self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children))
    time_range = property(lambda self: (self.start_us, self.end_us))

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={_format_time(self.cpu_time_total)} "
                f"self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """the events of one key (and input shapes, when grouped by them) summed"""

    def __init__(self, key, input_shapes=None):
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0

    def add(self, e):
        self.count += e.count
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        return self

    cpu_time = property(lambda self: self.cpu_time_total / max(self.count, 1))
    self_cpu_time = property(lambda self: self.self_cpu_time_total / max(self.count, 1))

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} cpu_time="
                f"{_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


class EventList(list):
    """events (or their averages) with PyTorch's table and trace"""

    def key_averages(self, group_by_input_shape=False):
        groups = {}
        for e in self:
            key = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            if key not in groups:
                groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None)
            groups[key].add(e)
        return EventList(groups.values())

    def total_average(self):
        total = FunctionEventAvg('Total')
        for e in self:
            total.add(e)
        return total

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """PyTorch's columns: self CPU (share and time), CPU total (share
        and time), CPU time per call, calls, and the input shapes when they
        were grouped by"""
        rows = [e for e in self if not top_level_events_only or
                getattr(e, 'cpu_parent', None) is None]
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        self_total = self.self_cpu_time_total or 1.0
        shapes = any(getattr(e, 'input_shapes', None) for e in rows)
        name_w = min(max([len(e.key) for e in rows] + [4]) + 4, max_name_column_width)
        heads = ['Name', 'Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg',
                 '# of Calls'] + (['Input Shapes'] if shapes else [])
        widths = [name_w] + [12] * 6 + ([max_shapes_column_width] if shapes else [])
        rule = ''.join('-' * w + '  ' for w in widths)

        def line(cells):
            return ''.join(str(c)[:w].rjust(w) + '  ' for c, w in zip(cells, widths))
        out = [rule] if header is None else ['=' * len(rule), header, rule]
        out += [line(heads), rule]
        for e in rows:
            cells = [e.key if len(e.key) <= name_w else e.key[:name_w - 3] + '...',
                     f'{100 * e.self_cpu_time_total / self_total:.2f}%',
                     _format_time(e.self_cpu_time_total),
                     f'{100 * e.cpu_time_total / self_total:.2f}%',
                     _format_time(e.cpu_time_total), _format_time(e.cpu_time_total / e.count),
                     e.count]
            if shapes:
                cells.append(str(e.input_shapes or []))
            out.append(line(cells))
        out += [rule, f'Self CPU time total: {_format_time(self.self_cpu_time_total)}', '']
        return '\n'.join(out)

    def export_chrome_trace(self, path):
        """the events as a Chrome trace (chrome://tracing, Perfetto),
        replacing path atomically (tg_write_file: whole or not at all)"""
        trace = {'traceEvents': [
            {'name': e.name, 'ph': 'X', 'ts': e.start_us, 'dur': e.cpu_time_total, 'pid': 0,
             'tid': e.thread, 'cat': 'user_annotation' if e.is_user_annotation else 'cpu_op',
             'args': {'Input Dims': e.input_shapes} if e.input_shapes is not None else {}}
            for e in self if isinstance(e, FunctionEvent)]}
        _C._write_file(os.fspath(path), json.dumps(trace).encode())


def _collect(record_shapes):
    """the stopped C profiler's events, each with its children on its thread"""
    raw = sorted(_C._profiler_events(), key=lambda r: (r[3], r[1], -r[2]))
    events, open_by_thread = EventList(), {}
    for i, (name, start, end, thread, depth, is_range, shapes) in enumerate(raw):
        e = FunctionEvent(i, name, thread, start / 1e3, end / 1e3,
                          json.loads(shapes) if shapes else None, is_range)
        stack = open_by_thread.setdefault(thread, [])
        while stack and stack[-1].end_us <= e.start_us:
            stack.pop()
        if stack and e.end_us <= stack[-1].end_us:
            e.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(e)
        stack.append(e)
        events.append(e)
    dropped = _C._profiler_dropped()
    if dropped:
        warnings.warn(f"the profiler kept its first {len(raw)} events and dropped {dropped}")
    return events


class _Recorder:
    """what the two profile classes share: the C profiler on and off, the
    events read back"""

    def __init__(self, record_shapes, asked):
        self.record_shapes = bool(record_shapes)
        unsupported = [k for k, v in asked.items() if v]
        if unsupported:
            warnings.warn(f"tensorgraph's profiler records op times and input shapes only: "
                          f"{', '.join(unsupported)} ignored")
        self._events = None
        self._on = False

    def _start_recording(self):
        _C._profiler_start(self.record_shapes, 0)
        self._on = True

    def _stop_recording(self):
        if self._on:
            self._on = False
            _C._profiler_stop()
            self._events = _collect(self.record_shapes)

    def events(self):
        if self._events is None:
            raise AssertionError("Profiler didn't finish running")
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self.events().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path):
        self.events().export_chrome_trace(path)


class profile(_Recorder):
    """torch.profiler.profile: records between start() and stop() (a
    with block), or in the steps a schedule marks, calling on_trace_ready
    after each recorded cycle"""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 use_cuda=None):
        activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        if ProfilerActivity.CUDA in activities or use_cuda:
            warnings.warn("CUDA is not available here (tensorgraph runs on the CPU): the "
                          "CUDA activity records nothing")
        super().__init__(record_shapes, {'profile_memory': profile_memory,
                                         'with_stack': with_stack, 'with_flops': with_flops,
                                         'with_modules': with_modules})
        self.activities = activities
        self.schedule = schedule or (lambda step: ProfilerAction.RECORD)
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self._action = ProfilerAction.NONE

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self.step_num = 0
        self._enter(self.schedule(self.step_num))

    def stop(self):
        if self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._finish_cycle()
        self._action = ProfilerAction.NONE

    def step(self):
        """the end of one training step: the schedule's next action"""
        previous = self._action
        self.step_num += 1
        action = self.schedule(self.step_num)
        if previous == ProfilerAction.RECORD_AND_SAVE or (
                previous == ProfilerAction.RECORD and action not in (
                    ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)):
            self._finish_cycle()
        self._enter(action)

    def _enter(self, action):
        self._action = action
        if action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE) and not self._on:
            self._start_recording()

    def _finish_cycle(self):
        self._stop_recording()
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """on_trace_ready writing each cycle's Chrome trace into dir_name as
    WORKER.STEP.pt.trace.json (gzipped with use_gzip)"""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f'{os.uname().nodename}_{os.getpid()}'
        path = os.path.join(dir_name, f'{worker}.{prof.step_num}.pt.trace.json')
        prof.export_chrome_trace(path)
        if use_gzip:
            import gzip
            with open(path, 'rb') as f, gzip.open(path + '.gz', 'wb') as g:
                g.write(f.read())
            os.unlink(path)
    return handler


class record_function:
    """a named range in the profile (a with block or a decorator); nothing
    while no profiler records"""

    def __init__(self, name, args=None):
        self.name = name if args is None else f'{name}({args})'
        self._pushed = False

    def __enter__(self):
        if _C._profiler_enabled():
            _C._profiler_range_push(self.name)
            self._pushed = True
        return self

    def __exit__(self, *exc):
        if self._pushed:
            self._pushed = False
            _C._profiler_range_pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return wrapped
