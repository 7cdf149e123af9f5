#!/usr/bin/env bash
# `tg version`: the plain line, --verbose with the kernels' instruction set
# (and TG_CPU lowering it), the BLAS and the GEMM choice per shape
# (TG_GEMM forcing it), and a bad option.
# Usage: version.sh path/to/tg
set -u
tg=$1
failures=0 passed=0
check() { # description, then a command that must succeed
    local what=$1; shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

check "plain version" bash -c "'$tg' version | grep -q '^tensorgraph '"
check "verbose names the kernels" bash -c \
    "'$tg' version --verbose | grep -Eq '^kernels: (avx512|avx2|generic)'"
check "TG_CPU=generic lowers them" bash -c \
    "TG_CPU=generic '$tg' version --verbose | grep -q '^kernels: generic'"
check "verbose says what the build targets" bash -c \
    "'$tg' version --verbose | grep -Eq '^build: (native|portable) '"
check "verbose says why TG_CPU=generic applies" bash -c \
    "TG_CPU=generic '$tg' version --verbose | grep -Eq '^kernels: generic \\((TG_CPU=generic lowered it|the best the CPU has)'"
check "verbose lists the per-ISA kernels" bash -c \
    "'$tg' version --verbose | grep -q '^per instruction set, chosen at run time: GEMM'"
check "verbose names the BLAS" bash -c "'$tg' version --verbose | grep -q '^blas: '"
check "GEMM choice per shape" bash -c \
    "'$tg' version --verbose | grep -Eq 'fc1 forward .*: (built-in|blas)$'"
check "TG_GEMM=builtin forces it" bash -c \
    "! TG_GEMM=builtin '$tg' version --verbose | grep -q ': blas$'"
check "bad option fails" bash -c "! '$tg' version --bogus 2>/dev/null"
check "bad option is named" bash -c "'$tg' version --bogus 2>&1 | grep -q -- '--bogus'"

echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
