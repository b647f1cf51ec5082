#!/usr/bin/env bash
# `kvchaos run` as a user runs it: usage `runner_cli_test.sh KVCHAOS SOURCE_DIR CASE`.
#   pass         a passing scenario exits 0, writes its result JSON and prints the table
#   fail         a violated expectation exits 1 and prints the repro command of the failing run
#   determinism  the same seed run twice gives the same trace hash in its result files
#   shard        --shard 1/2 and 2/2 split the runs: disjoint, together all of them
#   repro        the printed repro line, typed where the user stands, replays the failing run (same
#                trace hash); it names this kvchaos by its path when `kvchaos` on PATH is not it
#   trace_hash   the table shows each sim run's trace hash, the one its result file records
#   mode_empty   --mode real over sim scenarios runs nothing: exit 2 naming the files, not 0
#   same_name    two files with one scenario name: exit 2 naming both, nothing runs
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
  repro)
    cd "$src" || fail "cannot cd to $src"
    out=$(PATH=/usr/bin:/bin "$kvchaos" run harness/tests/runner_scenarios/impossible-bound.yaml --seed 4 --out "$tmp/a" 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "exit $rc, expected 1"
    line=$(echo "$out" | sed -n '/^Reproduce each failure with:/{n;p}' | sed 's/^  //')
    [ -n "$line" ] || fail "no repro line"
    first=${line%% *}
    [ "$first" = "$kvchaos" ] || [ "$first" = "$(readlink -f "$kvchaos")" ] ||
      fail "the repro line starts with '$first', not this kvchaos (not on PATH here)"
    again=$(PATH=/usr/bin:/bin eval "$line --out $tmp/b" 2>&1); rc=$?
    [ "$rc" -eq 1 ] || fail "the repro line exited $rc, expected 1: $again"
    a=$(grep '"trace_hash"' "$tmp/a/impossible-bound-4.json"); b=$(grep '"trace_hash"' "$tmp/b/impossible-bound-4.json")
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "the repro line ran another run: '$a' vs '$b'"
    ;;
  trace_hash)
    out=$("$kvchaos" run "$dir/quick-crash.yaml" --seed 3 --out "$tmp/r" 2>&1) || fail "run failed: $out"
    echo "$out"
    hash=$(grep -o '"trace_hash": "[0-9a-f]*"' "$tmp/r/quick-crash-3.json" | grep -o '[0-9a-f]\{16\}')
    echo "$out" | grep -q "TRACE HASH" || fail "the table has no trace hash column"
    echo "$out" | grep "^quick-crash " | grep -q "$hash" || fail "the table does not show the trace hash $hash"
    ;;
  mode_empty)
    out=$("$kvchaos" run "$dir/quick-crash.yaml" --mode real 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 2 ] || fail "exit $rc, expected 2 when --mode leaves nothing to run"
    echo "$out" | grep -qF "kvchaos run: --mode real leaves nothing to run: every scenario given is mode sim ($dir/quick-crash.yaml)" ||
      fail "the message does not say why nothing ran"
    ;;
  same_name)
    mkdir -p "$tmp/s"
    cp "$dir/quick-crash.yaml" "$tmp/s/a.yaml"
    cp "$dir/quick-crash.yaml" "$tmp/s/b.yaml"
    out=$("$kvchaos" run "$tmp/s" --out "$tmp/r" 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 2 ] || fail "exit $rc, expected 2 for two scenarios of one name"
    echo "$out" | grep -qF "$tmp/s/b.yaml: name 'quick-crash' is also the name of $tmp/s/a.yaml" || fail "both files not named"
    [ -e "$tmp/r" ] && [ -n "$(ls "$tmp/r")" ] && fail "runs happened anyway"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo PASS
