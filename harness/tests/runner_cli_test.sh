#!/usr/bin/env bash
# `kvchaos run` as a user runs it: usage `runner_cli_test.sh KVCHAOS SOURCE_DIR CASE`.
#   pass         a passing scenario exits 0, writes its result JSON and prints the table
#   fail         a violated expectation exits 1 and prints the repro command of the failing run
#   determinism  the same seed run twice gives the same trace hash in its result files
#   shard        --shard 1/2 and 2/2 split the runs: disjoint, together all of them
set -u
kvchaos=$1
src=$2
case_name=$3
dir=$src/harness/tests/runner_scenarios
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

case "$case_name" in
  pass)
    out=$("$kvchaos" run "$dir/quick-crash.yaml" --seeds 1..2 --out "$tmp/r" --junit "$tmp/j.xml" 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || fail "exit $rc for a passing scenario"
    [ -s "$tmp/r/quick-crash-1.json" ] && [ -s "$tmp/r/quick-crash-2.json" ] || fail "result JSON files missing: $(ls "$tmp/r")"
    grep -q '"trace_hash": "[0-9a-f]\{16\}"' "$tmp/r/quick-crash-1.json" || fail "no trace hash in the result"
    grep -q '<testsuite' "$tmp/j.xml" || fail "no JUnit suite written"
    ;;
  fail)
    out=$("$kvchaos" run "$dir/quick-crash.yaml" "$dir/impossible-bound.yaml" --seed 4 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "exit $rc, expected 1 for a violated expectation"
    echo "$out" | grep -q "kvchaos run $dir/impossible-bound.yaml --seed 4" || fail "no repro command for the failing run"
    echo "$out" | grep -q "kvchaos run $dir/quick-crash.yaml --seed 4" && fail "repro printed for a passing run"
    echo "$out" | grep -q "failover_p99_ms" || fail "the failed check is not named"
    ;;
  determinism)
    "$kvchaos" run "$dir/quick-crash.yaml" --seed 9 --out "$tmp/a" >/dev/null 2>&1 || fail "first run failed"
    "$kvchaos" run "$dir/quick-crash.yaml" --seed 9 --out "$tmp/b" --jobs 2 >/dev/null 2>&1 || fail "second run failed"
    a=$(grep '"trace_hash"' "$tmp/a/quick-crash-9.json"); b=$(grep '"trace_hash"' "$tmp/b/quick-crash-9.json")
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "trace hashes differ: '$a' vs '$b'"
    echo "same seed, same $a"
    ;;
  shard)
    "$kvchaos" run "$dir/quick-crash.yaml" --seeds 1..5 --shard 1/2 --out "$tmp/s1" >/dev/null 2>&1 || fail "shard 1/2 failed"
    "$kvchaos" run "$dir/quick-crash.yaml" --seeds 1..5 --shard 2/2 --out "$tmp/s2" >/dev/null 2>&1 || fail "shard 2/2 failed"
    s1=$(ls "$tmp/s1" | sort | tr '\n' ' '); s2=$(ls "$tmp/s2" | sort | tr '\n' ' ')
    echo "shard 1/2: $s1"; echo "shard 2/2: $s2"
    [ "$s1" = "quick-crash-1.json quick-crash-3.json quick-crash-5.json " ] || fail "shard 1/2 ran $s1"
    [ "$s2" = "quick-crash-2.json quick-crash-4.json " ] || fail "shard 2/2 ran $s2"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo PASS
