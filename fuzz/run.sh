#!/usr/bin/env bash
# Builds the ONNX fuzz target with clang -fsanitize=fuzzer,address into
# build-fuzz/ and runs it for SECONDS (default 60) on fuzz/corpus/ (seeds:
# tests/data/make_onnx_fixtures.py). New inputs go to build-fuzz/corpus/,
# crashes to build-fuzz/crashes/: copy each crash to tests/data/onnx_crashes/
# so that tests/test_onnx_format.c replays it.
#   fuzz/run.sh [SECONDS] [extra libFuzzer flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
CC=clang cmake -S . -B build-fuzz -DTG_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTG_NATIVE=OFF -DTG_USE_BLAS=OFF >/dev/null
cmake --build build-fuzz --target fuzz_onnx -j2
mkdir -p build-fuzz/corpus build-fuzz/crashes
# nice: the machine's cores are shared; one job keeps it to one core
exec nice -n 10 build-fuzz/fuzz_onnx build-fuzz/corpus fuzz/corpus \
    -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=4096 -timeout=10 \
    -artifact_prefix=build-fuzz/crashes/ -print_final_stats=1 "$@"
