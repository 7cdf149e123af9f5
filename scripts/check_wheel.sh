#!/usr/bin/env bash
# CI: the Python package as a user gets it. Builds the wheel (pip wheel
# through setup.py: CMake, portable x86-64-v2 baseline), installs it into a
# fresh venv, and from a folder outside the source tree runs the installed
# tg tool, examples/lenet_mnist.py on a few hundred MNIST images and the
# Python test suite against the installed package (the source's python/
# and build/ are not on the path; the suite checks it imports the venv's
# copy). The venv sees Debian's site packages for numpy, pytest and torch.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
py=/usr/bin/python3
work=$(mktemp -d /tmp/tg-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "wheel: building"
"$py" -m pip wheel --no-build-isolation --no-deps -q -w "$work/dist" .
wheel=$(ls "$work"/dist/tensorgraph-*.whl)
echo "wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"
"$py" - "$wheel" <<'PY' || exit 1
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
missing = [m for m in ("tensorgraph/libtg.so.0", "tensorgraph/tg", "tensorgraph/__main__.py")
           if m not in names]
if missing or not any(n.startswith("tensorgraph/_C.") for n in names):
    sys.exit(f"wheel: missing {missing or 'tensorgraph/_C'}")
PY

"$py" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --no-deps --no-index "$wheel"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cd "$work"  # nothing of the source tree importable from here
unset PYTHONPATH
where=$("$work/venv/bin/python" -c 'import tensorgraph; print(tensorgraph.__file__)')
echo "wheel: imports $where"
[ "$where" = "$site/tensorgraph/__init__.py" ] || { echo "wheel: imported the wrong copy"; exit 1; }
"$work/venv/bin/python" -c 'import tensorgraph; tensorgraph.show_config()'
"$work/venv/bin/tg" version
verbose=$("$work/venv/bin/python" -m tensorgraph version --verbose)
echo "${verbose%%blas:*}"

if "$work/venv/bin/tg" data mnist --dir "$src/data/mnist"; then
    out=$("$work/venv/bin/python" "$src/examples/lenet_mnist.py" --data "$src/data/mnist" \
          --limit 500 --epochs 3 --threads 2 --json)
    echo "wheel: lenet_mnist.py $out"
    # 500 images, 3 epochs: learning, not chance (0.1)
    "$py" -c 'import json, sys; r = json.loads(sys.argv[1]); sys.exit(not (r["loss"] < 2.2 and r["test_accuracy"] > 0.3))' "$out" \
        || { echo "wheel: LeNet did not learn"; exit 1; }
else
    echo "warning: MNIST could not be fetched here; lenet_mnist.py was skipped"
fi

echo "wheel: the Python suite against $site/tensorgraph"
TG_NUM_THREADS=2 PYTHONDONTWRITEBYTECODE=1 TG_TEST_PACKAGE_DIR="$site/tensorgraph" \
    "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$src/tests/python"
