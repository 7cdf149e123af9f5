"""Nodes with many inputs: torchvision's SSD concatenates one tensor per
anchor level and box (a Concat of 90 inputs), beyond the 64 the importer
took before. A Split into up to 256 outputs, whose pieces (reversed) go
into a Concat, Sum or Max of as many inputs, imports and runs eagerly
and inside tg.function, equal to numpy; 257 are refused at load with the
node named. Hand-made models; skipped without onnx."""
import os

import numpy as np
import pytest

import tensorgraph as tg

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402


def model(tmp_path, op, n, **attrs):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, n])
    pieces = ["p%d" % i for i in range(n)]
    split = helper.make_node("Split", ["x"], pieces, name="split", axis=1)
    node = helper.make_node(op, pieces[::-1], ["y"], name="many", **attrs)
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([split, node], "g", [x], [out])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    path = os.fspath(tmp_path / ("%s_%d.onnx" % (op, n)))
    onnx.save(m, path)
    return path


@pytest.mark.parametrize("op,n", [("Concat", 90), ("Concat", 256), ("Sum", 100),
                                  ("Max", 256)])
def test_many_inputs(tmp_path, op, n):
    x = np.random.default_rng(n).standard_normal((2, n)).astype(np.float32)
    want = {"Concat": lambda: x[:, ::-1],
            "Sum": lambda: x.sum(axis=1, keepdims=True),
            "Max": lambda: x.max(axis=1, keepdims=True)}[op]()
    m = tg.onnx.load(model(tmp_path, op, n, **({"axis": 1} if op == "Concat" else {})))
    t = tg.tensor(x)
    with tg.no_grad():
        eager = m(t).numpy()
        graph = tg.function(lambda a: m(a))(t).numpy()
    assert eager.shape == want.shape
    np.testing.assert_allclose(eager, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(graph, want, rtol=1e-5, atol=1e-5)


def test_too_many_inputs(tmp_path):
    # the Split's 257 outputs are refused first, then (256 pieces, one twice) the Concat's
    with pytest.raises(OSError, match=r"node 'split' \(Split\) has 257 outputs, expected 1 "
                                      r"to 256"):
        tg.onnx.load(model(tmp_path, "Concat", 257, axis=1))
    path = model(tmp_path, "Concat", 256, axis=1)
    m = onnx.load(path)
    m.graph.node[1].input.append("p0")
    onnx.save(m, path)
    with pytest.raises(OSError, match=r"node 'many' \(Concat\) has 257 inputs, expected 1 "
                                      r"to 256"):
        tg.onnx.load(path)


def test_many_graph_inputs(tmp_path):
    # a model with 100 graph inputs, called with them all from Python
    # (the call path took at most 64 before), eagerly and inside tg.function,
    # with the gradient reaching every input
    n = 100
    ins = [helper.make_tensor_value_info("a%d" % i, TensorProto.FLOAT, [3]) for i in range(n)]
    node = helper.make_node("Sum", ["a%d" % i for i in range(n)], ["y"], name="sum")
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    g = helper.make_graph([node], "g", ins, [out])
    path = os.fspath(tmp_path / "inputs_100.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    m = tg.onnx.load(path)
    vals = [np.full(3, i, np.float32) for i in range(n)]
    ts = [tg.tensor(v, requires_grad=True) for v in vals]
    y = m(*ts)
    np.testing.assert_allclose(y.detach().numpy(), np.sum(vals, axis=0))
    y.sum().backward()
    assert all(np.array_equal(t.grad.numpy(), np.ones(3, np.float32)) for t in ts)
    with tg.no_grad():  # one tensor into the function (it takes at most 64), 100 into the model
        traced = tg.function(lambda s: m(*s.unbind(0)))(tg.tensor(np.stack(vals)))
    np.testing.assert_allclose(traced.numpy(), np.sum(vals, axis=0))
    with pytest.raises(TypeError, match="inputs must be tensors"):
        m(*ts[:-1], vals[-1])
