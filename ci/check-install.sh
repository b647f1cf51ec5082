#!/usr/bin/env bash
# Installs kvchaos into a temporary prefix and builds the examples against it, as an embedding
# service would: examples/consumer (links kvchaos::core) and examples/embedding (save and load with
# checksums through client::CacheClient), run against an in-process meta service and against a
# 3-node cluster of the installed `kvchaos node` (examples/cluster/local-cluster.sh; skipped, and
# said so, without redis-server); and the Python module, when built, runs examples/python from the
# install. Usage: ci/check-install.sh BUILD_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="$(cd "${1:?usage: ci/check-install.sh BUILD_DIR}" && pwd)"
work="$(mktemp -d)"
cleanup() {
  [[ -d "$work/cluster" ]] && KVCHAOS="$work/prefix/bin/kvchaos" "$root/examples/cluster/local-cluster.sh" stop "$work/cluster" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
for example in consumer embedding; do
  cmake -S "$root/examples/$example" -B "$work/build-$example" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
  cmake --build "$work/build-$example" -j2 >/dev/null
done
"$work/build-consumer/kvchaos_consumer"
echo "check-install: examples/consumer builds and runs against the installed kvchaos package"

export KVCHAOS_LOG=warn
# The Python module, when the build has it (KVCHAOS_PYTHON): installed under the prefix's
# lib/python3.X/dist-packages, imported from there by Debian's interpreter.
py_dir=$(find "$work/prefix/lib" -maxdepth 2 -type d -name dist-packages -path '*python3*' | head -1)
if [[ -n "$py_dir" ]] && compgen -G "$py_dir/kvchaos*.so" >/dev/null; then
  PYTHONPATH="$py_dir" /usr/bin/python3 "$root/examples/python/kv_connector.py"
  echo "check-install: examples/python/kv_connector.py runs on the installed Python module ($py_dir)"
else
  echo "check-install: SKIPPED the Python module: this build has none (KVCHAOS_PYTHON)"
fi
mkdir -p "$work/store/p0" "$work/store/p1"
cat >"$work/in-process.yaml" <<EOF
storage_backends: "$work/store/p0:$work/store/p1"
block_size: 256KiB
shard_size: 256KiB
tensor_size: 256KiB
meta:
  storage: local
  indexer: local://$work/meta.json
  register: {checksum: crc64_full}
EOF
"$work/build-embedding/kvchaos_embedding" "$work/in-process.yaml"
echo "check-install: examples/embedding saves and loads with checksums against an in-process meta"

if command -v redis-server >/dev/null; then
  KVCHAOS="$work/prefix/bin/kvchaos" "$root/examples/cluster/local-cluster.sh" start "$work/cluster" >/dev/null
  "$work/build-embedding/kvchaos_embedding" "$work/cluster/client.yaml"
  KVCHAOS="$work/prefix/bin/kvchaos" "$root/examples/cluster/local-cluster.sh" stop "$work/cluster" >/dev/null
  echo "check-install: examples/embedding saves and loads with checksums against a 3-node cluster"
else
  echo "check-install: SKIPPED examples/embedding against a cluster: redis-server is not installed"
fi
