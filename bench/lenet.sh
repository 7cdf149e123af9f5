#!/usr/bin/env bash
# LeNet-5 on MNIST, tensorgraph vs PyTorch side by side: same model, data,
# hyperparameters and thread count. Prints each framework's JSON summary
# and a comparison line: training time and its ratio, the epoch's
# effective GFLOP/s next to this machine's measured float32 GEMM peak
# (bench_gemm, 1024^3 at the same threads), and inference throughput on
# the 10 000 test images (batches of 1000; tg eval on the trained
# checkpoint, best of 3, against PyTorch's best of 3). PyTorch runs only
# when /usr/bin/python3 can import torch (Debian's python3-torch).
# --isa avx2 runs both as an AVX2 machine would on an AVX-512 one:
# tensorgraph with TG_CPU=avx2, PyTorch with ATEN_CPU_CAPABILITY=avx2 and
# DNNL_MAX_CPU_ISA=AVX2, and OpenBLAS (either's) with OPENBLAS_CORETYPE=Haswell.
#   bench/lenet.sh [--epochs N] [--batch B] [--threads T] [--seed S] [--lr X]
#                  [--mode graph|eager] [--data DIR] [--isa avx2]
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=1 batch=64 threads=2 seed=1 lr=0.02 mode=graph data=data/mnist isa=
while [ $# -gt 0 ]; do
    case "$1" in
        --epochs) epochs=$2; shift 2 ;; --batch) batch=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;; --seed) seed=$2; shift 2 ;;
        --lr) lr=$2; shift 2 ;; --mode) mode=$2; shift 2 ;;
        --data) data=$2; shift 2 ;; --isa) isa=$2; shift 2 ;;
        *) echo "bench/lenet.sh: unknown option $1" >&2; exit 1 ;;
    esac
done
[ -x build/tg ] && [ -x build/bench_gemm ] || scripts/build.sh
torch_isa=()
case "$isa" in
    "") ;;
    avx2) export TG_CPU=avx2 OPENBLAS_CORETYPE=Haswell
          torch_isa=(ATEN_CPU_CAPABILITY=avx2 DNNL_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell) ;;
    *) echo "bench/lenet.sh: --isa takes avx2 (the CPU's best without it)" >&2; exit 1 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(--epochs "$epochs" --batch "$batch" --threads "$threads" --seed "$seed" --lr "$lr" --momentum 0.9)
tg_json=$(build/tg train lenet "${args[@]}" --mode "$mode" --data "$data" --quiet --json \
    --save "$tmp/lenet.st" | tail -1)
echo "$tg_json"
eval_json=$(for _ in 1 2 3; do
    build/tg eval lenet --load "$tmp/lenet.st" --data "$data" --threads "$threads" --json
done | sort -t: -k5 -g | tail -1)
echo "$eval_json"
peak_json=$(build/bench_gemm --quick --only square1024 | grep '"sgemm-summary"' -v |
    grep "\"threads\":$threads," | grep '"impl":"chosen"' | tail -1)
echo "$peak_json"
torch_json='{}'
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    # OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE are set on some machines for old
    # OpenBLAS builds; they slow PyTorch's BLAS down, so unset them for it.
    torch_json=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "${torch_isa[@]}" /usr/bin/python3 \
        bench/lenet_torch.py --data "$data" "${args[@]}" | tail -1)
    echo "$torch_json"
else
    echo '{"bench":"lenet","pytorch":"not installed (apt-get install python3-torch)"}'
fi
/usr/bin/python3 - "$tg_json" "$eval_json" "$peak_json" "$torch_json" <<'PY'
import json, os, sys
tg, ev, peak, pt = (json.loads(a) for a in sys.argv[1:5])
# multiply-adds x 2 per image: forward of conv1, conv2, fc1-3, and backward
# = 2 x forward less conv1's input gradient, which training never needs
fwd = 2 * (6 * 28 * 28 * 25 + 16 * 10 * 10 * 150 + 400 * 120 + 120 * 84 + 84 * 10)
flop = (3 * fwd - 2 * 6 * 28 * 28 * 25) * 60000 * tg["epochs"]
out = {"bench": "lenet", "isa": os.environ.get("TG_CPU", "native"), "mode": tg["mode"], "epochs": tg["epochs"], "batch": tg["batch"],
       "threads": tg["threads"], "tg_seconds": tg["train_seconds"],
       "tg_accuracy": tg["test_accuracy"], "epoch_gflop": round(flop / 1e9, 1),
       "tg_gflops": round(flop / tg["train_seconds"] / 1e9, 1),
       "sgemm_peak_gflops": peak.get("gflops"),
       "tg_eval_images_per_second": ev.get("images_per_second")}
if peak.get("gflops"):
    out["share_of_peak"] = round(out["tg_gflops"] / peak["gflops"], 3)
if "train_seconds" in pt:
    out.update({"torch_seconds": pt["train_seconds"], "torch_accuracy": pt["test_accuracy"],
                "time_ratio_tg_over_torch": round(tg["train_seconds"] / pt["train_seconds"], 3),
                "tg_peak_rss_mb": tg["peak_rss_mb"], "torch_peak_rss_mb": pt["peak_rss_mb"]})
    if pt.get("eval_images_per_second") and ev.get("images_per_second"):
        out["torch_eval_images_per_second"] = pt["eval_images_per_second"]
        out["eval_ratio_tg_over_torch"] = round(
            ev["images_per_second"] / pt["eval_images_per_second"], 2)
print(json.dumps(out))
PY
