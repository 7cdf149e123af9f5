#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, runs all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd build && ctest --output-on-failure -j2
