#!/usr/bin/env bash
# Installs the reference implementations the cross-check tests compare
# against, from Debian's packages: PyTorch and onnx for /usr/bin/python3
# (ONNX conformance cases, PyTorch-exported models and gradients, the
# Python front end's oracle tests). The suite passes without them (those
# tests are skipped with a reason); CI installs them so nothing is skipped.
set -euo pipefail

packages=(python3-torch python3-onnx python3-numpy)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup-oracles: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
