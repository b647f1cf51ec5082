#!/usr/bin/env bash
# The test command: installs missing dependencies, builds with warnings as errors, runs every test
# except the `soak` label, and checks that a project can find_package(kvchaos) from an install.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

bash ci/install-deps.sh

preset=${KVCHAOS_PRESET:-default}
cmake --preset "$preset" -DKVCHAOS_WERROR=ON >/dev/null
cmake --build --preset "$preset" -j2
ctest --preset "$preset" --output-on-failure -j2

bash ci/check-install.sh "build/$preset"
