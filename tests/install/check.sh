#!/usr/bin/env bash
# Installs a build into a temporary prefix (cmake --install) and builds
# examples/mlp.c against the installed copy three ways: with pkg-config
# (shared library), and with find_package(tensorgraph) using the shared
# and the static imported targets. Each must run, use the installed
# library, and print what the in-tree example prints.
# Usage: tests/install/check.sh BUILD_DIR SOURCE_DIR IN_TREE_EXAMPLE
set -euo pipefail
build=$1 src=$2 reference=$3
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"
for f in include/tg/tg.h include/tg/core.h bin/tg; do
    [ -e "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
pc=$(find "$prefix" -name tensorgraph.pc)
libdir=$(dirname "$(dirname "$pc")")
for f in libtg.a libtg.so cmake/tensorgraph/tensorgraphConfig.cmake; do
    [ -e "$libdir/$f" ] || { echo "not installed: $libdir/$f"; exit 1; }
done
"$reference" >"$tmp/expected"

echo "pkg-config: $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs tensorgraph)"
# shellcheck disable=SC2046
"$cc" -O2 -o "$tmp/mlp_pc" "$src/examples/mlp.c" \
    $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs tensorgraph) -lm
LD_LIBRARY_PATH=$libdir ldd "$tmp/mlp_pc" | grep "$libdir/libtg.so" >/dev/null ||
    { echo "mlp (pkg-config) does not load the installed libtg.so"; exit 1; }
LD_LIBRARY_PATH=$libdir "$tmp/mlp_pc" >"$tmp/out_pc"

cmake -S "$src/tests/install" -B "$tmp/consumer" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_PREFIX_PATH="$prefix" -DTG_EXAMPLE="$src/examples/mlp.c" >"$tmp/consumer.log"
cmake --build "$tmp/consumer" >>"$tmp/consumer.log"
ldd "$tmp/consumer/mlp_shared" | grep "$libdir/libtg.so" >/dev/null ||
    { echo "mlp (find_package, shared) does not load the installed libtg.so"; exit 1; }
"$tmp/consumer/mlp_shared" >"$tmp/out_shared"
"$tmp/consumer/mlp_static" >"$tmp/out_static"

for o in pc shared static; do
    cmp -s "$tmp/expected" "$tmp/out_$o" ||
        { echo "mlp built with $o prints other than the in-tree example:"; diff "$tmp/expected" "$tmp/out_$o" | head; exit 1; }
done
echo "installed into a temporary prefix; mlp built with pkg-config and find_package (shared, static) runs and matches"
