#!/usr/bin/env bash
# GPU checks of the integrity module, for a machine with a CUDA device: builds with CUDA forced on,
# runs the GPU-vs-CPU checksum tests (they must run, not skip) and the checksum benchmark with the
# device rows. Usage: ci/gpu-check.sh [BUILD_DIR]   (default build/gpu)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${1:-$root/build/gpu}"
cd "$root"

nvidia-smi -L || { echo "gpu-check: no GPU visible (nvidia-smi failed)" >&2; exit 2; }

cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVCHAOS_WERROR=ON \
  -DKVCHAOS_CUDA=ON -DKVCHAOS_FUSE=OFF >/dev/null
cmake --build "$build_dir" --target integrity_tests checksum_bench -j"$(nproc)"

# The device tests skip when no device is usable; here a skip is a failure.
out="$("$build_dir/core/integrity/integrity_tests" --gtest_filter='*DeviceVsCpu*' 2>&1)" || { echo "$out"; exit 1; }
echo "$out" | tail -n 5
if echo "$out" | grep -q '\[  SKIPPED \]'; then
  echo "gpu-check: GPU-vs-CPU tests skipped although a GPU should be present" >&2
  exit 1
fi

"$build_dir/bench/checksum_bench" --benchmark_min_time=0.2 \
  --benchmark_out="$build_dir/checksum_bench.json" --benchmark_out_format=json
echo "gpu-check: OK (benchmark JSON: $build_dir/checksum_bench.json)"
