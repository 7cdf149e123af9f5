"""Scan-8 (opset 8: a batch axis first on every input and output, the scan
along axis 1, sequence_lens first): a batch of 3 rows with one forward and
one reversed scan input, two states and two scan outputs, against a numpy
loop; sequence_lens given as an initializer equal to the length is
accepted, a shorter one refused with the reason. Skipped without onnx."""
import os

import numpy as np
import pytest

import tensorgraph as tg

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

B, T = 3, 4


def model(path, lens=None):
    f = TensorProto.FLOAT
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x"], ["s_out"]),
         helper.make_node("Mul", ["p_in", "y"], ["p_out"]),
         helper.make_node("Sub", ["s_out", "p_out"], ["d"]),
         helper.make_node("Identity", ["s_out"], ["e"])],
        "body",
        [helper.make_tensor_value_info(n, f, [2]) for n in ("s_in", "p_in", "x", "y")],
        [helper.make_tensor_value_info(n, f, [2]) for n in ("s_out", "p_out", "d", "e")])
    inits = []
    if lens is not None:
        inits.append(numpy_helper.from_array(np.array(lens, np.int32), "lens"))
    node = helper.make_node("Scan", ["lens" if lens is not None else "", "s0", "p0", "xs", "ys"],
                            ["s", "p", "ds", "es"], num_scan_inputs=2, directions=[0, 1],
                            body=body)
    g = helper.make_graph(
        [node], "scan8",
        [helper.make_tensor_value_info("s0", f, [B, 2]), helper.make_tensor_value_info("p0", f, [B, 2]),
         helper.make_tensor_value_info("xs", f, [B, T, 2]),
         helper.make_tensor_value_info("ys", f, [B, T, 2])],
        [helper.make_tensor_value_info("s", f, [B, 2]), helper.make_tensor_value_info("p", f, [B, 2]),
         helper.make_tensor_value_info("ds", f, [B, T, 2]),
         helper.make_tensor_value_info("es", f, [B, T, 2])],
        initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 8)])
    m.ir_version = 4
    onnx.save(m, path)


def reference(s0, p0, xs, ys):
    s, p = s0.copy(), p0.copy()
    ds, es = np.zeros_like(xs), np.zeros_like(xs)
    for b in range(B):
        for t in range(T):
            s[b] = s[b] + xs[b, t]
            p[b] = p[b] * ys[b, T - 1 - t]  # the second input scans backwards
            ds[b, t], es[b, t] = s[b] - p[b], s[b]
    return s, p, ds, es


@pytest.mark.parametrize("lens", [None, [T] * B])
def test_scan8_as_numpy(tmp_path, lens):
    path = os.fspath(tmp_path / "scan8.onnx")
    model(path, lens)
    rng = np.random.default_rng(0)
    ins = [rng.standard_normal(sh).astype(np.float32) for sh in ((B, 2), (B, 2), (B, T, 2),
                                                                 (B, T, 2))]
    want = reference(*ins)
    got = tg.onnx.load(path)(*[tg.tensor(a) for a in ins])
    for g, w in zip(got, want):
        assert np.allclose(g.numpy(), w, rtol=1e-6, atol=1e-6)


def test_scan8_shorter_sequence_refused(tmp_path):
    path = os.fspath(tmp_path / "scan8_short.onnx")
    model(path, [T, T - 1, T])
    ins = [tg.ones(B, 2), tg.ones(B, 2), tg.ones(B, T, 2), tg.ones(B, T, 2)]
    with pytest.raises(NotImplementedError, match="sequence_lens\\[1\\] is 3, shorter"):
        tg.onnx.load(path)(*ins)
