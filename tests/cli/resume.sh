#!/usr/bin/env bash
# Checkpoints resume exactly: 1 epoch + save + 1 epoch from the checkpoint
# equals 2 epochs straight, in graph mode, in eager mode and across modes.
# Needs the real MNIST: set TG_TEST_MNIST_DIR (else skipped, status 77).
# Usage: resume.sh path/to/tg
set -u
tg=$1
dir=${TG_TEST_MNIST_DIR:-}
if [ -z "$dir" ]; then echo "skipped: set TG_TEST_MNIST_DIR to run"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--data "$dir" --threads 1 --seed 3 --quiet --json)
summary() { sed -n 's/.*\("final_train_loss":[0-9.]*\).*\("test_accuracy":[0-9.]*\).*/\1 \2/p'; }
failures=0 passed=0
for first in graph eager; do
    straight=$("$tg" train lenet --epochs 2 --mode "$first" "${common[@]}" | summary)
    "$tg" train lenet --epochs 1 --mode "$first" --save "$tmp/$first.st" "${common[@]}" >/dev/null
    for second in graph eager; do
        resumed=$("$tg" train lenet --epochs 1 --mode "$second" --load "$tmp/$first.st" "${common[@]}" | summary)
        if [ -n "$straight" ] && [ "$resumed" = "$straight" ]; then
            passed=$((passed + 1))
        else
            echo "FAIL: $first then $second: '$resumed', straight '$straight'"; failures=$((failures + 1))
        fi
    done
done
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
