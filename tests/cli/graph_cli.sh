#!/usr/bin/env bash
# `tg graph lenet`: the DOT picture, rendering through Graphviz (or a clear
# message without it), the memory report, the picture over two devices,
# and bad options.
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
json0=$("$tg" graph lenet --opt 0 --memory --json)
naive0=$(sed -n 's/.*"naive_bytes":\([0-9]*\).*/\1/p' <<<"$json0")
planned0=$(sed -n 's/.*"planned_peak_bytes":\([0-9]*\).*/\1/p' <<<"$json0")
# level 2 fuses values away (naive drops): its peak against level 0's naive
check "planned peak at level 2 <= 35% of level 0's naive ($planned of $naive0)" bash -c \
    "[ -n '$naive0' ] && [ $((planned * 100)) -le $((naive0 * 35)) ]"
check "planned peak <= 36% of naive at level 0 ($planned0 of $naive0)" bash -c \
    "[ -n '$planned0' ] && [ $((planned0 * 100)) -le $((naive0 * 36)) ]"
# the passes: level 0 draws the graph as built, level 2 fewer nodes
n0=$("$tg" graph lenet --backward --opt 0 -o "$tmp/b0.dot" | sed -n 's/.*(\([0-9]*\) nodes).*/\1/p')
n2=$("$tg" graph lenet --backward --opt 2 -o "$tmp/b2.dot" | sed -n 's/.*(\([0-9]*\) nodes).*/\1/p')
check "level 2 draws fewer nodes ($n2 < $n0)" bash -c "[ -n '$n0' ] && [ -n '$n2' ] && [ $n2 -lt $n0 ]"
passes=$("$tg" graph lenet --opt 2 --passes --json)
check "--passes --json: a line per pass" bash -c "grep -q '^{\"pass\":\"cse\",.*\"merged\":[0-9]' <<<'$passes'"
check "--passes --json: the step equals level 0's" bash -c "grep -q '\"bitwise_equal\":true' <<<'$passes'"
check "--passes at level 0: no pass runs" bash -c \
    "! '$tg' graph lenet --opt 0 --passes --json | grep -q '\"pass\"'"
# --batch: a fixed batch size, or -1: the graph as tg train builds it (batch unknown)
check "--batch 32 draws batch 32" bash -c \
    "'$tg' graph lenet --batch 32 -o '$tmp/b32.dot' >/dev/null && grep -q 'float32\[32, 1, 28, 28\]' '$tmp/b32.dot'"
check "--batch -1 draws the symbolic batch" bash -c \
    "'$tg' graph lenet --backward --batch -1 -o '$tmp/bs.dot' | grep -q 'batch dim unknown' && grep -q 'float32\[-1, 1, 28, 28\]' '$tmp/bs.dot'"
check "--memory needs a batch size" bash -c \
    "'$tg' graph lenet --memory --batch -1 2>&1 | grep -q 'needs a batch size'"
check "bad batch" bash -c "'$tg' graph lenet --batch 0 2>&1 | grep -q 'must be >= 1, or -1'"
check "bad level" bash -c "'$tg' graph lenet --opt 3 2>&1 | grep -q 'must be 0, 1 or 2'"
check "bad format" bash -c "! '$tg' graph lenet --format jpg 2>/dev/null"
check "bad model" bash -c "! '$tg' graph resnet 2>/dev/null"
# every optimizer's update is built into the step: Adam's m, v and parameter
# fuse into one node per parameter (10 nodes for 30 assigns), and each
# step equals level 0's
for o in adam adamw; do
    passes=$("$tg" graph lenet --optimizer $o --passes --json)
    check "$o: fuse_updates fuses m, v and the parameter" bash -c \
        "grep -q '^{\"pass\":\"fuse_updates\",.*\"fused\":10,\"assigns\":30}' <<<'$passes'"
    check "$o: the step equals level 0's" bash -c "grep -q '\"bitwise_equal\":true' <<<'$passes'"
done
check "adadelta: the step equals level 0's" bash -c \
    "'$tg' graph lenet --optimizer adadelta --passes --json | grep -q '\"bitwise_equal\":true'"
check "graph: unknown optimizer" bash -c \
    "'$tg' graph lenet --optimizer rmsprop 2>&1 | grep -q \"unknown optimizer 'rmsprop'\""
check "train: unknown optimizer" bash -c \
    "'$tg' train lenet --mode graph --optimizer lbfgs 2>&1 | grep -q \"unknown optimizer 'lbfgs'\""
check "unknown mode" bash -c "'$tg' train lenet --mode lazy 2>&1 | grep -q 'unknown mode'"
# partitioned over two devices: a cluster per device, Send/Recv pairs joined
check "devices DOT" "$tg" graph lenet --devices 2 --backward -o "$tmp/d.dot" >/dev/null
check "devices DOT has both devices" bash -c \
    "grep -q 'label=\"cpu:0\"' '$tmp/d.dot' && grep -q 'label=\"cpu:1\"' '$tmp/d.dot'"
check "devices DOT joins Sends to Recvs" bash -c "grep -q 'penwidth=2.5' '$tmp/d.dot'"
check "devices: out of range" bash -c \
    "'$tg' graph lenet --devices 65 2>&1 | grep -q 'takes 1..64'"
check "graph --devices 0 refused" bash -c \
    "'$tg' graph lenet --devices 0 2>&1 | grep -q 'takes 1..64'"
check "train --devices needs graph mode" bash -c \
    "'$tg' train lenet --mode eager --devices 2 2>&1 | grep -q 'use it with --mode graph'"
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
