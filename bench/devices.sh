#!/usr/bin/env bash
# LeNet-5 on MNIST in graph mode on 1 device and on N virtual CPU devices
# of one process (the session places the step by its cost model and runs
# the partitions concurrently, Send/Recv between them): one JSON line per
# run from `tg train --json` (epoch time, final loss, test accuracy), then
# a comparison line. Same seed, data and threads, so the losses must be
# equal; the times are what this (shared, noisy) machine gave: repeat
# with --repeat and quote medians.
#   bench/devices.sh [--devices N] [--epochs E] [--threads T] [--limit L]
#                    [--repeat R] [--data DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
devices=2 epochs=1 threads=2 limit=0 repeat=1 data=data/mnist
while [ $# -gt 0 ]; do
    case "$1" in
        --devices) devices=$2; shift 2 ;; --epochs) epochs=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;; --limit) limit=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;; --data) data=$2; shift 2 ;;
        *) echo "bench/devices.sh: unknown option $1" >&2; exit 1 ;;
    esac
done
[ -x build/tg ] || scripts/build.sh
field() { sed -n "s/.*\"$1\":\([-0-9.e]*\).*/\1/p" <<<"$2"; }
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
declare -A secs loss
for d in 1 "$devices"; do
    times=()
    for r in $(seq "$repeat"); do
        json=$(build/tg train lenet --data "$data" --epochs "$epochs" --threads "$threads" \
            --limit "$limit" --devices "$d" --quiet --json | tail -1)
        echo "$json"
        times+=("$(field train_seconds "$json")")
    done
    secs[$d]=$(printf '%s\n' "${times[@]}" | median)
    loss[$d]=$(field final_train_loss "$json")
done
printf '{"bench":"devices","devices":%d,"threads":%d,"repeat":%d,"median_train_seconds_1":%s,' \
    "$devices" "$threads" "$repeat" "${secs[1]}"
printf '"median_train_seconds_%d":%s,"speedup":%.3f,"same_final_loss":%s}\n' "$devices" \
    "${secs[$devices]}" "$(awk -v a="${secs[1]}" -v b="${secs[$devices]}" 'BEGIN {print a / b}')" \
    "$([ "${loss[1]}" = "${loss[$devices]}" ] && echo true || echo false)"
