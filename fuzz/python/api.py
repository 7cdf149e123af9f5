"""Hostile arguments to every public function of tensorgraph and every
Tensor method: wrong types (None, strings, ragged and mixed lists, object
arrays), negative and huge sizes, NaN and infinities, empty, 0-d,
transposed and expanded tensors, tensors that require grad. Any Python
exception is a clean outcome; a dead interpreter, a hang or a slow call is
recorded (runner.py).

    PYTHONPATH=build/python /usr/bin/python3 fuzz/python/api.py out.json [--seed S] [--per N]

TG_FUZZ_PLAUSIBLE=1 draws from values of the right kinds only (ints,
shapes, tensors), which gets past the type checks into the kernels."""
import functools
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

# the value pool: name -> maker (made fresh per call: calls may write them)
POOL = {
    'None': lambda tg, np: None,
    'str': lambda tg, np: "abc",
    'mixedlist': lambda tg, np: [1, "a", None],
    'ragged': lambda tg, np: [[1, 2], [3]],
    'objarray': lambda tg, np: np.array([1, None], dtype=object),
    'strarray': lambda tg, np: np.array(['a', 'b']),
    'reversed_array': lambda tg, np: np.ones((4, 4))[::-1],
    'array': lambda tg, np: np.ones((2, 3), dtype=np.float32),
    'dict': lambda tg, np: {'a': 1},
    'object': lambda tg, np: object(),
    'bytes': lambda tg, np: b"\x00\xff",
    'complex': lambda tg, np: 1j,
    'slice': lambda tg, np: slice(None, None, -1),
    'raising_callable': lambda tg, np: (lambda *a, **k: 1 / 0),
    'device': lambda tg, np: 'cuda',
    'float32': lambda tg, np: tg.float32,
    'int64': lambda tg, np: tg.int64,
    '-1': lambda tg, np: -1,
    '-5': lambda tg, np: -5,
    '0': lambda tg, np: 0,
    '1': lambda tg, np: 1,
    '3': lambda tg, np: 3,
    '2**62': lambda tg, np: 2**62,
    '2**64': lambda tg, np: 2**64,
    '-2**63': lambda tg, np: -2**63,
    'nan': lambda tg, np: float('nan'),
    'inf': lambda tg, np: float('inf'),
    '1.5': lambda tg, np: 1.5,
    'True': lambda tg, np: True,
    '()': lambda tg, np: (),
    '[]': lambda tg, np: [],
    '(2,3)': lambda tg, np: (2, 3),
    '(-1,3)': lambda tg, np: (-1, 3),
    '(2**40,2**40)': lambda tg, np: (2**40, 2**40),
    'f23': lambda tg, np: tg.ones(2, 3),
    'f64': lambda tg, np: tg.ones(3, 2, dtype=tg.float64),
    'empty': lambda tg, np: tg.empty(0),
    'empty03': lambda tg, np: tg.empty(0, 3),
    'scalar': lambda tg, np: tg.tensor(2.0),
    'int': lambda tg, np: tg.arange(6).reshape(2, 3),
    'negint': lambda tg, np: tg.tensor([-7, 100]),
    'bool': lambda tg, np: tg.tensor([True, False]),
    'uint8': lambda tg, np: tg.tensor([1, 2], dtype=tg.uint8),
    'transposed': lambda tg, np: tg.ones(3, 2).t(),
    'expanded': lambda tg, np: tg.ones(1, 3).expand(4, 3),
    'nonfinite': lambda tg, np: tg.tensor([float('nan'), float('inf'), -float('inf')]),
    'requires_grad': lambda tg, np: tg.ones(2, 3, requires_grad=True),
    '6d': lambda tg, np: tg.ones(1, 2, 1, 2, 1, 2),
    '8d': lambda tg, np: tg.ones(*([1] * 8)),
}
PLAUSIBLE = ['-1', '-5', '0', '1', '3', '2**62', '-2**63', '(2,3)', '(-1,3)', '(2**40,2**40)',
             '()', 'f23', 'f64', 'empty', 'empty03', 'scalar', 'int', 'negint', 'bool', 'uint8',
             'transposed', 'expanded', 'nonfinite', 'requires_grad', '6d', '8d', 'nan', 'inf',
             '1.5', 'True', 'int64', 'float32']
SELVES = ['f23', 'f64', 'int', 'bool', 'empty', 'empty03', 'scalar', 'transposed', 'expanded',
          'requires_grad', 'nonfinite', 'uint8']
SUBMODULES = ['nn.functional', 'linalg', 'special', 'autograd', 'nn.init', 'nn.utils',
              'utils.data', 'autograd.functional', 'onnx', 'serialization', 'nn.utils.rnn']
# process-wide state, or calls that wait for peers: not fuzzed
SKIP = {'tg.manual_seed', 'tg.set_num_threads', 'tg.seed', 'tg.set_rng_state',
        'tg.set_printoptions', 'tg.set_default_dtype', 'tg.use_deterministic_algorithms',
        'tg.set_grad_enabled', 'tg.set_num_interop_threads', 'tg.set_flush_denormal',
        'tg.set_default_tensor_type', 'tg.set_anomaly_enabled', 'tg.autograd.set_grad_enabled',
        'tg.autograd.set_detect_anomaly'}
DUNDERS = {'__getitem__', '__setitem__', '__add__', '__matmul__', '__pow__', '__truediv__',
           '__floordiv__', '__mod__', '__lshift__', '__rshift__', '__and__', '__or__',
           '__xor__', '__iadd__', '__imul__', '__ilshift__', '__index__', '__int__',
           '__float__', '__bool__', '__len__', '__iter__', '__repr__', '__format__',
           '__array__', '__dlpack__', '__reduce_ex__', '__deepcopy__', '__setstate__',
           '__contains__', '__eq__', '__lt__', '__neg__', '__invert__', '__abs__', '__rsub__',
           '__rpow__', '__rtruediv__'}


@functools.lru_cache(maxsize=None)
def _package():
    import numpy as np
    import tensorgraph as tg
    return tg, np


@functools.lru_cache(maxsize=None)
def targets():
    tg, _ = _package()
    mods = [('tg', tg)]
    for sub in SUBMODULES:
        m = tg
        for part in sub.split('.'):
            m = getattr(m, part, None)
        if m is not None:
            mods.append(('tg.' + sub, m))
    out = []
    for mname, m in mods:
        for n in sorted(dir(m)):
            obj = getattr(m, n, None)
            full = f"{mname}.{n}"
            if (not n.startswith('_') and callable(obj) and not isinstance(obj, type)
                    and full not in SKIP and not full.startswith('tg.distributed')):
                out.append(full)
    out += ['Tensor.' + n for n in sorted(dir(tg.Tensor))
            if (not n.startswith('__') or n in DUNDERS) and n != 'cuda']
    return tuple(out)


def count(seed, per):
    return len(targets()) * per


def run_case(seed, per, i, note):
    tg, np = _package()
    name = targets()[i // per]
    rng = random.Random(seed * 1000003 + i)
    keys = PLAUSIBLE if os.environ.get('TG_FUZZ_PLAUSIBLE') else sorted(POOL)
    args = [rng.choice(keys) for _ in range(rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4]))]
    if not name.startswith('Tensor.') and args and rng.random() < 0.5:
        args[0] = rng.choice(['f23', 'f64', 'int', 'requires_grad', 'empty03'])
    me = rng.choice(SELVES) if name.startswith('Tensor.') else None
    note(f"{name} self={me} args={args}")
    values = [POOL[k](tg, np) for k in args]
    if me:
        fn = getattr(POOL[me](tg, np), name.split('.', 1)[1])
        result = fn(*values) if callable(fn) else fn
    else:
        fn = tg
        for part in name.split('.')[1:]:
            fn = getattr(fn, part)
        result = fn(*values)
    if isinstance(result, tg.Tensor):
        repr(result)


if __name__ == '__main__':
    sys.exit(runner.main(count, run_case))
