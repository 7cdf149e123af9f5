#!/usr/bin/env bash
# LeNet-5 on MNIST, tensorgraph vs PyTorch side by side: same model, data,
# hyperparameters and thread count. Prints each framework's JSON summary
# and a comparison line. PyTorch runs only when /usr/bin/python3 can import
# torch (Debian's python3-torch).
#   bench/lenet.sh [--epochs N] [--batch B] [--threads T] [--seed S] [--lr X]
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=1 batch=64 threads=2 seed=1 lr=0.02
while [ $# -gt 0 ]; do
    case "$1" in
        --epochs) epochs=$2; shift 2 ;; --batch) batch=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;; --seed) seed=$2; shift 2 ;;
        --lr) lr=$2; shift 2 ;;
        *) echo "bench/lenet.sh: unknown option $1" >&2; exit 1 ;;
    esac
done
[ -x build/tg ] || scripts/build.sh
args=(--epochs "$epochs" --batch "$batch" --threads "$threads" --seed "$seed" --lr "$lr" --momentum 0.9)
tg_json=$(build/tg train lenet "${args[@]}" --quiet --json | tail -1)
echo "$tg_json"
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
    echo '{"bench":"lenet","pytorch":"not installed (apt-get install python3-torch)"}'
    exit 0
fi
# OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE are set on some machines for old
# OpenBLAS builds; they slow PyTorch's BLAS down, so unset them for it.
torch_json=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/lenet_torch.py \
    --data data/mnist "${args[@]}" | tail -1)
echo "$torch_json"
/usr/bin/python3 - "$tg_json" "$torch_json" <<'PY'
import json, sys
tg, pt = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({"bench": "lenet", "epochs": tg["epochs"], "batch": tg["batch"],
                  "threads": tg["threads"],
                  "tg_seconds": tg["train_seconds"], "torch_seconds": pt["train_seconds"],
                  "time_ratio_tg_over_torch": round(tg["train_seconds"] / pt["train_seconds"], 3),
                  "tg_accuracy": tg["test_accuracy"], "torch_accuracy": pt["test_accuracy"],
                  "tg_peak_rss_mb": tg["peak_rss_mb"], "torch_peak_rss_mb": pt["peak_rss_mb"],
                  "rss_ratio_tg_over_torch": round(tg["peak_rss_mb"] / pt["peak_rss_mb"], 3)}))
PY
