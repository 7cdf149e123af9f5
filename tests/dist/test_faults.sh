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
    -x TG_DIST_TIMEOUT "$test_dist" --hang >"$tmp/hang.log" 2>&1
expect_named "a hung rank (SIGSTOP), 2 s timeout" "$tmp/hang.log" $((SECONDS - start))
grep -q "no heartbeat" "$tmp/hang.log" || { echo "FAIL hang: not reported as silent"; fail=1; }
exit $fail
