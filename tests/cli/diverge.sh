#!/usr/bin/env bash
# A run that diverges says what happened and where, exits 1, and leaves
# the last good checkpoint (and export) exactly as they were, with no
# temporary files beside them; in both modes and with Adam.
# Needs the real MNIST: set TG_TEST_MNIST_DIR (else skipped, status 77).
# Usage: diverge.sh path/to/tg
set -u
tg=$1
dir=${TG_TEST_MNIST_DIR:-}
if [ -z "$dir" ]; then echo "skipped: set TG_TEST_MNIST_DIR to run"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--data "$dir" --threads 1 --limit 1000 --quiet)
failures=0 passed=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$tg" train lenet "${common[@]}" --save "$tmp/good.st" --export "$tmp/good.onnx" || fail "the good run"
sums=$(cksum "$tmp/good.st" "$tmp/good.onnx")
for combo in graph:sgd:1000 eager:sgd:1000 eager:adam:1e30; do
    IFS=: read -r mode optim lr <<<"$combo"
    err=$("$tg" train lenet "${common[@]}" --mode "$mode" --optimizer "$optim" --lr "$lr" \
          --save "$tmp/good.st" --export "$tmp/good.onnx" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -eq 1 ] && grep -Eq "^tg: loss is (NaN|[+-]inf) at epoch 1 step [0-9]+; try a smaller --lr" <<<"$err"
    then passed=$((passed + 1)); else fail "$combo: status $rc, stderr: $err"; fi
    [ "$(cksum "$tmp/good.st" "$tmp/good.onnx")" = "$sums" ] && passed=$((passed + 1)) ||
        fail "$combo changed the last good checkpoint or export"
    [ "$(ls "$tmp")" = "$(printf 'good.onnx\ngood.st')" ] && passed=$((passed + 1)) ||
        fail "$combo left files behind: $(ls "$tmp")"
done
"$tg" eval lenet --load "$tmp/good.st" --data "$dir" --limit 1000 >/dev/null &&
    passed=$((passed + 1)) || fail "the kept checkpoint does not load"
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
