#!/usr/bin/env bash
# Instructions per call of build/bench_pool's pooling ops at each
# instruction-set level valgrind runs (avx2 and generic: valgrind does not
# decode AVX-512), for before/after comparisons on a shared machine where
# times swing: callgrind counts the instructions of bench_pool's run(), one
# op call, over --calls calls (plus the untimed warm-up call).
# Usage: bench/pool_callgrind.sh [--build DIR]... [--calls N] [--ops "OP ..."]
set -euo pipefail
cd "$(dirname "$0")/.."
builds=() calls=5
ops="max_pool2d max_pool2d_grad max_pool2d_compact max_pool2d_compact_grad avg_pool2d avg_pool2d_grad"
while [ $# -gt 0 ]; do
    case "$1" in
    --build) builds+=("$2"); shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    *) echo "pool_callgrind.sh: unknown option $1 (--build DIR, --calls N, --ops LIST)" >&2; exit 2 ;;
    esac
done
[ ${#builds[@]} -gt 0 ] || builds=(build)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for op in $ops; do
    for shape in 0 1; do
        for isa in avx2 generic; do
            for b in "${builds[@]}"; do
                TG_CPU=$isa valgrind --tool=callgrind --callgrind-out-file="$out" \
                    --toggle-collect=run "$b/bench_pool" --only "$op" --shape "$shape" \
                    --threads 1 --calls "$calls" >/dev/null 2>&1
                ir=$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
                echo "{\"bench\":\"pool_callgrind\",\"build\":\"$b\",\"op\":\"$op\",\"shape\":$shape,\"isa\":\"$isa\",\"ir_per_call\":$((ir / (calls + 1)))}"
            done
        done
    done
done
