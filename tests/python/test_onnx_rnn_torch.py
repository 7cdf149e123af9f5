"""PyTorch as the oracle for ONNX's LSTM, GRU and RNN: torch.nn.LSTM, GRU
and RNN (tanh and relu), one and two layers, bidirectional, batch_first,
with and without initial states, exported with torch.onnx.export at
opsets 9, 11, 13 and 17 (the exporter reorders the gates; only end-to-end
values are compared). tensorgraph imports them as a module
(tg.onnx.load(path, as_module=True)): outputs within 1e-5 relative of
torch's, and the gradients of a weighted sum of the outputs with respect
to the input, the initial states and every weight equal torch's autograd,
eagerly and inside tg.function (graph mode). Skipped without torch/onnx."""
import os

import numpy as np
import pytest

import tensorgraph as tg

from conftest import SANITIZED

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
import onnx  # noqa: E402

pytestmark = pytest.mark.skipif(SANITIZED, reason="torch.onnx.export aborts under the "
                                "ASan preload (C++ exceptions inside torch)")

INPUT, HIDDEN, SEQ, BATCH = 4, 5, 6, 3
# (layers, bidirectional, batch_first, initial states given)
CONFIGS = [(1, False, False, False), (2, True, False, True), (1, True, True, False),
           (2, False, True, True)]
KINDS = ["LSTM", "GRU", "RNN_tanh", "RNN_relu"]
OPSETS = [9, 11, 13, 17]


class Wrap(torch.nn.Module):
    def __init__(self, kind, layers, bidir, batch_first):
        super().__init__()
        self.lstm = kind == "LSTM"
        if kind.startswith("RNN"):
            self.rnn = torch.nn.RNN(INPUT, HIDDEN, layers, nonlinearity=kind[4:],
                                    bidirectional=bidir, batch_first=batch_first)
        else:
            cls = torch.nn.LSTM if self.lstm else torch.nn.GRU
            self.rnn = cls(INPUT, HIDDEN, layers, bidirectional=bidir,
                           batch_first=batch_first)

    def forward(self, x, *state):
        if self.lstm:
            y, (h, c) = self.rnn(x, tuple(state) if state else None)
            return y, h, c
        y, h = self.rnn(x, state[0] if state else None)
        return y, h


def export(tmp_path, kind, cfg, opset, dtype=torch.float32):
    layers, bidir, bf, states = cfg
    torch.manual_seed(hash((kind, cfg, opset)) % 1000)
    net = Wrap(kind, layers, bidir, bf).to(dtype).eval()
    x = torch.randn((BATCH, SEQ, INPUT) if bf else (SEQ, BATCH, INPUT), dtype=dtype)
    args = [x]
    if states:
        shape = (layers * (2 if bidir else 1), BATCH, HIDDEN)
        args += [torch.randn(shape, dtype=dtype) * 0.5 for _ in range(2 if kind == "LSTM" else 1)]
    names = ["x", "h0", "c0"][:len(args)]
    outs = ["y", "h", "c"][:3 if kind == "LSTM" else 2]
    path = str(tmp_path / ("%s_%d.onnx" % (kind, opset)))
    torch.onnx.export(net, tuple(args), path, opset_version=opset, input_names=names,
                      output_names=outs, do_constant_folding=False)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert kind.split("_")[0] in ops, ops  # the recurrent node itself is imported
    return net, args, path


def torch_grads(net, args, weights):
    ts = [a.clone().requires_grad_(True) for a in args]
    out = net(*ts)
    sum(((o * torch.from_numpy(w)).sum() for o, w in zip(out, weights)), torch.zeros((), dtype=args[0].dtype)
        ).backward()
    return ([o.detach().numpy() for o in out], [t.grad.numpy() for t in ts],
            {k: p.grad.numpy() for k, p in net.named_parameters()})


def tg_loss(out, weights):
    total = None
    for o, w in zip(out, weights):
        term = (o * tg.tensor(w)).sum()
        total = term if total is None else total + term
    return total


def close(got, want, rtol, what):
    scale = max(float(np.abs(want).max()), 1e-30)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 0.1 * scale, err_msg=what)


def check(tmp_path, kind, cfg, opset, dtype, rtol, grad_rtol):
    net, args, path = export(tmp_path, kind, cfg, opset, dtype)
    rng = np.random.default_rng(3)
    with torch.no_grad():
        ref_shapes = [o.shape for o in net(*args)]
    np_dt = np.float64 if dtype == torch.float64 else np.float32
    weights = [rng.standard_normal(s).astype(np_dt) for s in ref_shapes]
    ref_out, ref_in_grads, ref_params = torch_grads(net, args, weights)
    mod = tg.onnx.load(path, as_module=True)
    names = dict(mod.onnx_names)
    assert sorted(names.values()) == sorted(ref_params)  # torch's weights as initializers

    def run(graph):
        mod.zero_grad()
        ts = [tg.tensor(a.numpy(), requires_grad=True) for a in args]
        if graph:
            f = tg.function(lambda *a: tg_loss(mod(*a), weights))
            f(*ts).backward()
            out = None
        else:
            out = mod(*ts)
            tg_loss(out, weights).backward()
        return out, ts

    out, ts = run(False)
    for name, o, r in zip(["Y", "Y_h", "Y_c"], out, ref_out):
        close(o.detach().numpy(), r, rtol, "%s %s opset %d: %s" % (kind, cfg, opset, name))
    for mode in ("eager", "graph"):
        if mode == "graph":
            _, ts = run(True)
        for k, (t, r) in enumerate(zip(ts, ref_in_grads)):
            close(t.grad.numpy(), r, grad_rtol, "%s %s: d/input %d" % (mode, kind, k))
        for attr, p in mod.named_parameters():
            close(p.grad.numpy(), ref_params[names[attr]], grad_rtol,
                  "%s %s opset %d: d/%s" % (mode, kind, opset, names[attr]))


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("cfg", CONFIGS)
@pytest.mark.parametrize("kind", KINDS)
def test_against_torch(tmp_path, kind, cfg, opset):
    check(tmp_path, kind, cfg, opset, torch.float32, 1e-5, 1e-4)


@pytest.mark.parametrize("kind", KINDS)
def test_against_torch_float64(tmp_path, kind):
    check(tmp_path, kind, (2, True, True, True), 13, torch.float64, 1e-10, 1e-9)
