"""ONNX TfIdfVectorizer (src/onnx/ops_tfidf.c) and the optimizers of the
ai.onnx.preview.training domain (ops_training.c: Adagrad, Adam, Momentum)
against loop-by-loop numpy references of the operator specs, eagerly and
inside tg.function (graph mode); the optimizers' gradients against float64
central differences of the reference. onnx's own node cases of these ops
run in tests/onnx_conformance; the hostile models in test_onnx_import.c."""
import itertools
import zlib

import numpy as np
import pytest

import tensorgraph as tg

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

TRAINING = "ai.onnx.preview.training"


def _save(tmp_path, node, inputs, outputs, imports):
    g = helper.make_graph([node], "g", inputs, outputs)
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(g, opset_imports=imports), path)
    return path


def _both_modes(path, *xs):
    """the outputs eagerly and inside tg.function, as numpy lists"""
    m = tg.onnx.load(path)

    def as_list(out):
        return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]
    eager = as_list(m(*[tg.tensor(x) for x in xs]))
    graph = as_list(tg.function(lambda *a: m(*a))(*[tg.tensor(x) for x in xs]))
    return eager, graph


# ---- TfIdfVectorizer --------------------------------------------------------------


def _tfidf_ref(x, mode, min_n, max_n, max_skip, counts, indexes, pool, weights):
    """the spec read literally: every n-gram of every length and skip
    counted in every row (unigrams once), weighed, placed"""
    grams = []  # (tuple, pool position)
    k = 0
    for lv, start in enumerate(counts):
        end = counts[lv + 1] if lv + 1 < len(counts) else len(pool)
        for p in range(start, end, lv + 1):
            grams.append((tuple(pool[p:p + lv + 1]), k))
            k += 1
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    width = max(indexes) + 1
    out = np.zeros((rows.shape[0], width), np.float32)
    for b, row in enumerate(rows):
        found = np.zeros(len(grams))
        for n in range(min_n, max_n + 1):
            for s in range(1 if n == 1 else max_skip + 1):
                for i in range(len(row)):
                    pos = [i + j * (s + 1) for j in range(n)]
                    if pos[-1] >= len(row):
                        break
                    item = tuple(int(row[p]) for p in pos)
                    for g, gk in grams:
                        if g == item:
                            found[gk] += 1
        for gk in range(len(grams)):
            w = 1.0 if weights is None else weights[gk]
            c = found[gk]
            v = c if mode == "TF" else (w * (c > 0) if mode == "IDF" else w * c)
            out[b, indexes[gk]] += v
    return out[0] if x.ndim == 1 else out


def _tfidf_case(rs, n_levels):
    pool, counts = [], []
    for lv in range(n_levels):
        counts.append(len(pool))
        k = rs.randint(1, 4)
        for _ in range(k):
            pool.extend(int(v) for v in rs.randint(0, 4, size=lv + 1))
    n_grams = sum((((counts[lv + 1] if lv + 1 < len(counts) else len(pool)) - counts[lv])
                   // (lv + 1)) for lv in range(n_levels))
    # a permutation with gaps: the output is wider than the pool
    indexes = [int(v) for v in rs.permutation(n_grams + 2)[:n_grams]]
    return pool, counts, indexes


@pytest.mark.parametrize("mode,weighted", [("TF", False), ("IDF", False), ("IDF", True),
                                           ("TFIDF", False), ("TFIDF", True)])
@pytest.mark.parametrize("shape,dtype", [((11,), np.int64), ((3, 9), np.int32)])
def test_tfidf_against_reference(tmp_path, mode, weighted, shape, dtype):
    rs = np.random.RandomState(zlib.crc32(repr((mode, weighted, shape)).encode()))
    for min_n, max_n, max_skip in [(1, 1, 0), (1, 3, 2), (2, 3, 1), (2, 2, 7), (3, 3, 0)]:
        pool, counts, indexes = _tfidf_case(rs, 3)
        weights = [float(w) for w in rs.rand(len(indexes)) + 0.5] if weighted else None
        attrs = dict(mode=mode, min_gram_length=min_n, max_gram_length=max_n,
                     max_skip_count=max_skip, ngram_counts=counts, ngram_indexes=indexes,
                     pool_int64s=pool)
        if weights:
            attrs["weights"] = weights
        x = rs.randint(0, 4, size=shape).astype(dtype)
        node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)
        elem = TensorProto.INT64 if dtype == np.int64 else TensorProto.INT32
        path = _save(tmp_path, node, [helper.make_tensor_value_info("x", elem, list(shape))],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                     [helper.make_opsetid("", 9)])
        want = _tfidf_ref(x, mode, min_n, max_n, max_skip, counts, indexes, pool, weights)
        for got in itertools.chain(*_both_modes(path, x)):
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str(attrs))


def test_tfidf_short_rows(tmp_path):
    """rows shorter than any n-gram: all zeros, of the declared width"""
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=3,
                            max_gram_length=3, max_skip_count=4, ngram_counts=[0, 0, 0],
                            ngram_indexes=[4], pool_int64s=[1, 1, 1])
    path = _save(tmp_path, node, [helper.make_tensor_value_info("x", TensorProto.INT64,
                                                                 [2, 2])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                 [helper.make_opsetid("", 9)])
    for got in itertools.chain(*_both_modes(path, np.ones((2, 2), np.int64))):
        np.testing.assert_array_equal(got, np.zeros((2, 5), np.float32))


# ---- the optimizers -------------------------------------------------------------------


def _adagrad(r, t, x, g, h, decay_factor=0.0, epsilon=1e-6, norm_coefficient=0.0):
    rate = r / (1 + t * decay_factor)
    gr = norm_coefficient * x + g
    h2 = h + gr * gr
    return [x - rate * gr / (np.sqrt(h2) + epsilon), h2]


def _momentum(r, t, x, g, v, alpha, beta, mode, norm_coefficient):
    gr = norm_coefficient * x + g
    v2 = alpha * v + (beta if t > 0 else 1.0) * gr
    return [x - r * (v2 if mode == "standard" else gr + alpha * v2), v2]


def _adam(r, t, x, g, v, h, alpha=0.9, beta=0.999, epsilon=1e-6, norm_coefficient=0.0,
          norm_coefficient_post=0.0):
    gr = norm_coefficient * x + g
    v2 = alpha * v + (1 - alpha) * gr
    h2 = beta * h + (1 - beta) * gr * gr
    rate = r * np.sqrt(1 - beta ** t) / (1 - alpha ** t) if t > 0 else r
    return [(1 - norm_coefficient_post) * (x - rate * v2 / (np.sqrt(h2) + epsilon)), v2, h2]


OPTIMIZERS = [
    ("Adagrad", 1, _adagrad, dict(decay_factor=0.3, epsilon=1e-3, norm_coefficient=0.01)),
    ("Adagrad", 1, _adagrad, {}),
    ("Momentum", 1, _momentum, dict(alpha=0.8, beta=0.3, mode="standard",
                                    norm_coefficient=0.02)),
    ("Momentum", 1, _momentum, dict(alpha=0.8, beta=0.3, mode="nesterov",
                                    norm_coefficient=0.02)),
    ("Adam", 2, _adam, dict(alpha=0.7, beta=0.8, epsilon=1e-3, norm_coefficient=0.05,
                            norm_coefficient_post=0.1)),
    ("Adam", 2, _adam, {}),
]


def _opt_model(tmp_path, op, n_state, attrs, shapes, dtype):
    k = len(shapes)
    groups = ["X", "G"] + ["V", "H"][:n_state] if op != "Adagrad" else ["X", "G", "H"]
    ins = ["R", "T"] + ["%s%d" % (p, i) for p in groups for i in range(k)]
    outs = ["%s%d_new" % (p, i) for p in [groups[0]] + groups[2:] for i in range(k)]
    elem = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    vis = [helper.make_tensor_value_info("R", elem, []),
           helper.make_tensor_value_info("T", TensorProto.INT64, [])]
    vis += [helper.make_tensor_value_info(n, elem, list(shapes[i % k]))
            for i, n in enumerate(ins[2:])]
    node = helper.make_node(op, ins, outs, domain=TRAINING, **attrs)
    return _save(tmp_path, node, vis, [helper.make_tensor_value_info(o, elem, None)
                                       for o in outs],
                 [helper.make_opsetid(TRAINING, 1)]), ins


def _opt_inputs(rs, op, n_state, shapes, dtype, t):
    k = len(shapes)
    per = 2 + n_state
    xs = [np.array(0.3, dtype), np.array(t, np.int64)]
    for j in range(per):
        for s in shapes:
            a = np.asarray(rs.randn(*s)).astype(dtype)
            # an array of dtype: np.abs of a 0-d array is a numpy scalar, and + 0.1
            # makes it a float64 one (which tg.tensor keeps as float64, as torch)
            xs.append(np.asarray(np.abs(a) + 0.1, dtype) if j >= 2 and (op != "Momentum") else a)
    return xs, k, per


def _opt_ref(fn, attrs, xs, k, per):
    outs = [fn(xs[0], int(xs[1]), *[xs[2 + j * k + i] for j in range(per)], **attrs)
            for i in range(k)]
    return [outs[i][o] for o in range(len(outs[0])) for i in range(k)]


@pytest.mark.parametrize("op,n_state,fn,attrs", OPTIMIZERS)
@pytest.mark.parametrize("t", [0, 3])
def test_optimizer_values(tmp_path, op, n_state, fn, attrs, t):
    shapes = [(3,), (2, 2), ()]
    path, _ = _opt_model(tmp_path, op, n_state, attrs, shapes, np.float32)
    xs, k, per = _opt_inputs(np.random.RandomState(t), op, n_state, shapes, np.float32, t)
    want = _opt_ref(fn, attrs, xs, k, per)
    for got in _both_modes(path, *xs):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("op,n_state,fn,attrs", OPTIMIZERS[::2])
def test_optimizer_gradients(tmp_path, op, n_state, fn, attrs):
    """d sum(w * outputs) / d (R, X, G, states) in float64 against central
    differences of the reference"""
    shapes = [(3,), (2,)]
    path, _ = _opt_model(tmp_path, op, n_state, attrs, shapes, np.float64)
    xs, k, per = _opt_inputs(np.random.RandomState(5), op, n_state, shapes, np.float64, 2)
    n_out = k * (1 + n_state)
    ws = [np.random.RandomState(9 + i).randn(*np.shape(o))
          for i, o in enumerate(_opt_ref(fn, attrs, xs, k, per))]

    def loss(vals):
        return sum(float((w * o).sum()) for w, o in zip(ws, _opt_ref(fn, attrs, vals, k,
                                                                       per)))
    ts = [tg.tensor(x, requires_grad=i != 1) for i, x in enumerate(xs)]
    outs = tg.onnx.load(path)(*ts)
    assert len(outs) == n_out
    total = None
    for w, o in zip(ws, outs):
        term = (o * tg.tensor(w)).sum()
        total = term if total is None else total + term
    total.backward()
    eps = 1e-6
    for i, x in enumerate(xs):
        if i == 1:
            continue  # T: an integer count
        num = np.zeros(np.shape(x))
        for idx in np.ndindex(*np.shape(x)):
            hi = [v.copy() for v in xs]
            lo = [v.copy() for v in xs]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            num[idx] = (loss(hi) - loss(lo)) / (2 * eps)
        np.testing.assert_allclose(ts[i].grad.numpy(), num, rtol=1e-6, atol=1e-7,
                                   err_msg="input %d" % i)


def test_tfidf_shared_coordinates(tmp_path):
    """n-grams mapped to one output coordinate add up (weighed per n-gram)"""
    rs = np.random.RandomState(4)
    pool, counts = [1, 2, 3, 1, 2, 2, 3], [0, 3]
    indexes, weights = [2, 0, 2, 0, 2], [0.5, 2.0, 1.5, 3.0, 0.25]
    x = rs.randint(0, 4, size=(4, 10)).astype(np.int64)
    for mode in ("TF", "IDF", "TFIDF"):
        node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode=mode,
                                min_gram_length=1, max_gram_length=2, max_skip_count=2,
                                ngram_counts=counts, ngram_indexes=indexes, pool_int64s=pool,
                                weights=weights)
        path = _save(tmp_path, node, [helper.make_tensor_value_info("x", TensorProto.INT64,
                                                                     [4, 10])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                     [helper.make_opsetid("", 9)])
        want = _tfidf_ref(x, mode, 1, 2, 2, counts, indexes, pool, weights)
        for got in itertools.chain(*_both_modes(path, x)):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_tfidf_large_vocabulary(tmp_path):
    """60000 unigrams spread over a 90000-wide output: no [n-grams, width]
    matrix is formed (it would hold 5.4 * 10^9 values); eager mode only, to
    keep the test short (graph mode builds the same ops)"""
    rs = np.random.RandomState(6)
    vocab = rs.permutation(100000)[:60000]
    coords = rs.permutation(90000)[:60000]
    weights = rs.rand(60000).astype(np.float32) + 0.5
    x = rs.choice(vocab, size=(3, 200)).astype(np.int64)
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TFIDF", min_gram_length=1,
                            max_gram_length=1, max_skip_count=0, ngram_counts=[0],
                            ngram_indexes=[int(v) for v in coords],
                            pool_int64s=[int(v) for v in vocab],
                            weights=[float(v) for v in weights])
    path = _save(tmp_path, node, [helper.make_tensor_value_info("x", TensorProto.INT64,
                                                                 [3, 200])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                 [helper.make_opsetid("", 9)])
    want = np.zeros((3, coords.max() + 1), np.float32)  # the width: max(ngram_indexes) + 1
    where = {int(v): k for k, v in enumerate(vocab)}
    for b in range(3):
        for v in x[b]:
            k = where[int(v)]
            want[b, coords[k]] += weights[k]
    got = tg.onnx.load(path)(tg.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
