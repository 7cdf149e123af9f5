"""Differential fuzzing of the functions both libraries export, against
PyTorch: each case picks a public function of torch that tensorgraph also
has (tensorgraph.X for torch.X, or the Tensor method of that name), draws
an argument pattern (one tensor; two of the same or broadcast shapes; a
tensor and a Python number; a tensor and a dim, with or without keepdim;
a tensor and a small int), tensors of random small shapes (0-d and empty
included), mostly float64 with values that are sometimes only positive,
only in (-1, 1), or integral, else float32, int64 or bool, and calls it
in both. When PyTorch accepts the
call, tensorgraph must too, and the outputs must agree in structure,
dtype, shape and values (NaN equal to NaN); float outputs are then
differentiated from the same random output gradient and the inputs'
gradients compared (None against None). Calls PyTorch refuses are
skipped, unless --errors.

    /usr/bin/python3 fuzz/python/diff_ops.py [--cases N] [--seed S] [--only NAME] [-v]
                                             [--second-order | --errors]

--second-order takes the first-order gradients with create_graph and
compares them, then the gradients of their random projection (every
double-backward rule; an unused input's None and zeros count as equal).

--errors compares the calls PyTorch refuses instead (the ones it accepts
are not compared): tensorgraph must refuse them too, with the same
exception class, the builtin class PyTorch's exception is or derives from
(RuntimeError for torch's LinAlgError; a tensorgraph subclass of it counts
as the same). A call tensorgraph accepts, or refuses with another class,
is a disagreement, printed with both messages, unless ALLOWED names it: a
deliberate difference, each with its reason (then tensorgraph may accept
the call or refuse it by its own rules). AttributeError, NameError and
the like from tensorgraph (BUG_CLASSES) are always reported, as BUG;
PyTorch's own AttributeError (its Python code asking a number for .size())
stands for the TypeError its parser raises (ACCIDENTS).

PYTHONPATH must hold the built package (build/python). Prints one line per
disagreement and a summary; exit status 1 when any case disagrees."""
import argparse
import random
import sys
import warnings

import numpy as np
import torch

import tensorgraph as tg

RTOL, ATOL = 1e-7, 1e-9

# not functions of their arguments alone (random draws, global state,
# timing), whose results are not values to compare, or that crash
# PyTorch 1.13 (channel_shuffle with 0 groups divides by zero), or where
# PyTorch 1.13 is wrong (slice_copy/slice_scatter's default end takes one
# element; cholesky takes 3 x 0 matrices) or the answer is not unique
# (singular vectors' signs; searching boundaries that are not sorted;
# PyTorch 1.13's trace gradient of a tall matrix is misplaced)
SKIP = set("""
manual_seed seed initial_seed get_rng_state set_rng_state rand randn randint randperm
rand_like randn_like randint_like bernoulli multinomial normal poisson empty empty_like
empty_strided set_default_dtype get_default_dtype set_grad_enabled set_num_threads
get_num_threads set_printoptions compile jit load save use_deterministic_algorithms
set_deterministic_debug_mode set_flush_denormal set_warn_always is_tensor is_storage numel
typename from_numpy frombuffer as_strided as_strided_ dropout feature_dropout alpha_dropout
feature_alpha_dropout rrelu rrelu_ native_dropout result_type can_cast promote_types
set_float32_matmul_precision get_float32_matmul_precision no_grad enable_grad inference_mode
autocast chunk split tensor_split unbind dsplit hsplit vsplit data_ptr storage
set_ resize_ resize_as_ share_memory_ pin_memory uniform_ normal_ random_ exponential_
cauchy_ log_normal_ geometric_ bernoulli_ cuda cpu to numpy tolist item element_size
register_hook retain_grad backward detach_ requires_grad_ new_empty new_tensor
native_channel_shuffle channel_shuffle slice_copy slice_scatter binomial cholesky
svd svd_lowrank pca_lowrank bucketize searchsorted trace gumbel_softmax dropout1d
dropout2d dropout3d new
""".split())

SMALL_INTS = [0, 1, 2, -1, 3]
SECOND_ORDER = False
ERRORS = False

# --errors: what tensorgraph raising is a bug in it whatever PyTorch
# raises (a wrapper misusing an argument), never an allowed difference
BUG_CLASSES = (AttributeError, NameError, KeyError, AssertionError, ZeroDivisionError,
               SystemError)

# --errors: PyTorch's classes that are accidents of its Python-level
# functions, and the class its argument parser raises for the same misuse
# (F.binary_cross_entropy(x, y, 0) asks the int 0 for .size())
ACCIDENTS = {AttributeError: TypeError}

# --errors: PyTorch refusals tensorgraph deliberately does not share, as
# (names, a phrase of PyTorch's message, reason): tensorgraph may accept
# the call, or refuse it by its own rules, but not with a BUG_CLASSES
# class; "*" names every function
ALLOWED = [
    ("*", "must be Tensor, not int", "a Python number stands for a 0-d tensor (numpy-style)"),
    ("*", "must be Tensor, not float", "a Python number stands for a 0-d tensor (numpy-style)"),
    ("*", "must be Tensor, not bool", "a Python number stands for a 0-d tensor (numpy-style)"),
    ("*", "must be Tensor, not tuple", "a sequence of numbers stands for a tensor (numpy-style)"),
    ("*", "must be Tensor, not list", "a sequence of numbers stands for a tensor (numpy-style)"),
    ("*", "not implemented for '", "kernels cover every dtype tensorgraph has (integers and "
     "bools promote as in the other float functions) where PyTorch's skip some"),
    ("kl_div", "Integral inputs not supported", "integer inputs promote to float, as above"),
]


def _public_names():
    names = []
    for n in sorted(set(dir(torch)) & set(dir(tg))):
        if n.startswith("_") or n in SKIP or not n.islower():
            continue
        if callable(getattr(torch, n)) and callable(getattr(tg, n)):
            names.append(("fn", n))
    for n in sorted(set(dir(torch.Tensor)) & set(dir(tg.Tensor))):
        if n.startswith("_") or n in SKIP or not callable(getattr(torch.Tensor, n)):
            continue
        names.append(("method", n))
    tf, gf = torch.nn.functional, tg.nn.functional
    for n in sorted(set(dir(tf)) & set(dir(gf))):
        if n.startswith("_") or n in SKIP or not n.islower() or not callable(getattr(tf, n)):
            continue
        names.append(("F", n))
    return names


def _array(r, shape):
    nr = np.random.default_rng(r.randrange(1 << 30))
    kind = r.choice(["normal", "normal", "positive", "unit", "ints", "int64", "bool", "float32"])
    if kind == "int64":
        return nr.integers(-3, 4, size=shape).astype(np.int64)
    if kind == "bool":
        return nr.integers(0, 2, size=shape).astype(np.bool_)
    if kind == "float32":
        return nr.standard_normal(shape).astype(np.float32)
    a = nr.standard_normal(shape)
    if kind == "positive":
        a = np.abs(a) + 0.1
    elif kind == "unit":
        a = np.tanh(a) * 0.9
    elif kind == "ints":
        a = np.round(a * 3)
    return a


def _shape(r):
    nd = r.choice([0, 1, 1, 2, 2, 3])
    return tuple(r.choice([1, 2, 3, 3, 4, 0] if r.random() < 0.15 else [1, 2, 3, 4])
                 for _ in range(nd))


def _broadcast_partner(r, shape):
    out = list(shape)
    for i in range(len(out)):
        if r.random() < 0.3:
            out[i] = 1
    while out and r.random() < 0.3:
        out.pop(0)
    return tuple(out)


def _pattern(r):
    """(description, [arg specs]); a spec is ('t', shape) for a tensor or
    ('v', value) for a Python value; kw specs as ('kw', name, value)"""
    s = _shape(r)
    nd = len(s)
    dim = r.randint(-max(nd, 1), max(nd, 1) - 1)
    kind = r.choice(["x", "x", "xy", "xy_b", "x_num", "x_dim", "x_dim_keep", "x_int", "xy_int",
                     "x_int_dim", "num_x", "x_dims", "xy_dim", "list", "list_dim", "x_dim_kw",
                     "x_float_kw", "xyz"])
    if kind == "x_dims":
        return [("t", s), ("v", tuple(sorted(set(r.randrange(max(nd, 1))
                                                  for _ in range(r.randint(1, 2))))))]
    if kind == "xy_dim":
        return [("t", s), ("t", s), ("v", dim)]
    if kind in ("list", "list_dim"):
        return [("l", [s] * r.randint(1, 3))] + ([("v", dim)] if kind == "list_dim" else [])
    if kind == "x_dim_kw":
        return [("t", s), ("kw", "dim", dim)]
    if kind == "x_float_kw":
        return [("t", s), ("kw", r.choice(["p", "alpha", "beta", "eps", "negative_slope",
                                           "lambd", "threshold", "min_val", "max_val"]),
                           r.choice([0.5, 2.0, 1.0, 0.1]))]
    if kind == "xyz":
        return [("t", s), ("t", s), ("t", s)]
    if kind == "x":
        return [("t", s)]
    if kind == "xy":
        return [("t", s), ("t", s)]
    if kind == "xy_b":
        return [("t", s), ("t", _broadcast_partner(r, s))] if r.random() < 0.5 else \
            [("t", _broadcast_partner(r, s)), ("t", s)]
    if kind == "x_num":
        return [("t", s), ("v", r.choice([2, 0.5, -1.5, 3, 0, 1e-3]))]
    if kind == "num_x":
        return [("v", r.choice([2, 0.5, -1.5])), ("t", s)]
    if kind == "x_dim":
        return [("t", s), ("v", dim)]
    if kind == "x_dim_keep":
        return [("t", s), ("v", dim), ("kw", "keepdim", True)]
    if kind == "x_int":
        return [("t", s), ("v", r.choice(SMALL_INTS))]
    if kind == "xy_int":
        return [("t", s), ("t", s), ("v", r.choice(SMALL_INTS))]
    return [("t", s), ("v", r.choice([1, 2])), ("v", dim)]


def _build(lib, specs, arrays, grads):
    args, kw, leaves = [], {}, []
    for spec, a in zip(specs, arrays):
        if spec[0] == "t":
            t = (torch.tensor if lib is torch else tg.tensor)(a)
            if grads and a.dtype.kind == "f":
                t.requires_grad_(True)
            leaves.append(t)
            args.append(t)
        elif spec[0] == "l":
            ts = []
            for part in a:
                t = (torch.tensor if lib is torch else tg.tensor)(part)
                if grads and part.dtype.kind == "f":
                    t.requires_grad_(True)
                leaves.append(t)
                ts.append(t)
            args.append(ts)
        elif spec[0] == "v":
            args.append(spec[1])
        else:
            kw[spec[1]] = spec[2]
    return args, kw, leaves


def _flatten(out):
    if isinstance(out, (tuple, list)):
        r = []
        for o in out:
            r.extend(_flatten(o))
        return r
    return [out]


def _call(lib, kind, name, specs, arrays, grads):
    args, kw, leaves = _build(lib, specs, arrays, grads)
    if kind == "fn":
        out = getattr(lib, name)(*args, **kw)
    elif kind == "F":
        out = getattr(lib.nn.functional, name)(*args, **kw)
    else:
        if not args or not isinstance(args[0], (torch.Tensor, tg.Tensor)):
            raise TypeError("a method needs a tensor first")
        out = getattr(args[0], name)(*args[1:], **kw)
    return out, leaves


def _summary(o):
    if isinstance(o, (torch.Tensor, tg.Tensor)):
        return "tensor"
    return type(o).__name__


def _values(o):
    if isinstance(o, torch.Tensor) and o._is_zerotensor():
        # PyTorch's "efficient zero" gradients (sgn's) hold no memory:
        # numpy() reads whatever is at address 0's mapping
        return np.zeros(tuple(o.shape), dtype=np.float64)
    if isinstance(o, (torch.Tensor, tg.Tensor)):
        return o.detach().numpy()
    return o


def run_case(r, kind, name, verbose=False):
    specs = _pattern(r)
    arrays = [_array(r, s[1]) if s[0] == "t" else
              [_array(r, shape) for shape in s[1]] if s[0] == "l" else None for s in specs]
    grads = r.random() < 0.7
    desc = "%s %s%s" % (kind, name, [(s[0], s[1]) if s[0] != "kw" else s[1:] for s in specs])
    if verbose:  # before the calls: a crash names its case
        print("..", desc, file=sys.stderr, flush=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tout, tleaves = _call(torch, kind, name, specs, arrays, grads)
    except Exception as e:  # noqa: BLE001 - PyTorch refused: compared only with --errors
        return _compare_refusal(desc, kind, name, specs, arrays, grads, e) if ERRORS else "SKIP"
    if ERRORS or (isinstance(tout, torch.Tensor) and tout.is_complex()):
        return "SKIP"
    try:
        gout, gleaves = _call_tg(kind, name, specs, arrays, grads)
    except Exception as e:  # noqa: BLE001 - reported
        return "REFUSED %s: %s: %s" % (desc, type(e).__name__, str(e)[:160])
    tf, gf = _flatten(tout), _flatten(gout)
    if [_summary(o) for o in tf] != [_summary(o) for o in gf]:
        return "MISMATCH %s: outputs %s vs %s" % (desc, [_summary(o) for o in tf],
                                                   [_summary(o) for o in gf])
    probs = []
    for i, (a, b) in enumerate(zip(tf, gf)):
        _compare("out%d" % i, a, b, probs)
    if probs:
        return "MISMATCH %s: %s" % (desc, "; ".join(probs))
    if grads:
        (_compare_second_order if SECOND_ORDER else _compare_grads)(desc, tf, gf, tleaves,
                                                                     gleaves, r, probs)
    return ("MISMATCH %s: %s" % (desc, "; ".join(probs))) if probs else None


def _call_tg(kind, name, specs, arrays, grads):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _call(tg, kind, name, specs, arrays, grads)


def _builtin_class(e):
    """the builtin exception class e is or derives from (RuntimeError for
    torch's LinAlgError): the class user code catches"""
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def _allowed(name, tmsg):
    """the reason tensorgraph may refuse this refusal of PyTorch's otherwise"""
    return next((why for names, phrase, why in ALLOWED
                 if (names == "*" or name in names.split()) and phrase in tmsg), None)


def _brief(e):
    return "%s: %s" % (type(e).__name__, " ".join(str(e).split())[:160])


def _compare_refusal(desc, kind, name, specs, arrays, grads, te):
    """--errors: PyTorch refused the call with te; tensorgraph must refuse it
    with te's builtin class. "SKIP" when ALLOWED, None when it agrees"""
    want = _builtin_class(te)
    want = ACCIDENTS.get(want, want)
    allowed = _allowed(name, str(te))
    try:
        _call_tg(kind, name, specs, arrays, grads)
    except Exception as ge:  # noqa: BLE001 - compared
        if isinstance(ge, BUG_CLASSES):
            return "BUG %s: torch %s; tg %s" % (desc, _brief(te), _brief(ge))
        if isinstance(ge, want):
            return None
        if allowed:
            return "SKIP"
        return "CLASS %s: torch %s; tg %s" % (desc, _brief(te), _brief(ge))
    return "SKIP" if allowed else "ACCEPTED %s: torch %s" % (desc, _brief(te))


def _compare(what, a, b, probs):
    if isinstance(a, torch.Tensor):
        ta, tb = str(a.dtype).split(".")[-1], str(b.dtype).split(".")[-1]
        if ta != tb:
            probs.append("%s: dtype %s vs %s" % (what, ta, tb))
            return
        if tuple(a.shape) != tuple(b.shape):
            probs.append("%s: shape %s vs %s" % (what, tuple(a.shape), tuple(b.shape)))
            return
        x, y = _values(a), _values(b)
        if x.dtype == np.bool_ or x.dtype.kind in "iu":
            if not np.array_equal(x, y):
                probs.append("%s: values differ" % what)
            return
        rtol, atol = (RTOL, ATOL) if x.dtype == np.float64 else (2e-5, 1e-6)
        if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
            with np.errstate(invalid="ignore"):
                d = np.nanmax(np.abs(x - y)) if x.size else 0
            probs.append("%s: max diff %.3g" % (what, d))
        return
    if isinstance(a, float) and isinstance(b, float):
        if not (a == b or (a != a and b != b) or abs(a - b) <= ATOL + RTOL * abs(a)):
            probs.append("%s: %r vs %r" % (what, a, b))
    elif a != b and not (hasattr(a, "__len__") and list(a) == list(b)):
        probs.append("%s: %r vs %r" % (what, a, b))


def _float_pairs(tf, gf):
    """the (torch, tg) outputs a gradient flows from"""
    return [(a, b) for a, b in zip(tf, gf) if isinstance(a, torch.Tensor)
            and a.dtype.is_floating_point and a.requires_grad]


def _compare_grad_list(prefix, ts, gs, probs):
    for i, (a, b) in enumerate(zip(ts, gs)):
        if (a is None) != (b is None):
            probs.append("%s%d: None mismatch (torch %s, tg %s)" % (prefix, i, a is None,
                                                                    b is None))
        elif a is not None:
            _compare("%s%d" % (prefix, i), a, b, probs)


def _first_order(tf, gf, tleaves, gleaves, r, probs, create_graph):
    """both libraries' gradients of the float outputs (random output
    gradients) with respect to the leaves that require grad: (torch's
    leaves, tg's, torch's gradients, tg's), or None when PyTorch has none
    or tensorgraph disagrees already (reported in probs)"""
    pairs = _float_pairs(tf, gf)
    tl = [a for a in tleaves if a.requires_grad]
    gl = [b for b in gleaves if b.requires_grad]
    if not pairs or not tl or len(tl) != len(gl):
        return None
    nr = np.random.default_rng(r.randrange(1 << 30))
    gs = [nr.standard_normal(tuple(a.shape)) for a, _ in pairs]
    try:
        t1 = torch.autograd.grad([a for a, _ in pairs], tl, [torch.tensor(g) for g in gs],
                                 create_graph=create_graph, allow_unused=True)
    except Exception:  # noqa: BLE001 - PyTorch has no gradient here
        return None
    if any(not b.requires_grad for _, b in pairs):
        probs.append("an output does not require grad")
        return None
    try:
        g1 = tg.autograd.grad([b for _, b in pairs], gl, [tg.tensor(g) for g in gs],
                              create_graph=create_graph, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - reported
        probs.append("grad refused: %s: %s" % (type(e).__name__, str(e)[:160]))
        return None
    _compare_grad_list("grad", t1, g1, probs)
    return tl, gl, t1, g1, nr


def _compare_grads(desc, tf, gf, tleaves, gleaves, r, probs):
    _first_order(tf, gf, tleaves, gleaves, r, probs, False)


def _compare_second_order(desc, tf, gf, tleaves, gleaves, r, probs):
    """the first-order gradients taken with create_graph, then the
    gradients of their random projection: every double-backward rule"""
    first = _first_order(tf, gf, tleaves, gleaves, r, probs, True)
    if first is None:
        return
    tl, gl, t1, g1, nr = first
    sel = [(a, b) for a, b in zip(t1, g1) if a is not None and b is not None and a.requires_grad]
    if probs or not sel:
        return
    ws = [nr.standard_normal(tuple(a.shape)) for a, _ in sel]
    try:
        t2 = torch.autograd.grad(sum((a * torch.tensor(w)).sum() for (a, _), w in zip(sel, ws)),
                                 tl, allow_unused=True)
    except Exception:  # noqa: BLE001 - PyTorch has no second-order gradient here
        return
    if any(not b.requires_grad for _, b in sel):
        probs.append("a first-order gradient does not require grad")
        return
    try:
        g2 = tg.autograd.grad(sum((b * tg.tensor(w)).sum() for (_, b), w in zip(sel, ws)),
                              gl, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - reported
        probs.append("second-order grad refused: %s: %s" % (type(e).__name__, str(e)[:160]))
        return
    for i, (a, b) in enumerate(zip(t2, g2)):
        # an unused input: None in one library, zeros in the other, is the same
        a = torch.zeros(tuple(tl[i].shape), dtype=tl[i].dtype) if a is None else a
        b = tg.zeros(tuple(gl[i].shape), dtype=gl[i].dtype) if b is None else b
        _compare("grad2_%d" % i, a, b, probs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only")
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--second-order", action="store_true",
                    help="compare double-backward gradients instead of first-order ones")
    ap.add_argument("--errors", action="store_true",
                    help="compare the exception classes of the calls PyTorch refuses")
    a = ap.parse_args()
    global SECOND_ORDER, ERRORS
    SECOND_ORDER, ERRORS = a.second_order, a.errors
    torch.set_default_dtype(torch.float64)
    tg.set_default_dtype(tg.float64)
    r = random.Random(a.seed)
    names = _public_names()
    if a.only:
        names = [n for n in names if n[1] == a.only]
    bad = skipped = 0
    for i in range(a.cases):
        kind, name = names[i % len(names)] if a.only else r.choice(names)
        msg = run_case(r, kind, name, a.v)
        if msg == "SKIP":
            skipped += 1
        elif msg:
            bad += 1
            print("[%d] %s" % (i, msg), flush=True)
    print("%d cases (%d %s), %d disagreements over %d names"
          % (a.cases, skipped, "not compared: PyTorch accepted or allowed" if a.errors else
             "PyTorch refused", bad, len(names)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
