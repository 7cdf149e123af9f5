#!/usr/bin/env bash
# `tg run` and `tg inspect` on the fixtures of tests/data/onnx_import/: a
# good run in both modes (outputs and gradients written), and bad input
# that must exit with status 1 and one clear message naming the problem.
#   cli.sh path/to/tg path/to/tests/data/onnx_import
set -u
tg=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passed=0

# expect STATUS NEEDLE -- command...: runs it, checks status and stderr
expect() {
    local status=$1 needle=$2; shift 3
    local err rc
    err=$("$@" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -ne "$status" ] || ! grep -qF -- "$needle" <<<"$err"; then
        echo "FAIL: $* -> status $rc (want $status), stderr: $err"
        failures=$((failures + 1))
    else
        passed=$((passed + 1))
    fi
}
# check DESCRIPTION command...: succeeds
check() {
    local what=$1; shift
    if "$@" >/dev/null 2>"$tmp/err"; then
        passed=$((passed + 1))
    else
        echo "FAIL: $what: $(cat "$tmp/err")"
        failures=$((failures + 1))
    fi
}

for mode in eager graph; do
    check "run $mode" "$tg" run "$data/mlp.onnx" --input "$data/mlp_in.safetensors" \
        --output "$tmp/out_$mode.safetensors" --grad "$tmp/grad_$mode.safetensors" --mode "$mode"
    check "outputs $mode written" test -s "$tmp/out_$mode.safetensors"
    check "grads $mode written" test -s "$tmp/grad_$mode.safetensors"
    check "grads $mode keyed by ONNX names" grep -q '"w1"' "$tmp/grad_$mode.safetensors"
done
check "run without --mode (graph)" "$tg" run "$data/shape_chain.onnx" \
    --input "$data/shape_chain_in.safetensors" --output "$tmp/sc.safetensors"
check "inspect" "$tg" inspect "$data/mlp.onnx" --dot "$tmp/mlp.dot"
check "dot written" grep -q digraph "$tmp/mlp.dot"
out=$("$tg" inspect "$data/mlp.onnx")
for needle in "opset: 11" "x                        float32  [N, 4]" "Gemm                     2" \
    "parameters: 43"; do
    if grep -qF -- "$needle" <<<"$out"; then passed=$((passed + 1)); else
        echo "FAIL: inspect output lacks '$needle':"; echo "$out"; failures=$((failures + 1)); fi
done

# wrong inputs, each named
expect 1 "'x' is not an input of the model (its inputs: none)" -- "$tg" run \
    "$data/widened.onnx" --input "$data/x23.safetensors" --output "$tmp/o.safetensors"
expect 1 "input 'x' has shape [2, 3], the model expects [-1, 4]" -- "$tg" run \
    "$data/mlp.onnx" --input "$data/x23.safetensors" --output "$tmp/o.safetensors"
expect 1 "missing input 'x'" -- "$tg" run "$data/mlp.onnx" --output "$tmp/o.safetensors" \
    --mode eager
expect 1 "'x' is not an input" -- "$tg" run "$data/widened.onnx" --input "$data/mlp_in.safetensors" \
    --output "$tmp/o.safetensors"
expect 1 "--mode must be eager or graph" -- "$tg" run "$data/mlp.onnx" --output "$tmp/o" --mode fast
expect 1 "--output is required" -- "$tg" run "$data/mlp.onnx"
expect 1 "cannot open" -- "$tg" run "$tmp/none.onnx" --output "$tmp/o"
expect 1 "ai.onnx.ml.LabelEncoder (nodes 'labels_1', 'labels_2')" -- "$tg" inspect "$data/unsupported.onnx"
expect 1 "cycle through node 'n1'" -- "$tg" run "$data/bad_cycle.onnx" \
    --input "$data/x23.safetensors" --output "$tmp/o"
expect 1 "attribute 'alpha' should be FLOAT, got INTS" -- "$tg" run "$data/bad_attr_type.onnx" \
    --input "$data/x23.safetensors" --output "$tmp/o"
printf 'not a model' >"$tmp/junk.onnx"
expect 1 "junk.onnx" -- "$tg" inspect "$tmp/junk.onnx"

# tg bench onnx: tensorgraph's time (onnxruntime's only where installed:
# TG_ORT_DIR points nowhere here, so the line says it was not found)
bench=$(TG_ORT_DIR=/nonexistent "$tg" bench onnx "$data/mlp.onnx" --batch 3 --runs 2 \
        --profile "$tmp/trace.json" 2>&1)
check "bench onnx prints tg_ms" grep -q '"batch":3,"threads":2,"runs":2,"tg_ms":' <<<"$bench"
check "bench onnx prints the CPU time" grep -Eq '"tg_ms":[0-9.]+,"tg_cpu_ms":[0-9.]+' <<<"$bench"
check "bench onnx says onnxruntime is absent" grep -q '"ort":"not found' <<<"$bench"
check "bench onnx profile written" grep -q '"traceEvents"' "$tmp/trace.json"
expect 1 "has a fixed batch of 2" -- "$tg" bench onnx "$data/opset11_forms.onnx" --batch 4
expect 1 "--runs must be a positive number" -- "$tg" bench onnx "$data/mlp.onnx" --runs 0

echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
