#!/usr/bin/env bash
# `kvchaos run --shard K/N` on N machines, merged, is the unsharded run: 3 shards of 2 scenario
# files x 4 seeds (uneven: 3+3+2 runs) each write their own results directory, as the CI matrix
# jobs and the Kubernetes pods of deploy/ do; then every result file is in exactly one shard, each
# equals the unsharded run's (wall_ms aside: the one field that is measured, not simulated), and
# `kvchaos report failover` over the shard directories writes the same summary.json and summary.md
# as over the unsharded one. Usage: shard_merge_test.sh KVCHAOS SOURCE_DIR
set -u
kvchaos=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvchaos_shards.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
runs=("$src/scenarios/ci/rolling-restart.yaml" "$src/scenarios/ci/redis-outage-long.yaml" --seeds 1..4 --mode sim)
n=3

"$kvchaos" run "${runs[@]}" --jobs 2 --out "$tmp/all" >"$tmp/all.log" 2>&1 || fail "unsharded run failed: $(cat "$tmp/all.log")"
for k in $(seq 1 $n); do
  "$kvchaos" run "${runs[@]}" --shard "$k/$n" --out "$tmp/shard-$k" >"$tmp/shard-$k.log" 2>&1 ||
    fail "shard $k/$n failed: $(cat "$tmp/shard-$k.log")"
done

# Result files (each sim run also writes <run>.history.jsonl beside its result; they are compared as
# sets below too).
all=$(cd "$tmp/all" && ls *.json | sort)
merged=$(for k in $(seq 1 $n); do (cd "$tmp/shard-$k" && ls *.json); done | sort)
[[ "$(cd "$tmp/all" && ls | sort)" == "$(for k in $(seq 1 $n); do (cd "$tmp/shard-$k" && ls); done | sort)" ]] ||
  fail "the shards wrote other files than the unsharded run"
[[ "$all" == "$merged" ]] || fail "the shards' result files differ from the unsharded run's:
unsharded: $all
shards:    $merged"
[[ $(echo "$all" | wc -l) -eq 8 ]] || fail "expected 8 results, got: $all"
for k in $(seq 1 $n); do
  count=$(ls "$tmp/shard-$k"/*.json | wc -l)
  [[ $count -eq 2 || $count -eq 3 ]] || fail "shard $k/$n ran $count runs; round-robin gives 2 or 3 of 8"
done

/usr/bin/python3 - "$tmp" $n <<'PY' || fail "a shard's result differs from the unsharded run's"
import json, os, sys
tmp, n = sys.argv[1], int(sys.argv[2])
for k in range(1, n + 1):
    for name in sorted(f for f in os.listdir(f"{tmp}/shard-{k}") if f.endswith(".json")):
        a = json.load(open(f"{tmp}/all/{name}"))
        b = json.load(open(f"{tmp}/shard-{k}/{name}"))
        for r in (a, b):  # host times
            r.pop("wall_ms")
            r.get("history", {}).pop("check_ms", None)
        if a != b:
            diff = [key for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]
            sys.exit(f"shard {k}: {name}: fields {diff} differ")
PY

"$kvchaos" report failover "$tmp/all" --out "$tmp/report-all" >/dev/null || fail "report over the unsharded run failed"
shard_dirs=()
for k in $(seq 1 $n); do shard_dirs+=("$tmp/shard-$k"); done
"$kvchaos" report failover "${shard_dirs[@]}" --out "$tmp/report-merged" >/dev/null || fail "report over the shards failed"
for f in summary.json summary.md; do
  cmp -s "$tmp/report-all/$f" "$tmp/report-merged/$f" ||
    fail "$f of the merged shards differs: $(diff "$tmp/report-all/$f" "$tmp/report-merged/$f" | head -20)"
done
echo "PASS: $n shards merged = the unsharded run (8 results, report summary identical)"
