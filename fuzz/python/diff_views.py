"""Differential fuzzing of views, in-place updates and autograd through
them, against PyTorch: each case is a random program over one leaf
tensor: it takes views (slices, transposes, narrow, select, diagonal,
view/reshape, unsqueeze, expand's reads, unfold) and updates them in place
(add_, mul_, clamp_, copy_, fill_, masked_fill_, index_add_,
item assignment, zero_), through a non-leaf copy of the leaf so that the
updates are recorded, then reduces what it built to a weighted sum and
runs backward. Both libraries run the same program; the values, the
leaf's gradient and whether each step was refused must agree (PyTorch
refuses some in-place updates of views; tensorgraph must refuse the same).

    /usr/bin/python3 fuzz/python/diff_views.py [--cases N] [--seed S] [-v]

A known difference is counted apart, not as a disagreement: an update
through a view whose elements share memory (unfold's overlapping windows)
of a tensor with history. PyTorch cannot tell such a view overlaps itself
(only a dim of stride 0 and size > 1) and runs the write: its values then
depend on the order the kernel visits the elements and its gradient on
which copy of a location CopySlices writes last, both undefined by its
own documentation; tensorgraph refuses the write ("some elements of the
view refer to a single memory location; clone it before writing to it").

PYTHONPATH must hold the built package (build/python). Exit status 1 when
any case disagrees."""
import argparse
import random
import sys

import numpy as np
import torch

import tensorgraph as tg


def _view_step(r, shape):
    """a random view of a tensor of this shape: (name, args) or None"""
    nd = len(shape)
    choices = ["t", "transpose", "narrow", "select", "getitem", "unsqueeze", "view", "flip_view",
               "diagonal", "unfold", "permute", "squeeze", "movedim", "expand_read", "reshape"]
    kind = r.choice(choices)
    if nd == 0 and kind not in ("unsqueeze", "view", "reshape"):
        kind = "unsqueeze"
    if kind == "t":
        return ("t", ()) if nd <= 2 else None
    if kind in ("transpose", "movedim"):
        return (kind, (r.randrange(nd), r.randrange(nd))) if nd >= 1 else None
    if kind == "narrow":
        d = r.randrange(nd)
        if shape[d] == 0:
            return None
        start = r.randrange(shape[d])
        return ("narrow", (d, start, r.randint(0, shape[d] - start)))
    if kind == "select":
        d = r.randrange(nd)
        return ("select", (d, r.randrange(shape[d]))) if shape[d] else None
    if kind == "getitem":
        idx = []
        for s in shape[:r.randint(1, nd)]:
            a, b = sorted((r.randint(-s, s), r.randint(-s, s)))
            idx.append(r.choice([slice(a, b, r.randint(1, 2)), slice(None), slice(None, None, 2)]))
        return ("getitem", (tuple(idx),))
    if kind == "unsqueeze":
        return ("unsqueeze", (r.randint(-nd - 1, nd),))
    if kind in ("view", "reshape"):
        n = int(np.prod(shape))
        if kind == "view" and n and r.random() < 0.5:
            return ("view", (-1,))
        divs = [d for d in range(1, n + 1) if n % d == 0] or [1]
        a = r.choice(divs)
        return (kind, ((a, n // a) if n else (0, r.randint(1, 2)),))
    if kind == "flip_view":
        return ("flatten", ())
    if kind == "diagonal":
        if nd < 2:
            return None
        d1, d2 = r.sample(range(nd), 2)
        return ("diagonal", (r.randint(-1, 1), d1, d2))
    if kind == "unfold":
        d = r.randrange(nd)
        if shape[d] == 0:
            return None
        return ("unfold", (d, r.randint(1, shape[d]), r.randint(1, 2)))
    if kind == "permute":
        p = list(range(nd))
        r.shuffle(p)
        return ("permute", tuple(p))
    if kind == "squeeze":
        return ("squeeze", ()) if r.random() < 0.5 else ("squeeze", (r.randrange(nd),))
    return ("expand_read", ())


def _update_step(r, shape):
    kind = r.choice(["add_", "mul_", "clamp_", "copy_", "fill_", "masked_fill_", "setitem",
                     "zero_", "sub_", "div_", "pow_", "neg_", "relu_", "exp_", "addcmul_",
                     "index_add_", "sigmoid_", "tanh_"])
    return (kind, r.randrange(1 << 30))


def _apply(lib, x, step):
    name, args = step
    if name == "getitem":
        return x[args[0]]
    if name == "expand_read":
        return x.unsqueeze(0).expand((2,) + tuple(x.shape))
    return getattr(x, name)(*args)


def _apply_update(lib, x, step):
    name, seed = step
    nr = np.random.default_rng(seed)
    shape = tuple(x.shape)
    def val(s=shape):
        return lib.tensor(nr.standard_normal(s))
    if name in ("add_", "sub_", "mul_", "div_"):
        other = val(shape[nr.integers(0, len(shape) + 1):]) if shape else val(())
        if name == "div_":
            other = other.abs() + 0.5
        return getattr(x, name)(other)
    if name == "clamp_":
        return x.clamp_(-0.5, 0.7)
    if name == "copy_":
        return x.copy_(val())
    if name == "fill_":
        return x.fill_(float(nr.standard_normal()))
    if name == "masked_fill_":
        return x.masked_fill_(lib.tensor(nr.random(shape) < 0.5), 0.25)
    if name == "setitem":
        if not shape or shape[0] == 0:
            return x.fill_(1.5)
        i = int(nr.integers(0, shape[0]))
        x[i] = val(shape[1:])
        return x
    if name == "pow_":
        return x.abs_().pow_(1.5) if nr.random() < 0.5 else x.pow_(2)
    if name == "addcmul_":
        return x.addcmul_(val(), val(), value=0.5)
    if name == "index_add_":
        if not shape or shape[0] == 0:
            return x.zero_()
        idx = lib.tensor(nr.integers(0, shape[0], size=3))
        return x.index_add_(0, idx, val((3,) + shape[1:]))
    return getattr(x, name)()


def run_program(lib, seed, prog):
    nr = np.random.default_rng(seed)
    leaf = lib.tensor(nr.standard_normal(prog["shape"]), requires_grad=True)
    base = leaf * 1.0
    cur, log = base, []
    for kind, step in prog["steps"]:
        try:
            if kind == "view":
                cur = _apply(lib, cur, step)
            elif kind == "update":
                _apply_update(lib, cur, step)
            else:
                cur = base
            log.append("ok")
        except Exception as e:  # noqa: BLE001 - compared between the libraries
            overlap = "view refer to a single memory location" in str(e)
            log.append("refused-overlap" if overlap else "refused " + type(e).__name__)
            break
    w = lib.tensor(nr.standard_normal(tuple(base.shape)))
    out = {"log": log}
    try:
        loss = (base * w).sum() + (cur * cur).sum()
        loss.backward()
        out["base"] = base.detach().numpy().copy()
        out["cur"] = cur.detach().numpy().copy()
        out["grad"] = leaf.grad.numpy().copy()
    except Exception as e:  # noqa: BLE001
        out["backward"] = "refused " + type(e).__name__
    return out


def make_program(r):
    shape = tuple(r.randint(1, 4) for _ in range(r.randint(0, 3)))
    steps, cur_shape = [], shape
    for _ in range(r.randint(1, 6)):
        roll = r.random()
        if roll < 0.5:
            v = _view_step(r, cur_shape)
            if v is None:
                continue
            try:
                cur_shape = tuple(_apply(torch, torch.zeros(cur_shape), v).shape)
            except Exception:  # noqa: BLE001 - an invalid view: both libraries must refuse it
                pass
            steps.append(("view", v))
        elif roll < 0.9:
            steps.append(("update", _update_step(r, cur_shape)))
        else:
            steps.append(("reset", None))
            cur_shape = shape
    return {"shape": shape, "steps": steps}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    import warnings
    warnings.simplefilter("ignore")
    r = random.Random(a.seed)
    bad = known = 0
    for i in range(a.cases):
        prog = make_program(r)
        seed = r.randrange(1 << 30)
        t = run_program(torch, seed, prog)
        g = run_program(tg, seed, prog)
        probs = []
        j = len(g["log"]) - 1
        if g["log"][-1:] == ["refused-overlap"] and t["log"][:j + 1] == ["ok"] * (j + 1):
            known += 1  # tensorgraph's refusal of an overlapping write (see the docstring)
            continue
        if [s.split()[0] for s in t["log"]] != [s.split()[0] for s in g["log"]]:
            probs.append("steps %s vs %s" % (t["log"], g["log"]))
        elif ("backward" in t) != ("backward" in g):
            probs.append("backward %s vs %s" % (t.get("backward"), g.get("backward")))
        elif "backward" not in t:
            for k in ("base", "cur", "grad"):
                if t[k].shape != g[k].shape:
                    probs.append("%s shape %s vs %s" % (k, t[k].shape, g[k].shape))
                elif not np.allclose(t[k], g[k], rtol=1e-6, atol=1e-9, equal_nan=True):
                    probs.append("%s differs by %.3g" % (k, np.nanmax(np.abs(t[k] - g[k]))))
        if probs:
            bad += 1
            print("[%d] %s %s: %s" % (i, prog["shape"], prog["steps"], "; ".join(probs)), flush=True)
        elif a.v:
            print("[%d] ok %s" % (i, t["log"]))
    print("%d cases (%d overlapping writes tensorgraph refuses), %d disagreements"
          % (a.cases, known, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
