#!/usr/bin/env bash
# `mpirun -np 2 tg train lenet --model-parallel` (convolutions on rank 0,
# classifier on rank 1) against one process: the same kernels on the same
# shapes in the same order, so every step's loss is one process's bit for
# bit (printed to 9 digits) and so is the accuracy. Needs real MNIST
# (TG_TEST_MNIST_DIR); --limit keeps it short. Also the refusals.
# usage: test_model_parallel.sh WITH_MPI MPIEXEC TG TEST_DIST
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
"$tg" train "${common[@]}" --mode eager --losses "$tmp/one.txt" >"$tmp/one.json" || fail=1
bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" "$tg" train "${common[@]}" --model-parallel \
    --losses "$tmp/two.txt" >"$tmp/two.json" 2>"$tmp/two.err" || {
    echo "FAIL: mpirun -np 2 tg train --model-parallel:"; cat "$tmp/two.err"; fail=1; }
if [ "$(wc -l <"$tmp/two.txt")" = 50 ] && cmp -s "$tmp/one.txt" "$tmp/two.txt"; then
    echo "ok   50 losses equal one process's bit for bit"
else
    echo "FAIL: losses differ:"; paste "$tmp/one.txt" "$tmp/two.txt" | head; fail=1
fi
acc1=$(sed 's/.*"test_accuracy":\([0-9.]*\).*/\1/' "$tmp/one.json")
acc2=$(sed 's/.*"test_accuracy":\([0-9.]*\).*/\1/' "$tmp/two.json")
[ "$acc1" = "$acc2" ] && echo "ok   accuracy $acc1 in both" ||
    { echo "FAIL: accuracy: one process $acc1, model parallel $acc2"; fail=1; }
if "$tg" train "${common[@]}" --model-parallel --save "$tmp/x.st" 2>"$tmp/err"; then
    echo "FAIL: --model-parallel --save was accepted"; fail=1
fi
grep -q "not built" "$tmp/err" || { echo "FAIL: refusal: $(cat "$tmp/err")"; fail=1; }
"$tg" train "${common[@]}" --model-parallel 2>"$tmp/err" && {
    echo "FAIL: --model-parallel on one rank was accepted"; fail=1; }
grep -q "exactly 2 ranks" "$tmp/err" || { echo "FAIL: one rank: $(cat "$tmp/err")"; fail=1; }
exit $fail
