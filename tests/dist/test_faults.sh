#!/usr/bin/env bash
# Faults on 2 MPI ranks: a rank that dies (kill -9) or hangs (SIGSTOP)
# while the other waits in an allreduce; the survivor must say which rank
# it lost within 10 s, never hang. With real MNIST (TG_TEST_MNIST_DIR),
# `tg train --distributed` loses rank 1 mid-training (kill -9 from outside)
# and the checkpoint rank 0 writes is the old one or a new one, never half.
# usage: test_faults.sh WITH_MPI MPIEXEC TG TEST_DIST
set -u
with_mpi=$1 mpiexec=$2 tg=$3 test_dist=$4
here=$(cd "$(dirname "$0")" && pwd)
run2() { bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" "$@"; }
run2 true >/dev/null || exit 77
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# $1: what; $2: the log; $3: seconds taken
expect_named() {
    if ! grep -q "lost rank 1" "$2"; then
        echo "FAIL $1: no message naming the lost rank 1:"; cat "$2"; fail=1
    elif [ "$3" -gt 10 ]; then
        echo "FAIL $1: took $3 s (at most 10)"; fail=1
    else
        echo "ok   $1 ($3 s): $(grep -m1 'lost rank 1' "$2")"
    fi
}

start=$SECONDS
timeout 60 bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" "$test_dist" --die >"$tmp/die.log" 2>&1
rc=$?
[ $rc -ne 0 ] || { echo "FAIL kill -9: mpirun returned 0"; fail=1; }
expect_named "kill -9 during an allreduce" "$tmp/die.log" $((SECONDS - start))

start=$SECONDS
TG_DIST_TIMEOUT=2 timeout 60 bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" \
    "$test_dist" --hang >"$tmp/hang.log" 2>&1
expect_named "a hung rank (SIGSTOP), 2 s timeout" "$tmp/hang.log" $((SECONDS - start))
grep -q "no heartbeat" "$tmp/hang.log" || { echo "FAIL hang: not reported as silent"; fail=1; }

# master/worker: the worker killed between steps; the master's next step
# fails naming it
start=$SECONDS
timeout 60 bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" "$(dirname "$test_dist")/test_master_worker" \
    --die >"$tmp/worker.log" 2>&1
expect_named "a worker killed between the master's steps" "$tmp/worker.log" $((SECONDS - start))

# tg train --distributed, rank 1 killed from outside mid-training; rank 0
# resumed from a checkpoint and was to replace it: it stays whole
if [ -z "${TG_TEST_MNIST_DIR:-}" ]; then
    echo "(tg train part skipped: set TG_TEST_MNIST_DIR to a directory with MNIST)"
    exit $fail
fi
ck="$tmp/ck.safetensors"
"$tg" train lenet --data "$TG_TEST_MNIST_DIR" --limit 640 --quiet --save "$ck" || fail=1
old=$(sha256sum "$ck" | cut -d' ' -f1)
start=$SECONDS
bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" "$tg" train lenet --distributed \
    --data "$TG_TEST_MNIST_DIR" --limit 30000 --epochs 5 --load "$ck" --save "$ck" \
    --losses "$tmp/losses.txt" >"$tmp/train.log" 2>&1 &
launcher=$!
victim=""
for _ in $(seq 600); do # until rank 0 has logged 20 steps (at most 60 s)
    [ "$(wc -l <"$tmp/losses.txt" 2>/dev/null || echo 0)" -ge 20 ] && break
    sleep 0.1
done
for pid in $(pgrep -f "train lenet --distributed"); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
        victim=$pid
    fi
done
start=$SECONDS
if [ -n "$victim" ]; then kill -9 "$victim"; else echo "FAIL: rank 1 of tg train not found"; fail=1; fi
wait $launcher
rc=$?
[ $rc -ne 0 ] || { echo "FAIL tg train: exit status 0 after losing rank 1"; fail=1; }
expect_named "tg train --distributed, rank 1 killed at step 20" "$tmp/train.log" $((SECONDS - start))
now=$(sha256sum "$ck" | cut -d' ' -f1)
if [ "$now" = "$old" ]; then
    echo "ok   the checkpoint is the old one, whole"
elif "$tg" eval lenet --load "$ck" --data "$TG_TEST_MNIST_DIR" --limit 100 >/dev/null; then
    echo "ok   the checkpoint is a new one, whole"
else
    echo "FAIL: the checkpoint is neither the old one nor a loadable new one"; fail=1
fi
ls "$tmp" | grep -v -E '^(ck.safetensors|die.log|hang.log|worker.log|train.log|losses.txt)$' &&
    { echo "FAIL: files left next to the checkpoint"; fail=1; }
exit $fail
