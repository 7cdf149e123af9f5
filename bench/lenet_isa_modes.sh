#!/usr/bin/env bash
# LeNet-5 training time per instruction-set level and execution mode:
# `tg train lenet --epochs 1 --limit LIMIT --threads T --seed 1` in eager
# mode and in graph mode at optimization levels 0 and 2 (TG_OPT_LEVEL), at
# each level of LEVELS (TG_CPU: native = unset, the CPU's best; avx2;
# generic), for each build given (several: before/after), ROUNDS rounds
# with everything interleaved inside a round (the machine is shared).
# Prints one JSON line per run (train_seconds, train_cpu_seconds: the
# process's CPU time in the training loops, final loss) and, at the end,
# one per build, level and mode with the medians over rounds. With
# --threads 1 the CPU seconds are the work itself and the steadiest
# comparison on a shared machine (wall time there swings 2-3x between runs).
# Usage: bench/lenet_isa_modes.sh [--build DIR]... [--rounds N] [--limit N]
#          [--threads T] [--levels "native avx2 generic"] [--data DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
builds=() rounds=3 limit=6400 threads=2 levels="native avx2" data=data/mnist
while [ $# -gt 0 ]; do
    case "$1" in
    --build) builds+=("$2"); shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --levels) levels=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    *) echo "lenet_isa_modes.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ ${#builds[@]} -gt 0 ] || builds=(build)
"${builds[0]}/tg" data mnist --dir "$data" >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 0; r < rounds; r++)); do
    for level in $levels; do
        for mode in eager graph0 graph2; do
            for b in "${builds[@]}"; do
                m=${mode%[02]} opt=${mode#graph}
                [ "$mode" = eager ] && opt=2
                cpu=(-u TG_CPU)
                [ "$level" != native ] && cpu=(TG_CPU="$level")
                line=$(env "${cpu[@]}" TG_OPT_LEVEL="$opt" "$b/tg" train lenet --mode "$m" --data "$data" --epochs 1 --limit "$limit" \
                       --threads "$threads" --seed 1 --json --quiet | tail -1)
                /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1])
print(json.dumps({"bench": "lenet_isa_modes", "build": sys.argv[2], "level": sys.argv[3],
                  "mode": sys.argv[4], "round": int(sys.argv[5]), "train_seconds": d["train_seconds"],
                  "train_cpu_seconds": d.get("train_cpu_seconds"), "loss": d["epoch_losses"][-1]}))' "$line" "$b" "$level" "$mode" "$r" |
                    tee -a "$out"
            done
        done
    done
done
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    runs.setdefault((d["build"], d["level"], d["mode"]), []).append(d)
for (b, level, mode), ds in runs.items():
    print(json.dumps({"bench": "lenet_isa_modes", "summary": True, "build": b, "level": level,
                      "mode": mode, "rounds": len(ds),
                      "median_s": round(statistics.median(d["train_seconds"] for d in ds), 3),
                      "runs_s": [d["train_seconds"] for d in ds],
                      "median_cpu_s": (round(statistics.median(d["train_cpu_seconds"] for d in ds), 3)
                                       if all(d["train_cpu_seconds"] is not None for d in ds) else None),
                      "losses": sorted({d["loss"] for d in ds})}))
PY
