#!/usr/bin/env bash
# Installs onnxruntime's Node.js package (its CPU runtime is inside the
# package; no install scripts run) into BUILD_DIR/ort, where
# `tg bench onnx` looks for it (TG_ORT_DIR names another folder).
#   scripts/install_ort.sh [BUILD_DIR]   (default: build)
set -eu
build=${1:-build}
if ! command -v npm > /dev/null; then
    echo "install_ort: npm is not installed (apt-get install nodejs npm)" >&2
    exit 1
fi
mkdir -p "$build/ort"
cd "$build/ort"
npm install --ignore-scripts --no-audit --no-fund onnxruntime-node
echo "onnxruntime-node $(node -p "require('onnxruntime-node/package.json').version") in $(pwd)"
