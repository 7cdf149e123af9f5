"""GELU against PyTorch, one thread, from Python (JSON lines): F.gelu in
both forms (approximate='none' and 'tanh') on a [2048, 512] float32
tensor (a transformer feed-forward block's [tokens, 4 d_model]), a plain
clone beside them (the memory limit), and forward + backward (a leaf from
NumPy, gelu, sum, backward). Each line: the median over --samples of the
thread's CPU time (time.thread_time) per call, in microseconds.

    PYTHONPATH=build/python /usr/bin/python3 bench/gelu_torch.py [--samples 30]"""
import argparse
import json
import time

import numpy as np

import tensorgraph as tg
import tensorgraph.nn.functional as F


def median_us(fn, samples):
    fn()
    ts = []
    for _ in range(samples):
        t0 = time.thread_time()
        fn()
        ts.append(time.thread_time() - t0)
    return float(np.median(ts)) * 1e6


def cases(lib, functional, make, x):
    def fwd_bwd(approximate):
        a = make(x)
        functional.gelu(a, approximate=approximate).sum().backward()
    t = lib.tensor(x)
    return {"clone": lambda: t.clone(),
            "gelu": lambda: functional.gelu(t),
            "gelu_tanh": lambda: functional.gelu(t, approximate='tanh'),
            "gelu_fwd_bwd": lambda: fwd_bwd('none'),
            "gelu_tanh_fwd_bwd": lambda: fwd_bwd('tanh')}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=30)
    args = ap.parse_args()
    x = np.random.default_rng(0).standard_normal((2048, 512)).astype(np.float32)
    tg.set_num_threads(1)
    libs = [("tensorgraph", cases(tg, F, lambda v: tg.tensor(v, requires_grad=True), x))]
    try:
        import torch
        torch.set_num_threads(1)
        libs.append(("torch", cases(torch, torch.nn.functional,
                                    lambda v: torch.tensor(v, requires_grad=True), x)))
    except ImportError:
        pass
    for name, table in libs:
        for what, fn in table.items():
            print(json.dumps({"bench": "gelu_torch", "lib": name, "what": what, "shape": [2048, 512],
                              "us": round(median_us(fn, args.samples), 1)}))


if __name__ == "__main__":
    main()
