#!/usr/bin/env bash
# LeNet-5 on MNIST, one epoch: examples/lenet_mnist.py (the Python front
# end, PyTorch-style) next to `tg train lenet --mode eager` with the same
# hyper-parameters (batch 64, lr 0.02, momentum 0.9, seed 1, prefetch 2) and
# threads. Prints one JSON line with both epoch times and accuracies and
# their ratio. Timings on a shared machine are noisy: run it a few times.
# Usage: bench/lenet_python.sh [MNIST_DIR] [THREADS]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-data/mnist}
threads=${2:-2}
build/tg data mnist --dir "$data" >/dev/null
py=$(PYTHONPATH=build/python /usr/bin/python3 examples/lenet_mnist.py --data "$data" \
     --threads "$threads" --json | tail -1)
c=$(build/tg train lenet --mode eager --data "$data" --threads "$threads" --json --quiet | tail -1)
/usr/bin/python3 - "$py" "$c" <<'PY'
import json, sys
py, c = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({"bench": "lenet_python_vs_c_eager", "threads": py["threads"],
                  "python_epoch_s": py["epoch_seconds"], "c_eager_epoch_s": c["train_seconds"],
                  "ratio": round(py["epoch_seconds"] / c["train_seconds"], 3),
                  "python_test_accuracy": py["test_accuracy"],
                  "c_test_accuracy": c["test_accuracy"]}))
PY
