#!/usr/bin/env bash
# From a fresh clone to a failover report: installs dependencies, builds the release binary, runs
# the CI scenario suite in the simulator (no server to set up: every node, Redis and the network
# are simulated, deterministically per seed) and writes the failover timing report.
#
#   ci/quickstart.sh                 seeds 1..20 of every sim scenario in scenarios/ci
#   SEEDS=1..200 ci/quickstart.sh     more seeds
# A failing run prints the one command that reproduces it (KVCHAOS run FILE --seed N, with this
# build's kvchaos and the scenario file by their absolute paths).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seeds=${SEEDS:-1..20}
jobs=${JOBS:-2}
out=out/quickstart

bash ci/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target kvchaos
# Absolute paths, so the repro line a failing run prints works from wherever it is typed.
kvchaos=$root/build/release/tools/kvchaos/kvchaos

rm -rf "$out"
status=0
"$kvchaos" run "$root/scenarios/ci" --mode sim --seeds "$seeds" --jobs "$jobs" --out "$out/results" \
  --junit "$out/junit.xml" || status=$?
# The report is written whatever the verdicts: failures are what it is for.
"$kvchaos" report failover "$out/results" --out "$out/report"
echo
echo "failover report: $root/$out/report/report.html (summary: $out/report/summary.md)"
echo "per-run results: $out/results/, JUnit: $out/junit.xml"
exit "$status"
