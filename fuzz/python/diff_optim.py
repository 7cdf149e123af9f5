"""Differential fuzzing of the optimizers and learning-rate schedulers
against PyTorch.

An optimizer case draws one of torch.optim's optimizers that tensorgraph
also has, random hyper-parameters (sometimes invalid ones: both libraries
must then refuse the construction), one or two parameter groups (the
second with its own options) of float64 parameters of random shapes (0-d
and empty included), and runs a few steps with the same random gradients
in both, some parameters without a gradient in a step; halfway it may
move both through state_dict() / load_state_dict() into new optimizers.
The parameters must agree after every step. LBFGS runs its closure over a
quadratic loss.

A scheduler case draws a scheduler (several chained, for SequentialLR and
ChainedScheduler) with random arguments over SGD with one or two groups,
steps it (ReduceLROnPlateau with random metrics) and compares every
group's lr and get_last_lr() after each step.

    /usr/bin/python3 fuzz/python/diff_optim.py [--cases N] [--seed S] [--only NAME] [-v]

PYTHONPATH must hold the built package (build/python). Prints one line per
disagreement and a summary; exit status 1 when any case disagrees."""
import argparse
import math
import random
import sys
import traceback
import warnings

import numpy as np
import torch

import tensorgraph as tg

RTOL, ATOL = 1e-9, 1e-12
# PyTorch 1.13's NAdam and ASGD compute their step-size scalars from the
# step count held as a float32 tensor (0.96 ** (step * momentum_decay),
# lr / (1 + lambd lr step) ** alpha) and so round them to float32;
# tensorgraph computes them in float64
LOOSE = {"NAdam": (1e-6, 1e-7), "ASGD": (1e-6, 1e-7)}


def _betas(r):
    return r.choice([(0.9, 0.999), (0.5, 0.9), (0.0, 0.99), (0.9, 0.0)])


# name -> random keyword arguments (invalid values now and then)
OPTIMIZERS = {
    "SGD": lambda r: dict(lr=r.choice([0.1, 0.01]), momentum=r.choice([0.0, 0.9]),
                          dampening=r.choice([0.0, 0.3]), weight_decay=r.choice([0.0, 0.05]),
                          nesterov=r.random() < 0.3, maximize=r.random() < 0.3),
    "Adam": lambda r: dict(lr=r.choice([0.1, 0.01]), betas=_betas(r), eps=r.choice([1e-8, 1e-3]),
                           weight_decay=r.choice([0.0, 0.05]), amsgrad=r.random() < 0.4,
                           maximize=r.random() < 0.3),
    "AdamW": lambda r: dict(lr=r.choice([0.1, 0.01]), betas=_betas(r), eps=r.choice([1e-8, 1e-3]),
                            weight_decay=r.choice([0.0, 0.01, 0.5]), amsgrad=r.random() < 0.4,
                            maximize=r.random() < 0.3),
    "RMSprop": lambda r: dict(lr=r.choice([0.1, 0.01]), alpha=r.choice([0.99, 0.5]),
                              eps=r.choice([1e-8, 1e-3]), weight_decay=r.choice([0.0, 0.05]),
                              momentum=r.choice([0.0, 0.9]), centered=r.random() < 0.4,
                              maximize=r.random() < 0.3),
    "Adagrad": lambda r: dict(lr=r.choice([0.1, 0.01]), lr_decay=r.choice([0.0, 0.1]),
                              weight_decay=r.choice([0.0, 0.05]),
                              initial_accumulator_value=r.choice([0.0, 0.1]),
                              eps=r.choice([1e-10, 1e-3]), maximize=r.random() < 0.3),
    "Adadelta": lambda r: dict(lr=r.choice([1.0, 0.5]), rho=r.choice([0.9, 0.5]),
                               eps=r.choice([1e-6, 1e-3]), weight_decay=r.choice([0.0, 0.05]),
                               maximize=r.random() < 0.3),
    "Adamax": lambda r: dict(lr=r.choice([0.1, 0.002]), betas=_betas(r),
                             eps=r.choice([1e-8, 1e-3]), weight_decay=r.choice([0.0, 0.05]),
                             maximize=r.random() < 0.3),
    "NAdam": lambda r: dict(lr=r.choice([0.1, 0.002]), betas=_betas(r),
                            eps=r.choice([1e-8, 1e-3]), weight_decay=r.choice([0.0, 0.05]),
                            momentum_decay=r.choice([0.004, 0.1])),
    "RAdam": lambda r: dict(lr=r.choice([0.1, 0.001]), betas=_betas(r),
                            eps=r.choice([1e-8, 1e-3]), weight_decay=r.choice([0.0, 0.05])),
    "ASGD": lambda r: dict(lr=r.choice([0.1, 0.01]), lambd=r.choice([1e-4, 0.1]),
                           alpha=r.choice([0.75, 0.5]), t0=r.choice([1.0, 2.0, 1e6]),
                           weight_decay=r.choice([0.0, 0.05]), maximize=r.random() < 0.3),
    "Rprop": lambda r: dict(lr=r.choice([0.1, 0.01]), etas=r.choice([(0.5, 1.2), (0.3, 1.5)]),
                            step_sizes=r.choice([(1e-6, 50), (0.01, 0.05)]),
                            maximize=r.random() < 0.3),
    "LBFGS": lambda r: dict(lr=r.choice([1.0, 0.5]), max_iter=r.choice([1, 3, 20]),
                            history_size=r.choice([2, 100]),
                            line_search_fn=r.choice([None, "strong_wolfe"])),
}

# a value that must be refused, per keyword
INVALID = {"lr": -0.1, "eps": -1e-3, "weight_decay": -0.1, "momentum": -0.5, "alpha": -0.1,
           "betas": (1.0, 0.999), "rho": 1.5, "lr_decay": -0.1, "lambd": -1.0,
           "initial_accumulator_value": -0.1, "momentum_decay": -0.1, "etas": (1.5, 1.2)}


def _tol(name, params):
    """float32 parameters: the libraries' roundings differ in the last bits
    (LBFGS's iterations and line search amplify them; in float64 it agrees
    to RTOL)"""
    if any(p.dtype == torch.float32 for p in params):
        return (1e-3, 1e-4) if name == "LBFGS" else (1e-5, 1e-6)
    return LOOSE.get(name, (RTOL, ATOL))


def _same(a, b, tol=(RTOL, ATOL)):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=tol[0], atol=tol[1], equal_nan=True)


def _params(r, nr):
    shapes = [tuple(r.randint(0 if r.random() < 0.1 else 1, 3) for _ in range(r.randint(0, 2)))
              for _ in range(r.randint(1, 3))]
    dt = np.float32 if r.random() < 0.3 else np.float64
    data = [nr.standard_normal(s).astype(dt) for s in shapes]
    return ([torch.tensor(d, requires_grad=True) for d in data],
            [tg.tensor(d, requires_grad=True) for d in data])


def _build(lib, name, groups, kw):
    return getattr(lib.optim, name)(groups, **kw)


def _group_sets(r, name, tp, gp):
    """the same parameter groups for both libraries: one list, or two
    groups, the second with its own options"""
    if len(tp) < 2 or r.random() < 0.5:
        return tp, gp, None
    other = {k: v for k, v in OPTIMIZERS[name](r).items() if k in ("lr", "weight_decay")}
    return ([{"params": tp[:1]}, dict(other, params=tp[1:])],
            [{"params": gp[:1]}, dict(other, params=gp[1:])], other)


def _check_params(tp, gp, when, tol=(RTOL, ATOL)):
    for i, (a, b) in enumerate(zip(tp, gp)):
        if not _same(a.detach().numpy(), b.detach().numpy(), tol):
            return "%s: param %d: %s vs %s" % (when, i, a.detach().numpy().ravel()[:4],
                                                b.detach().numpy().ravel()[:4])
    return None


def optimizer_case(r, name):
    kw = OPTIMIZERS[name](r)
    if name != "LBFGS" and r.random() < 0.1:
        bad = r.choice([k for k in kw if k in INVALID])
        kw[bad] = INVALID[bad]
    nr = np.random.default_rng(r.randrange(1 << 30))
    tp, gp = _params(r, nr)
    tgroups, ggroups, _ = (tp, gp, None) if name == "LBFGS" else _group_sets(r, name, tp, gp)
    try:
        topt = _build(torch, name, tgroups, kw)
    except (ValueError, TypeError, RuntimeError) as e:
        try:
            _build(tg, name, ggroups, kw)
        except Exception:  # noqa: BLE001 - both refuse
            return None
        return "%s %s: PyTorch refused (%s), tensorgraph accepted" % (name, kw, e)
    try:
        gopt = _build(tg, name, ggroups, kw)
    except Exception as e:  # noqa: BLE001
        return "%s %s: tensorgraph refused: %s: %s" % (name, kw, type(e).__name__, e)
    if name == "LBFGS":
        return _lbfgs_steps(name, kw, topt, gopt, tp, gp, nr)
    steps = r.randint(1, 5)
    for s in range(steps):
        for a, b in zip(tp, gp):
            if r.random() < 0.15:
                a.grad, b.grad = None, None
            else:
                g = nr.standard_normal(tuple(a.shape)).astype(a.detach().numpy().dtype)
                a.grad, b.grad = torch.tensor(g), tg.tensor(g)
        topt.step()
        gopt.step()
        msg = _check_params(tp, gp, "%s %s step %d" % (name, kw, s), _tol(name, tp))
        if msg:
            return msg
        if s == steps // 2 and r.random() < 0.4:  # resume both from their state_dicts
            tsd, gsd = topt.state_dict(), gopt.state_dict()
            topt, gopt = _build(torch, name, tgroups, kw), _build(tg, name, ggroups, kw)
            topt.load_state_dict(tsd)
            gopt.load_state_dict(gsd)
    return _check_state_dict(name, kw, topt.state_dict(), gopt.state_dict())


def _plain(v):
    """a state_dict value as numbers and lists, to compare across libraries"""
    if hasattr(v, "detach"):
        return np.asarray(v.detach().numpy(), dtype=np.float64).tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _check_state_dict(name, kw, tsd, gsd):
    """the same param_groups and, per parameter, the same buffers"""
    tgr, ggr = tsd["param_groups"], gsd["param_groups"]
    if len(tgr) != len(ggr):
        return "%s %s state_dict: %d groups vs %d" % (name, kw, len(tgr), len(ggr))
    for a, b in zip(tgr, ggr):
        if set(a) != set(b):
            return "%s %s state_dict group keys: %s vs %s" % (name, kw, sorted(a), sorted(b))
        for k in a:
            if _plain(a[k]) != _plain(b[k]):
                return "%s %s state_dict group %s: %r vs %r" % (name, kw, k, a[k], b[k])
    if set(tsd["state"]) != set(gsd["state"]):
        return "%s %s state_dict params: %s vs %s" % (name, kw, sorted(tsd["state"]),
                                                      sorted(gsd["state"]))
    for i, ts in tsd["state"].items():
        gs = gsd["state"][i]
        if set(ts) != set(gs):
            return "%s %s state %d keys: %s vs %s" % (name, kw, i, sorted(ts), sorted(gs))
        for k in ts:
            tol = _tol(name, [v for v in (ts[k],) if hasattr(v, "dtype")])
            if not _same(_plain(ts[k]), _plain(gs[k]), (tol[0], max(tol[1], 1e-9))):
                return "%s %s state %d %s: %r vs %r" % (name, kw, i, k, ts[k], gs[k])
    return None


def _lbfgs_steps(name, kw, topt, gopt, tp, gp, nr):
    targets = [nr.standard_normal(tuple(a.shape)) for a in tp]
    scale = [1.0 + nr.random(tuple(a.shape)) for a in tp]

    def closure(lib, opt, ps):
        def f():
            opt.zero_grad()
            loss = sum(((p - lib.tensor(t)) ** 2 * lib.tensor(c)).sum() + (p ** 4).sum() * 0.1
                       for p, t, c in zip(ps, targets, scale))
            loss.backward()
            return loss
        return f
    for s in range(3):
        try:
            lt = topt.step(closure(torch, topt, tp))
        except RuntimeError as e:  # PyTorch 1.13: max() of an empty gradient
            try:
                gopt.step(closure(tg, gopt, gp))
            except Exception:  # noqa: BLE001 - both refuse
                return None
            return "%s %s step %d: PyTorch refused (%s), tensorgraph stepped" % (name, kw, s, e)
        lg = gopt.step(closure(tg, gopt, gp))
        if not _same(float(lt), float(lg), _tol(name, tp)):
            return "%s %s step %d: loss %r vs %r" % (name, kw, s, float(lt), float(lg))
        msg = _check_params(tp, gp, "%s %s step %d" % (name, kw, s), _tol(name, tp))
        if msg:
            return msg
    return None


# name -> (random arguments given the optimizer's library, steps)
def _sched_kw(r, name, lib):
    if name == "StepLR":
        return dict(step_size=r.randint(1, 3), gamma=r.choice([0.5, 0.1]))
    if name == "MultiStepLR":
        return dict(milestones=sorted(r.sample(range(1, 8), r.randint(1, 3))),
                    gamma=r.choice([0.5, 0.1]))
    if name == "ExponentialLR":
        return dict(gamma=r.choice([0.9, 0.5]))
    if name == "CosineAnnealingLR":
        return dict(T_max=r.randint(1, 6), eta_min=r.choice([0.0, 0.001]))
    if name == "LinearLR":
        return dict(start_factor=r.choice([1 / 3, 0.5]), end_factor=r.choice([1.0, 0.8]),
                    total_iters=r.randint(1, 6))
    if name == "ConstantLR":
        return dict(factor=r.choice([1 / 3, 0.5]), total_iters=r.randint(1, 6))
    if name == "PolynomialLR":
        return dict(total_iters=r.randint(1, 6), power=r.choice([1.0, 2.0, 0.5]))
    if name == "CyclicLR":
        return dict(base_lr=0.01, max_lr=0.1, step_size_up=r.randint(1, 4),
                    step_size_down=r.choice([None, 2]),
                    mode=r.choice(["triangular", "triangular2", "exp_range"]),
                    gamma=r.choice([1.0, 0.9]), cycle_momentum=r.random() < 0.5)
    if name == "OneCycleLR":
        return dict(max_lr=r.choice([0.1, 1.0]), total_steps=r.randint(8, 14),
                    pct_start=r.choice([0.3, 0.5]), anneal_strategy=r.choice(["cos", "linear"]),
                    cycle_momentum=r.random() < 0.5, three_phase=r.random() < 0.3,
                    div_factor=r.choice([25.0, 5.0]))
    if name == "CosineAnnealingWarmRestarts":
        return dict(T_0=r.randint(1, 4), T_mult=r.randint(1, 2), eta_min=r.choice([0.0, 0.001]))
    if name == "LambdaLR":
        return dict(lr_lambda=r.choice([lambda e: 0.9 ** e, lambda e: 1.0 / (e + 1)]))
    if name == "MultiplicativeLR":
        return dict(lr_lambda=r.choice([lambda e: 0.9, lambda e: 0.5 if e % 2 else 1.0]))
    if name == "ReduceLROnPlateau":
        return dict(mode=r.choice(["min", "max"]), factor=r.choice([0.5, 0.1]),
                    patience=r.randint(0, 2), threshold=r.choice([1e-4, 0.1]),
                    threshold_mode=r.choice(["rel", "abs"]), cooldown=r.randint(0, 2),
                    min_lr=r.choice([0.0, 0.005]), eps=r.choice([1e-8, 0.01]))
    raise KeyError(name)


SIMPLE = ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
          "ConstantLR", "PolynomialLR", "CyclicLR", "OneCycleLR",
          "CosineAnnealingWarmRestarts", "LambdaLR", "MultiplicativeLR"]
SCHEDULERS = SIMPLE + ["ReduceLROnPlateau", "SequentialLR", "ChainedScheduler"]


def _make_sched(lib, name, opt, r_state):
    r = random.Random(r_state)
    sched = getattr(lib.optim.lr_scheduler, name)
    if name == "SequentialLR":
        names = [r.choice(["StepLR", "ExponentialLR", "LinearLR", "ConstantLR",
                           "CosineAnnealingLR"]) for _ in range(r.randint(2, 3))]
        parts = [getattr(lib.optim.lr_scheduler, n)(opt, **_sched_kw(r, n, lib)) for n in names]
        miles = sorted(r.sample(range(1, 8), len(parts) - 1))
        return sched(opt, parts, milestones=miles)
    if name == "ChainedScheduler":
        names = [r.choice(["StepLR", "ExponentialLR", "MultiStepLR", "ConstantLR"])
                 for _ in range(r.randint(2, 3))]
        return sched([getattr(lib.optim.lr_scheduler, n)(opt, **_sched_kw(r, n, lib))
                      for n in names])
    return sched(opt, **_sched_kw(r, name, lib))


def scheduler_case(r, name):
    groups = r.randint(1, 2)
    lrs = [r.choice([0.1, 0.05]) for _ in range(groups)]

    def opt(lib):
        ps = [lib.zeros(2, requires_grad=True) for _ in range(groups)]
        return lib.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(ps, lrs)],
                             lr=0.1, momentum=0.9)
    topt, gopt = opt(torch), opt(tg)
    state = r.randrange(1 << 30)
    try:
        ts = _make_sched(torch, name, topt, state)
    except (ValueError, TypeError, RuntimeError):
        return "SKIP"
    try:
        gs = _make_sched(tg, name, gopt, state)
    except Exception as e:  # noqa: BLE001
        return "%s: tensorgraph refused: %s: %s" % (name, type(e).__name__, e)
    for s in range(r.randint(3, 15)):
        topt.step()
        gopt.step()
        m = r.choice([1.0, 0.9, 1.1, 0.95, 1.0])
        args = (m,) if name == "ReduceLROnPlateau" else ()
        try:
            ts.step(*args)
        except (ValueError, RuntimeError) as e:  # OneCycleLR past its total steps
            try:
                gs.step(*args)
            except Exception:  # noqa: BLE001 - both refuse
                return None
            return "%s step %d: PyTorch refused (%s), tensorgraph stepped" % (name, s, e)
        gs.step(*args)
        tl = [g["lr"] for g in topt.param_groups]
        gl = [g["lr"] for g in gopt.param_groups]
        if not _same(tl, gl):
            return "%s step %d: lr %s vs %s" % (name, s, tl, gl)
        tm = [g.get("momentum") for g in topt.param_groups]
        gm = [g.get("momentum") for g in gopt.param_groups]
        if tm != gm and not _same(tm, gm):
            return "%s step %d: momentum %s vs %s" % (name, s, tm, gm)
        if name != "ReduceLROnPlateau" and not _same(ts.get_last_lr(), gs.get_last_lr()):
            return "%s step %d: get_last_lr %s vs %s" % (name, s, ts.get_last_lr(),
                                                         gs.get_last_lr())
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    torch.set_default_dtype(torch.float64)
    tg.set_default_dtype(tg.float64)
    r = random.Random(a.seed)
    names = [a.only] if a.only else sorted(OPTIMIZERS) + SCHEDULERS
    bad = skipped = 0
    for i in range(a.cases):
        name = names[i % len(names)]
        if a.v:
            print(".. %s" % name, flush=True)
        try:
            msg = (optimizer_case if name in OPTIMIZERS else scheduler_case)(r, name)
        except Exception:  # noqa: BLE001 - a failure in a library or in this script, shown
            msg = "EXCEPTION %s: %s" % (name, traceback.format_exc(limit=4))
        if msg == "SKIP":
            skipped += 1
        elif msg:
            bad += 1
            print("[%d] %s" % (i, msg), flush=True)
    print("%d cases (%d PyTorch refused), %d disagreements" % (a.cases, skipped, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
