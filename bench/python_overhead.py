"""Per-op overhead from Python, tensorgraph vs PyTorch in the same run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [--threads 1]

Prints JSON lines: tg.add on two 1-element tensors (us per call) and a
small MLP's forward + backward (us per step), each the median of several
repeats (the machine may be shared: medians are steadier than means),
next to torch.add / the same MLP in PyTorch when it is installed."""
import argparse
import json
import statistics
import timeit

import tensorgraph as tg


def median_us(fn, number, repeat=7):
    fn()
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def bench_add(torch):
    a, b = tg.ones(1), tg.ones(1)
    add = tg.add
    r = {"bench": "python_op_overhead", "op": "add", "numel": 1,
         "tg_us": round(median_us(lambda: add(a, b), 20000), 3)}
    r["tg_operator_us"] = round(median_us(lambda: a + b, 20000), 3)
    if torch is not None:
        ta, tb = torch.ones(1), torch.ones(1)
        tadd = torch.add
        r["torch_us"] = round(median_us(lambda: tadd(ta, tb), 20000), 3)
        r["ratio"] = round(r["tg_us"] / r["torch_us"], 3)
    return r


def mlp_step(lib, nn, F, sizes, batch):
    lib.manual_seed(0)
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    x = lib.randn(batch, sizes[0])
    y = lib.randint(0, sizes[-1], (batch,))
    params = list(model.parameters())

    def step():
        for p in params:
            p.grad = None
        F.cross_entropy(model(x), y).backward()
    return step


def bench_mlp(torch, sizes, batch):
    """forward + cross-entropy + backward; the small one is dominated by
    per-op overhead, the larger one by the GEMM kernels"""
    import tensorgraph.nn as nn
    import tensorgraph.nn.functional as F
    r = {"bench": "python_mlp_fwd_bwd", "layers": "-".join(map(str, sizes)), "batch": batch,
         "tg_us": round(median_us(mlp_step(tg, nn, F, sizes, batch), 300), 1)}
    if torch is not None:
        r["torch_us"] = round(median_us(mlp_step(torch, torch.nn, torch.nn.functional, sizes,
                                                 batch), 300), 1)
        r["ratio"] = round(r["tg_us"] / r["torch_us"], 3)
    return r


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    tg.set_num_threads(args.threads)
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    for r in (bench_add(torch), bench_mlp(torch, (16, 32, 32, 4), 16),
              bench_mlp(torch, (64, 128, 128, 10), 32)):
        r["threads"] = args.threads
        print(json.dumps(r))


if __name__ == "__main__":
    main()
