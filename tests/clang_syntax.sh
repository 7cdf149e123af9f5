#!/usr/bin/env bash
# The library's C compiled by clang (-fsyntax-only, the per-ISA files with
# their instruction sets' flags as CMakeLists.txt gives them): the fuzz
# build (fuzz/run.sh) and anyone's CC=clang need it, and GCC-only builtins
# once broke it unnoticed. Exits 77 (skipped) without clang.
#   clang_syntax.sh SOURCE_DIR
set -u
src=$1
command -v clang >/dev/null 2>&1 || { echo "SKIP: clang not found"; exit 77; }
check() { # one file; prints its errors
    local f=$1 flags=(-march=x86-64-v2)
    case $f in
    *_avx512.c) flags+=(-mavx512f -mavx512vl -mavx512bw -mavx512dq -mavx2 -mfma) ;;
    *_avx2.c) flags+=(-mno-avx512f -mavx2 -mfma) ;;
    */kernels/cpu/*_generic.c) flags+=(-mno-avx) ;;
    esac
    clang -std=gnu11 -fsyntax-only -D_GNU_SOURCE -Wno-unknown-attributes \
        -I"$src/include" -I"$src/src" "${flags[@]}" "$f" 2>&1 | grep -A3 "error:"
}
export -f check
export src
failed=$(find "$src/src" -name '*.c' | sort | xargs -P 2 -I{} bash -c 'check "$1"' _ {})
if [ -n "$failed" ]; then
    echo "$failed"
    echo "FAIL: the library does not compile with clang"
    exit 1
fi
echo "ok: $(find "$src/src" -name '*.c' | wc -l) files compile with $(clang --version | head -1)"
