#!/usr/bin/env bash
# Installs kvchaos::core into a temporary prefix and builds examples/consumer against it, as an
# embedding service would. Usage: ci/check-install.sh BUILD_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="$(cd "${1:?usage: ci/check-install.sh BUILD_DIR}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$root/examples/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" -j2 >/dev/null
"$work/build/kvchaos_consumer"
echo "check-install: examples/consumer builds and runs against the installed kvchaos package"
