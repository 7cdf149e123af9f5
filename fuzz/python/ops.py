"""Every op of the package's op table (tg._C._op_table()) with arguments
drawn per kind of its signature (tensors of small, empty and 0-d shapes
in every dtype, some transposed, expanded, strided or requiring grad;
ints biased to small and edge values; NaN and infinite floats; shapes and
dim lists), and, for the ops whose inputs must agree to get past the
checks (convolutions and pools of every rank, products, norms, losses,
indexing), arguments built to agree with hostile attributes. Results are
printed and, when they require grad, differentiated. A dead interpreter,
a hang or a slow call is recorded (runner.py).

    PYTHONPATH=build/python /usr/bin/python3 fuzz/python/ops.py out.json [--seed S] [--per N]"""
import functools
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from op_args import special_args  # noqa: E402

SMALL = [0, 1, 2, 3, -1, -2, 5]
EDGE = [2**31, 2**31 - 1, -2**31, 2**62, -2**63, 2**63 - 1, 10**6]
FLOATS = [0.0, 1.0, -1.0, 0.5, 2.0, float('nan'), float('inf'), -float('inf'), 1e300, -1e-300, 3]


@functools.lru_cache(maxsize=None)
def _tg():
    import tensorgraph as tg
    return tg


def rint(rng):
    return rng.choice(SMALL) if rng.random() < 0.85 else rng.choice(EDGE)


def rtensor(rng, tg):
    shape = [rng.choice([0, 1, 1, 2, 3, 4, 5]) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4, 5]))]
    fill = rng.choice(['randn', 'int', 'nonfinite', 'big'])
    if fill == 'randn':
        t = tg.randn(tuple(shape)) * 3
    elif fill == 'int':
        t = tg.randint(-3, 6, tuple(shape)).to(tg.float32)
    elif fill == 'nonfinite':
        t = tg.full(tuple(shape), float(rng.choice(['nan', 'inf', '-inf'])))
    else:
        t = tg.full(tuple(shape), rng.choice([1e30, -1e30, 2.0**40, 1e-40]))
    t = t.to(rng.choice([tg.float32, tg.float32, tg.float64, tg.int64, tg.int32, tg.uint8,
                         tg.bool]))
    layout = rng.random()
    if layout < 0.15 and t.ndim >= 2:
        t = t.transpose(0, t.ndim - 1)
    elif layout < 0.25 and t.ndim >= 1:
        t = t.unsqueeze(0).expand(3, *shape)
    elif layout < 0.32 and t.ndim >= 1 and shape[0] > 1:
        t = t[::2]
    if rng.random() < 0.1 and t.dtype in (tg.float32, tg.float64):
        t = t.detach().requires_grad_(True)
    return t


def _ints(rng, lengths):
    return tuple(rint(rng) for _ in range(rng.choice(lengths)))


def rarg(kind, rng, tg):
    """a value for a parameter of the op table's kind letter (ops_table.c)"""
    optional = {'O': 0.4, 'j': 0.3, 'p': 0.3, 'u': 0.3, 'q': 0.3, 'd': 0.3, 'F': 0.3}
    if rng.random() < optional.get(kind, 0.0):
        return None
    if kind in 'TO':
        return rtensor(rng, tg)
    if kind in 'ijl':
        return rint(rng)
    if kind in 'PUQpuq':
        return rint(rng) if rng.random() < 0.5 else _ints(rng, [0, 1, 2, 3, 4])
    if kind in 'SAW':
        if kind == 'A' and rng.random() < 0.3:
            return rint(rng)
        return _ints(rng, [0, 1, 2, 3, 4, 6, 9])
    if kind in 'fd':
        return rng.choice(FLOATS)
    if kind == 'F':
        return tuple(rng.choice([0.5, 2.0, 0.0, -1.0, 1e10, float('nan')])
                     for _ in range(rng.choice([1, 2, 3])))
    if kind == 'b':
        return rng.random() < 0.5
    if kind == 'D':
        return rng.choice([tg.float32, tg.float64, tg.int64, tg.int32, tg.uint8, tg.bool])
    if kind == 'L':
        return [rtensor(rng, tg) for _ in range(rng.choice([0, 1, 2, 3]))]
    if kind == 'R':
        return rng.choice(['mean', 'sum', 'none', 'bogus'])
    if kind == 's':
        return rng.choice(['ij,jk->ik', 'ii->i', 'i,i->', '...ij->...ji', 'ab,bc', 'i->ii',
                           'a...b,b->a', '->', 'ij->'])
    return None  # G (a generator) and unknown kinds: the default


@functools.lru_cache(maxsize=None)
def table():
    """[(name, [(parameter, kind letter, has a default)])]"""
    out = []
    for name, sig, _ in _tg()._C._op_table():
        params = []
        for p in sig.split():
            pname, rest = p.split(':')
            params.append((pname, rest.split('=')[0], '=' in rest))
        out.append((name, params))
    return out


def count(seed, per):
    return len(table()) * per


def run_case(seed, per, i, note):
    tg = _tg()
    name, params = table()[i // per]
    rng = random.Random(seed * 1000003 + i)
    tg.manual_seed(i)
    fn = getattr(tg._C, name, None) or getattr(tg, name, None)
    built = special_args(name, rng, tg) if rng.random() < 0.8 else None
    args, kwargs = built if built else ([], {})
    for pname, kind, has_default in ([] if built else params):
        if has_default and rng.random() < 0.4:
            continue
        v = rarg(kind, rng, tg)
        if has_default:
            kwargs[pname] = v
        else:
            args.append(v)
    note(f"{name} {[getattr(a, 'shape', a) for a in args]} "
         f"{ {k: getattr(v, 'shape', v) for k, v in kwargs.items()} }")
    result = fn(*args, **kwargs)
    for r in (result if isinstance(result, (tuple, list)) else [result]):
        if isinstance(r, tg.Tensor):
            repr(r)
            if r.requires_grad and r.numel() and r.dtype in (tg.float32, tg.float64):
                r.sum().backward()


if __name__ == '__main__':
    sys.exit(runner.main(count, run_case))
