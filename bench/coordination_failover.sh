#!/usr/bin/env bash
# Failover of a leader crash with each coordination kind, side by side: the same timeline (three
# `kvchaos node` processes, lease 3 s, loop 200 ms; the leader SIGKILLed twice, restarted 6 s
# later) in real mode against one redis-server, a 3-member etcd cluster and Redis Sentinel
# (primary, replica, 3 sentinels). Per kind: failovers seen, p50 / p99 / max of failover time
# (the old leader's last accepted write to the new leader's first), dual-acting windows and time,
# stale writes accepted (must be 0) and duplicate lock holders (token regressions).
#
# usage: bench/coordination_failover.sh [KVCHAOS] [SEEDS]   (default build/default/tools/kvchaos/kvchaos 1..3)
set -euo pipefail

KVCHAOS=${1:-build/default/tools/kvchaos/kvchaos}
SEEDS=${2:-1..3}
[ -x "$KVCHAOS" ] || { echo "kvchaos binary not found: $KVCHAOS (build the kvchaos target)" >&2; exit 2; }
work=$(mktemp -d /tmp/kvchaos-coordination-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT

for kind in redis etcd redis-sentinel; do
  cat > "$work/leader-crash-$kind.yaml" <<YAML
name: leader-crash-$kind
mode: real
seed: 1
duration: 30s
topology:
  nodes: 3
  lease_ms: 3000
  loop_interval_ms: 200
  coordination: $kind
  backends:
    - {name: p1, faultfs: false}
workload:
  save_rate_per_s: 20
  load_rate_per_s: 20
  block_size: 16KiB
  key_space: 256
faults:
  - {at: 6s, for: 6s, action: crash, node: leader, class: leader-crash}
  - {at: 17s, for: 6s, action: crash, node: leader, class: leader-crash}
expect:
  acked_blocks_readable: true
YAML
  "$KVCHAOS" run "$work/leader-crash-$kind.yaml" --seeds "$SEEDS" --jobs 1 --out "$work/out-$kind" >/dev/null || true
done

/usr/bin/python3 - "$work" <<'PY'
import glob, json, os, sys
work = sys.argv[1]
def pct(values, p):
    if not values: return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]
print(f"{'coordination':<16}{'runs':>5}{'passed':>7}{'failovers':>10}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
      f"{'dual windows':>13}{'dual ms':>9}{'stale acc':>10}{'token regr':>11}")
for kind in ["redis", "etcd", "redis-sentinel"]:
    results = [json.load(open(p)) for p in glob.glob(os.path.join(work, f"out-{kind}", "*.json"))]
    times = [f["failover_ms"] for r in results for f in r["failovers"] if f.get("failover_ms") is not None]
    c = lambda key: sum(r["counters"].get(key, 0) for r in results)
    print(f"{kind:<16}{len(results):>5}{sum(r['passed'] for r in results):>7}{len(times):>10}"
          f"{pct(times, 50):>9.0f}{pct(times, 99):>9.0f}{max(times, default=float('nan')):>9.0f}"
          f"{c('dual_acting_windows'):>13}{c('dual_acting_ms'):>9.1f}{c('stale_writes_accepted'):>10}"
          f"{c('token_regressions'):>11}")
PY
