#!/usr/bin/env bash
# tensorgraph.distributed and DistributedDataParallel on 2 ranks
# (tests/dist/ddp_check.py), master/worker from Python: a tg.function with a
# layer on rank 1's device, rank 1 serving (tests/dist/master_worker_check.py),
# and, with real MNIST (TG_TEST_MNIST_DIR), the PyTorch-style DDP example
# examples/ddp_mnist.py and the master/worker one examples/model_parallel_mnist.py
# on short runs.
# usage: test_python_ddp.sh WITH_MPI MPIEXEC TG TEST_DIST
set -u
with_mpi=$1 mpiexec=$2 tg=$3
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
pydir=$(cd "$(dirname "$tg")" && pwd)/python
bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" true >/dev/null || exit 77
if [ -n "${TG_DIST_SANITIZED:-}" ]; then
    echo "skipped: Python under mpirun would need the ASan runtime preloaded"
    exit 77
fi
[ -d "$pydir/tensorgraph" ] || { echo "skipped: the Python package was not built"; exit 77; }
py=/usr/bin/python3
[ -x $py ] || py=python3
run2() { bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" -x PYTHONPATH="$pydir" "$@"; }
fail=0
run2 $py "$here/ddp_check.py" || fail=1
run2 $py "$here/master_worker_check.py" || fail=1
if [ -n "${TG_TEST_MNIST_DIR:-}" ]; then
    out=$(run2 $py "$src/examples/ddp_mnist.py" --data "$TG_TEST_MNIST_DIR" --limit 3200 --json) ||
        fail=1
    echo "$out"
    acc=$(echo "$out" | sed -n 's/.*"test_accuracy": \([0-9.]*\).*/\1/p')
    if [ -z "$acc" ] || awk -v a="$acc" 'BEGIN { exit !(a < 0.7) }'; then
        echo "FAIL: examples/ddp_mnist.py: accuracy '$acc' (expected >= 0.7 after 3200 images)"
        fail=1
    fi
    out=$(run2 $py "$src/examples/model_parallel_mnist.py" --data "$TG_TEST_MNIST_DIR" \
          --limit 3200 --json) || fail=1
    echo "$out"
    acc=$(echo "$out" | sed -n 's/.*"test_accuracy": \([0-9.]*\).*/\1/p')
    if [ -z "$acc" ] || awk -v a="$acc" 'BEGIN { exit !(a < 0.7) }'; then
        echo "FAIL: examples/model_parallel_mnist.py: accuracy '$acc' (expected >= 0.7)"
        fail=1
    fi
else
    echo "(the MNIST examples skipped: set TG_TEST_MNIST_DIR to a directory with MNIST)"
fi
exit $fail
