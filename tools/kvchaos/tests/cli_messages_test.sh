#!/usr/bin/env bash
# Messages and exit codes of the command line, as a newcomer meets them.
# Usage: cli_messages_test.sh KVCHAOS FAULTFS CASE   (FAULTFS may be "" where faultfs is not built)
#   bad_args        what CLI11 refuses exits 2 (not 105/106/109), names the subcommand and its --help,
#                   and a range says what is wanted ("must be at least 1, got 0"), no 300-digit double
#   help            `kvchaos help run` and `kvchaos help store bench` show those options (exit 0);
#                   `kvchaos help nope` exits 2
#   campaign_flags  `election campaign --node-id ""` names the flag, not a config key
#   sim_vacuous     `sim --duration 10` is refused (no unit); a run with no fault exits 2 saying why;
#                   --faults none runs and prints "none" where no failover was measured, never p99=0
#   sim_coordination `sim --coordination etcd --seeds 1..3` passes with member faults drawn (a member
#                   cut from its peers shows in a trace); an unknown --coordination exits 2 naming
#                   the option and the allowed values
#   cluster_closed  `cluster info` to a closed port says the connection was refused (exit 1)
#   node_repeats    a node whose Redis is unreachable logs its repeated lock warning once per 5 s,
#                   with the count of the repeats it stands for
#   faultfs_cli     `faultfs --version`, `faultfs ctl SOCKET help` and `faultfs ctl help` (exit 0)
set -u
kvchaos=$1
faultfs=$2
case_name=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvchaos_cli_messages.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export KVCHAOS_LOG=warn

# expect RC TEXT COMMAND...: runs the command, checks its exit code and that its output has TEXT.
expect() {
  local want_rc=$1 text=$2
  shift 2
  out=$("$@" 2>&1); rc=$?
  echo "\$ $*  -> $rc"; echo "$out"
  [ "$rc" -eq "$want_rc" ] || fail "'$*' exited $rc, want $want_rc"
  [ -z "$text" ] || echo "$out" | grep -qF -- "$text" || fail "'$*' does not say: $text"
}

case "$case_name" in
  bad_args)
    expect 2 "kvchaos store bench: --blocks: must be at least 1, got 0" "$kvchaos" store bench --config x --blocks 0
    echo "$out" | grep -q "1797693" && fail "CLI11's double bound leaked"
    expect 2 "(kvchaos store bench --help lists the options)" "$kvchaos" store bench --config x --qd 0
    echo "$out" | grep -qF "must be in 1..1024, got 0" || fail "--qd range not stated"
    expect 2 "kvchaos run: paths is required" "$kvchaos" run
    expect 2 "kvchaos store: A subcommand is required" "$kvchaos" store
    expect 2 "kvchaos sim: Could not convert: --nodes = abc" "$kvchaos" sim --nodes abc
    expect 2 "kvchaos: 'frobnicate' is not a subcommand (kvchaos help lists them)" "$kvchaos" frobnicate
    expect 2 "kvchaos store: 'frob' is not a subcommand (kvchaos help store lists them)" "$kvchaos" store frob
    ;;
  help)
    expect 0 "Usage: kvchaos run [OPTIONS] paths..." "$kvchaos" help run
    echo "$out" | grep -qF -- "--faultfs" || fail "help run does not list --faultfs"
    expect 0 "Usage: kvchaos store bench [OPTIONS]" "$kvchaos" help store bench
    expect 0 "kvchaos help <subcommand>" "$kvchaos" help
    expect 2 "kvchaos help: 'kvchaos nope' is not a subcommand" "$kvchaos" help nope
    ;;
  campaign_flags)
    expect 2 "kvchaos election campaign: --node-id is empty" "$kvchaos" election campaign --uri memory:// --node-id ""
    echo "$out" | grep -q "leader_elector\." && fail "a config key was named instead of the flag"
    expect 2 "--loop-interval-ms: must be > 0 and < --lease-ms (100)" \
      "$kvchaos" election campaign --uri memory:// --node-id n --lease-ms 100 --loop-interval-ms 200
    ;;
  sim_vacuous)
    expect 2 "--duration '10': give a unit, e.g. 10s or 10m (a bare number would be 10 ms of simulated time)" \
      "$kvchaos" sim --duration 10
    expect 2 "kvchaos sim: no fault was injected in 1 seed(s) of 10ms: nothing was checked under faults" \
      "$kvchaos" sim --duration 10ms
    expect 0 "failover (fault to new leader serving) none" "$kvchaos" sim --duration 20s --lease-ms 2000 --faults none
    echo "$out" | grep -q "p99=0 ms" && fail "a percentile of no failover printed as 0"
    ;;
  sim_coordination)
    expect 2 "kvchaos sim: --coordination 'zookeeper': expected one of sim-redis, redis-sentinel, etcd" \
      "$kvchaos" sim --coordination zookeeper --duration 60s --lease-ms 2000
    expect 0 "3 seed(s), 0 with violations" \
      "$kvchaos" sim --coordination etcd --seeds 1..3 --duration 60s --lease-ms 2000 --quiet
    cuts=0
    for seed in 1 2 3 4; do
      expect 0 "" "$kvchaos" sim --coordination etcd --seed "$seed" --duration 60s --lease-ms 2000 --trace "$tmp/t$seed.txt"
      grep -q "etcd-peers-cut" "$tmp/t$seed.txt" && cuts=$((cuts + 1))
    done
    [ "$cuts" -gt 0 ] || fail "no etcd member was cut from its peers in 4 seeds of generated chaos over etcd"
    ;;
  cluster_closed)
    expect 1 "unreachable: cannot connect (refused: nothing listens on that port" "$kvchaos" cluster info --endpoint 127.0.0.1:1
    ;;
  node_repeats)
    printf 'kvcm:\n  coordination: {uri: "redis://127.0.0.1:1/?db=0"}\n  service: {meta_http_port: 0, admin_http_port: 0}\n' \
      >"$tmp/node.yaml"
    KVCHAOS_LOG=info timeout -s TERM 7 "$kvchaos" node --config "$tmp/node.yaml" >"$tmp/node.log" 2>&1
    cat "$tmp/node.log"
    n=$(grep -c "cannot read the lock holder" "$tmp/node.log")
    # The elector retries every 100 ms: ~70 warnings in 7 s without the limit, 2 with it.
    [ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "the repeated warning was logged $n times in 7 s, want at most 2"
    if [ "$n" -eq 2 ]; then
      grep "cannot read the lock holder" "$tmp/node.log" | tail -1 | grep -q "(and [0-9]* more like it in the last 5 s)" ||
        fail "the repeat does not say how many it stands for"
    fi
    ;;
  faultfs_cli)
    [ -n "$faultfs" ] || { echo "SKIP: faultfs is not built"; exit 77; }
    expect 0 "faultfs 0." "$faultfs" --version
    expect 0 "release [RULE_ID]" "$faultfs" ctl "$tmp/no-such.sock" help
    expect 0 "crash" "$faultfs" ctl help
    expect 2 "unknown command 'frob'" "$faultfs" ctl "$tmp/no-such.sock" frob
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo PASS
