#!/usr/bin/env bash
# CTest onnx_export_check(_control): the models test_onnx_import exports (LeNet-5 and
# a graph of many ops), or test_onnx_control (cond and while_loop as If and
# Loop), pass onnx.checker.check_model. Skipped (exit 77)
# when PYTHON has no onnx.
#   check_export.sh PYTHON TEST_BINARY WORK_DIR [MIN_MODELS (default 2)]
set -u
py=$1 test_bin=$2 work=$3 min_models=${4:-2}
if [ ! -x "$py" ] || ! "$py" -c "import numpy as np
for a, t in (('float', float), ('int', int), ('bool', bool), ('object', object)):
    a in np.__dict__ or setattr(np, a, t)
import onnx" 2>/dev/null; then
    echo "SKIP: $py has no onnx"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work"
TG_ONNX_OUT_DIR="$work" "$test_bin" >"$work/test.log" 2>&1 || { cat "$work/test.log"; exit 1; }
exec "$py" - "$work" "$min_models" <<'PY'
import glob, sys
import numpy as np
for a, t in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    a in np.__dict__ or setattr(np, a, t)
import onnx
files = sorted(glob.glob(sys.argv[1] + "/tg_onnx_*.onnx"))
files = [f for f in files if not f.endswith("_bad.onnx")]
ok = 0
for f in files:
    m = onnx.load(f)
    onnx.checker.check_model(m, full_check=True)
    print("checked", f, "opset", m.opset_import[0].version, len(m.graph.node), "nodes")
    ok += 1
if ok < int(sys.argv[2]):
    sys.exit("expected %s exported models, found %s" % (sys.argv[2], files))
print("%d passed, 0 failed" % ok)
PY
