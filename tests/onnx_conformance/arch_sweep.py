#!/usr/bin/env python3
"""Opset sweep over published architectures (arch_models.py): each model
exported by torch.onnx at each opset, imported by tensorgraph and run four
ways -- Python eager (tg.onnx.load), Python graph (inside tg.function),
`tg run --mode eager` and `tg run --mode graph` -- and, with --ort,
onnxruntime-node -- each compared with torch: the max error relative to
the largest output (over all outputs) must be < 1e-4. Prints one line per
(model, opset, mode) and a table at the end.

    arch_sweep.py --tg build/tg [--models a,b] [--opsets 9,11,13,17]
                  [--ort build/ort] [--work DIR] [--variant fold|nofold|dynamic]

Each (model, opset) runs in a child process, so a crash is reported as a
failure of that case only."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from urllib.parse import quote

HERE = os.path.dirname(os.path.abspath(__file__))
TOL = 1e-4
ORT_JS = r"""
const fs = require('fs');
const ort = require('onnxruntime-node');
(async () => {
  const [model, spec, outDir] = process.argv.slice(2);
  const feeds = {};
  for (const s of JSON.parse(fs.readFileSync(spec))) {
    const b = fs.readFileSync(s.bin);
    feeds[s.name] = new ort.Tensor('float32', new Float32Array(b.buffer, b.byteOffset, b.length / 4), s.shape);
  }
  const sess = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, executionProviders: ['cpu']});
  const out = await sess.run(feeds);
  const dims = {};
  for (const n of sess.outputNames) {
    const d = out[n].data;
    fs.writeFileSync(outDir + '/' + encodeURIComponent(n) + '.bin', Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    dims[n] = [out[n].type, out[n].dims];
  }
  console.log(JSON.stringify(dims));
})().catch((e) => { console.error(String(e)); process.exit(1); });
"""


def rel(got, want):
    import numpy as np
    worst = 0.0
    scale = max([float(np.abs(w).max()) for w in want if w.size] or [1.0])
    for g, w in zip(got, want):
        g = np.asarray(g)
        if g.shape != w.shape:
            raise ValueError("shape %s, torch %s" % (g.shape, w.shape))
        if w.size:
            worst = max(worst, float(np.abs(g.astype(np.float64) - w).max()))
    return worst / max(scale, 1e-30)


def matched(got, want):
    """detections (boxes, scores, labels) of got reordered to want's: each
    of want's rows takes the nearest unused row of got, so two near-equal
    scores in either order (rounding decides) compare as equal"""
    import numpy as np
    feats = [np.concatenate([np.asarray(o[0], np.float64), np.asarray(o[1], np.float64)[:, None],
                             1e3 * np.asarray(o[2], np.float64)[:, None]], 1) for o in (got, want)]
    if feats[0].shape != feats[1].shape:
        return got
    free, order = list(range(len(feats[0]))), []
    for row in feats[1]:
        k = min(free, key=lambda j: np.abs(feats[0][j] - row).max())
        free.remove(k)
        order.append(k)
    return [np.asarray(o)[order] for o in got]


def one(name, opset, work, tgbin, ortdir, variant):
    """runs one (model, opset); prints one JSON line per mode. variant:
    'fold' (torch.onnx's default), 'nofold' (do_constant_folding=False:
    the shape arithmetic stays in the graph) or 'dynamic' (every input's
    dim 0 symbolic, run with that dim doubled)"""
    import numpy as np
    import torch
    sys.path.insert(0, HERE)
    from arch_models import MODELS_ALL as MODELS
    from torch_compare import save_safetensors, load_safetensors

    def report(mode, ok, err=None, msg=""):
        print(json.dumps({"model": name, "opset": opset, "mode": mode, "ok": ok,
                          "err": err, "msg": msg[:400]}), flush=True)

    net, args, in_names, out_names = MODELS[name]()
    kw = {"do_constant_folding": variant != "nofold"}
    if variant == "dynamic":
        kw["dynamic_axes"] = {n: {0: "%s_d0" % n} for n in in_names}
    if variant == "dynamic":
        g = torch.Generator().manual_seed(9)
        run_args = tuple(torch.randn((2 * a.shape[0],) + tuple(a.shape[1:]), generator=g)
                         for a in args)
    else:
        run_args = args
    with torch.no_grad():
        ref = net(*run_args)
    ref = [r.numpy() for r in (ref if isinstance(ref, tuple) else (ref,))]
    tag = "%s_%d_%s" % (name, opset, variant)
    path = os.path.join(work, tag + ".onnx")
    t0 = time.time()
    try:
        torch.onnx.export(net, args, path, opset_version=opset, input_names=in_names,
                          output_names=out_names, **kw)
    except Exception as e:  # noqa: BLE001 - reported
        report("export", False, msg="%s: %s" % (type(e).__name__, str(e).splitlines()[0]))
        return
    report("export", True, msg="%.1fs" % (time.time() - t0))
    inputs = {n: a.numpy() for n, a in zip(in_names, run_args)}

    outs = {}

    detection = out_names == ["boxes", "scores", "labels"]

    def check(mode, fn):
        try:
            got = outs[mode] = fn()
            if detection:
                got = outs[mode] = matched(got, ref)
            e = rel(got, ref)
            report(mode, e < TOL, e)
        except Exception as ex:  # noqa: BLE001 - reported
            report(mode, False, msg="%s: %s" % (type(ex).__name__, str(ex).strip()))

    import tensorgraph as tg

    def py(graph):
        m = tg.onnx.load(path)
        ts = [tg.tensor(inputs[n]) for n in in_names]
        with tg.no_grad():
            out = tg.function(lambda *a: m(*a))(*ts) if graph else m(*ts)
        out = out if isinstance(out, tuple) else (out,)
        return [o.numpy() for o in out]

    check("py_eager", lambda: py(False))
    check("py_graph", lambda: py(True))
    inp = os.path.join(work, tag + "_in.safetensors")
    save_safetensors(inp, inputs)

    def c(mode):
        out = os.path.join(work, "%s_%s.safetensors" % (tag, mode))
        r = subprocess.run([tgbin, "run", path, "--input", inp, "--output", out, "--mode", mode],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("exit %d: %s" % (r.returncode, r.stderr.strip()))
        got = load_safetensors(out)
        return [got[n] for n in out_names]

    check("c_eager", lambda: c("eager"))
    check("c_graph", lambda: c("graph"))
    if ortdir:
        def ort():
            spec = []
            for n, a in inputs.items():
                b = os.path.join(work, "%s_%s.bin" % (tag, n))
                a.astype(np.float32).tofile(b)
                spec.append({"name": n, "shape": list(a.shape), "bin": b})
            sp = os.path.join(work, tag + "_spec.json")
            with open(sp, "w") as f:
                json.dump(spec, f)
            js = os.path.join(work, "ort_run.js")
            with open(js, "w") as f:
                f.write(ORT_JS)
            od = os.path.join(work, tag + "_ort")
            os.makedirs(od, exist_ok=True)
            r = subprocess.run(["node", js, path, sp, od], capture_output=True, text=True,
                               env=dict(os.environ, NODE_PATH=os.path.join(ortdir, "node_modules")))
            if r.returncode != 0:
                raise RuntimeError(r.stderr.strip())
            dims = json.loads(r.stdout)
            types = {"float32": np.float32, "int64": np.int64, "int32": np.int32}
            return [np.fromfile(os.path.join(od, quote(n, safe="") + ".bin"), types[dims[n][0]])
                    .reshape(dims[n][1]) for n in out_names]
        check("ort", ort)
        # tensorgraph against onnxruntime: where the export computes
        # something else than torch, do the two agree on the ONNX model?
        mine = outs.get("c_graph", outs.get("py_eager"))
        if "ort" in outs and mine is not None:
            try:
                e = rel(matched(mine, outs["ort"]) if detection else mine, outs["ort"])
                report("tg~ort", e < TOL, e)
            except ValueError as ex:
                report("tg~ort", False, msg=str(ex))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tg", required=True)
    ap.add_argument("--models")
    ap.add_argument("--opsets", default="9,11,13,17")
    ap.add_argument("--ort")
    ap.add_argument("--work")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--one", nargs=2)
    ap.add_argument("--variant", default="fold", choices=["fold", "nofold", "dynamic"])
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="arch_sweep_")
    os.makedirs(work, exist_ok=True)
    if a.one:
        one(a.one[0], int(a.one[1]), work, a.tg, a.ort, a.variant)
        return 0
    sys.path.insert(0, HERE)
    from arch_models import MODELS_ALL as MODELS
    names = a.models.split(",") if a.models else list(MODELS)
    opsets = [int(o) for o in a.opsets.split(",")]
    modes = ["export", "py_eager", "py_graph", "c_eager", "c_graph"] + \
        (["ort", "tg~ort"] if a.ort else [])
    table = {}
    for name in names:
        for opset in opsets:
            t0 = time.time()
            cmd = [sys.executable, os.path.abspath(__file__), "--tg", a.tg, "--work", work,
                   "--variant", a.variant, "--one", name, str(opset)] + (["--ort", a.ort] if a.ort else [])
            seen = {}
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
                out, rc, tail = r.stdout, r.returncode, r.stderr.strip()[-300:]
            except subprocess.TimeoutExpired as e:
                out, rc, tail = (e.stdout or b"").decode(), "timeout", ""
            for line in out.splitlines():
                if line.startswith("{"):
                    d = json.loads(line)
                    seen[d["mode"]] = d
            for mode in modes:
                d = seen.get(mode)
                if d is None and (mode == "tg~ort" or "export" in seen and
                                  not seen["export"]["ok"]):
                    continue
                if d is None:
                    d = {"ok": False, "err": None, "msg": "child died (%s): %s" % (rc, tail)}
                table[(name, opset, mode)] = d
                err = "" if d["err"] is None else "%.2e" % d["err"]
                print("%-40s %2d %-8s %s %s %s" % (name, opset, mode, "PASS" if d["ok"] else
                                                   "FAIL", err, d["msg"]), flush=True)
            print("   (%.1fs)" % (time.time() - t0), flush=True)
    print("\nsummary (model: opset -> ok modes / all)")
    for name in names:
        cells = []
        for opset in opsets:
            ds = [table[k] for k in table if k[0] == name and k[1] == opset]
            cells.append("%d:%d/%d" % (opset, sum(d["ok"] for d in ds), len(ds)))
        print("%-40s %s" % (name, "  ".join(cells)))
    return 0 if all(d["ok"] for d in table.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
