#!/usr/bin/env bash
# The simulator's promise across compilers: the same seed gives the same trace hash whether
# kvchaos was built by gcc (the default preset, -O2) or by clang (the clang-tsa preset, -O0, which
# also checks every module's lock annotations with -Wthread-safety -Werror). Builds `kvchaos` in
# both, runs `kvchaos sim` (the elector world over Redis, Sentinel and etcd, and the whole
# product) and every sim run of scenarios/ci and scenarios/incidents with both, and compares the
# trace hashes run by run. (sim/check_draw_order.py, a default test, finds the commonest cause.)
#   ci/compilers-agree.sh [--seeds A..B]        (default 1..3; about 20 minutes from cold on 2 cores)
# Exit status 0 when every hash agrees, 1 naming the first runs that differ.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seeds=1..3
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "compilers-agree.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

for preset in default clang-tsa; do
  cmake --preset "$preset" >/dev/null
  cmake --build "build/$preset" -j2 --target kvchaos
done

out="$(mktemp -d /tmp/kvchaos-compilers.XXXXXX)"
trap 'rm -rf "$out"' EXIT
for preset in default clang-tsa; do
  bin="build/$preset/tools/kvchaos/kvchaos"
  {
    "$bin" sim --seeds "$seeds" --lease-ms 2000 --duration 60s
    "$bin" sim --data --seeds "$seeds" --lease-ms 2000 --duration 60s
    "$bin" sim --coordination redis-sentinel --faults all --seeds "$seeds" --lease-ms 2000 --duration 60s
    # Every kind but backend-wipe (etcd members keep their data).
    "$bin" sim --coordination etcd --faults crash,pause,partition,backend-outage,clock,net,slow,backend-clock \
      --seeds "$seeds" --lease-ms 2000 --duration 60s
  } 2>&1 | grep -o 'seed=[0-9]* hash=[0-9a-f]*' > "$out/sim-$preset.txt"
  "$bin" run scenarios/ci scenarios/incidents --mode sim --seeds "$seeds" --out "$out/runs-$preset" >/dev/null
done

python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
def runs(preset):
    hashes = {}
    for path in glob.glob(f"{out}/runs-{preset}/**/*.json", recursive=True):
        with open(path) as f:
            j = json.load(f)
        if isinstance(j, dict) and j.get("trace_hash"):
            hashes[os.path.basename(path)] = j["trace_hash"]
    return hashes
sim = [open(f"{out}/sim-{p}.txt").read().split("\n") for p in ("default", "clang-tsa")]
gcc, clang = runs("default"), runs("clang-tsa")
differ = [f"kvchaos sim: gcc '{a}' clang '{b}'" for a, b in zip(*sim) if a != b]
differ += [f"{name}: gcc {gcc[name]} clang {clang.get(name)}" for name in sorted(gcc) if clang.get(name) != gcc[name]]
if len(sim[0]) != len(sim[1]) or set(gcc) != set(clang):
    differ.append("the two builds did not make the same runs")
print(f"{len(sim[0]) - 1} kvchaos sim seeds and {len(gcc)} scenario runs compared")
if differ:
    print("trace hashes differ between gcc and clang:\n  " + "\n  ".join(differ[:10]))
    sys.exit(1)
print("gcc and clang give the same trace hash for every run")
PY
