#!/usr/bin/env bash
# Checkpoints resume exactly, for every mode x optimizer: 3 epochs straight
# give the same per-epoch losses as 1 fresh epoch + save, then 1 resumed
# epoch + save (a resumed run saving again), then 1 more from that; both
# modes give the same losses; and every optimizer's checkpoints (momentum,
# Adam's moments, step counts) cross between graph and eager mode.
# Also at TG_CPU=avx2: two processes and both modes agree.
# --limit keeps it fast.
# Needs the real MNIST: set TG_TEST_MNIST_DIR (else skipped, status 77).
# Usage: resume.sh path/to/tg
set -u
# Runs are compared across processes, each with the automatic GEMM choice:
# a rule per instruction set (gemm_select.c), so the processes agree.
tg=$1
dir=${TG_TEST_MNIST_DIR:-}
if [ -z "$dir" ]; then echo "skipped: set TG_TEST_MNIST_DIR to run"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--data "$dir" --threads 1 --seed 3 --limit 1000 --batch 50 --quiet --json)
losses() { sed -n 's/.*"epoch_losses":\[\([^]]*\)\].*/\1/p'; }
failures=0 passed=0
check() { # what got want
    if [ -n "$3" ] && [ "$2" = "$3" ]; then
        passed=$((passed + 1))
    else
        echo "FAIL: $1: got '$2', want '$3'"; failures=$((failures + 1))
    fi
}

lr_of() { case $1 in adam | adamw) echo 0.001 ;; *) echo 0.02 ;; esac; }
declare -A straight
for combo in graph:sgd eager:sgd graph:adam eager:adam graph:adamw eager:adamw \
             graph:adadelta eager:adadelta; do
    mode=${combo%%:*} optim=${combo#*:}
    lr=$(lr_of "$optim")
    run=("$tg" train lenet --mode "$mode" --optimizer "$optim" --lr "$lr" "${common[@]}")
    IFS=, read -r l1 l2 l3 < <("${run[@]}" --epochs 3 | losses)
    # graph mode runs the eager step's formula: the same losses, bit for bit
    if [ "$mode" = graph ]; then straight[$optim]="$l1,$l2,$l3"
    else check "$optim: eager equals graph" "$l1,$l2,$l3" "${straight[$optim]}"; fi
    ck="$tmp/$mode-$optim"
    check "$combo fresh" "$("${run[@]}" --save "$ck.1.st" | losses)" "$l1"
    check "$combo resumed, saved again" "$("${run[@]}" --load "$ck.1.st" --save "$ck.2.st" | losses)" "$l2"
    check "$combo resumed twice" "$("${run[@]}" --load "$ck.2.st" | losses)" "$l3"
    # saving over the checkpoint just loaded replaces it atomically
    cp "$ck.2.st" "$ck.3.st"
    check "$combo saved over its input" "$("${run[@]}" --load "$ck.3.st" --save "$ck.3.st" | losses)" "$l3"
    check "$combo the replaced file resumes" "$("${run[@]}" --load "$ck.3.st" --epochs 1 | losses)" \
        "$("${run[@]}" --epochs 4 | losses | cut -d, -f4)"
done

# at the AVX2 level as well, where the built-in GEMM and OpenBLAS run at
# about the same speed (a choice between them by timing flipped between
# processes there): another process, and graph mode, repeat the losses
if "$tg" version --verbose | grep -Eq '^kernels: avx(2|512)'; then
    avx2=$(TG_CPU=avx2 "$tg" train lenet --mode eager "${common[@]}" --epochs 2 | losses)
    check "avx2: another process repeats the losses" \
        "$(TG_CPU=avx2 "$tg" train lenet --mode eager "${common[@]}" --epochs 2 | losses)" "$avx2"
    check "avx2: graph mode equals eager" \
        "$(TG_CPU=avx2 "$tg" train lenet --mode graph "${common[@]}" --epochs 2 | losses)" "$avx2"
fi

# checkpoints cross modes both ways (fresh and resumed ones), every optimizer
for optim in sgd adam adamw adadelta; do
    IFS=, read -r s1 s2 s3 <<<"${straight[$optim]}"
    o=(--optimizer "$optim" --lr "$(lr_of "$optim")")
    for first in graph eager; do
        for second in graph eager; do
            [ "$first" = "$second" ] && continue
            check "$optim: $first -> $second" \
                "$("$tg" train lenet --mode "$second" "${o[@]}" --load "$tmp/$first-$optim.1.st" "${common[@]}" --save "$tmp/x.st" | losses)" "$s2"
            check "$optim: $first -> $second -> $first" \
                "$("$tg" train lenet --mode "$first" "${o[@]}" --load "$tmp/x.st" "${common[@]}" | losses)" "$s3"
        done
    done
done
# an Adam checkpoint cannot resume graph mode's SGD
if "$tg" train lenet --mode graph --load "$tmp/eager-adam.1.st" "${common[@]}" 2>"$tmp/err" >/dev/null; then
    echo "FAIL: graph mode resumed an Adam checkpoint"; failures=$((failures + 1))
elif grep -qi "adam" "$tmp/err"; then passed=$((passed + 1))
else echo "FAIL: graph mode + Adam checkpoint: $(cat "$tmp/err")"; failures=$((failures + 1)); fi
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
