#!/usr/bin/env bash
# From a fresh clone to a result: installs dependencies, builds the release binary, then runs the
# main job. Today that prints the version and the subcommands.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

bash ci/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target kvchaos
kvchaos=build/release/tools/kvchaos/kvchaos

"$kvchaos" --version
"$kvchaos" help
