#!/usr/bin/env bash
# Real-mode runs that must not move leadership (issue 14: coordination outages shorter than the
# lease): each scenario passes its expectations on every seed and its result counts 0 failovers.
# Exit 77 (skipped, with the reason) when this machine lacks redis-server.
# Usage: real_mode_no_failover_test.sh KVCHAOS SEEDS SCENARIO...
set -u
kvchaos=$1
seeds=$2
shift 2
if ! command -v redis-server >/dev/null && [[ ! -x /usr/bin/redis-server ]]; then
  echo "SKIP: real scenarios need redis-server, which is not installed"; exit 77
fi
out=$(mktemp -d /tmp/kvchaos-no-failover-XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$kvchaos" run "$@" --mode real --seeds "$seeds" --jobs 1 --out "$out" || fail "a run failed its expectations (above)"
results=$(ls "$out"/*.json 2>/dev/null)
[ -n "$results" ] || fail "no result files in $out"
for f in $results; do
  # The counters block holds `"failovers": N,`; the events list is `"failovers": [...]`.
  count=$(grep -o '"failovers": [0-9]*' "$f" | head -1 | grep -o '[0-9]*$')
  [ -n "$count" ] || fail "$(basename "$f"): no failover count"
  if [ "$count" -ne 0 ]; then
    echo "$(basename "$f"): $count failover(s):"
    sed -n '/^  "failovers": \[/,/^  \]/p' "$f"
    fail "$(basename "$f"): outages shorter than the lease caused $count failover(s)"
  fi
  echo "$(basename "$f"): 0 failovers"
done
echo PASS
