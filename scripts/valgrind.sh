#!/usr/bin/env bash
# Runs every test program under valgrind memcheck: any invalid access or
# definite/indirect leak fails. Builds into build-valgrind/ portable
# (TG_NATIVE=OFF): valgrind cannot decode AVX-512 instructions and reports
# none, so the per-ISA kernels run their AVX2 builds there. TG_ALLOC_CACHE=0:
# freed storage and tensor structs go back to malloc (core/alloc.h), where
# memcheck sees any later use.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=build-valgrind scripts/build.sh -DTG_NATIVE=OFF
failed=0
for t in build-valgrind/test_*; do
    [ -x "$t" ] || continue
    if TG_NUM_THREADS=2 TG_TEST_UNDER_VALGRIND=1 TG_ALLOC_CACHE=0 valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --show-leak-kinds=definite,indirect --error-exitcode=9 "$t" >/tmp/tg-valgrind.log 2>&1; then
        echo "valgrind ok   $(basename "$t")"
    else
        echo "valgrind FAIL $(basename "$t")"; tail -40 /tmp/tg-valgrind.log; failed=1
    fi
done
exit $failed
