#!/usr/bin/env bash
# Bad input to `tg train` / `tg eval`: each case must exit with status 1
# and one clear message, never crash. Usage: train_errors.sh path/to/tg
set -u
tg=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passed=0

# expect STATUS NEEDLE -- command...: runs it, checks status and stderr
expect() {
    local status=$1 needle=$2; shift 3
    local err rc
    err=$("$@" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -ne "$status" ] || ! grep -qi -- "$needle" <<<"$err"; then
        echo "FAIL: $* -> status $rc (want $status), stderr: $err"
        failures=$((failures + 1))
    else
        passed=$((passed + 1))
    fi
}

# a safetensors file: 8-byte little-endian header length, JSON, data
safetensors() { # path json data-bytes
    local n=${#2}
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x00\\x00\\x00\\x00' \
        $((n & 255)) $(((n >> 8) & 255)) $(((n >> 16) & 255)) $(((n >> 24) & 255)))" >"$1"
    printf '%s' "$2" >>"$1"
    printf "$3" >>"$1"
}

# no data and no way to fetch it (nothing on PATH)
expect 1 "MNIST" -- env PATH=/nonexistent "$tg" train lenet --data "$tmp/none" --quiet
# corrupted IDX files: wrong sizes and hashes, and no way to refetch
mkdir -p "$tmp/bad"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    printf 'not an idx file' >"$tmp/bad/$f"
done
expect 1 "MNIST" -- env PATH=/nonexistent "$tg" train lenet --data "$tmp/bad" --quiet
# a checkpoint of another model (metadata says so)
safetensors "$tmp/mlp.safetensors" '{"__metadata__":{"model":"mlp"},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}' '\x00\x00\x80\x3f'
expect 1 "not lenet" -- "$tg" eval lenet --load "$tmp/mlp.safetensors"
# a checkpoint without metadata whose tensors are not LeNet's
safetensors "$tmp/other.safetensors" '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}' '\x00\x00\x80\x3f'
expect 1 "LeNet-5" -- "$tg" eval lenet --load "$tmp/other.safetensors"
# truncated and missing checkpoints
head -c 20 "$tmp/mlp.safetensors" >"$tmp/short.safetensors"
expect 1 "safetensors\|truncated\|header" -- "$tg" eval lenet --load "$tmp/short.safetensors"
expect 1 "no such file\|cannot open\|No such" -- "$tg" eval lenet --load "$tmp/absent.safetensors"
# bad options
expect 1 "must be" -- "$tg" train lenet --epochs 0
expect 1 "unknown option" -- "$tg" train lenet --frobnicate
expect 1 "needs an integer" -- "$tg" train lenet --batch many
expect 1 "expected a model name" -- "$tg" train resnet
expect 1 "unknown optimizer" -- "$tg" train lenet --optimizer lbfgs
expect 1 "needs --load" -- "$tg" eval lenet
# numbers: non-finite values are refused at parse time, each range check
# names its option
for v in nan inf -inf 1e999; do
    expect 1 "option --lr needs a finite number, got '$v'" -- "$tg" train lenet --lr "$v"
    expect 1 "option --momentum needs a finite number, got '$v'" -- "$tg" train lenet --momentum "$v"
done
expect 1 "--lr must be > 0, got 0" -- "$tg" train lenet --lr 0
expect 1 "--lr must be > 0, got -1" -- "$tg" train lenet --lr=-1
expect 1 "--momentum must be >= 0, got -0.5" -- "$tg" train lenet --momentum=-0.5
expect 1 "--batch must be >= 1, got 0" -- "$tg" train lenet --batch 0
expect 1 "--prefetch must be between 0 and 64, got 65" -- "$tg" train lenet --prefetch 65
expect 1 "--limit must be >= 0, got -3" -- "$tg" train lenet --limit=-3
expect 1 "unknown command" -- "$tg" frobnicate
# help is not an error
if "$tg" --help | grep -q "train" && "$tg" train --help | grep -q -- "--epochs"; then
    passed=$((passed + 1))
else
    echo "FAIL: tg --help / tg train --help"; failures=$((failures + 1))
fi
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
