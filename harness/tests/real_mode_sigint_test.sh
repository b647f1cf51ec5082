#!/usr/bin/env bash
# Real mode's teardown when the runner is interrupted, as a user does it:
#   int:  `kvchaos run` of a real scenario gets SIGINT (Ctrl-C) once its processes and mount are
#         up; it must exit 130 having killed every child (redis-server, kvchaos node, faultfs) and
#         unmounted every faultfs mount, and print no repro line for the run it stopped.
#   kill: the runner is SIGKILLed (no chance to clean up); PR_SET_PDEATHSIG must still end every
#         child, and faultfs (death signal SIGTERM) must unmount on its way out.
# Usage: real_mode_sigint_test.sh KVCHAOS SOURCE_DIR int|kill. Exit 77 (skipped) without
# redis-server or FUSE.
set -u
kvchaos=$1
src=$2
case_name=$3

if ! command -v redis-server >/dev/null && [[ ! -x /usr/bin/redis-server ]]; then
  echo "SKIP: redis-server is not installed"; exit 77
fi
if [[ ! -w /dev/fuse ]] || ! command -v fusermount3 >/dev/null; then
  echo "SKIP: FUSE is not available (/dev/fuse, fusermount3)"; exit 77
fi

out=$(mktemp -d /tmp/kvchaos-sigint-XXXXXX)
runner=""
cleanup() {
  # Only what this test started: the runner, then anything still running from its run dir.
  [[ -n "$runner" ]] && kill -9 "$runner" 2>/dev/null
  for pid in $(pgrep -f -- "$out" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  for m in $(awk -v d="$out" 'index($2, d) == 1 {print $2}' /proc/mounts); do fusermount3 -uz "$m" 2>/dev/null; done
  rm -rf "$out"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }

"$kvchaos" run "$src/scenarios/ci/real-backend-eio.yaml" --mode real --out "$out" >"$out.log" 2>&1 &
runner=$!
run_dir="$out/real/real-backend-eio-1"

# Wait until the run is fully up: the node answers (its log exists) and the faultfs mount is in
# /proc/mounts.
up=0
for _ in $(seq 1 300); do
  if [[ -s "$run_dir/nodes/node-0.log" ]] && grep -q " $run_dir/mnt/p1 " /proc/mounts; then up=1; break; fi
  kill -0 "$runner" 2>/dev/null || break
  sleep 0.1
done
[[ $up == 1 ]] || { cat "$out.log"; fail "the real run did not come up within 30 s"; }
sleep 2  # the workload and observer are running now
# The runner's own children (redis-server renames itself, so its command line does not show the
# run dir) plus anything whose command line names the run dir.
children=$( (pgrep -P "$runner"; pgrep -f -- "$run_dir") | sort -u | tr '\n' ' ')
[[ $(pgrep -P "$runner" | wc -l) -ge 3 ]] || fail "expected redis-server, a node and faultfs under the runner: $children"
echo "children before the signal: $children"

if [[ $case_name == int ]]; then
  kill -INT "$runner"
  rc=0
  wait "$runner" || rc=$?
  runner=""
  cat "$out.log"
  [[ $rc == 130 ]] || fail "kvchaos run exited $rc after SIGINT, expected 130"
  # The stopped run did not fail: nothing to reproduce.
  grep -q "Reproduce each failure with" "$out.log" && fail "an interrupted run printed repro lines"
  grep -q "stopped by the interrupt" "$out.log" || fail "the total does not count the stopped run"
else
  kill -KILL "$runner"
  wait "$runner" 2>/dev/null
  runner=""
  # The kernel delivers the death signals at once; faultfs needs a moment to unmount.
  for _ in $(seq 1 100); do
    alive=0
    for pid in $children; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [[ $alive == 0 ]] && ! grep -q " $run_dir/" /proc/mounts && break
    sleep 0.1
  done
fi

left=""
for pid in $children; do kill -0 "$pid" 2>/dev/null && left+="$pid "; done
[[ -z "$left" ]] || { ps -o pid,args -p ${left// /,}; fail "child processes left behind: $left"; }
if grep " $run_dir/" /proc/mounts; then fail "a mount was left behind"; fi
echo "OK: no child process and no mount left after $case_name"
