#!/usr/bin/env bash
# Runs every test program under valgrind memcheck: any invalid access or
# definite/indirect leak fails. Builds into build-valgrind/ portable
# (TG_NATIVE=OFF): valgrind cannot decode AVX-512 instructions and reports
# none, so the per-ISA kernels run their AVX2 builds there. TG_ALLOC_CACHE=0:
# freed storage and tensor structs go back to malloc (core/alloc.h), where
# memcheck sees any later use. Valgrind runs a program's threads one at a
# time, so the programs run as many at once as there are cores (on a
# 2-core Zen 3 one at a time took most of CI's 90 minutes); each one's
# log is kept apart and shown when it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=build-valgrind scripts/build.sh -DTG_NATIVE=OFF
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
export logs
run_one() {
    local t=$1 name
    name=$(basename "$t")
    if TG_NUM_THREADS=2 TG_TEST_UNDER_VALGRIND=1 TG_ALLOC_CACHE=0 valgrind -q --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
        --error-exitcode=9 "$t" > "$logs/$name.log" 2>&1; then
        echo "valgrind ok   $name"
    else
        echo "valgrind FAIL $name"
        tail -40 "$logs/$name.log"
        touch "$logs/$name.failed"
    fi
}
export -f run_one
find build-valgrind -maxdepth 1 -name 'test_*' -type f -perm -u+x | sort |
    xargs -P "$(nproc)" -I{} bash -c 'run_one "$1"' _ {}
if compgen -G "$logs/*.failed" > /dev/null; then
    exit 1
fi
