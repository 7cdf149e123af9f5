#!/usr/bin/env bash
# LeNet-5 on MNIST, one epoch: examples/lenet_mnist.py (the Python front
# end, PyTorch-style) next to `tg train lenet --mode eager` with the same
# hyper-parameters (batch 64, lr 0.02, momentum 0.9, seed 1, prefetch 2) and
# threads, RUNS times each, interleaved (Python, C, Python, C, ...) so that
# both see the same load. Prints one JSON line: per-run epoch times, their
# medians, the median of the per-run ratios, the accuracies and the load
# average before and after (timings on a shared machine are noisy).
# Usage: bench/lenet_python.sh [MNIST_DIR] [THREADS] [RUNS]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-data/mnist}
threads=${2:-2}
runs=${3:-3}
build/tg data mnist --dir "$data" >/dev/null
load0=$(cut -d' ' -f1-3 /proc/loadavg)
lines=()
for ((i = 0; i < runs; i++)); do
    lines+=("$(PYTHONPATH=build/python /usr/bin/python3 examples/lenet_mnist.py --data "$data" \
               --threads "$threads" --json | tail -1)")
    lines+=("$(build/tg train lenet --mode eager --data "$data" --threads "$threads" --json \
               --quiet | tail -1)")
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/python3 - "$load0" "$load1" "${lines[@]}" <<'PY'
import json, statistics, sys
load0, load1, rows = sys.argv[1], sys.argv[2], [json.loads(a) for a in sys.argv[3:]]
py, c = rows[0::2], rows[1::2]
pt, ct = [r["epoch_seconds"] for r in py], [r["train_seconds"] for r in c]
print(json.dumps({"bench": "lenet_python_vs_c_eager", "threads": py[0]["threads"],
                  "runs": len(py), "python_epoch_s": pt, "c_eager_epoch_s": ct,
                  "python_median_s": statistics.median(pt), "c_median_s": statistics.median(ct),
                  "ratio_median": round(statistics.median(p / q for p, q in zip(pt, ct)), 3),
                  "ratio_of_medians": round(statistics.median(pt) / statistics.median(ct), 3),
                  "python_test_accuracy": py[-1]["test_accuracy"],
                  "c_test_accuracy": c[-1]["test_accuracy"],
                  "loadavg_before": load0, "loadavg_after": load1}))
PY
