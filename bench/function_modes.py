"""Eager against tg.function (optimization levels 0, 1, 2) against PyTorch,
training steps and inference, in one process.

    PYTHONPATH=build/python /usr/bin/python3 bench/function_modes.py [--threads 1] [--rounds 15]

Models: LeNet-5 at batch 64 on 28x28 inputs (convolutions and pooling,
as `tg train lenet` builds it), an MLP 16-32-32-4 at batch 8 (per-op
overhead decides) and a TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512, gelu,
batch_first) on [32, 64, 128] (kernels decide). A training step is zero
grads, the loss, backward and an SGD step; with tg.function the loss is a
closure over the model, so the optimizer writes captured parameters
between calls, and function_whole_step compiles all four into the
function (level 2: one session run per step). tensorgraph's modes run interleaved, round after round, so that the
load of a shared machine falls on all of them alike; PyTorch's rounds come
after them, not between: on a 2-vCPU VM a tensorgraph step right after a
PyTorch step ran 25-45% slower (its library threads are still awake), which
made eager, measured first in each round, look slow and every ratio to it
small (2026-12-01: the transformer's whole step read 0.70x eager that way,
0.98x without PyTorch in the rounds); each line is the
median over rounds of the time per step, with the ratio to eager, and the
median of the process's CPU time per step (cpu_us, cpu_ratio_to_eager:
time.process_time, which leaves out the time the process waits for a
core on a loaded machine; with --threads 1 it is the step's own work).

Counts that do not depend on the machine's load come with the times:
plans compiled by the function's session over the whole run (plan_misses:
it should stay at the number of distinct run signatures, 2 for a step),
op nodes it executes per step (forward and backward runs), and Python
function calls per step (sys.setprofile: calls and C calls)."""
import argparse
import json
import statistics
import sys
import time

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F


def lenet(lib, lnn):
    lib.manual_seed(0)
    model = lnn.Sequential(lnn.Conv2d(1, 6, 5, padding=2), lnn.ReLU(), lnn.MaxPool2d(2),
                           lnn.Conv2d(6, 16, 5), lnn.ReLU(), lnn.MaxPool2d(2), lnn.Flatten(),
                           lnn.Linear(400, 120), lnn.ReLU(), lnn.Linear(120, 84), lnn.ReLU(),
                           lnn.Linear(84, 10))
    x = lib.randn(64, 1, 28, 28)
    y = lib.randint(0, 10, (64,))
    return model, x, y


def mlp(lib, lnn):
    lib.manual_seed(0)
    model = lnn.Sequential(lnn.Linear(16, 32), lnn.ReLU(), lnn.Linear(32, 32), lnn.ReLU(),
                           lnn.Linear(32, 4))
    x = lib.randn(8, 16)
    y = lib.randint(0, 4, (8,))
    return model, x, y


def transformer(lib, lnn):
    lib.manual_seed(0)
    model = lnn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512, dropout=0.0,
                                        batch_first=True, activation='gelu')
    x = lib.randn(32, 64, 128)
    y = lib.randn(32, 64, 128)
    return model, x, y


def mlp_loss(lf):
    return lambda model, x, y: lf.cross_entropy(model(x), y)


def tr_loss(lf):
    return lambda model, x, y: lf.mse_loss(model(x), y)


class Mode:
    """one way of running a model: step() and infer() closures"""

    def __init__(self, name, lib, lnn, lf, optim, make, loss, level=None, whole=False):
        self.name = name
        model, x, y = make(lib, lnn)
        opt = optim.SGD(model.parameters(), lr=1e-3)
        self.lib, self.level, self.x, self.y = lib, level, x, y
        body = loss(lf)
        self.fn = self.infer_fn = None

        def whole_step(x, y):
            opt.zero_grad()
            loss = body(model, x, y)
            loss.backward()
            opt.step()
            return loss
        if level is not None:
            self.fn = tg.function(whole_step if whole else lambda x, y: body(model, x, y))
            self.infer_fn = tg.function(lambda x: model(x))
            # the concrete functions exist after a first call; set the level
            # before anything compiles
            for f, args in ((self.fn, (x, y)), (self.infer_fn, (x,))):
                f.get_concrete_function(*args).set_opt_level(level)
            loss_of = self.fn
            forward = self.infer_fn
        else:
            loss_of = lambda x, y: body(model, x, y)  # noqa: E731
            forward = model

        def step():
            opt.zero_grad()
            loss = loss_of(x, y)
            loss.backward()
            opt.step()
            return loss
        if whole:  # zero_grad, backward and the SGD step compiled in the function
            step = lambda: self.fn(x, y)  # noqa: E731

        def infer():
            with lib.no_grad():
                return forward(x)
        self.step, self.infer = step, infer

    def stats(self, which):
        f, args = (self.fn, (self.x, self.y)) if which == "step" else (self.infer_fn, (self.x,))
        return f.get_concrete_function(*args).session_stats() if f else None


def python_calls(fn):
    n = 0

    def prof(frame, event, arg):
        nonlocal n
        if event in ("call", "c_call"):
            n += 1
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return n


def measure(modes, rounds, number, times, cpu, nodes):
    """rounds of each mode's step and inference, interleaved"""
    for _ in range(rounds):
        for m in modes:
            for kind in ("step", "infer"):
                f = getattr(m, kind)
                before = m.stats(kind)
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(number):
                    f()
                times[(m.name, kind)].append((time.perf_counter() - t0) / number * 1e6)
                cpu[(m.name, kind)].append((time.process_time() - c0) / number * 1e6)
                after = m.stats(kind)
                if before:
                    nodes[(m.name, kind)] = (after["nodes_total"] - before["nodes_total"]) / number


def run(model_name, make, loss, rounds, number, torch):
    modes = [Mode("eager", tg, nn, F, tg.optim, make, loss)]
    modes += [Mode(f"function_level{lv}", tg, nn, F, tg.optim, make, loss, level=lv)
              for lv in (0, 1, 2)]
    modes.append(Mode("function_whole_step", tg, nn, F, tg.optim, make, loss, level=2,
                      whole=True))
    if torch is not None:
        import torch.nn as tnn
        import torch.nn.functional as tF
        modes.append(Mode("torch", torch, tnn, tF, torch.optim, make, loss))
    ours = [m for m in modes if m.name != "torch"]
    theirs = [m for m in modes if m.name == "torch"]
    losses = {}
    for m in theirs + ours:  # warm up (traces and compiles), and the first losses
        losses[m.name] = [float(m.step()) for _ in range(3)]
        m.infer()
    times = {(m.name, k): [] for m in modes for k in ("step", "infer")}
    cpu = {(m.name, k): [] for m in modes for k in ("step", "infer")}
    nodes = {}
    for group in (ours, theirs):  # PyTorch's rounds after ours (see the top)
        measure(group, rounds, number, times, cpu, nodes)
    lines = []
    for kind in ("step", "infer"):
        eager = statistics.median(times[("eager", kind)])
        eager_cpu = statistics.median(cpu[("eager", kind)])
        for m in modes:
            med = statistics.median(times[(m.name, kind)])
            cmed = statistics.median(cpu[(m.name, kind)])
            r = {"bench": "function_modes", "model": model_name, "what": kind, "mode": m.name,
                 "us": round(med, 1), "ratio_to_eager": round(med / eager, 3),
                 "cpu_us": round(cmed, 1), "cpu_ratio_to_eager": round(cmed / eager_cpu, 3),
                 "python_calls": python_calls(getattr(m, kind))}
            st = m.stats(kind)
            if st:
                r["plan_misses"] = st["plan_misses"]
                r["nodes_per_call"] = nodes[(m.name, kind)]
            if kind == "step":
                r["first_losses"] = [round(v, 6) for v in losses[m.name]]
            lines.append(r)
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--model", choices=("lenet", "mlp", "transformer", "all"), default="all")
    args = ap.parse_args()
    tg.set_num_threads(args.threads)
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    todo = [("lenet_b64", lenet, mlp_loss, 10),
            ("mlp_16-32-32-4_b8", mlp, mlp_loss, 200),
            ("transformer_layer_d128_32x64", transformer, tr_loss, 2)]
    for name, make, loss, number in todo:
        if args.model != "all" and not name.startswith(args.model):
            continue
        for line in run(name, make, loss, args.rounds, number, torch):
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
