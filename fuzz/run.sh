#!/usr/bin/env bash
# Builds a fuzz target with clang -fsanitize=fuzzer,address into
# build-fuzz/ and runs it for SECONDS (default 60). TARGET is one reader of
# outside bytes:
#   onnx         ONNX models (seeds: fuzz/corpus/, from tests/data/make_onnx_fixtures.py)
#   safetensors  safetensors files (seeds: fuzz/seeds/safetensors/)
#   wire         a graph's wire form from another process (fuzz/seeds/wire/)
#   idx          IDX files, MNIST's format (fuzz/seeds/idx/)
# New inputs go to build-fuzz/corpus-TARGET/, crashes to
# build-fuzz/crashes-TARGET/: copy an ONNX crash to tests/data/onnx_crashes/
# (tests/test_onnx_format.c replays them) and a wire crash to
# tests/data/wire_crashes/ (tests/test_graph_serialize.c replays those);
# for the other readers add the input to their tests
# (tests/test_safetensors.c, test_data.c).
#   fuzz/run.sh [TARGET] [SECONDS] [extra libFuzzer flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
target=onnx
case "${1:-}" in
onnx | safetensors | wire | idx) target=$1; shift ;;
esac
seconds=${1:-60}
shift || true
seeds=fuzz/seeds/$target
[ "$target" = onnx ] && seeds=fuzz/corpus
CC=clang cmake -S . -B build-fuzz -DTG_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTG_NATIVE=OFF -DTG_USE_BLAS=OFF >/dev/null
cmake --build build-fuzz --target "fuzz_$target" -j2
mkdir -p "build-fuzz/corpus-$target" "build-fuzz/crashes-$target"
# nice: the machine's cores are shared; one job keeps it to one core
exec nice -n 10 "build-fuzz/fuzz_$target" "build-fuzz/corpus-$target" "$seeds" \
    -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=4096 -timeout=10 \
    -artifact_prefix="build-fuzz/crashes-$target/" -print_final_stats=1 "$@"
