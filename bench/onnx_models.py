#!/usr/bin/env python3
"""tensorgraph against onnxruntime on torchvision architectures (random
weights): exports mobilenet_v2, mobilenet_v3_small and resnet18 with a
dynamic batch at the given opset (and transformer_encoder: a
torch.nn.TransformerEncoder of 3 layers, d_model 128, 4 heads, feed-forward
512, GELU, batch_first, on [batch, 64, 128]), runs `tg bench onnx` at each batch size
(2 threads) and prints its JSON line plus where tensorgraph's time goes
(the per-op spans of --profile: each node's median over the runs, summed
per op, convolutions by kind, ms per run, largest first).

    python3 bench/onnx_models.py TG [--opset 17] [--size 224] [--batches 1,8]
                                    [--models mobilenet_v2,resnet18] [--runs 20]
Needs torch and torchvision; onnxruntime's columns need node and
onnxruntime-node (scripts/install_ort.sh)."""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile


def export_transformer(path, opset):
    """MatMul/Add/LayerNormalization (its decomposition below opset 17)/
    Softmax/Erf-GELU/Transpose/Reshape, as torch.onnx writes an encoder"""
    import torch
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512,
                                             dropout=0.0, batch_first=True, activation="gelu")
    net = torch.nn.TransformerEncoder(layer, num_layers=3, enable_nested_tensor=False).eval()
    x = torch.randn(1, 64, 128)
    # exported with gradients enabled: under no_grad an eval-mode encoder takes
    # PyTorch's fused fast path, which has no ONNX form
    torch.onnx.export(net, (x,), path, opset_version=opset, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})


def export(name, path, opset, size):
    if name == "transformer_encoder":
        return export_transformer(path, opset)
    import torch
    import torchvision
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)(weights=None).eval()
    g = torch.Generator().manual_seed(1)
    for m in net.modules():  # statistics that keep the activations O(1)
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    x = torch.randn(1, 3, size, size)
    torch.onnx.export(net, (x,), path, opset_version=opset, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})


def conv_kinds(path):
    """ONNX value name -> the kind of convolution that computes it, also
    for the values of the elementwise nodes after a Conv (which the
    fusion pass folds into it): depthwise, pointwise (1x1) or kxk"""
    import onnx
    g = onnx.load(path).graph
    consumers = collections.defaultdict(list)
    for n in g.node:
        for i in n.input:
            consumers[i].append(n)
    kinds = {}
    for n in g.node:
        if n.op_type != "Conv":
            continue
        at = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        k = at.get("kernel_shape", [])
        kind = ("conv depthwise %s" % "x".join(map(str, k)) if at.get("group", 1) > 1 else
                "conv pointwise 1x1" if all(v == 1 for v in k) else
                "conv %s" % "x".join(map(str, k)))
        v = n.output[0]
        kinds[v] = kind
        while len(consumers[v]) == 1 and consumers[v][0].op_type in (
                "Relu", "Clip", "Add", "HardSigmoid", "HardSwish", "Mul", "Sigmoid"):
            v = consumers[v][0].output[0]
            kinds[v] = kind
    return kinds


def op_profile(trace, path):
    """ms per run by op (each node's median over the runs: the shared
    machine stalls single runs), convolutions by kind"""
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    kinds = conv_kinds(path)
    spans = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            spans[(e.get("cat", "?"), e["name"])].append(e["dur"] / 1000.0)
    per_op = collections.Counter()
    for (cat, name), durs in spans.items():
        durs.sort()
        base = name[:-len("/fused")] if name.endswith("/fused") else name
        label = kinds.get(base, cat) if cat in ("conv2d", "fused_epilogue") else cat
        if cat == "fused_epilogue" and label != cat:
            label += " (fused)"
        per_op[label] += durs[len(durs) // 2]
    total = sum(per_op.values())
    return [{"op": k, "ms": round(v, 3), "share": round(v / total, 3) if total else 0}
            for k, v in per_op.most_common(8)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tg")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--models",
                    default="mobilenet_v2,mobilenet_v3_small,resnet18,transformer_encoder")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tg-onnx-bench-")
    for name in a.models.split(","):
        path = os.path.join(tmp, "%s_op%d.onnx" % (name, a.opset))
        export(name, path, a.opset, a.size)
        for b in a.batches.split(","):
            trace = os.path.join(tmp, "trace.json")
            out = subprocess.run([a.tg, "bench", "onnx", path, "--batch", b, "--threads",
                                  str(a.threads), "--runs", str(a.runs), "--profile", trace],
                                 capture_output=True, text=True)
            if out.returncode:
                print(json.dumps({"model": name, "batch": int(b), "error": out.stderr.strip()}))
                continue
            r = json.loads(out.stdout)
            r.update(model=name, size=64 if name == "transformer_encoder" else a.size,
                     profile=op_profile(trace, path))
            print(json.dumps(r))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
