"""ONNX quantization ops (QuantizeLinear, DequantizeLinear, MatMulInteger,
QLinearMatMul, ConvInteger, QLinearConv): values the onnx node cases in
tests/onnx_conformance do not cover, against numpy references of ONNX's
definitions, eagerly and inside tg.function (graph mode): per-axis
parameters of 4-D tensors, saturation at both ends, ties rounding to
even, INT8 (held as int32) and UINT8, convolutions with padding, stride
and groups, and sums too large for float32 to hold exactly."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

NP_TO_ONNX = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("uint8"): TensorProto.UINT8,
              np.dtype("int8"): TensorProto.INT8, np.dtype("int32"): TensorProto.INT32}
RANGE = {np.dtype("uint8"): (0, 255), np.dtype("int8"): (-128, 127)}


def _held(a):
    """how tensorgraph holds a numpy value: INT8 as int32"""
    a = np.asarray(a)
    return a.astype(np.int32) if a.dtype == np.int8 else a


def _run(tmp_path, op, inputs, out_type, opset=13, inits=(), **attrs):
    """node op on inputs (name -> array; names in `inits` become
    initializers) eagerly and traced; both results as numpy"""
    names = list(inputs)
    node = helper.make_node(op, names, ["y"], **attrs)
    vis = [helper.make_tensor_value_info(n, NP_TO_ONNX[np.asarray(v).dtype], np.shape(v))
           for n, v in inputs.items() if n not in inits]
    init = [numpy_helper.from_array(np.asarray(inputs[n]), n) for n in inits]
    g = helper.make_graph([node], "g", vis, [helper.make_tensor_value_info("y", out_type, None)],
                          init)
    path = str(tmp_path / ("%s.onnx" % op))
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
    m = tg.onnx.load(path)
    args = [tg.tensor(_held(inputs[n])) for n in names if n not in inits]
    eager = m(*args).numpy()
    graph = tg.function(lambda *a: m(*a))(*args).numpy()
    return eager, graph


def _check(got, want):
    for g in got:
        assert g.dtype == _held(want).dtype
        np.testing.assert_array_equal(g, _held(want))


def _quantize_ref(x, scale, zp):
    lo, hi = RANGE[zp.dtype]
    return np.clip(np.rint(x / scale) + zp.astype(np.float32), lo, hi).astype(zp.dtype)


def _along(p, axis, rank):
    shape = [1] * rank
    shape[axis] = p.size
    return p.reshape(shape)


@pytest.mark.parametrize("axis", [0, 1, -3])
@pytest.mark.parametrize("qdt", ["uint8", "int8"])
def test_quantize_per_axis(tmp_path, axis, qdt):
    rng = np.random.RandomState(1)
    shape = (2, 3, 4, 5)
    n = shape[axis]
    scale = np.array([0.5, 0.25, 2.0][:n], np.float32)  # powers of two: ties are exact
    zp = (np.array([3, 0, 250][:n]) if qdt == "uint8" else np.array([-5, 0, 120][:n])
          ).astype(qdt)
    # ties k + 0.5 (both parities), saturation at both ends, plain values
    q = rng.randint(-300, 300, size=shape).astype(np.float32) + 0.5
    q.flat[:6] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5]
    q.flat[6:8] = [1e6, -1e6]
    x = (q * _along(scale, axis, 4)).astype(np.float32)
    want = _quantize_ref(x, _along(scale, axis, 4), _along(zp, axis, 4))
    lo, hi = RANGE[np.dtype(qdt)]
    assert (want == lo).any() and (want == hi).any()  # both ends saturate
    got = _run(tmp_path, "QuantizeLinear", {"x": x, "s": scale, "z": zp},
               NP_TO_ONNX[np.dtype(qdt)], axis=axis)
    _check(got, want)


def test_quantize_ties_to_even_scalar(tmp_path):
    x = np.array([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5, 254.5, 255.5], np.float32)
    for qdt, zp in (("uint8", 0), ("int8", 0)):
        z = np.array(zp, qdt)
        got = _run(tmp_path, "QuantizeLinear", {"x": x, "s": np.float32(1), "z": z},
                   NP_TO_ONNX[np.dtype(qdt)])
        want = np.array([0, 2, 2, 4, 0, -2, -2, -4, 254, 256], np.float64)
        lo, hi = RANGE[np.dtype(qdt)]
        _check(got, np.clip(want, lo, hi).astype(qdt))
    # no zero point: uint8
    got = _run(tmp_path, "QuantizeLinear", {"x": x, "s": np.float32(0.5)}, TensorProto.UINT8)
    _check(got, np.clip(np.rint(x / np.float32(0.5)), 0, 255).astype(np.uint8))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("qdt", ["uint8", "int8"])
def test_dequantize_per_axis(tmp_path, axis, qdt):
    rng = np.random.RandomState(2)
    shape = (3, 3, 2, 4)
    lo, hi = RANGE[np.dtype(qdt)]
    x = rng.randint(lo, hi + 1, size=shape).astype(qdt)
    scale = np.array([0.5, 3.0, 0.01], np.float32)
    zp = np.array([lo, 0, hi], qdt)
    want = ((x.astype(np.float32) - _along(zp, axis, 4).astype(np.float32)) *
            _along(scale, axis, 4))
    eager, graph = _run(tmp_path, "DequantizeLinear", {"x": x, "s": scale, "z": zp},
                        TensorProto.FLOAT, axis=axis)
    for g in (eager, graph):
        np.testing.assert_allclose(g, want, rtol=1e-6)


def test_dequantize_gradient_reaches_scale(tmp_path):
    x = np.array([[0, 5, 255], [7, 128, 3]], np.uint8)
    zp = np.array([1, 2], np.uint8)
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0)
    g = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("x", TensorProto.UINT8, [2, 3]),
        helper.make_tensor_value_info("s", TensorProto.FLOAT, [2]),
        helper.make_tensor_value_info("z", TensorProto.UINT8, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    path = str(tmp_path / "dq.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    s = tg.tensor(np.array([0.5, 2.0], np.float32), requires_grad=True)
    tg.onnx.load(path)(tg.tensor(x), s, tg.tensor(zp)).sum().backward()
    want = (x.astype(np.float32) - zp[:, None]).sum(1)
    np.testing.assert_allclose(s.grad.numpy(), want)


def test_matmul_integer_large_k_is_exact(tmp_path):
    """sums near 2^28: float32 would round them (exact only below 2^24)"""
    rng = np.random.RandomState(3)
    k = 4100
    a = rng.randint(200, 256, size=(3, k)).astype(np.uint8)
    b = rng.randint(0, 56, size=(k, 2)).astype(np.uint8)
    azp = np.array([0, 1, 2], np.uint8)  # per row
    bzp = np.array([255, 254], np.uint8)  # per column
    want = (a.astype(np.int64) - azp[:, None]) @ (b.astype(np.int64) - bzp)
    assert np.abs(want).max() > 2 ** 27
    assert (want.astype(np.float32).astype(np.int64) != want).any()
    got = _run(tmp_path, "MatMulInteger", {"a": a, "b": b, "az": azp, "bz": bzp},
               TensorProto.INT32, opset=10)
    _check(got, want.astype(np.int32))


def _requant(acc, mult, yzp):
    lo, hi = RANGE[yzp.dtype]
    return np.clip(np.rint(acc * mult.astype(np.float64)) + yzp.astype(np.float64), lo,
                   hi).astype(yzp.dtype)


@pytest.mark.parametrize("qdt", ["uint8", "int8"])
def test_qlinear_matmul_large_k_per_row(tmp_path, qdt):
    rng = np.random.RandomState(4)
    lo, hi = RANGE[np.dtype(qdt)]
    k = 3000
    a = rng.randint(lo, hi + 1, size=(2, 4, k)).astype(qdt)
    b = rng.randint(lo, hi + 1, size=(2, k, 3)).astype(qdt)
    a_s = np.array([0.02, 0.01, 0.03, 0.05], np.float32)  # per row of a
    a_z = np.array([lo, 0, hi, 1], qdt)
    b_s = np.array([0.004, 0.002, 0.001], np.float32)  # per column of b
    b_z = np.array([0, 3, hi], qdt)
    y_s, y_z = np.float32(25.0 if qdt == "uint8" else 3.0), np.array(hi // 2, qdt)
    acc = (a.astype(np.int64) - a_z[:, None]) @ (b.astype(np.int64) - b_z)
    assert np.abs(acc).max() > 2 ** 24  # float32 could not hold every sum
    mult = (a_s[:, None] * b_s) / y_s  # float32, as ONNX's reference
    want = _requant(acc, mult, y_z)
    assert (want == lo).any() or (want == hi).any()
    ins = {"a": a, "as": a_s, "az": a_z, "b": b, "bs": b_s, "bz": b_z, "ys": y_s, "yz": y_z}
    _check(_run(tmp_path, "QLinearMatMul", ins, NP_TO_ONNX[np.dtype(qdt)], opset=10), want)


def _conv_ref(x, w, stride, pads, group):
    """int64 convolution of [N, C, H, W] by [M, C/group, kh, kw]"""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = (xp.shape[2] - kh) // stride[0] + 1
    ow = (xp.shape[3] - kw) // stride[1] + 1
    y = np.zeros((n, m, oh, ow), np.int64)
    mg = m // group
    for o in range(m):
        g0 = (o // mg) * cg
        for i in range(oh):
            for j in range(ow):
                win = xp[:, g0:g0 + cg, i * stride[0]:i * stride[0] + kh,
                         j * stride[1]:j * stride[1] + kw]
                y[:, o, i, j] = (win * w[o]).sum(axis=(1, 2, 3))
    return y


@pytest.mark.parametrize("qdt", ["uint8", "int8"])
def test_qlinear_conv_pads_stride_group(tmp_path, qdt):
    rng = np.random.RandomState(5)
    lo, hi = RANGE[np.dtype(qdt)]
    x = rng.randint(lo, hi + 1, size=(2, 4, 7, 6)).astype(qdt)
    w = rng.randint(lo, hi + 1, size=(6, 2, 3, 2)).astype(qdt)  # group 2
    x_s, x_z = np.float32(0.05), np.array(lo + 7, qdt)
    w_s = np.array([0.01, 0.02, 0.005, 0.03, 0.04, 0.001], np.float32)
    w_z = np.array([0, 1, lo, hi, 5, 3], qdt)  # per output channel
    y_s, y_z = np.float32(3.0), np.array(lo + 100, qdt)
    bias = rng.randint(-20000, 20000, size=6).astype(np.int32)
    stride, pads = (2, 1), (1, 0, 2, 1)
    # padding is with the zero point: zero padding of the centred x
    acc = _conv_ref(x.astype(np.int64) - x_z, w.astype(np.int64) - w_z[:, None, None, None],
                    stride, pads, 2) + bias[None, :, None, None]
    mult = (x_s * w_s) / y_s
    want = _requant(acc, mult[None, :, None, None], y_z)
    ins = {"x": x, "xs": x_s, "xz": x_z, "w": w, "ws": w_s, "wz": w_z, "ys": y_s, "yz": y_z,
           "B": bias}
    got = _run(tmp_path, "QLinearConv", ins, NP_TO_ONNX[np.dtype(qdt)], opset=10,
               inits=("w", "ws", "wz", "B"), strides=list(stride), pads=list(pads), group=2)
    _check(got, want)
    # ConvInteger on the same operands: the exact sums (no bias)
    ins = {"x": x, "w": w, "xz": x_z, "wz": w_z}
    got = _run(tmp_path, "ConvInteger", ins, TensorProto.INT32, opset=10, strides=list(stride),
               pads=list(pads), group=2)
    _check(got, (acc - bias[None, :, None, None]).astype(np.int32))


def test_conv_integer_large_sums_are_exact(tmp_path):
    """3-D convolution summing 27 * 700 products of 255: beyond float32's 2^24"""
    rng = np.random.RandomState(6)
    x = rng.randint(250, 256, size=(1, 700, 3, 3, 3)).astype(np.uint8)
    w = rng.randint(250, 256, size=(2, 700, 3, 3, 3)).astype(np.uint8)
    want = np.einsum("ncdhw,mcdhw->nm", x.astype(np.int64), w.astype(np.int64))
    assert want.max() > 2 ** 30
    got = _run(tmp_path, "ConvInteger", {"x": x, "w": w}, TensorProto.INT32, opset=10)
    _check(got, want.reshape(1, 2, 1, 1, 1).astype(np.int32))


@pytest.mark.parametrize("op,inputs,needle", [
    ("QuantizeLinear", {"x": np.zeros((2, 3), np.float32), "s": np.ones(3, np.float32),
                        "z": np.zeros(2, np.uint8)}, "zero point has shape \\[2\\]"),
    ("QuantizeLinear", {"x": np.zeros((2, 3), np.float32), "s": np.ones(2, np.float32),
                        "z": np.zeros(2, np.uint8)}, "axis 1 has length 3"),
    ("QuantizeLinear", {"x": np.zeros((2, 3), np.float32), "s": np.float32(1),
                        "z": np.int32(0)}, "is INT32, expected INT8 or UINT8"),
    ("DequantizeLinear", {"x": np.zeros((2, 3), np.uint8), "s": np.float32(1),
                          "z": np.int8(0)}, "zero point of x\\) is INT8, expected UINT8"),
    ("QLinearMatMul", {"a": np.zeros((2, 3), np.uint8), "as": np.float32(1),
                       "az": np.uint8(0), "b": np.zeros((3, 2), np.uint8),
                       "bs": np.float32(1), "bz": np.uint8(0),
                       "ys": np.ones(2, np.float32), "yz": np.uint8(0)},
     "y_scale\\) has shape \\[2\\], expected a scalar"),
])
def test_errors(tmp_path, op, inputs, needle):
    with pytest.raises(Exception, match=needle):
        _run(tmp_path, op, inputs, TensorProto.FLOAT, opset=13)


def test_torch_static_quantized_model(tmp_path):
    """a model quantized by torch.ao.quantization (qnnpack) and exported
    at opset 13 (QuantizeLinear / DequantizeLinear around float Conv and
    Gemm, int8 weights as Constants) against torch's quantized kernels:
    torch requantizes in fixed point, ONNX in float, so an output may be
    one quantization step apart"""
    if SANITIZED:  # torch's quantization throws inside; that aborts under the ASan runtime
        pytest.skip("torch's C++ exceptions abort under the sanitizers")
    torch = pytest.importorskip("torch")
    tq = pytest.importorskip("torch.ao.quantization")
    if "qnnpack" not in torch.backends.quantized.supported_engines:
        pytest.skip("torch has no qnnpack engine")
    torch.backends.quantized.engine = "qnnpack"

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.q = tq.QuantStub()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1, stride=2)
            self.relu = torch.nn.ReLU()
            self.dq = tq.DeQuantStub()

        def forward(self, x):
            return self.dq(self.relu(self.conv(self.q(x))))

    torch.manual_seed(0)
    net = Net().eval()
    net.qconfig = tq.get_default_qconfig("qnnpack")
    prepared = tq.prepare(net)
    prepared(torch.randn(16, 3, 8, 8))
    qnet = tq.convert(prepared)
    x = torch.randn(2, 3, 8, 8)
    path = str(tmp_path / "q.onnx")
    torch.onnx.export(qnet, (x,), path, opset_version=13)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    want = qnet(x).numpy()
    step = qnet.conv.scale
    m = tg.onnx.load(path)
    for got in (m(tg.tensor(x.numpy())).numpy(),
                tg.function(lambda a: m(a))(tg.tensor(x.numpy())).numpy()):
        diff = np.abs(got - want)
        assert diff.max() <= step * 1.001
        assert (diff < step * 0.5).mean() > 0.95


def test_quantize_nan_and_infinities(tmp_path):
    """NaN quantizes to 0 (ONNX leaves it open; tensorgraph never casts a
    NaN to an integer), infinities saturate"""
    x = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    for qdt, zp, want in (("uint8", 10, [0, 255, 0, 11]), ("int8", 0, [0, 127, -128, 1])):
        ins = {"x": x, "s": np.float32(1), "z": np.array(zp, qdt)}
        got = _run(tmp_path, "QuantizeLinear", ins, NP_TO_ONNX[np.dtype(qdt)])
        _check(got, np.array(want, qdt))


def test_dynamic_quantize_all_zero(tmp_path):
    """scale 0 (ONNX's formula divides 0 by 0): y and the zero point are 0"""
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [2, 3])],
                          [helper.make_tensor_value_info(n, t, None) for n, t in
                           (("y", TensorProto.UINT8), ("s", TensorProto.FLOAT),
                            ("z", TensorProto.UINT8))])
    path = str(tmp_path / "dq0.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)]), path)
    y, s, z = tg.onnx.load(path)(tg.zeros(2, 3))
    np.testing.assert_array_equal(y.numpy(), np.zeros((2, 3), np.uint8))
    assert s.numpy() == 0 and z.numpy() == 0 and z.numpy().dtype == np.uint8
