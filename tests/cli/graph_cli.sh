#!/usr/bin/env bash
# `tg graph lenet`: the DOT picture, rendering through Graphviz (or a clear
# message without it), the memory report, and bad options.
# Usage: graph_cli.sh path/to/tg
set -u
tg=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passed=0
check() { # description, then a command that must succeed
    local what=$1; shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

check "forward DOT" "$tg" graph lenet -o "$tmp/f.dot" >/dev/null
check "forward DOT has the layers" grep -q "conv2d" "$tmp/f.dot"
check "forward DOT has no update" bash -c "! grep -q assign '$tmp/f.dot'"
check "backward DOT" "$tg" graph lenet --backward -o "$tmp/b.dot" >/dev/null
check "backward DOT has gradients and updates" bash -c \
    "grep -q conv2d_grad_weight '$tmp/b.dot' && grep -q assign '$tmp/b.dot'"
if command -v dot >/dev/null 2>&1; then
    check "svg through dot" "$tg" graph lenet --format svg -o "$tmp/f.svg" >/dev/null
    check "svg written" grep -q "<svg" "$tmp/f.svg"
else
    "$tg" graph lenet --format svg -o "$tmp/f.svg" >/dev/null 2>"$tmp/err"; rc=$?
    check "svg without Graphviz fails clearly" bash -c "[ $rc -eq 1 ] && grep -q graphviz '$tmp/err'"
fi
json=$("$tg" graph lenet --memory --json)
naive=$(sed -n 's/.*"naive_bytes":\([0-9]*\).*/\1/p' <<<"$json")
planned=$(sed -n 's/.*"planned_peak_bytes":\([0-9]*\).*/\1/p' <<<"$json")
check "memory JSON ($json)" bash -c "[ -n '$naive' ] && [ -n '$planned' ] && [ '$planned' -gt 0 ]"
check "planned peak <= 50% of naive ($planned of $naive)" bash -c "[ $((planned * 2)) -le $naive ]"
check "bad format" bash -c "! '$tg' graph lenet --format jpg 2>/dev/null"
check "bad model" bash -c "! '$tg' graph resnet 2>/dev/null"
check "graph mode needs sgd" bash -c \
    "'$tg' train lenet --mode graph --optimizer adam 2>&1 | grep -q 'optimizer sgd only'"
check "unknown mode" bash -c "'$tg' train lenet --mode lazy 2>&1 | grep -q 'unknown mode'"
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
