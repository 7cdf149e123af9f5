#!/usr/bin/env bash
# LeNet-5 on MNIST, one epoch (batch 64, lr 0.02, momentum 0.9, seed 1),
# three ways side by side: graph mode at optimization level 0 (the graph as
# built), graph mode at level 2 (the default: fusion, docs/PASSES.md) and
# eager mode, RUNS times each, interleaved (level 0, level 2, eager, ...)
# so that all three see the same load. Prints one JSON line per run (the
# three epoch times and final losses) and a summary line: medians, the
# median of the per-run ratios to eager, and the load average before and
# after (the machine is shared: single runs are noise).
# Usage: bench/lenet_graph_levels.sh [MNIST_DIR] [THREADS] [RUNS] [LIMIT]
#   (after scripts/build.sh; LIMIT > 0 trains on the first LIMIT images only)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-data/mnist}
threads=${2:-2}
runs=${3:-3}
limit=${4:-0}
build/tg data mnist --dir "$data" >/dev/null
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# the built-in GEMM for all three: a GEMM chosen per process by timing
# could differ between them, and with it the losses' last bits
export TG_GEMM=${TG_GEMM:-builtin}
train() { # MODE LEVEL
    TG_OPT_LEVEL=$2 build/tg train lenet --mode "$1" --data "$data" --epochs 1 --batch 64 \
        --threads "$threads" --seed 1 --limit "$limit" --json --quiet | tail -1
}
rows=()
for ((i = 0; i < runs; i++)); do
    l0=$(train graph 0)
    l2=$(train graph 2)
    ea=$(train eager 2)
    rows+=("$l0" "$l2" "$ea")
    /usr/bin/python3 - "$i" "$l0" "$l2" "$ea" <<'PY'
import json, sys
i, (l0, l2, ea) = int(sys.argv[1]), [json.loads(a) for a in sys.argv[2:]]
print(json.dumps({"bench": "lenet_graph_levels", "run": i,
                  "graph_level0_s": l0["train_seconds"], "graph_level2_s": l2["train_seconds"],
                  "eager_s": ea["train_seconds"],
                  "final_train_loss": [l0["final_train_loss"], l2["final_train_loss"], ea["final_train_loss"]]}))
PY
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/python3 - "$load0" "$load1" "${rows[@]}" <<'PY'
import json, statistics, sys
load0, load1, rows = sys.argv[1], sys.argv[2], [json.loads(a) for a in sys.argv[3:]]
l0 = [r["train_seconds"] for r in rows[0::3]]
l2 = [r["train_seconds"] for r in rows[1::3]]
ea = [r["train_seconds"] for r in rows[2::3]]
med = statistics.median
print(json.dumps({"bench": "lenet_graph_levels", "threads": rows[0].get("threads"),
                  "runs": len(ea), "graph_level0_median_s": med(l0),
                  "graph_level2_median_s": med(l2), "eager_median_s": med(ea),
                  "level2_over_eager_median": round(med(a / b for a, b in zip(l2, ea)), 3),
                  "level0_over_eager_median": round(med(a / b for a, b in zip(l0, ea)), 3),
                  "level2_over_level0_median": round(med(a / b for a, b in zip(l2, l0)), 3),
                  "loadavg_before": load0, "loadavg_after": load1}))
PY
