"""ONNX's random ops from Python: they draw from the default generator
(tg.manual_seed), as PyTorch's random ops do, so every call draws anew and
a seed makes the calls reproducible; a node with a seed attribute draws
from a generator of its own. In graph mode (tg.function over a loaded
model) they were refused ("random ops are not graph nodes yet"); now each
is a random node, and the traced calls draw the numbers eager calls draw
from the same seed. Hand-made models: needs the onnx package only."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import onnx_model_file

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T, helper  # noqa: E402


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def calls(path, inputs, n=3, seed=17):
    """n graph-mode calls and n eager calls of the model at path, each
    sequence from the default generator seeded with seed"""
    m = tg.onnx.load(path)
    fn = tg.function(lambda *a: m(*a))
    args = [tg.tensor(a) for a in inputs]
    tg.manual_seed(seed)
    traced = [fn(*args) for _ in range(n)]
    tg.manual_seed(seed)
    eager = [m(*args) for _ in range(n)]
    assert fn.trace_count == 1
    return traced, eager


def as_list(out):
    return [o.numpy() for o in out] if isinstance(out, (tuple, list)) else [out.numpy()]


def check_draws(traced, eager):
    for t, e in zip(traced, eager):  # the eager calls' numbers, call by call
        for a, b in zip(as_list(t), as_list(e)):
            np.testing.assert_array_equal(a, b)
    for k in range(1, len(traced)):  # new numbers at every call
        assert any((a != b).any() for a, b in zip(as_list(traced[k]), as_list(traced[k - 1])))


def test_random_uniform_and_normal(tmp_path):
    nodes = [helper.make_node("RandomUniform", [], ["u"], shape=[3, 200], low=-2.0, high=3.0),
             helper.make_node("RandomNormal", [], ["n"], shape=[500], mean=1.0, scale=0.5,
                              dtype=T.DOUBLE, seed=4.0),
             helper.make_node("Add", ["x", "u"], ["y"])]
    path = onnx_model_file(tmp_path, nodes, [vi("x", T.FLOAT, [3, 200])],
                           [vi("y", T.FLOAT, [3, 200]), vi("n", T.DOUBLE, [500])], opset=13)
    x = np.zeros((3, 200), np.float32)
    traced, eager = calls(path, [x])
    check_draws([t[0] for t in traced], [e[0] for e in eager])
    # the seeded node: every eager call builds it seeded anew; in a graph its
    # generator advances at every run, as in an onnxruntime session
    np.testing.assert_array_equal(traced[0][1].numpy(), eager[0][1].numpy())
    np.testing.assert_array_equal(eager[1][1].numpy(), eager[0][1].numpy())
    assert (traced[1][1].numpy() != traced[0][1].numpy()).any()
    for y, n in traced:
        y, n = y.numpy(), n.numpy()
        assert y.dtype == np.float32 and n.dtype == np.float64
        assert y.min() >= -2 and y.max() < 3 and abs(y.mean() - 0.5) < 0.3
        assert abs(n.mean() - 1) < 0.1 and abs(n.std() - 0.5) < 0.1


def test_seeded_node_draws_from_its_own_generator(tmp_path):
    """a seed makes a node's draws independent of the other nodes' and of
    the default generator: the same in every call and whatever runs first"""
    seeded = helper.make_node("RandomUniform", [], ["s"], shape=[8], seed=3.0)
    other = helper.make_node("RandomNormal", [], ["o"], shape=[8])
    outs = [vi("s", T.FLOAT, [8]), vi("o", T.FLOAT, [8])]
    a = tg.onnx.load(onnx_model_file(tmp_path, [seeded, other], [], outs, name="a"))
    b = tg.onnx.load(onnx_model_file(tmp_path, [other, seeded], [], outs, name="b"))
    tg.manual_seed(1)
    ra = a()
    tg.manual_seed(1)
    rb = b()
    np.testing.assert_array_equal(ra[0].numpy(), rb[0].numpy())
    np.testing.assert_array_equal(ra[1].numpy(), rb[1].numpy())
    again = a()
    np.testing.assert_array_equal(again[0].numpy(), ra[0].numpy())
    assert (again[1].numpy() != ra[1].numpy()).any()


def test_like_ops_bernoulli_and_dropout(tmp_path):
    nodes = [helper.make_node("RandomNormalLike", ["x"], ["n"]),
             helper.make_node("RandomUniformLike", ["x"], ["u"], dtype=T.DOUBLE),
             helper.make_node("Bernoulli", ["p"], ["b"]),
             helper.make_node("Dropout", ["x", "ratio", "train"], ["d", "mask"])]
    inits = [helper.make_tensor("ratio", T.FLOAT, [], [0.25]),
             helper.make_tensor("train", T.BOOL, [], [True])]
    path = onnx_model_file(
        tmp_path, nodes, [vi("x", T.FLOAT, [4, 64]), vi("p", T.FLOAT, [4, 64])],
        [vi("n", T.FLOAT, [4, 64]), vi("u", T.DOUBLE, [4, 64]), vi("b", T.FLOAT, [4, 64]),
         vi("d", T.FLOAT, [4, 64]), vi("mask", T.BOOL, [4, 64])], inits, opset=15)
    x = np.ones((4, 64), np.float32)
    p = np.full((4, 64), 0.3, np.float32)
    traced, eager = calls(path, [x, p])
    check_draws(traced, eager)
    for n, u, b, d, mask in traced:
        mask = mask.numpy()
        np.testing.assert_array_equal(d.numpy(), np.where(mask, 1 / 0.75, 0).astype(np.float32))
        assert 0.6 < mask.mean() < 0.9 and 0.15 < b.numpy().mean() < 0.45
        assert u.numpy().dtype == np.float64


def test_like_of_a_run_time_shape(tmp_path):
    """RandomUniformLike of a NonZero's result: its length is known only
    when the graph runs"""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Cast", ["nz"], ["f"], to=T.FLOAT),
             helper.make_node("RandomUniformLike", ["f"], ["u"])]
    path = onnx_model_file(tmp_path, nodes, [vi("x", T.FLOAT, [6])],
                           [vi("u", T.FLOAT, [1, None])], opset=13)
    m = tg.onnx.load(path)
    fn = tg.function(lambda x: m(x))
    for x in ([1, 0, 2, 0, 0, 3], [0] * 6, [1] * 6):
        x = np.array(x, np.float32)
        u = fn(tg.tensor(x)).numpy()
        assert u.shape == (1, np.count_nonzero(x))
        assert ((u >= 0) & (u < 1)).all()


def test_multinomial(tmp_path):
    nodes = [helper.make_node("Multinomial", ["x"], ["k"], sample_size=50)]
    path = onnx_model_file(tmp_path, nodes, [vi("x", T.FLOAT, [2, 3])],
                           [vi("k", T.INT32, [2, 50])], opset=13)
    x = np.log(np.array([[0.0001, 0.0001, 1], [1, 1, 1]], np.float32))
    traced, eager = calls(path, [x])
    check_draws(traced, eager)
    k = traced[1].numpy()
    assert (k[0] == 2).mean() > 0.9 and set(k[1]) == {0, 1, 2}


def test_hostile_seed(tmp_path):
    nodes = [helper.make_node("RandomUniform", [], ["u"], shape=[2], seed=1e300)]
    path = onnx_model_file(tmp_path, nodes, [], [vi("u", T.FLOAT, [2])], opset=13)
    with pytest.raises(Exception, match="seed"):
        tg.onnx.load(path)()
