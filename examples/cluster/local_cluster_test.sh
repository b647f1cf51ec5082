#!/usr/bin/env bash
# examples/cluster/local-cluster.sh as a user runs it: start a 3-node cluster with its redis-server,
# save and load checksummed blocks through its client config, stop the leader and save again (the
# client follows the new leader), then stop: no process it started may remain. Exit 77 (skipped)
# without redis-server. Usage: local_cluster_test.sh KVCHAOS
set -u
kvchaos=$1
script="$(cd "$(dirname "$0")" && pwd)/local-cluster.sh"
command -v redis-server >/dev/null || { echo "SKIP: redis-server is not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvchaos_local_cluster.XXXXXX")
dir=$tmp/cluster
cleanup() { KVCHAOS=$kvchaos "$script" stop "$dir" >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/node-*.log; do echo "== $f"; tail -5 "$f"; done; exit 1; }
export KVCHAOS_LOG=warn KVCHAOS=$kvchaos

out=$("$script" start "$dir" 2>&1) || { echo "$out"; fail "start failed"; }
echo "$out"
[[ $(wc -l <"$dir/endpoints") == 3 ]] || fail "endpoints does not list 3 nodes"
pids=$(cat "$dir"/*.pid | tr '\n' ' ')
"$script" status "$dir" | grep -q '"leader_id": "node-' || fail "status shows no leader"

printf 'k1\nk2\nk3\n' >"$tmp/keys"
out=$("$kvchaos" blocks save --config "$dir/client.yaml" --keys-from "$tmp/keys" 2>&1) || fail "save failed: $out"
out=$("$kvchaos" blocks load --config "$dir/client.yaml" --keys-from "$tmp/keys" 2>&1) || fail "load failed: $out"
echo "$out" | grep -qF "3 verified" || fail "load did not verify 3 blocks: $out"

# Stop the leader: the client finds the next one.
leader=$("$kvchaos" cluster info --endpoint "$(head -1 "$dir/endpoints")" | grep -o '"leader_id": "node-[0-9]*"' | grep -o 'node-[0-9]*')
[[ -n "$leader" ]] || fail "no leader named"
kill -TERM "$(cat "$dir/$leader.pid")"
echo k4 >>"$tmp/keys"
out=$("$kvchaos" blocks save --config "$dir/client.yaml" --keys-from "$tmp/keys" 2>&1) || fail "save after stopping $leader failed: $out"
echo "$out" | grep -qF "saved 1 of 4 keys (3 already cached)" || fail "save after the failover: $out"

"$script" stop "$dir" | grep -qF "stopped" || fail "stop said nothing"
for pid in $pids; do kill -0 "$pid" 2>/dev/null && fail "process $pid is still running after stop"; done
ls "$dir"/*.pid >/dev/null 2>&1 && fail "pid files left after stop"
echo OK
