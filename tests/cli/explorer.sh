#!/usr/bin/env bash
# The graph explorer page in a real browser (headless Chromium): `tg graph
# lenet --html` draws every node of each level, a click opens the side
# panel, the level switch changes the node count, the profile's spans are
# drawn, and the page logs no errors; `tg inspect --html` the same for an
# ONNX model; bad option combinations fail with a message.
# Skipped (77) without chromium. Usage: explorer.sh path/to/tg
set -u
tg=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then echo "skipped: chromium is not installed (apt-get install chromium)"; exit 77; fi
py=/usr/bin/python3
[ -x "$py" ] || py=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passed=0
check() { # description, then a command that must succeed
    local what=$1; shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
# the page's self-test verdict (JSON) on stdout
selftest() {
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$tmp/chrome" --dump-dom --virtual-time-budget=5000 "file://$1#selftest" \
        2>/dev/null | "$py" -c '
import html, re, sys
found = re.findall(r"<pre id=\"tg-selftest\">(.*?)</pre>", sys.stdin.read(), re.S)
print(html.unescape(found[-1]) if found else "{}")'
}
# asserts a Python expression over the verdict v
verdict() { "$py" -c "import json, sys; v = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

# node counts the tool reports for the drawn levels
n0=$("$tg" graph lenet --backward --opt 0 -o "$tmp/l0.dot" | sed -E 's/.*\(([0-9]+) nodes.*/\1/')
n2=$("$tg" graph lenet --backward --opt 2 -o "$tmp/l2.dot" | sed -E 's/.*\(([0-9]+) nodes.*/\1/')

# a Chrome trace with spans named after level-2 nodes, one of them hostile
cat >"$tmp/trace.json" <<'JSON'
{"traceEvents": [
  {"name": "relu/fused", "cat": "fused_epilogue", "ph": "X", "ts": 10, "dur": 120.5, "pid": 1, "tid": 0, "args": {"run": 0}},
  {"name": "max_pool2d", "cat": "max_pool2d_compact", "ph": "X", "ts": 131, "dur": 20, "pid": 1, "tid": 1, "args": {"run": 0}},
  {"name": "<\/script><script>alert(3)<\/script>", "cat": "x", "ph": "X", "ts": 160, "dur": 5, "pid": 1, "tid": 0, "args": {"run": 1}}
], "displayTimeUnit": "ms"}
JSON
check "tg graph lenet --html" "$tg" graph lenet --backward --html "$tmp/lenet.html" \
    --profile "$tmp/trace.json" >/dev/null
selftest "$tmp/lenet.html" >"$tmp/v.json"
check "the self-test ran" verdict "$tmp/v.json" "'levels' in v"
check "no console errors: $(cat "$tmp/v.json" | head -c 400)" verdict "$tmp/v.json" "v.get('errors') == []"
check "level 0 draws LeNet's $n0 nodes" verdict "$tmp/v.json" \
    "[l['drawn'] for l in v['levels'] if l['level'] == 0] == [$n0] and v['levels'][0]['shown'] == '$n0 nodes'"
check "level 2 draws $n2 nodes" verdict "$tmp/v.json" "[l['drawn'] for l in v['levels'] if l['level'] == 2] == [$n2]"
check "the level switch changes the node count" verdict "$tmp/v.json" \
    "len(set(l['drawn'] for l in v['levels'])) > 1"
check "a click opens the panel on the clicked node" verdict "$tmp/v.json" \
    "v['panel']['open'] and v['panel']['name'] == v['clicked'] and v['panel']['inputs'] > 0"
check "a fused node opens into its program" verdict "$tmp/v.json" "v['cluster']['after'] > v['cluster']['before']"
check "the memory plan's buffers are drawn" verdict "$tmp/v.json" "v['memory']['buffers'] > 10"
check "the profile's three spans are drawn" verdict "$tmp/v.json" "v['profile']['spans'] == 3"
check "search finds the relus" verdict "$tmp/v.json" "v['search']['hits'] > 0"

check "tg inspect --html" "$tg" inspect "$src/tests/data/onnx/gemm_relu.onnx" --html "$tmp/m.html" >/dev/null
selftest "$tmp/m.html" >"$tmp/m.json"
check "the ONNX page: no errors, every node drawn" verdict "$tmp/m.json" \
    "v.get('errors') == [] and all(l['drawn'] == l['nodes'] for l in v['levels'])"

expect_fail() { # description, stderr pattern, command
    local what=$1 pattern=$2; shift 2
    local err
    err=$("$@" 2>&1 >/dev/null) && { echo "FAIL: $what succeeded"; failures=$((failures + 1)); return; }
    if grep -q -- "$pattern" <<<"$err"; then passed=$((passed + 1)); else
        echo "FAIL: $what: $err"; failures=$((failures + 1)); fi
}
expect_fail "--profile without --html" "goes with --html" "$tg" graph lenet --profile "$tmp/trace.json"
expect_fail "--html with --memory" "cannot go with --memory" "$tg" graph lenet --html "$tmp/x.html" --memory
expect_fail "a missing profile" "none.json" "$tg" graph lenet --html "$tmp/x.html" --profile "$tmp/none.json"
expect_fail "a profile that is not a trace" "traceEvents" "$tg" graph lenet --html "$tmp/x.html" --profile "$tmp/m.json"
check "no page written by the failures" test ! -e "$tmp/x.html"
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
