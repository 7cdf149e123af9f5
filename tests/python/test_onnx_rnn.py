"""ONNX's LSTM, GRU and RNN nodes imported by tensorgraph, on what ONNX's
own node cases and PyTorch's exports leave out: partial sequence_lens
(rows past their length output zeros and keep their state), reverse and
bidirectional directions, clip, other activations with alpha/beta,
input_forget, GRU without linear_before_reset, layout 1 with initial
states. The reference is numpy written from ONNX's operator text; float64
gradients of every input against central finite differences; a traced
import exported and imported again; malformed nodes fail with errors
naming the node. Skipped without onnx."""
import os

import numpy as np
import pytest

import tensorgraph as tg

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DEFAULT_ACTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
INPUTS = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]


def np_act(name, alpha, beta):
    sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    return {
        "Relu": lambda x: np.maximum(x, 0),
        "Tanh": np.tanh,
        "Sigmoid": sig,
        "Affine": lambda x: alpha * x + beta,
        "LeakyRelu": lambda x: np.where(x >= 0, x, alpha * x),
        "ThresholdedRelu": lambda x: np.where(x > alpha, x, 0),
        "ScaledTanh": lambda x: alpha * np.tanh(beta * x),
        "HardSigmoid": lambda x: np.clip(alpha * x + beta, 0, 1),
        "Elu": lambda x: np.where(x >= 0, x, alpha * (np.exp(x) - 1)),
        "Softsign": lambda x: x / (1 + np.abs(x)),
        "Softplus": lambda x: np.log1p(np.exp(x)),
    }[name]


ALPHA_DEFAULT = {"Affine": (1.0, 0.0), "LeakyRelu": (0.01, None),
                 "ThresholdedRelu": (1.0, None), "ScaledTanh": (1.0, 1.0),
                 "HardSigmoid": (0.2, 0.5), "Elu": (1.0, None)}


def resolve_acts(kind, dirs, names, alphas, betas):
    """per direction, the activation functions (alphas and betas taken in
    order by the activations that have them)"""
    n = len(DEFAULT_ACTS[kind])
    names = names or DEFAULT_ACTS[kind]
    alphas, betas = list(alphas or []), list(betas or [])
    fns = []
    for name in names:
        a, b = ALPHA_DEFAULT.get(name, (None, None))
        if a is not None and alphas:
            a = alphas.pop(0)
        if b is not None and betas:
            b = betas.pop(0)
        fns.append(np_act(name, a, b))
    if dirs == 2 and len(fns) == n:
        fns = fns * 2
    return [fns[d * n:(d + 1) * n] for d in range(dirs)]


def reference(kind, ins, attrs):
    """ONNX's recurrence, per direction and step, in float64"""
    x = ins["X"].astype(np.float64)
    layout = attrs.get("layout", 0)
    if layout:
        x = x.swapaxes(0, 1)
    seq, batch, _ = x.shape
    direction = attrs.get("direction", "forward")
    dirs = 2 if direction == "bidirectional" else 1
    H = attrs["hidden_size"]
    G = GATES[kind]
    acts = resolve_acts(kind, dirs, attrs.get("activations"), attrs.get("activation_alpha"),
                        attrs.get("activation_beta"))
    clip = attrs.get("clip")
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)

    def state(name):
        if ins.get(name) is None:
            return np.zeros((dirs, batch, H))
        s = ins[name].astype(np.float64)
        return s.swapaxes(0, 1) if layout else s
    h0, c0 = state("initial_h"), state("initial_c")
    B = ins.get("B")
    B = np.zeros((dirs, 2 * G * H)) if B is None else B.astype(np.float64)
    P = ins.get("P")
    P = np.zeros((dirs, 3 * H)) if P is None else P.astype(np.float64)
    lens = ins.get("sequence_lens")
    lens = np.full(batch, seq) if lens is None else lens
    Y = np.zeros((seq, dirs, batch, H))
    Yh, Yc = np.zeros((dirs, batch, H)), np.zeros((dirs, batch, H))
    for d in range(dirs):
        w, r = ins["W"][d].astype(np.float64), ins["R"][d].astype(np.float64)
        wb, rb = B[d, :G * H], B[d, G * H:]
        f = acts[d]
        h, c = h0[d], c0[d]
        steps = range(seq) if direction == "forward" or (dirs == 2 and d == 0) \
            else range(seq - 1, -1, -1)
        for t in steps:
            xt = x[t] @ w.T + wb
            if kind == "RNN":
                hn, cn = f[0](cl(xt + h @ r.T + rb)), c
            elif kind == "GRU":
                z = f[0](cl(xt[:, :H] + h @ r[:H].T + rb[:H]))
                rr = f[0](cl(xt[:, H:2 * H] + h @ r[H:2 * H].T + rb[H:2 * H]))
                if attrs.get("linear_before_reset", 0):
                    pre = xt[:, 2 * H:] + rr * (h @ r[2 * H:].T + rb[2 * H:])
                else:
                    pre = xt[:, 2 * H:] + (rr * h) @ r[2 * H:].T + rb[2 * H:]
                hh = f[1](cl(pre))
                hn, cn = (1 - z) * hh + z * h, c
            else:
                g = xt + h @ r.T + rb
                pi, po, pf = P[d, :H], P[d, H:2 * H], P[d, 2 * H:]
                i = f[0](cl(g[:, :H] + pi * c))
                if attrs.get("input_forget", 0):
                    ff = 1 - i
                else:
                    ff = f[0](cl(g[:, 2 * H:3 * H] + pf * c))
                cn = ff * c + i * f[1](cl(g[:, 3 * H:]))
                o = f[0](cl(g[:, H:2 * H] + po * cn))
                hn = o * f[2](cn)
            valid = (t < lens)[:, None]
            Y[t, d] = np.where(valid, hn, 0)
            h, c = np.where(valid, hn, h), np.where(valid, cn, c)
        # a row of length 0 ends in zeros (onnxruntime's choice)
        Yh[d], Yc[d] = np.where((lens > 0)[:, None], h, 0), np.where((lens > 0)[:, None], c, 0)
    if layout:
        return Y.transpose(2, 0, 1, 3), Yh.swapaxes(0, 1), Yc.swapaxes(0, 1)
    return Y, Yh, Yc


def make_inputs(kind, seq=4, batch=3, inp=3, H=4, dirs=1, layout=0, lens=None,
                states=True, peep=True, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    G = GATES[kind]
    rn = lambda *s: (rng.standard_normal(s) * 0.5).astype(dtype)  # noqa: E731
    ins = {"X": rn(batch, seq, inp) if layout else rn(seq, batch, inp),
           "W": rn(dirs, G * H, inp), "R": rn(dirs, G * H, H), "B": rn(dirs, 2 * G * H)}
    if lens is not None:
        ins["sequence_lens"] = np.array(lens, dtype=np.int32)
    if states:
        shape = (batch, dirs, H) if layout else (dirs, batch, H)
        ins["initial_h"] = rn(*shape)
        if kind == "LSTM":
            ins["initial_c"] = rn(*shape)
    if kind == "LSTM" and peep:
        ins["P"] = rn(dirs, 3 * H)
    return ins


def write_model(path, kind, ins, attrs, outputs=("Y", "Y_h", "Y_c"), opset=14):
    """one node; every given input a graph input"""
    elem = TensorProto.DOUBLE if ins["X"].dtype == np.float64 else TensorProto.FLOAT
    names = [n if n in ins else "" for n in INPUTS[:8 if kind == "LSTM" else 6]]
    while names and not names[-1]:
        names.pop()
    outs = list(outputs[:3 if kind == "LSTM" else 2])
    node = helper.make_node(kind, names, outs, **attrs)
    types = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
             np.dtype(np.int32): TensorProto.INT32}
    vi = [helper.make_tensor_value_info(n, types[ins[n].dtype], list(ins[n].shape))
          for n in names if n]
    ov = [helper.make_tensor_value_info(o, elem, None) for o in outs if o]
    g = helper.make_graph([node], "rnn", vi, ov)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(m, path)
    return [n for n in names if n], [o for o in outs if o]


def run_tg(path, names, ins, graph=False):
    m = tg.onnx.load(path)
    ts = [tg.tensor(ins[n]) for n in names]
    if graph:
        out = tg.function(lambda *a: m(*a))(*ts)
    else:
        out = m(*ts)
    out = out if isinstance(out, tuple) else (out,)
    return [o.numpy() for o in out]


CASES = [
    ("RNN", dict(direction="reverse"), dict(lens=[4, 2, 0])),
    ("RNN", dict(direction="bidirectional", activations=["Relu", "LeakyRelu"],
                 activation_alpha=[0.2]), dict(dirs=2, lens=[1, 4, 3])),
    ("RNN", dict(activations=["ScaledTanh"], activation_alpha=[1.5],
                 activation_beta=[0.7], clip=0.6), {}),
    ("GRU", dict(linear_before_reset=0), dict(lens=[3, 4, 1])),
    ("GRU", dict(direction="bidirectional", linear_before_reset=1,
                 activations=["HardSigmoid", "Softsign", "Sigmoid", "Elu"],
                 activation_alpha=[0.3, 0.8], activation_beta=[0.4]),
     dict(dirs=2, lens=[2, 4, 4])),
    ("GRU", dict(layout=1, direction="reverse"), dict(layout=1, lens=[4, 1, 3])),
    ("LSTM", dict(direction="bidirectional"), dict(dirs=2, lens=[4, 2, 3])),
    ("LSTM", dict(input_forget=1, clip=0.5), dict(lens=[2, 4, 1])),
    ("LSTM", dict(activations=["Affine", "ThresholdedRelu", "Softplus"],
                  activation_alpha=[0.5, 0.1], activation_beta=[0.3]), {}),
    ("LSTM", dict(layout=1, direction="bidirectional"), dict(layout=1, dirs=2)),
    ("LSTM", dict(direction="reverse"), dict(states=False, peep=False, lens=[4, 4, 4])),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("graph", [False, True])
def test_node_against_numpy(tmp_path, case, graph):
    kind, attrs, opts = CASES[case]
    H = 4
    attrs = dict(attrs, hidden_size=H)
    ins = make_inputs(kind, H=H, **opts)
    path = str(tmp_path / "m.onnx")
    names, outs = write_model(path, kind, ins, attrs)
    got = run_tg(path, names, ins, graph)
    want = reference(kind, ins, attrs)
    assert len(got) == len(outs)
    for name, g, w in zip(outs, got, want):
        assert g.shape == w.shape, name
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=name)


def test_omitted_outputs_and_opset7(tmp_path):
    """only Y_c of an LSTM; an opset-7 model (LSTM-7)"""
    ins = make_inputs("LSTM", H=3, lens=[4, 3, 2])
    attrs = dict(hidden_size=3)
    path = str(tmp_path / "m.onnx")
    names, outs = write_model(path, "LSTM", ins, attrs, outputs=("", "", "Y_c"), opset=7)
    got = run_tg(path, names, ins)
    assert outs == ["Y_c"] and len(got) == 1
    np.testing.assert_allclose(got[0], reference("LSTM", ins, attrs)[2], rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("case", [1, 4, 6])
def test_export_round_trip(tmp_path, case):
    """an imported recurrent node traced into a graph and exported (as the
    GEMMs, slices and activations it is built of), then imported again"""
    kind, attrs, opts = CASES[case]
    attrs = dict(attrs, hidden_size=4)
    ins = make_inputs(kind, H=4, **opts)
    path, out_path = str(tmp_path / "m.onnx"), str(tmp_path / "again.onnx")
    names, outs = write_model(path, kind, ins, attrs)
    m = tg.onnx.load(path)
    ts = [tg.tensor(ins[n]) for n in names]
    tg.function(lambda *a: m(*a)).get_concrete_function(*ts).export_onnx(out_path)
    assert kind not in {n.op_type for n in onnx.load(out_path).graph.node}
    got = tg.onnx.load(out_path)(*ts)
    for name, g, w in zip(outs, got, reference(kind, ins, attrs)):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("kind,attrs", [
    ("LSTM", dict(direction="bidirectional")),
    ("GRU", dict(direction="bidirectional", linear_before_reset=0)),
    ("GRU", dict(linear_before_reset=1, direction="reverse")),
    ("RNN", dict(direction="bidirectional")),
])
def test_gradients_against_finite_differences(tmp_path, kind, attrs):
    """float64: the gradient of every output element with respect to every
    floating-point input, eagerly, against central differences"""
    dirs = 2 if attrs["direction"] == "bidirectional" else 1
    ins = make_inputs(kind, seq=3, batch=2, inp=2, H=2, dirs=dirs, lens=[3, 2],
                      dtype=np.float64, seed=1)
    path = str(tmp_path / "m.onnx")
    names, _ = write_model(path, kind, ins, dict(attrs, hidden_size=2))
    m = tg.onnx.load(path)
    ts = [tg.tensor(ins[n], requires_grad=n != "sequence_lens") for n in names]

    def f(*a):
        out = m(*a)
        return tg.cat([o.reshape(-1) for o in out])
    assert tg.autograd.gradcheck(f, ts, eps=1e-6, atol=1e-7, rtol=1e-5)


# ---- malformed nodes: errors naming the node ----------------------------------------------
def expect_error(tmp_path, kind, ins, attrs, fragment, opset=14):
    path = str(tmp_path / "bad.onnx")
    names, _ = write_model(path, kind, ins, attrs, opset=opset)
    with pytest.raises(Exception) as e:
        run_tg(path, names, ins)
    msg = str(e.value)
    assert "(%s)" % kind in msg and fragment in msg, msg


def test_errors(tmp_path):
    ins = make_inputs("LSTM", H=4)
    expect_error(tmp_path, "LSTM", ins, dict(hidden_size=5), "W should be [1, 20, 3]")
    bad = dict(ins, R=ins["R"][:, :, :3].copy())
    expect_error(tmp_path, "LSTM", bad, dict(hidden_size=4), "R should be [1, 16, 4]")
    bad = dict(ins, B=ins["B"][:, :5].copy())
    expect_error(tmp_path, "LSTM", bad, dict(hidden_size=4), "B should be [1, 32]")
    bad = dict(ins, P=ins["P"][:, :5].copy())
    expect_error(tmp_path, "LSTM", bad, dict(hidden_size=4), "P should be [1, 12]")
    bad = dict(ins, initial_c=ins["initial_c"][:, :2].copy())
    expect_error(tmp_path, "LSTM", bad, dict(hidden_size=4), "initial_c should be [1, 3, 4]")
    expect_error(tmp_path, "LSTM", ins, dict(hidden_size=4, activations=["Sigmoid", "Foo",
                                                                         "Tanh"]),
                 "activation 'Foo' is not supported")
    expect_error(tmp_path, "LSTM", ins, dict(hidden_size=4, activations=["Sigmoid", "Tanh"]),
                 "activations has 2 names")
    expect_error(tmp_path, "LSTM", ins, dict(hidden_size=4, direction="sideways"),
                 "direction 'sideways'")
    expect_error(tmp_path, "LSTM", ins, dict(hidden_size=4, layout=2), "layout 2")
    expect_error(tmp_path, "LSTM", ins, dict(hidden_size=4, layout=1), "layout exists from",
                 opset=13)
    expect_error(tmp_path, "LSTM", ins, dict(hidden_size=4, direction="bidirectional"),
                 "W should be [2, 16, 3]")
    bad = dict(ins, sequence_lens=np.array([5, 1, 1], np.int32))
    expect_error(tmp_path, "LSTM", bad, dict(hidden_size=4), "sequence_lens[0] = 5")
    gins = make_inputs("GRU", H=4)
    bad = dict(gins, X=gins["X"][0].copy())
    expect_error(tmp_path, "GRU", bad, dict(hidden_size=4), "X should be")
    bad = dict(gins, B=gins["B"].astype(np.float64))
    expect_error(tmp_path, "GRU", bad, dict(hidden_size=4), "B is float64")
    rins = make_inputs("RNN", H=4)
    expect_error(tmp_path, "RNN", rins, dict(hidden_size=4, clip=-1.0), "clip")
    expect_error(tmp_path, "RNN", rins, dict(hidden_size=4, activations=["Tanh"] * 3),
                 "activations has 3 names")
