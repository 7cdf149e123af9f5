#!/usr/bin/env bash
# tensorgraph.distributed.serve and tg.function over 2 ranks: rank 0's
# graph has a layer on rank 1's device (tests/dist/master_worker_check.py).
# usage: test_python_master_worker.sh WITH_MPI MPIEXEC TG TEST_DIST
set -u
with_mpi=$1 mpiexec=$2 tg=$3
here=$(cd "$(dirname "$0")" && pwd)
pydir=$(cd "$(dirname "$tg")" && pwd)/python
bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" true >/dev/null || exit 77
if [ -n "${TG_DIST_SANITIZED:-}" ]; then
    echo "skipped: Python under mpirun would need the ASan runtime preloaded"
    exit 77
fi
[ -d "$pydir/tensorgraph" ] || { echo "skipped: the Python package was not built"; exit 77; }
py=/usr/bin/python3
[ -x $py ] || py=python3
bash "$here/mpirun2.sh" "$with_mpi" "$mpiexec" -x PYTHONPATH="$pydir" $py \
    "$here/master_worker_check.py"
