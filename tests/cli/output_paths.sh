#!/usr/bin/env bash
# Output paths are checked before any work: a missing or unwritable
# directory, a directory given as a file, and (tg run) an output that is
# the same file as an input or another output (./x, x and hard links
# alike) each exit 1 with a message naming the option, and write nothing.
# Usage: output_paths.sh path/to/tg
set -u
tg=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
data=$(cd "$(dirname "$0")/../data/onnx_import" && pwd)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
failures=0 passed=0

# expect NEEDLE -- command...: status 1 and NEEDLE in stderr
expect() {
    local needle=$1; shift 2
    local err rc
    err=$("$@" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -ne 1 ] || ! grep -qF -- "$needle" <<<"$err"; then
        echo "FAIL: $* -> status $rc (want 1), stderr: $err"; failures=$((failures + 1))
    else
        passed=$((passed + 1))
    fi
}
unchanged() { # what file checksum
    if [ "$(cksum <"$2")" = "$3" ]; then passed=$((passed + 1)); else
        echo "FAIL: $1: $2 was changed"; failures=$((failures + 1)); fi
}

# tg train: the paths are checked before the data is even looked at (no
# MNIST here and no way to fetch it: a data error would mean a late check)
notrain=(env PATH=/nonexistent "$tg" train lenet --data "$tmp/no-mnist" --quiet)
expect "--save $tmp/none/x.st: the directory does not exist" -- "${notrain[@]}" --save "$tmp/none/x.st"
expect "--export $tmp/none/m.onnx: the directory does not exist" -- "${notrain[@]}" --export "$tmp/none/m.onnx"
expect "--profile $tmp/none/p.json: the directory does not exist" -- "${notrain[@]}" --profile "$tmp/none/p.json"
expect "--save $tmp: is a directory" -- "${notrain[@]}" --save "$tmp"
expect "--save $tmp/d/: is a directory" -- "${notrain[@]}" --save "$tmp/d/"
touch "$tmp/file"
expect "the directory part is not a directory" -- "${notrain[@]}" --save "$tmp/file/x.st"
mkdir "$tmp/ro" && chmod a-w "$tmp/ro"
if [ -w "$tmp/ro" ]; then passed=$((passed + 1)) # root writes anywhere
else expect "--save $tmp/ro/x.st: the directory is not writable" -- "${notrain[@]}" --save "$tmp/ro/x.st"; fi
expect "--save $tmp/./m and --export $tmp/m are the same file" -- "${notrain[@]}" \
    --save "$tmp/./m" --export "$tmp/m"
expect "-o $tmp/none/g.dot: the directory does not exist" -- "$tg" graph lenet -o "$tmp/none/g.dot"
expect "--dot $tmp/none/g.dot: the directory does not exist" -- "$tg" inspect "$data/mlp.onnx" \
    --dot "$tmp/none/g.dot"

# tg run: outputs never replace inputs or each other
cp "$data/mlp.onnx" "$tmp/model.onnx"
cp "$data/mlp_in.safetensors" "$tmp/in.st"
ln "$tmp/in.st" "$tmp/in_link.st"
model_sum=$(cksum <"$tmp/model.onnx") in_sum=$(cksum <"$tmp/in.st")
run=("$tg" run "$tmp/model.onnx" --input "$tmp/in.st")
expect "--output $tmp/in.st and --input $tmp/in.st are the same file" -- "${run[@]}" --output "$tmp/in.st"
expect "are the same file" -- "${run[@]}" --output "$tmp/./in.st"
expect "are the same file" -- "${run[@]}" --output "$tmp/in_link.st"
expect "--output $tmp/model.onnx and model $tmp/model.onnx are the same file" -- "${run[@]}" \
    --output "$tmp/model.onnx"
expect "--grad $tmp/in.st and --input" -- "${run[@]}" --output "$tmp/o.st" --grad "$tmp/in.st"
expect "--output $tmp/g.st and --grad $tmp/g.st are the same file" -- "${run[@]}" \
    --output "$tmp/g.st" --grad "$tmp/g.st"
cd "$tmp" || exit 1
expect "are the same file" -- "${run[@]}" --output "g.st" --grad "./g.st"
cd - >/dev/null || exit 1
expect "--output $tmp/none/o.st: the directory does not exist" -- "${run[@]}" --output "$tmp/none/o.st"
expect "--grad $tmp/none/g.st: the directory does not exist" -- "${run[@]}" --output "$tmp/o.st" \
    --grad "$tmp/none/g.st"
unchanged "tg run refusals" "$tmp/model.onnx" "$model_sum"
unchanged "tg run refusals" "$tmp/in.st" "$in_sum"
if [ -e "$tmp/o.st" ] || [ -e "$tmp/g.st" ]; then
    echo "FAIL: a refused tg run wrote a file"; failures=$((failures + 1))
else passed=$((passed + 1)); fi
# and distinct paths still work
if "${run[@]}" --output "$tmp/o.st" --grad "$tmp/g.st" && [ -s "$tmp/o.st" ] && [ -s "$tmp/g.st" ]; then
    passed=$((passed + 1))
else echo "FAIL: tg run with distinct paths"; failures=$((failures + 1)); fi

echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
