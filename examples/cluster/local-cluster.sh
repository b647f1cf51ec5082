#!/usr/bin/env bash
# A local metadata cluster on loopback: one redis-server (coordination in db 0, the meta index in
# db 1) and three `kvchaos node` processes, each with its own config, log and free ports.
#
#   examples/cluster/local-cluster.sh start DIR   start it; DIR holds configs, logs, pids, data
#   examples/cluster/local-cluster.sh status DIR  the cluster view of every node
#   examples/cluster/local-cluster.sh stop DIR    stop what `start DIR` started (and nothing else)
#
# `start` returns once a leader serves, and writes DIR/endpoints (the nodes' meta endpoints, one
# per line) and DIR/client.yaml (a client config for `kvchaos blocks`, `kvchaos integrity verify`
# and client::CacheClient, with its store under DIR/store and storage `nfs` registered with
# crc64_full checksums). Environment: KVCHAOS (default: `kvchaos` on PATH, else this checkout's
# build/default), REDIS_SERVER (default redis-server), NODES (default 3), LEASE_MS (default 3000).
set -euo pipefail

usage() { echo "usage: $0 start|status|stop DIR" >&2; exit 2; }
[[ $# == 2 ]] || usage
action=$1
dir=$2
here="$(cd "$(dirname "$0")" && pwd)"

find_kvchaos() {
  if [[ -n "${KVCHAOS:-}" ]]; then echo "$KVCHAOS"; return; fi
  if command -v kvchaos >/dev/null; then command -v kvchaos; return; fi
  local built="$here/../../build/default/tools/kvchaos/kvchaos"
  [[ -x "$built" ]] && { echo "$(cd "$(dirname "$built")" && pwd)/kvchaos"; return; }
  echo "local-cluster: no kvchaos binary (set KVCHAOS=PATH, put kvchaos on PATH, or build build/default)" >&2
  exit 2
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Sends TERM to a pid file's process, waits up to 10 s, then KILLs it.
stop_pid() {
  local file=$1 pid
  [[ -f "$file" ]] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

stop() {
  local f
  for f in "$dir"/node-*.pid; do [[ -e "$f" ]] && stop_pid "$f"; done
  stop_pid "$dir/redis.pid"
}

status() {
  local kvchaos endpoint
  kvchaos=$(find_kvchaos)
  [[ -f "$dir/endpoints" ]] || { echo "local-cluster: $dir/endpoints: no cluster started there" >&2; exit 1; }
  while read -r endpoint; do
    echo "== $endpoint"
    "$kvchaos" cluster info --endpoint "$endpoint" || true
  done <"$dir/endpoints"
}

start() {
  local kvchaos redis nodes lease port i up leader
  kvchaos=$(find_kvchaos)
  redis=${REDIS_SERVER:-redis-server}
  command -v "$redis" >/dev/null || { echo "local-cluster: $redis is not installed (Debian package redis-server)" >&2; exit 2; }
  nodes=${NODES:-3}
  lease=${LEASE_MS:-3000}
  if ls "$dir"/*.pid >/dev/null 2>&1; then
    echo "local-cluster: $dir already holds a running cluster's pid files; stop it first: $0 stop $dir" >&2
    exit 2
  fi
  mkdir -p "$dir/redis" "$dir/store/p0" "$dir/store/p1"
  dir="$(cd "$dir" && pwd)"
  # If anything below fails, stop what was started.
  trap 'echo "local-cluster: start failed; stopping what was started (logs in $dir)" >&2; stop' ERR

  port=""
  for _ in $(seq 1 50); do
    local candidate=$((20000 + RANDOM % 40000))
    if port_free "$candidate"; then port=$candidate; break; fi
  done
  [[ -n "$port" ]] || { echo "local-cluster: no free port found for redis-server" >&2; false; }
  "$redis" --bind 127.0.0.1 --port "$port" --dir "$dir/redis" --save "" --appendonly no \
    --logfile "$dir/redis.log" </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/redis.pid"
  up=0
  for _ in $(seq 1 100); do
    if ! port_free "$port"; then up=1; break; fi
    kill -0 "$(cat "$dir/redis.pid")" 2>/dev/null || break
    sleep 0.1
  done
  [[ $up == 1 ]] || { echo "local-cluster: redis-server did not start (log: $dir/redis.log)" >&2; false; }

  : >"$dir/endpoints"
  for ((i = 0; i < nodes; i++)); do
    cat >"$dir/node-$i.yaml" <<EOF
# node $i of the local cluster (written by examples/cluster/local-cluster.sh; every key is
# explained in core/service/node.example.yaml)
kvcm:
  coordination: {uri: "redis://127.0.0.1:$port/?db=0"}
  leader_elector: {node_id: "node-$i", lease_ms: $lease, loop_interval_ms: $((lease / 30))}
  service: {listen_host: "127.0.0.1", meta_http_port: 0, admin_http_port: 0}
  meta: {indexer_uri: "redis://127.0.0.1:$port/?db=1"}
EOF
    "$kvchaos" node --config "$dir/node-$i.yaml" </dev/null >"$dir/node-$i.out" 2>"$dir/node-$i.log" &
    echo $! >"$dir/node-$i.pid"
  done
  for ((i = 0; i < nodes; i++)); do
    local meta_port=""
    for _ in $(seq 1 100); do
      meta_port=$(grep -o '"meta_http_port":[0-9]*' "$dir/node-$i.out" 2>/dev/null | cut -d: -f2 || true)
      [[ -n "$meta_port" ]] && break
      kill -0 "$(cat "$dir/node-$i.pid")" 2>/dev/null || break
      sleep 0.1
    done
    [[ -n "$meta_port" ]] || { echo "local-cluster: node-$i did not come up (log: $dir/node-$i.log)" >&2; false; }
    echo "127.0.0.1:$meta_port" >>"$dir/endpoints"
  done

  local list
  list=$(sed 's/.*/"&"/' "$dir/endpoints" | paste -sd, -)
  cat >"$dir/client.yaml" <<EOF
# A client of the local cluster (written by examples/cluster/local-cluster.sh; the keys are
# explained in core/client/client.example.yaml and core/store/store.example.yaml).
storage_backends: "$dir/store/p0:$dir/store/p1"
block_size: 1MiB
shard_size: 1MiB
tensor_size: 1MiB
meta:
  storage: nfs
  nodes: [$list]
  register: {checksum: crc64_full}
EOF
  # A leader serves once it answers a data-plane call: registering the storage is that call.
  leader=0
  for _ in $(seq 1 100); do
    if "$kvchaos" storage add --endpoint "$(head -1 "$dir/endpoints")" --name nfs --checksum crc64_full \
      >"$dir/storage-add.out" 2>&1; then
      leader=1
      break
    fi
    sleep 0.2
  done
  [[ $leader == 1 ]] || { cat "$dir/storage-add.out" >&2; echo "local-cluster: no leader served within 20 s" >&2; false; }
  trap - ERR
  echo "local cluster up in $dir: redis-server on 127.0.0.1:$port, $nodes nodes (meta endpoints in $dir/endpoints):"
  sed 's/^/  /' "$dir/endpoints"
  cat "$dir/storage-add.out"
  echo "client config: $dir/client.yaml; stop it with: $0 stop $dir"
}

case "$action" in
  start) start ;;
  status) status ;;
  stop) stop; echo "local cluster in $dir stopped" ;;
  *) usage ;;
esac
