"""What tg.function's source conversion costs, and what a converted loop runs at.

    PYTHONPATH=build/python /usr/bin/python3 bench/autograph_cost.py [--rounds 20]

One JSON line each:
- convert: the time to convert a function's source (parse, lower, analyse,
  rewrite, compile; once per function, cached after), median over rounds,
  for the test programs of tests/python/autograph_programs.py and a loss
  function without control flow;
- first_call: the first call of tg.function (conversion + trace + plan +
  run) with autograph on and off, for that loss function (no control flow:
  conversion changes nothing but its cost);
- loop_call: a converted Newton iteration called on new values (one
  compiled graph, the while loop inside it) next to the same Python run
  eagerly, per call, with the trip counts the inputs take.
Times are medians over rounds on a shared machine: read them as sizes,
not as exact figures."""
import argparse
import json
import os
import statistics
import sys
import time

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from tensorgraph.autograph import conversion

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "python"))
import autograph_programs as P  # noqa: E402

MODEL = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))


def loss_fn(x, y):
    return F.cross_entropy(MODEL(x), y)


def forget_conversions():
    conversion._code_cache.clear()
    conversion._fn_cache.clear()


def median_ms(run, rounds, before=None):
    times = []
    for _ in range(rounds):
        if before:
            before()
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return round(statistics.median(times) * 1e3, 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    rounds = ap.parse_args().rounds
    programs = (P.collatz, P.piecewise, P.greedy_decode, P.first_index_over, loss_fn)
    print(json.dumps({"bench": "convert", "unit": "ms", "rounds": rounds, **{
        f.__name__: median_ms(lambda f=f: conversion.convert(f), rounds, forget_conversions)
        for f in programs}}))
    x, y = tg.randn(64, 784), tg.randint(0, 10, (64,))
    print(json.dumps({"bench": "first_call", "unit": "ms", "rounds": rounds, **{
        f"autograph_{on}": median_ms(lambda on=on: tg.function(loss_fn, autograph=on)(x, y),
                                     rounds, forget_conversions) for on in (True, False)}}))
    if not hasattr(tg._C, "_while_loop"):
        print(json.dumps({"bench": "loop_call", "skipped": "no graph while_loop in this build"}))
        return
    values = [tg.tensor(v, dtype=tg.float64) for v in (2.0, 50.0, 1e6, 0.01)]
    compiled = tg.function(P.newton_sqrt)
    with tg.no_grad():
        compiled(values[0])
        trips = []
        for v in values:
            xk, n = v, 0
            while abs(xk * xk - v) > 1e-9 * v:
                xk, n = 0.5 * (xk + v / xk), n + 1
            trips.append(n)
        graph = median_ms(lambda: [compiled(v) for v in values], rounds)
        eager = median_ms(lambda: [P.newton_sqrt(v) for v in values], rounds)
    print(json.dumps({"bench": "loop_call", "unit": "ms per 4 calls", "rounds": rounds,
                      "trip_counts": trips, "traces": compiled.trace_count,
                      "graph": graph, "eager": eager}))


if __name__ == "__main__":
    main()
