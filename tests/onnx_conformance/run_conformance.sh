#!/usr/bin/env bash
# CTest onnx_conformance: dumps ONNX's node test cases with PYTHON (exit 77,
# skipped, when it has no onnx) and runs them with RUNNER.
#   run_conformance.sh PYTHON RUNNER WORK_DIR
set -u
py=$1 runner=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$py" ]; then
    echo "SKIP: $py not found"
    exit 77
fi
rm -rf "$work"
"$py" "$here/export_cases.py" "$work" || exit $?
exec "$runner" "$work" --xfail "$here/expected_failures.txt"
