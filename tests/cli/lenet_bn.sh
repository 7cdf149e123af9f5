#!/usr/bin/env bash
# `tg train lenet-bn`: LeNet-5 with batch norm and dropout, whose graph
# mode runs dropout as random nodes and the running statistics as assign
# nodes. On real MNIST (TG_TEST_MNIST_DIR): a few hundred steps in eager
# and graph mode give the same per-epoch losses and accuracy (same seed);
# checkpoints evaluate to the accuracy training reported, resume exactly
# (2 epochs = 1 + 1 resumed, also across modes), and are refused by
# `tg eval lenet`; with AdamW too (its update built into the graph). Without MNIST only the command-line checks run (the
# training equality on synthetic data is tests/test_random_ops.c's
# test_lenet_bn_synthetic). Usage: lenet_bn.sh path/to/tg
set -u
# Runs are compared across processes, each with the automatic GEMM choice:
# a rule per instruction set (gemm_select.c), so the processes agree.
tg=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passed=0
check() { # what got want
    if [ -n "$3" ] && [ "$2" = "$3" ]; then
        passed=$((passed + 1))
    else
        echo "FAIL: $1: got '$2', want '$3'"; failures=$((failures + 1))
    fi
}
field() { sed -n "s/.*\"$1\":\(\[[^]]*\]\|[^,}]*\).*/\1/p"; }

# the command line: help names the model, unknown models are refused
"$tg" train --help 2>&1 | grep -q 'tg train lenet|lenet-bn'
check "train --help names lenet-bn" "$?" 0
"$tg" --help 2>&1 | grep -q 'lenet-bn'
check "tg --help names lenet-bn" "$?" 0
"$tg" train lenet-cnn --quiet 2>"$tmp/err" >/dev/null
check "unknown model status" "$?" 1
check "unknown model message" "$(grep -c 'lenet|lenet-bn' "$tmp/err")" 1

dir=${TG_TEST_MNIST_DIR:-}
if [ -z "$dir" ]; then
    echo "$passed passed, $failures failed (training checks skipped: set TG_TEST_MNIST_DIR)"
    [ "$failures" -eq 0 ] || exit 1
    exit 77
fi

# 313 steps of batch 32 per epoch
common=(--data "$dir" --threads 2 --seed 5 --limit 10000 --batch 32 --quiet --json)
g=$("$tg" train lenet-bn --mode graph "${common[@]}" --save "$tmp/g.st")
e=$("$tg" train lenet-bn --mode eager "${common[@]}" --save "$tmp/e.st")
check "graph = eager losses" "$(field epoch_losses <<<"$g")" "$(field epoch_losses <<<"$e")"
check "graph = eager accuracy" "$(field test_accuracy <<<"$g")" "$(field test_accuracy <<<"$e")"
check "model field" "$(field model <<<"$g")" '"lenet-bn"'
acc=$(field test_accuracy <<<"$g")
check "learns (accuracy > 0.85)" "$(awk -v a="$acc" 'BEGIN{print (a > 0.85)}')" 1
# the checkpoint holds the trained model, batch-norm statistics included
ev=$("$tg" eval lenet-bn --load "$tmp/g.st" --data "$dir" --limit 10000 --json)
check "eval = training's accuracy" "$(field test_accuracy <<<"$ev")" "$acc"
"$tg" eval lenet --load "$tmp/g.st" --data "$dir" --limit 100 2>"$tmp/err" >/dev/null
check "lenet refuses a lenet-bn checkpoint" "$(grep -c "model 'lenet-bn', not lenet" "$tmp/err")" 1

# resume: two epochs straight = one + one resumed, in and across modes
two=$("$tg" train lenet-bn --mode graph "${common[@]}" --epochs 2 | field epoch_losses)
second=${two#*,}; second=${second%]}
for first in g e; do
    for mode in graph eager; do
        r=$("$tg" train lenet-bn --mode "$mode" --load "$tmp/$first.st" "${common[@]}" |
            field epoch_losses)
        check "resume $first.st in $mode" "${r//[\[\]]/}" "$second"
    done
done
# AdamW: its update in the graph (with the batch-norm assigns and dropout
# draws) equals eager steps, and a graph checkpoint resumes eagerly
short=(--data "$dir" --threads 2 --seed 5 --limit 2000 --batch 32 --quiet --json
       --optimizer adamw --lr 0.001)
ga=$("$tg" train lenet-bn --mode graph "${short[@]}" --epochs 2 | field epoch_losses)
ea=$("$tg" train lenet-bn --mode eager "${short[@]}" --epochs 2 | field epoch_losses)
check "adamw: graph = eager losses" "$ga" "$ea"
"$tg" train lenet-bn --mode graph "${short[@]}" --save "$tmp/ga.st" >/dev/null
r=$("$tg" train lenet-bn --mode eager "${short[@]}" --load "$tmp/ga.st" | field epoch_losses)
second=${ga#*,}; second=${second%]}
check "adamw: graph checkpoint resumed eagerly" "${r//[\[\]]/}" "$second"
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
