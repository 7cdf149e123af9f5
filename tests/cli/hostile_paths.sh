#!/usr/bin/env bash
# Paths that are not regular files, given to every subcommand that reads or
# writes one: a FIFO used to block the readers forever (their open waited
# for a writer before any check could run), and a save onto a FIFO or device
# would rename a new file over the node (a device too: not tried here, a
# regression run as root would replace it). Each command must exit 1 within
# seconds with a message, and the FIFO must still be a FIFO.
# Usage: hostile_paths.sh path/to/tg
set -u
tg=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
data=$(cd "$(dirname "$0")/../data/onnx_import" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passed=0
fifo="$tmp/fifo"
mkfifo "$fifo"

# expect NEEDLE -- command...: status 1 within 30 s and NEEDLE in stderr
expect() {
    local needle=$1; shift 2
    local err rc
    err=$(timeout 30 "$@" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -ne 1 ] || ! grep -qF -- "$needle" <<<"$err"; then
        echo "FAIL: $* -> status $rc (want 1; 124 is a hang), stderr: $err"
        failures=$((failures + 1))
    else
        passed=$((passed + 1))
    fi
}

# readers
expect "not a regular file" -- "$tg" inspect "$fifo"
expect "not a regular file" -- "$tg" run "$fifo" --output "$tmp/o.st"
expect "not a regular file" -- "$tg" run "$data/mlp.onnx" --input "$fifo" --output "$tmp/o.st"
expect "not a regular file" -- "$tg" eval lenet --load "$fifo"
expect "not a regular file" -- "$tg" data idx "$fifo"
expect "not a regular file" -- "$tg" bench onnx "$fifo"
# writers: refused before any work
expect "is a device, FIFO or socket" -- "$tg" run "$data/mlp.onnx" \
    --input "$data/mlp_in.safetensors" --output "$fifo"
expect "is a device, FIFO or socket" -- "$tg" graph lenet --format dot -o "$fifo"
expect "is a device, FIFO or socket" -- "$tg" inspect "$data/mlp.onnx" --dot "$fifo"
if [ -p "$fifo" ]; then passed=$((passed + 1)); else
    echo "FAIL: the FIFO was replaced"; failures=$((failures + 1)); fi
if [ "$(ls "$tmp")" = "fifo" ]; then passed=$((passed + 1)); else
    echo "FAIL: files were left behind: $(ls "$tmp")"; failures=$((failures + 1)); fi

echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
