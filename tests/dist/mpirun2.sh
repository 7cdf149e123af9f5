#!/usr/bin/env bash
# Runs a command on 2 MPI ranks (this machine may have 2 cores shared with
# other work: --oversubscribe; CI runs as root: --allow-run-as-root), or
# skips (77) saying why when tensorgraph was built without MPI.
# usage: mpirun2.sh WITH_MPI MPIEXEC command args...
with_mpi=$1 mpiexec=$2
shift 2
if [ "$with_mpi" != ON ] || [ ! -x "$mpiexec" ]; then
    echo "skipped: tensorgraph was built without MPI (scripts/setup.sh installs libopenmpi-dev)"
    exit 77
fi
# every TG_* setting of the caller reaches the ranks (TG_GEMM, TG_DIST_TIMEOUT ...)
forward=()
for v in $(compgen -e | grep '^TG_'); do forward+=(-x "$v"); done
exec "$mpiexec" --allow-run-as-root --oversubscribe -x TG_NUM_THREADS=1 "${forward[@]}" -np 2 "$@"
