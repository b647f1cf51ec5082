#!/usr/bin/env bash
# Failover of a leader crash with each coordination kind, side by side: the same timeline (three
# `kvchaos node` processes, lease 3 s, loop 200 ms; the leader SIGKILLed twice, restarted 6 s
# later) in real mode against one redis-server, a 3-member etcd cluster and Redis Sentinel
# (primary, replica, 3 sentinels). Per kind: failovers seen, p50 / p99 / max of failover time
# (from the fault to the new leader serving), the data plane's gap, dual-acting windows and time,
# stale writes accepted (must be 0) and duplicate lock holders (token regressions), as the
# "Failover per coordination" table of `kvchaos report failover`.
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

# The report's per-coordination table is the comparison (nearest-rank percentiles, as everywhere).
"$KVCHAOS" report failover "$work"/out-* --out "$work/report" >/dev/null
sed -n '/^## Failover per coordination/,/^## Safety/p' "$work/report/summary.md" | sed '$d'
