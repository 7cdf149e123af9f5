#!/usr/bin/env bash
# The build variants a user meets, side by side: portable (x86-64-v2
# baseline, kernels chosen at run time), `-DTG_MARCH=x86-64-v3` (what a
# distribution built for AVX2 machines gives: AVX2 and FMA everywhere) and
# native (-march=native). Builds each into OUT/<variant> (Release, only the
# targets measured), then for every variant and instruction-set level it
# can run (TG_CPU; on an AVX-512 machine the x86-64-v3 build is run at
# TG_CPU=avx2, which is what an AVX2 machine executes):
#   - bench/isa_levels.sh: the memory-bound kernels' us and share of a copy;
#   - bench/lenet_isa_modes.sh: LeNet eager, graph level 0, graph level 2.
# Ends with one "guard" JSON line per variant and level: whether graph
# level 2 <= level 0 <= eager held in the medians of wall and of CPU time
# (no optimization may make a mode slower, issue 21; --threads 1 makes the
# CPU time the work itself). A guard, not a test: it prints, never fails.
# Usage: bench/isa_builds.sh [--out DIR] [--rounds N] [--limit N]
#          [--threads T] [--variants "portable v3 native"] [--skip-build]
#          [--data DIR] [--no-kernels]
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=build-isa rounds=3 limit=12800 threads=1 variants="portable v3 native"
skip_build=0 data=data/mnist kernels=1
while [ $# -gt 0 ]; do
    case "$1" in
    --out) out_dir=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    --data) data=$2; shift 2 ;;
    --no-kernels) kernels=0; shift ;;
    *) echo "isa_builds.sh: unknown option $1 (--out DIR, --rounds N, --limit N, --threads T," \
            "--variants LIST, --skip-build, --data DIR, --no-kernels)" >&2
       exit 2 ;;
    esac
done

cmake_flags() {  # the configure flags of one variant
    case "$1" in
    portable) echo "-DTG_NATIVE=OFF -DTG_MARCH=x86-64-v2" ;;
    v3) echo "-DTG_NATIVE=OFF -DTG_MARCH=x86-64-v3" ;;
    native) echo "-DTG_NATIVE=ON" ;;
    *) echo "isa_builds.sh: unknown variant $1 (portable, v3, native)" >&2; return 2 ;;
    esac
}
levels_of() {  # the TG_CPU levels worth running in a variant
    case "$1" in
    portable) echo "native avx2 generic" ;;
    v3) echo "avx2" ;;
    native) echo "native" ;;
    esac
}

for v in $variants; do
    flags=$(cmake_flags "$v")
    if [ "$skip_build" = 0 ]; then
        # shellcheck disable=SC2086
        cmake -S . -B "$out_dir/$v" -DCMAKE_BUILD_TYPE=Release $flags >/dev/null
        cmake --build "$out_dir/$v" -j2 --target tg bench_pool bench_memory_ops >/dev/null
    fi
    [ -x "$out_dir/$v/tg" ] || { echo "isa_builds.sh: no $out_dir/$v/tg" >&2; exit 1; }
    echo "{\"bench\":\"isa_builds\",\"variant\":\"$v\",\"build\":\"$out_dir/$v\",\"flags\":\"$flags\"}"
done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for v in $variants; do
    b="$out_dir/$v"
    if [ "$kernels" = 1 ]; then
        bench/isa_levels.sh --build "$b" --rounds "$rounds" --threads 1 | grep '"rounds"' || true
    fi
    bench/lenet_isa_modes.sh --build "$b" --rounds "$rounds" --limit "$limit" --threads "$threads" \
        --levels "$(levels_of "$v")" --data "$data" | tee -a "$log" | grep '"summary"' || true
done

/usr/bin/python3 - "$log" <<'PY'
import json, sys
med = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("summary"):
        med[(d["build"], d["level"], d["mode"])] = d
for (b, level) in sorted({(b, l) for (b, l, _) in med}):
    ds = [med.get((b, level, m)) for m in ("eager", "graph0", "graph2")]
    if None in ds:
        continue
    for clock in ("median_s", "median_cpu_s"):
        e, g0, g2 = (d[clock] for d in ds)
        if None in (e, g0, g2):
            continue
        print(json.dumps({"bench": "isa_builds", "guard": "level2 <= level0 <= eager",
                          "build": b, "level": level, "clock": clock, "eager": e, "graph0": g0,
                          "graph2": g2, "level2_over_eager": round(g2 / e, 3),
                          "level0_over_eager": round(g0 / e, 3), "holds": g2 <= g0 <= e}))
PY
