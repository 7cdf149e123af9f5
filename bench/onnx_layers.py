#!/usr/bin/env python3
"""ResNet-18's convolution layers one at a time against onnxruntime: each
layer is written as a model of one Conv (random frozen weights and bias)
and a Relu, and `tg bench onnx` times it (with onnxruntime's time beside
it when node and onnxruntime-node are present, scripts/install_ort.sh).
One JSON line per layer, then a line that weighs the layers by how often
ResNet-18 has them. Where a whole model is slower than onnxruntime, this
says which layers make the difference.

    /usr/bin/python3 bench/onnx_layers.py TG [--threads 1] [--batch 1] [--runs 50]
                                         [--only l4_3x3,l4_3x3s2] [--dir DIR]
Needs the onnx package (Debian's python3-onnx) and numpy."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# name, in channels, input size, out channels, kernel, stride, count in ResNet-18
LAYERS = [("stem7x7s2", 3, 224, 64, 7, 2, 1), ("l1_3x3", 64, 56, 64, 3, 1, 4),
          ("l2_3x3s2", 64, 56, 128, 3, 2, 1), ("l2_down1x1s2", 64, 56, 128, 1, 2, 1),
          ("l2_3x3", 128, 28, 128, 3, 1, 3), ("l3_3x3s2", 128, 28, 256, 3, 2, 1),
          ("l3_down1x1s2", 128, 28, 256, 1, 2, 1), ("l3_3x3", 256, 14, 256, 3, 1, 3),
          ("l4_3x3s2", 256, 14, 512, 3, 2, 1), ("l4_down1x1s2", 256, 14, 512, 1, 2, 1),
          ("l4_3x3", 512, 7, 512, 3, 1, 3)]


def write_layer(path, c, hw, o, k, stride):
    """Conv(pads k // 2, the given stride) + Relu on [N, c, hw, hw]"""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((o, c, k, k)) * (2.0 / (c * k * k)) ** 0.5).astype(np.float32)
    b = (rng.standard_normal(o) * 0.1).astype(np.float32)
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k],
                            strides=[stride, stride], pads=[k // 2] * 4)
    relu = helper.make_node("Relu", ["c"], ["y"])
    graph = helper.make_graph(
        [conv, relu], "layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", c, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tg")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--only")
    ap.add_argument("--dir", help="keep the layer models here (default: a temporary folder)")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    folder = a.dir or tempfile.mkdtemp()
    os.makedirs(folder, exist_ok=True)
    total = {"tg_ms": 0.0, "ort_ms": 0.0}
    for name, c, hw, o, k, stride, count in LAYERS:
        if only and name not in only:
            continue
        path = os.path.join(folder, name + ".onnx")
        if not os.path.exists(path):
            write_layer(path, c, hw, o, k, stride)
        out = subprocess.run([a.tg, "bench", "onnx", path, "--batch", str(a.batch),
                              "--threads", str(a.threads), "--runs", str(a.runs)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"onnx_layers: tg bench onnx {path} failed: {out.stderr.strip()}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        line = {"bench": "onnx_layer", "layer": name, "count": count, "batch": a.batch,
                "threads": a.threads, "tg_ms": r["tg_ms"], "ort_ms": r.get("ort_ms"),
                "ratio": r.get("ratio"), "max_diff": r.get("max_diff")}
        print(json.dumps(line), flush=True)
        total["tg_ms"] += count * r["tg_ms"]
        if r.get("ort_ms") is not None:
            total["ort_ms"] += count * r["ort_ms"]
    ratio = total["tg_ms"] / total["ort_ms"] if total["ort_ms"] else None
    print(json.dumps({"bench": "onnx_layer", "what": "resnet18_convs", "batch": a.batch,
                      "threads": a.threads, "tg_ms": round(total["tg_ms"], 3),
                      "ort_ms": round(total["ort_ms"], 3) or None,
                      "ratio": round(ratio, 3) if ratio else None}))


if __name__ == "__main__":
    main()
