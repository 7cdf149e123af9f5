#!/usr/bin/env bash
# One table, JSON lines: LeNet-5 on MNIST, one epoch, the same global batch
# (64), lr and seed, on the 2 cores of this machine spent four ways:
#   1 process x 2 threads            tg train lenet --mode eager --threads 2
#   2 processes x 1 thread           mpirun -np 2 tg train lenet --distributed
#   2 virtual devices in 1 process   tg train lenet --devices 2 (when tg has it)
#   model parallel over 2 ranks      mpirun -np 2 tg train lenet --model-parallel
#   master/worker over 2 ranks       mpirun -np 2 tg train lenet --ranks (graph mode)
# each with epoch seconds, final train loss and test accuracy; then the
# inputs of docs/DISTRIBUTED.md's scaling model: the compute seconds per
# step (1 process x 1 thread, eager) and bench_dist_allreduce on 2 ranks
# (1 float, LeNet's 61 706 parameters, 1 Mi floats). Never asserts.
#   bench/distributed.sh [--epochs N] [--limit N] [--data DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=1 limit=0 data=data/mnist
while [ $# -gt 0 ]; do
    case "$1" in
        --epochs) epochs=$2; shift 2 ;; --limit) limit=$2; shift 2 ;;
        --data) data=$2; shift 2 ;;
        *) echo "bench/distributed.sh: unknown option $1" >&2; exit 1 ;;
    esac
done
[ -x build/tg ] && [ -x build/bench_dist_allreduce ] || scripts/build.sh
mpirun=(mpirun --allow-run-as-root --oversubscribe -x TG_NUM_THREADS=1 -np 2)
common=(lenet --data "$data" --epochs "$epochs" --limit "$limit" --batch 64 --seed 1 --quiet --json)

# the summary line of tg train as a row of the table
row() { # config processes threads json
    echo "$4" | /usr/bin/python3 -c '
import json, sys
s = json.loads(sys.stdin.read())
print(json.dumps({"config": sys.argv[1], "processes": int(sys.argv[2]),
                  "threads_per_process": int(sys.argv[3]),
                  "epoch_seconds": round(s["train_seconds"] / s["epochs"], 3),
                  "final_train_loss": s["final_train_loss"], "test_accuracy": s["test_accuracy"]}))
' "$1" "$2" "$3"
}
missing() { # config why
    printf '{"config":"%s","status":"not run: %s"}\n' "$1" "$2"
}

row "1 process x 2 threads" 1 2 "$(build/tg train "${common[@]}" --mode eager --threads 2 | tail -1)"
row "2 processes x 1 thread, data parallel" 2 1 \
    "$("${mpirun[@]}" build/tg train "${common[@]}" --distributed --threads 1 | tail -1)"
if build/tg train --help 2>&1 | grep -q -- "--devices"; then
    row "2 virtual devices in 1 process" 1 2 \
        "$(build/tg train "${common[@]}" --devices 2 --threads 2 | tail -1)"
else
    missing "2 virtual devices in 1 process" "tg train has no --devices in this build"
fi
if build/tg train --help 2>&1 | grep -q -- "--model-parallel"; then
    row "model parallel over 2 ranks" 2 1 \
        "$("${mpirun[@]}" build/tg train "${common[@]}" --model-parallel --threads 1 | tail -1)"
else
    missing "model parallel over 2 ranks" "tg train has no --model-parallel in this build"
fi

if build/tg train --help 2>&1 | grep -q -- "--ranks"; then
    row "master/worker over 2 ranks (graph, placed by the cost model)" 2 1 \
        "$("${mpirun[@]}" build/tg train "${common[@]}" --ranks --threads 1 | tail -1)"
else
    missing "master/worker over 2 ranks" "tg train has no --ranks in this build"
fi

# the scaling model's inputs
one=$(build/tg train "${common[@]}" --mode eager --threads 1 | tail -1)
echo "$one" | /usr/bin/python3 -c '
import json, sys
s = json.loads(sys.stdin.read())
n = 60000 if int(sys.argv[1]) == 0 else int(sys.argv[1])
steps = -(-n // s["batch"]) * s["epochs"]
print(json.dumps({"bench": "compute_per_step", "processes": 1, "threads": 1, "batch": s["batch"],
                  "steps": steps, "seconds_per_step": s["train_seconds"] / steps}))
' "$limit"
"${mpirun[@]}" build/bench_dist_allreduce
