#!/usr/bin/env bash
# The test command: installs missing dependencies, builds with warnings as errors, runs every test
# except the `soak` label (the Python module's pytest files among them), checks that a project can find_package(kvchaos) from an install, then
# builds the core with clang's thread-safety analysis and runs a smoke of every fuzz target.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

bash ci/install-deps.sh

preset=${KVCHAOS_PRESET:-default}
# KVCHAOS_PYTHON=ON: the Python module and its pytest suite (python/) must build and pass here.
cmake --preset "$preset" -DKVCHAOS_WERROR=ON -DKVCHAOS_PYTHON=ON >/dev/null
cmake --build --preset "$preset" -j2
ctest --preset "$preset" --output-on-failure -j2

bash ci/check-install.sh "build/$preset"

# Clang, one build for two checks: the lock annotations (-Wthread-safety -Werror on every module
# of the core: the fuzz preset inherits clang-tsa) and the fuzz targets (ASan + UBSan), each run
# briefly from its seeds after its kept regression inputs (fuzz/README.md; `ctest -L fuzz` in
# build/fuzz runs them longer).
# The fuzz preset precompiles headers; ccache caches what uses them only with this sloppiness.
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_targets kvchaos_store_objs kvchaos_client_objs
bash ci/fuzz.sh --build build/fuzz --seconds "${KVCHAOS_FUZZ_SMOKE_SECONDS:-4}"
