#!/usr/bin/env bash
# Hostile input to `kvchaos store check` and `kvchaos run`: each is refused with an error naming
# file:line: key (or printed with the bad bytes replaced), never an abort (rc 134, nlohmann's
# type_error.316 on a byte that is not UTF-8). Usage: hostile_input_cli_test.sh KVCHAOS SOURCE_DIR CASE
#   store_utf8       a backend path with byte 0xFF: exit 1, JSON names store.yaml:1: storage_backends
#   store_path_utf8  a --config path with byte 0xFF: exit 1, the JSON error is valid UTF-8
#   store_duplicate  timeout_ms given twice: exit 1, names the second line and the first
#   store_overflow   timeout_ms: 9223372036855 (ms past a nanosecond Duration): exit 1, out of range
#   run_utf8         a scenario name with byte 0xFF: exit 2, names s.yaml:LINE: name
set -u
kvchaos=$1
src=$2
case_name=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvchaos_hostile_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export KVCHAOS_LOG=warn
mkdir -p "$tmp/p0"

# Runs `store check` on the config text $1; sets rc and out.
store_check() {
  printf '%b' "$1" >"$tmp/store.yaml"
  out=$("$kvchaos" store check --config "$tmp/store.yaml" 2>&1); rc=$?
  echo "$out"
}

case "$case_name" in
  store_utf8)
    store_check "storage_backends: \"$tmp/p0\\xff\"\n"
    [ "$rc" -eq 1 ] || fail "exit $rc, want 1 (134 is an abort)"
    echo "$out" | grep -qF "store.yaml:1: storage_backends: the value is not valid UTF-8 (byte 0xFF" || fail "file:line: key not named"
    ;;
  store_path_utf8)
    out=$("$kvchaos" store check --config "$tmp/no-such-"$'\xff'".yaml" 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "exit $rc, want 1 (134 is an abort)"
    echo "$out" | grep -qF "cannot open config file" || fail "the error is not reported"
    echo "$out" | iconv -f UTF-8 -t UTF-8 >/dev/null || fail "the JSON printed is not UTF-8"
    ;;
  store_duplicate)
    store_check "storage_backends: \"$tmp/p0\"\ntimeout_ms: 30\ntimeout_ms: 1\n"
    [ "$rc" -eq 1 ] || fail "exit $rc, want 1 for a key given twice"
    echo "$out" | grep -qF "store.yaml:3: timeout_ms: duplicate key (first given on line 2)" || fail "duplicate not named"
    ;;
  store_overflow)
    store_check "storage_backends: \"$tmp/p0\"\ntimeout_ms: 9223372036855\n"
    [ "$rc" -eq 1 ] || fail "exit $rc, want 1 (the value used to become a 1 ms attempt timeout)"
    echo "$out" | grep -qF "store.yaml:2: timeout_ms: 9223372036855 ms is out of range" || fail "range not named"
    ;;
  run_utf8)
    sed 's/^name: \(.*\)$/name: "\1-\xff"/' "$src/harness/tests/runner_scenarios/quick-crash.yaml" >"$tmp/s.yaml"
    line=$(grep -an '^name:' "$tmp/s.yaml" | cut -d: -f1)
    out=$("$kvchaos" run "$tmp/s.yaml" --seed 1 --out "$tmp/r" 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 2 ] || fail "exit $rc, want 2 for an invalid scenario (134 is an abort)"
    echo "$out" | grep -qF "s.yaml:$line: name: the value is not valid UTF-8" || fail "file:line: field not named"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo PASS
