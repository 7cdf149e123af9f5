#!/usr/bin/env bash
# Runs a Python test script with PYTHON, or skips (exit 77, CTest's skip
# code) when that interpreter does not exist.  run_py.sh PYTHON SCRIPT ARGS...
py=$1; shift
if [ ! -x "$py" ]; then
    echo "SKIP: $py not found"
    exit 77
fi
exec "$py" "$@"
