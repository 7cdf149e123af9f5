#!/usr/bin/env python3
"""Exports a small CNN (and an attention block, 1-D and 3-D convolutions and pools,
transposed convolutions) from PyTorch with torch.onnx.export and checks that
`tg run` (eager and graph mode) gives PyTorch's outputs and, with --grad,
PyTorch's gradients of the sum of the outputs with respect to the input
and every parameter.

    torch_compare.py path/to/tg WORK_DIR

Exits 77 (CTest's skip code) when torch or onnx is not available."""
import json
import os
import struct
import subprocess
import sys

try:
    import numpy as np
    for _alias, _type in (("float", float), ("int", int), ("bool", bool),
                          ("object", object)):
        if _alias not in np.__dict__:
            setattr(np, _alias, _type)
    import torch
    import torch.nn as nn
    import onnx  # noqa: F401  (torch.onnx.export needs it)
except Exception as e:  # pragma: no cover - depends on the machine
    print("SKIP: python3 torch/onnx not available (%s)" % e)
    sys.exit(77)

DT = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32,
      "U8": np.uint8, "BOOL": np.bool_}


def save_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        code = [k for k, v in DT.items() if v == a.dtype.type][0]
        b = a.tobytes()
        header[name] = {"dtype": code, "shape": list(a.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + b:8 + n + e],
                                  dtype=DT[info["dtype"]]).reshape(info["shape"])
    return out


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, stride=2)
        self.fc1 = nn.Linear(6 * 3 * 3, 16)
        self.fc2 = nn.Linear(16, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv1(x)))
        x = nn.functional.max_pool2d(x, 2)
        x = torch.tanh(self.conv2(x))
        x = nn.functional.avg_pool2d(x, 1)
        x = torch.flatten(x, 1)
        x = nn.functional.gelu(self.fc1(x)) if False else torch.sigmoid(self.fc1(x))
        return nn.functional.log_softmax(self.fc2(x), dim=1)


class TinyAttention(nn.Module):
    """embedding (Gather), LayerNormalization, MatMul, GELU (Erf), scaled
    softmax attention, slicing, concatenation and a mean"""
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 8)
        self.ln = nn.LayerNorm(8)
        self.qkv = nn.Linear(8, 24)
        self.out = nn.Linear(16, 3)

    def forward(self, tokens):
        h = self.ln(self.emb(tokens))
        q, k, v = self.qkv(h).split(8, dim=-1)
        a = torch.softmax(q @ k.transpose(1, 2) / 8 ** 0.5, dim=-1)
        z = torch.cat([a @ v, nn.functional.gelu(h)], dim=-1)
        return self.out(z[:, 1:, :]).mean(dim=1)


def run_tg(tg, model_path, inputs, work, tag, mode, grad=True):
    inp = os.path.join(work, "in_%s.safetensors" % tag)
    out = os.path.join(work, "out_%s_%s.safetensors" % (tag, mode))
    gpath = os.path.join(work, "grad_%s_%s.safetensors" % (tag, mode))
    save_safetensors(inp, inputs)
    cmd = [tg, "run", model_path, "--input", inp, "--output", out, "--mode", mode]
    if grad:
        cmd += ["--grad", gpath]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL tg run %s --mode %s: %s" % (tag, mode, r.stderr.strip()))
        return None, None
    return load_safetensors(out), load_safetensors(gpath) if grad else None


def attention_case(tg, work):
    torch.manual_seed(1)
    model = TinyAttention().eval()
    tokens = torch.tensor([[1, 5, 7, 2], [3, 3, 10, 0]])
    path = os.path.join(work, "attn.onnx")
    torch.onnx.export(model, (tokens,), path, input_names=["tokens"],
                      output_names=["y"], opset_version=17, do_constant_folding=False)
    y = model(tokens)
    y.sum().backward()
    ok = True
    for mode in ("eager", "graph"):
        got, grads = run_tg(tg, path, {"tokens": tokens.numpy()}, work, "attn", mode)
        if got is None:
            ok = False
            continue
        ok &= check("attention %s output" % mode, got["y"], y.detach().numpy())
        for n, p in model.named_parameters():
            if n not in grads:
                print("FAIL attention %s: no gradient for %s (have %s)" % (mode, n, sorted(grads)))
                ok = False
            else:
                ok &= check("attention %s grad %s" % (mode, n), grads[n], p.grad.numpy())
    return ok


class Conv1dNet(nn.Module):
    """1-D convolution (stride, padding, dilation, groups), transposed
    convolution with output_padding, and both 1-D pools"""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(3, 4, 3, stride=2, padding=1, dilation=1)
        self.c2 = nn.Conv1d(4, 4, 2, padding=1, dilation=2, groups=2)
        self.t1 = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)

    def forward(self, x):
        h = nn.functional.max_pool1d(torch.tanh(self.c1(x)), 2, stride=1, padding=1)
        h = torch.sigmoid(self.c2(h))
        return nn.functional.avg_pool1d(self.t1(h), 3, stride=2, padding=1,
                                        count_include_pad=False)


class ConvT2dNet(nn.Module):
    """2-D transposed convolutions: stride, padding, output_padding, groups,
    dilation, with and without bias"""
    def __init__(self):
        super().__init__()
        self.t1 = nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, output_padding=1)
        self.t2 = nn.ConvTranspose2d(4, 4, (2, 3), stride=(1, 2), padding=(0, 1), groups=2,
                                     dilation=(2, 1), bias=False)

    def forward(self, x):
        return self.t2(torch.tanh(self.t1(x)))


class Conv3dNet(nn.Module):
    """3-D convolution (stride, padding, dilation, groups), both 3-D pools
    and a 3-D transposed convolution"""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv3d(2, 4, 3, stride=(1, 2, 1), padding=1)
        self.c2 = nn.Conv3d(4, 4, 2, padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)
        self.t1 = nn.ConvTranspose3d(4, 2, 2, stride=2, padding=(1, 0, 0),
                                     output_padding=(1, 0, 1))

    def forward(self, x):
        h = nn.functional.max_pool3d(torch.tanh(self.c1(x)), 2, stride=1, padding=1)
        h = torch.sigmoid(self.c2(h))
        return nn.functional.avg_pool3d(self.t1(h), 3, stride=2, padding=1)


def model_case(tg, work, tag, model, x, opset=17):
    """model(x) exported, run by tg in both modes: output and gradients of
    its sum w.r.t. the input and every parameter"""
    torch.manual_seed(2)
    path = os.path.join(work, "%s.onnx" % tag)
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["y"],
                      opset_version=opset, do_constant_folding=False)
    xg = x.clone().requires_grad_(True)
    y = model(xg)
    y.sum().backward()
    want = {"input": xg.grad.numpy()}
    want.update({n: p.grad.numpy() for n, p in model.named_parameters()})
    ok = True
    for mode in ("eager", "graph"):
        got, grads = run_tg(tg, path, {"input": x.numpy()}, work, tag, mode)
        if got is None:
            ok = False
            continue
        ok &= check("%s %s output" % (tag, mode), got["y"], y.detach().numpy())
        for n, g in want.items():
            if n not in grads:
                print("FAIL %s %s: no gradient for %s (have %s)" % (tag, mode, n, sorted(grads)))
                ok = False
            else:
                ok &= check("%s %s grad %s" % (tag, mode, n), grads[n], g)
    return ok


def conv_cases(tg, work):
    torch.manual_seed(3)
    ok = model_case(tg, work, "conv1d", Conv1dNet().eval(), torch.randn(2, 3, 17))
    ok &= model_case(tg, work, "conv1d_13", Conv1dNet().eval(), torch.randn(2, 3, 12), 13)
    ok &= model_case(tg, work, "convt2d", ConvT2dNet().eval(), torch.randn(2, 2, 4, 5))
    ok &= model_case(tg, work, "conv3d", Conv3dNet().eval(), torch.randn(2, 2, 5, 6, 5))
    return ok


class RecurrentNet(nn.Module):
    """torch.nn.LSTM/GRU/RNN (exported as ONNX's LSTM/GRU/RNN nodes): Y and
    the final states, flattened into one output"""
    def __init__(self, cls, **kw):
        super().__init__()
        self.rnn = cls(3, 4, **kw)

    def forward(self, x):
        y, state = self.rnn(x)
        states = state if isinstance(state, tuple) else (state,)
        return torch.cat([y.flatten()] + [s.flatten() for s in states])


def recurrent_cases(tg, work):
    """tg run --grad on recurrent nodes (tests/python/test_onnx_rnn_torch.py
    covers more configurations through the Python front end)"""
    torch.manual_seed(4)
    ok = model_case(tg, work, "lstm", RecurrentNet(nn.LSTM, num_layers=2, bidirectional=True,
                                                   batch_first=True).eval(),
                    torch.randn(2, 5, 3))
    ok &= model_case(tg, work, "gru_11", RecurrentNet(nn.GRU, bidirectional=True).eval(),
                     torch.randn(5, 2, 3), 11)
    ok &= model_case(tg, work, "rnn_relu_9", RecurrentNet(nn.RNN, nonlinearity="relu").eval(),
                     torch.randn(5, 2, 3), 9)
    return ok


def check(name, got, want, rtol=1e-4, atol=1e-5):
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
        err = np.max(np.abs(got - want)) if got.shape == want.shape else "shape"
        print("FAIL %s: max abs diff %s (shapes %s vs %s)" % (name, err, got.shape,
                                                              want.shape))
        return False
    return True


def main():
    tg, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    model = SmallCNN().eval()
    with torch.no_grad():  # non-trivial running statistics
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 1, 14, 14)
    onnx_path = os.path.join(work, "cnn.onnx")
    torch.onnx.export(model, (x,), onnx_path, input_names=["input"],
                      output_names=["logp"], opset_version=13,
                      do_constant_folding=False,
                      dynamic_axes={"input": {0: "batch"}, "logp": {0: "batch"}})
    xg = x.clone().requires_grad_(True)
    y = model(xg)
    y.sum().backward()
    want_grads = {"input": xg.grad.numpy()}
    for n, p in model.named_parameters():
        want_grads[n] = p.grad.numpy()
    save_safetensors(os.path.join(work, "in.safetensors"), {"input": x.numpy()})
    ok = True
    for mode in ("eager", "graph"):
        out = os.path.join(work, "out_%s.safetensors" % mode)
        grad = os.path.join(work, "grad_%s.safetensors" % mode)
        r = subprocess.run([tg, "run", onnx_path, "--input",
                            os.path.join(work, "in.safetensors"), "--output", out,
                            "--grad", grad, "--mode", mode],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL tg run --mode %s: %s" % (mode, r.stderr.strip()))
            ok = False
            continue
        got = load_safetensors(out)
        ok &= check("%s output" % mode, got["logp"], y.detach().numpy())
        grads = load_safetensors(grad)
        # the exporter folds eval-mode BatchNorm into conv1 (new initializer
        # names): those parameters have no ONNX counterpart to compare
        compared = 0
        for n, g in want_grads.items():
            if n in grads:
                ok &= check("%s grad %s" % (mode, n), grads[n], g)
                compared += 1
            elif not (n.startswith("conv1.") or n.startswith("bn.")):
                print("FAIL %s: no gradient for %s (have %s)" % (mode, n, sorted(grads)))
                ok = False
        if compared < 7:
            print("FAIL %s: only %d gradients compared" % (mode, compared))
            ok = False
    # a second batch size through the symbolic batch dim
    x3 = torch.randn(3, 1, 14, 14)
    save_safetensors(os.path.join(work, "in3.safetensors"), {"input": x3.numpy()})
    out3 = os.path.join(work, "out3.safetensors")
    r = subprocess.run([tg, "run", onnx_path, "--input",
                        os.path.join(work, "in3.safetensors"), "--output", out3],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL tg run batch 3: %s" % r.stderr.strip())
        ok = False
    else:
        with torch.no_grad():
            ok &= check("batch 3 output", load_safetensors(out3)["logp"],
                        model(x3).numpy())
    ok &= attention_case(tg, work)
    ok &= conv_cases(tg, work)
    ok &= recurrent_cases(tg, work)
    print("torch comparison: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
