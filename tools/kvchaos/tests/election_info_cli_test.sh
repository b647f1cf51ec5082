#!/usr/bin/env bash
# `kvchaos election info` in a mixed cluster (issue 18 §7): after a kvchaos term (token 1) an
# upstream node takes the lock with a plain SET NX PX; info must report no token for it (null and a
# "fencing" note), not the token the kvchaos term left. Usage: election_info_cli_test.sh KVCHAOS
set -u
kvchaos=$1
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || { echo "SKIP: redis-server/redis-cli missing"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvchaos_election_info.XXXXXX")
redis_pid=""
cleanup() { [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
export KVCHAOS_LOG=warn

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# A free port may be taken before redis-server binds it: try a few, each given up to 20 s.
port=""
for attempt in 1 2 3 4 5; do
  candidate=$((20000 + RANDOM % 30000))
  port_free "$candidate" || continue
  redis-server --bind 127.0.0.1 --port "$candidate" --dir "$tmp" --save "" --appendonly no \
    --logfile "$tmp/redis.log" &
  redis_pid=$!
  for _ in $(seq 1 200); do
    redis-cli -p "$candidate" ping >/dev/null 2>&1 && { port=$candidate; break; }
    kill -0 "$redis_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] && break
  kill "$redis_pid" 2>/dev/null; wait "$redis_pid" 2>/dev/null; redis_pid=""
done
[ -n "$port" ] || fail "redis-server did not start ($(tail -3 "$tmp/redis.log" 2>/dev/null))"
uri="redis://127.0.0.1:$port/?cluster_name=mixed"

out=$("$kvchaos" election campaign --uri "$uri" --node-id kvchaos-1 --lease-ms 3000 --loop-interval-ms 50 \
  --duration-ms 400 2>&1) || fail "campaign failed: $out"
echo "$out" | grep -q '"become_leader"' || fail "kvchaos-1 did not lead: $out"
info=$("$kvchaos" election info --uri "$uri") || fail "info failed: $info"
echo "free: $info"
echo "$info" | grep -qE '"fencing_token": ?1,' || fail "a free lock does not report the newest token 1: $info"

[ "$(redis-cli -p "$port" SET kvcm_mixed_lock:_TAIR_KVCM_LEADER_KEY upstream-1 NX PX 10000)" = OK ] || fail "SET NX"
info=$("$kvchaos" election info --uri "$uri") || fail "info failed: $info"
echo "upstream holder: $info"
echo "$info" | grep -qE '"holder": ?"upstream-1"' || fail "holder not reported: $info"
echo "$info" | grep -qE '"fencing_token": ?null' || fail "the upstream holder was given a token: $info"
echo "$info" | grep -q 'fencing needs every node to be kvchaos' || fail "no fencing note: $info"
echo PASS
