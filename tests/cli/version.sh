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
# run --verbose once per setting and read the output several times
verbose=$("$tg" version --verbose)
generic=$(TG_CPU=generic "$tg" version --verbose)
builtin=$(TG_GEMM=builtin "$tg" version --verbose)
has() { grep -Eq -- "$2" <<<"$1"; }
check "verbose names the kernels" has "$verbose" '^kernels: (avx512|avx2|generic)'
check "TG_CPU=generic lowers them" has "$generic" '^kernels: generic'
check "verbose says what the build targets" has "$verbose" '^build: (native|portable) '
check "verbose says why TG_CPU=generic applies" has "$generic" \
    '^kernels: generic \((TG_CPU=generic lowered it|the best the CPU has)'
check "verbose lists the per-ISA kernels" has "$verbose" \
    '^per instruction set, chosen at run time: GEMM'
check "verbose names the BLAS" has "$verbose" '^blas: '
check "GEMM choice per shape" has "$verbose" 'fc1 forward .*: (built-in|blas)$'
if has "$verbose" '^kernels: avx'; then
    check "built-in GEMM where it has vector kernels" bash -c "! grep -q ': blas\$' <<<\"\$1\"" _ "$verbose"
fi
if ! has "$generic" '^blas: none'; then
    check "the BLAS below them" bash -c "! grep -q ': built-in\$' <<<\"\$1\"" _ "$generic"
fi
check "TG_GEMM=builtin forces it" bash -c "! grep -q ': blas\$' <<<\"\$1\"" _ "$builtin"
check "bad option fails" bash -c "! '$tg' version --bogus 2>/dev/null"
check "bad option is named" bash -c "'$tg' version --bogus 2>&1 | grep -q -- '--bogus'"

echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
