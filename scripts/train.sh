#!/usr/bin/env bash
# The README's main command: installs dependencies, builds, and trains
# LeNet-5 on MNIST (fetching the data into data/mnist on first use).
# Extra arguments go to `tg train lenet` (see build/tg train --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec build/tg train lenet "$@"
