#!/usr/bin/env bash
# Memory-bound kernels at each instruction-set level the library dispatches
# to (AVX-512, AVX2, the x86-64 baseline; TG_CPU lowers the run-time choice,
# a level the CPU lacks is skipped): build/bench_pool's pooling and
# reduction ops and build/bench_memory_ops' elementwise ones and layer norm
# (--only: an op of either; a prefix of bench_memory_ops' names), ROUNDS
# rounds with the levels (and the builds, when several are given: before
# and after a change) interleaved (the machine is shared: each sees the
# same load). Prints each run's JSON lines, then one summary line per
# build, op, shape, level and threads: the median over rounds of us, GB/s,
# the copy's GB/s and of_copy (the op's share of a plain copy of the same
# bytes over the same threads, bench/copy_probe.h).
# Usage: bench/isa_levels.sh [--build DIR]... [--rounds N] [--threads T] [--only OP]
#   (after scripts/build.sh; --threads 1 or 2, default both)
set -euo pipefail
cd "$(dirname "$0")/.."
builds=() rounds=3 threads= only=
while [ $# -gt 0 ]; do
    case "$1" in
    --build) builds+=("$2"); shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "isa_levels.sh: unknown option $1 (--build DIR, --rounds N, --threads T, --only OP)" >&2
       exit 2 ;;
    esac
done
[ ${#builds[@]} -gt 0 ] || builds=(build)
for b in "${builds[@]}"; do
    [ -x "$b/bench_pool" ] || { echo "isa_levels.sh: no $b/bench_pool (build first)" >&2; exit 1; }
done
# a level the CPU lacks runs the CPU's best: the lines say which ran
# ("isa"), and the summary groups by it
levels=(avx512 avx2 generic)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
args=(--samples 7)
[ -n "$threads" ] && args+=(--threads "$threads")
[ -n "$only" ] && args+=(--only "$only")
margs=(--samples 7) # bench_memory_ops: --only is a prefix of its op names
[ -n "$threads" ] && margs+=(--threads "$threads")
[ -n "$only" ] && margs+=(--only "$only")
tag() { sed "s|^{|{\"build\":\"$1\",|"; }
for ((r = 0; r < rounds; r++)); do
    for l in "${levels[@]}"; do
        for b in "${builds[@]}"; do
            TG_CPU=$l "$b/bench_pool" "${args[@]}" | tag "$b" | tee -a "$out"
            if [ -x "$b/bench_memory_ops" ]; then
                TG_CPU=$l "$b/bench_memory_ops" "${margs[@]}" | tag "$b" | tee -a "$out"
            fi
        done
    done
done
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "isa" not in d:  # a bench_memory_ops from before it said its level
        continue
    key = (d["build"], d["op"], tuple(d.get("shape", [])), d["isa"], d["threads"])
    runs.setdefault(key, []).append(d)
for (build, op, shape, isa, threads), ds in runs.items():
    med = lambda k: statistics.median(d[k] for d in ds)
    gbs = "gb_s" if "gb_s" in ds[0] else "gbps"
    cgbs = "copy_gb_s" if "copy_gb_s" in ds[0] else "copy_gbps"
    print(json.dumps({"bench": "isa_levels", "build": build, "op": op, "shape": list(shape), "isa": isa,
                      "threads": threads, "rounds": len(ds), "us": round(med("us"), 2),
                      "gb_s": round(med(gbs), 1), "copy_gb_s": round(med(cgbs), 1),
                      "of_copy": round(med("of_copy"), 2)}))
PY
