#!/usr/bin/env bash
# `mpirun -np 2 tg train lenet --ranks`: master/worker. Rank 0 builds the
# training step's graph, the cost model places it over /rank:0/cpu:0 and
# /rank:1/cpu:0, rank 1 runs the partition it is shipped, values cross
# by Send/Recv over MPI. The same kernels run in the same order as in one
# process, so every loss (9 digits), the accuracy and the checkpoint
# (parameters and momentum pulled back from the worker) are one
# process's, byte for byte. Needs real MNIST (TG_TEST_MNIST_DIR).
# usage: test_ranks.sh WITH_MPI MPIEXEC TG TEST_DIST
set -u
with_mpi=$1 mpiexec=$2 tg=$3
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" true >/dev/null || exit 77
if [ -z "${TG_TEST_MNIST_DIR:-}" ]; then
    echo "skipped: set TG_TEST_MNIST_DIR to a directory with MNIST"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
common=(lenet --data "$TG_TEST_MNIST_DIR" --limit 3200 --batch 64 --seed 2 --threads 1 --json --quiet)
"$tg" train "${common[@]}" --mode graph --losses "$tmp/one.txt" --save "$tmp/one.st" \
    >"$tmp/one.json" || fail=1
bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" "$tg" train "${common[@]}" --ranks \
    --losses "$tmp/two.txt" --save "$tmp/two.st" >"$tmp/two.json" 2>"$tmp/two.err" || {
    echo "FAIL: mpirun -np 2 tg train --ranks:"; cat "$tmp/two.err"; fail=1; }
if [ "$(wc -l <"$tmp/two.txt")" = 50 ] && cmp -s "$tmp/one.txt" "$tmp/two.txt"; then
    echo "ok   50 losses equal one process's bit for bit"
else
    echo "FAIL: losses differ:"; paste "$tmp/one.txt" "$tmp/two.txt" | head; fail=1
fi
acc1=$(sed 's/.*"test_accuracy":\([0-9.]*\).*/\1/' "$tmp/one.json")
acc2=$(sed 's/.*"test_accuracy":\([0-9.]*\).*/\1/' "$tmp/two.json")
[ "$acc1" = "$acc2" ] && echo "ok   accuracy $acc1 in both" ||
    { echo "FAIL: accuracy: one process $acc1, two ranks $acc2"; fail=1; }
grep -q '"ranks":2' "$tmp/two.json" || { echo "FAIL: summary: $(cat "$tmp/two.json")"; fail=1; }
cmp -s "$tmp/one.st" "$tmp/two.st" && echo "ok   checkpoints equal byte for byte" ||
    { echo "FAIL: the checkpoints differ"; fail=1; }
"$tg" train "${common[@]}" --ranks --mode eager 2>"$tmp/err" && {
    echo "FAIL: --ranks --mode eager was accepted"; fail=1; }
grep -q "mode graph" "$tmp/err" || { echo "FAIL: refusal: $(cat "$tmp/err")"; fail=1; }
exit $fail
