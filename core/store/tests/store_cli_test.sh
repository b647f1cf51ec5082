#!/usr/bin/env bash
# `kvchaos store check` and `kvchaos store bench` as an operator runs them, against real temp dirs.
# Usage: store_cli_test.sh KVCHAOS CASE
#   check_ok           two healthy backends: exit 0, JSON with each backend available, no file left behind (the shard directories stay, as upstream makes them)
#   check_missing      the second backend dir is missing: exit 1, the error names it and stat
#   check_unwritable   the second backend dir cannot be written: exit 1, the error names it and the
#                      failed call (chmod 0555, or chattr +i when running as root; 77 = skipped
#                      where neither makes it unwritable)
#   check_bad_config   an invalid value: exit 1, the error names file:line: key
#   check_messages     several problems: one entry each in "errors" (no literal \n), in line order,
#                      also on stderr one per line; an unknown key suggests the known one; 4MB refused
#   check_defaults     a minimal config: "config" shows every key's value, "defaults" the ones left out
#   bench_verify       a small dump/load with --verify on aio and psync: 0 blocks different, the
#                      health transitions section printed (none on healthy dirs), blocks removed
#   bench_transitions  block files cannot be created on one backend (their .tmp names are taken
#                      by directories): writes fail over, that backend is excluded and the bench
#                      prints the transition, and every block still comes back equal
#   bench_durable      durable_commit: true on aio and psync: the header says so, every block
#                      comes back equal
#   bench_load_only    a --verify --keep run, then two block files removed and one cut short (what a power
#                      loss leaves): --load-only --verify counts them missing (exit 1), the rest intact
#   bench_all_fail     --load-only of blocks never written: the load line says every block failed and
#                      prints no throughput, the first error names its phase
set -u
kvchaos=$1
case_name=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvchaos_store_cli.XXXXXX")
immutable=""
cleanup() {
  if [ -n "$immutable" ]; then chattr -i "$immutable" 2>/dev/null; fi
  chmod -R u+w "$tmp" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
export KVCHAOS_LOG=warn

# O_DIRECT where the temp file system has it (tmpfs before Linux 6.6 does not).
direct=false
if dd if=/dev/zero of="$tmp/.direct" bs=4096 count=1 oflag=direct 2>/dev/null; then direct=true; fi
rm -f "$tmp/.direct"

config() {  # file engine backend... : writes a store config
  local file=$1 engine=$2
  shift 2
  local paths
  paths=$(IFS=:; echo "$*")
  printf 'storage_backends: "%s"\nposix_io_engine: %s\nio_direct: %s\n' "$paths" "$engine" "$direct" >"$file"
}

case "$case_name" in
  check_ok)
    mkdir -p "$tmp/p0" "$tmp/p1"
    config "$tmp/s.yaml" aio "$tmp/p0" "$tmp/p1"
    out=$("$kvchaos" store check --config "$tmp/s.yaml" 2>"$tmp/err"); rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || fail "exit $rc for two healthy backends: $(cat "$tmp/err")"
    echo "$out" | grep -q '"ok": true' || fail "no \"ok\": true"
    echo "$out" | grep -q '"healthy": true' || fail "no \"healthy\": true"
    for p in "$tmp/p0" "$tmp/p1"; do
      echo "$out" | grep -A2 "\"path\": \"$p\"" | grep -q '"state": "available"' || fail "backend $p not reported available"
    done
    [ "$(echo "$out" | grep -c '"state": "available"')" -eq 2 ] || fail "want exactly 2 backends in the JSON"
    left=$(find "$tmp/p0" "$tmp/p1" -mindepth 1 -type f | head -3)
    [ -z "$left" ] || fail "the startup check left files behind: $left"
    ;;
  check_missing)
    mkdir -p "$tmp/p0"
    config "$tmp/s.yaml" aio "$tmp/p0" "$tmp/gone"
    out=$("$kvchaos" store check --config "$tmp/s.yaml" 2>/dev/null); rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "exit $rc, want 1 for a missing backend dir"
    echo "$out" | grep -q '"ok": false' || fail "no \"ok\": false"
    echo "$out" | grep -q "backend '$tmp/gone'" || fail "the error does not name the missing backend"
    echo "$out" | grep -q "stat(" || fail "the error does not name the failed operation (stat)"
    echo "$out" | grep -q "\"path\": \"$tmp/p0\"" || fail "the JSON does not list the configured backends"
    # No files; the probe's shard directory stays (a peer may be using it).
    [ -z "$(find "$tmp/p0" -mindepth 1 -type f | head -1)" ] || fail "the failed check left files in $tmp/p0"
    ;;
  check_unwritable)
    mkdir -p "$tmp/p0" "$tmp/p1"
    if [ "$(id -u)" -eq 0 ]; then
      chattr +i "$tmp/p1" 2>/dev/null && immutable="$tmp/p1"
    else
      chmod 0555 "$tmp/p1"
    fi
    if touch "$tmp/p1/.w" 2>/dev/null; then echo "SKIP: cannot make a directory unwritable here"; exit 77; fi
    config "$tmp/s.yaml" aio "$tmp/p0" "$tmp/p1"
    out=$("$kvchaos" store check --config "$tmp/s.yaml" 2>/dev/null); rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "exit $rc, want 1 for an unwritable backend dir"
    error=$(echo "$out" | sed -n '/"errors"/,/\]/p')
    echo "$error" | grep -q "backend '$tmp/p1'" || fail "the error does not name the unwritable backend"
    echo "$error" | grep -Eq "(mkdir|open)\('$tmp/p1/" || fail "the error does not name the failed call and file"
    echo "$error" | grep -Eq "Permission denied|Operation not permitted" || fail "the error does not carry the errno text"
    [ -z "$(find "$tmp/p0" -mindepth 1 -type f | head -1)" ] || fail "the failed check left files in $tmp/p0"
    ;;
  check_bad_config)
    mkdir -p "$tmp/p0"
    printf 'storage_backends: "%s"\nstore_health:\n  health_window_size: 4\n  failure_threshold: 9\n' "$tmp/p0" >"$tmp/s.yaml"
    out=$("$kvchaos" store check --config "$tmp/s.yaml" 2>/dev/null); rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "exit $rc, want 1 for an invalid config"
    echo "$out" | grep -q "s.yaml:4: .*failure_threshold" || fail "the error does not name file:line: key"
    ;;
  check_messages)
    mkdir -p "$tmp/p0"
    printf 'storage_backends: "%s"\ntimout_ms: 3\nblock_size: 4MB\nconcurrency: 0\n' "$tmp/p0" >"$tmp/s.yaml"
    out=$("$kvchaos" store check --config "$tmp/s.yaml" 2>"$tmp/err"); rc=$?
    echo "$out"; cat "$tmp/err"
    [ "$rc" -eq 1 ] || fail "exit $rc, want 1 for an invalid config"
    echo "$out" | grep -qF '\n' && fail "the JSON carries problems joined by a literal \\n"
    lines=$(echo "$out" | sed -n '/"errors"/,/\]/p' | grep -o 's.yaml:[0-9]*' | tr '\n' ' ')
    [ "$lines" = "s.yaml:2 s.yaml:3 s.yaml:4 " ] || fail "errors not one entry per problem in line order: $lines"
    grep -qF "s.yaml:2: timout_ms: unknown key (did you mean timeout_ms?)" "$tmp/err" || fail "no did-you-mean on stderr"
    grep -qF "s.yaml:3: block_size: '4MB' is ambiguous: write 4MiB (4194304 bytes)" "$tmp/err" || fail "4MB not refused"
    [ "$(grep -c '^kvchaos store check: ' "$tmp/err")" -eq 3 ] || fail "stderr does not print one line per problem"
    ;;
  check_defaults)
    mkdir -p "$tmp/p0"
    printf 'storage_backends: "%s"\ntimeout_ms: 500\n' "$tmp/p0" >"$tmp/s.yaml"
    out=$("$kvchaos" store check --config "$tmp/s.yaml" 2>/dev/null); rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || fail "exit $rc for a minimal config"
    config=$(echo "$out" | sed -n '/"config"/,/^  }/p')
    for kv in '"posix_io_engine": "psync"' '"io_direct": false' '"timeout_ms": 500' '"durable_commit": false' \
              '"block_size": 4194304' '"health_window_size": 8' '"max_inflight_shards": 65536' \
              '"max_pending_tasks": 65536'; do
      echo "$config" | grep -qF "$kv" || fail "the effective config does not show $kv"
    done
    defaults=$(echo "$out" | sed -n '/"defaults"/,/\]/p')
    echo "$defaults" | grep -qF '"posix_io_engine"' || fail "posix_io_engine not listed as defaulted"
    echo "$defaults" | grep -qF '"store_health.enabled"' || fail "store_health.enabled not listed as defaulted"
    echo "$defaults" | grep -qF '"timeout_ms"' && fail "timeout_ms is given, not defaulted"
    echo "$defaults" | grep -qF '"storage_backends"' && fail "storage_backends is given, not defaulted"
    ;;
  bench_verify)
    for engine in aio psync; do
      mkdir -p "$tmp/$engine/p0" "$tmp/$engine/p1"
      config "$tmp/$engine.yaml" "$engine" "$tmp/$engine/p0" "$tmp/$engine/p1"
      out=$("$kvchaos" store bench --config "$tmp/$engine.yaml" --block-size 64KiB --blocks 24 --qd 4 --verify 2>&1); rc=$?
      echo "$out"
      [ "$rc" -eq 0 ] || fail "$engine: exit $rc"
      echo "$out" | grep -q "engine $engine" || fail "$engine: the header does not name the engine"
      echo "$out" | grep -Eq '^dump: [0-9.]+ GB/s .*0 failed' || fail "$engine: no dump line with 0 failed"
      echo "$out" | grep -Eq '^load: [0-9.]+ GB/s .*0 failed' || fail "$engine: no load line with 0 failed"
      echo "$out" | grep -q '^verify: 0 of 24 blocks came back different' || fail "$engine: blocks came back different"
      echo "$out" | grep -q '^health transitions: none' || fail "$engine: no health transitions section (none expected)"
      left=$(find "$tmp/$engine/p0" "$tmp/$engine/p1" -type f | head -3)
      [ -z "$left" ] || fail "$engine: the bench left block files behind: $left"
    done
    ;;
  bench_transitions)
    # The bench's block ids follow from --seed: learn their file names from a kept run elsewhere.
    mkdir -p "$tmp/scratch" "$tmp/p0" "$tmp/p1"
    config "$tmp/scratch.yaml" aio "$tmp/scratch"
    "$kvchaos" store bench --config "$tmp/scratch.yaml" --block-size 64KiB --blocks 16 --qd 4 --seed 7 --keep \
      >/dev/null 2>&1 || fail "the scratch run failed"
    names=$(cd "$tmp/scratch" && find . -type f -name '[0-9a-f]*' | sed 's|^\./||')
    [ "$(echo "$names" | wc -l)" -eq 16 ] || fail "the scratch run kept $(echo "$names" | wc -l) block files, want 16"
    for f in $names; do mkdir -p "$tmp/p1/$f.tmp"; done  # open(O_CREAT) of the temp file fails: EISDIR
    config "$tmp/s.yaml" aio "$tmp/p0" "$tmp/p1"
    out=$("$kvchaos" store bench --config "$tmp/s.yaml" --block-size 64KiB --blocks 16 --qd 4 --seed 7 --verify 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || fail "exit $rc: writes failing on one backend must fail over"
    echo "$out" | grep -q '^verify: 0 of 16 blocks came back different' || fail "blocks came back different"
    echo "$out" | grep -Eq "^  \+[0-9.]+s $tmp/p1 -> unavailable" || fail "the exclusion of $tmp/p1 is not printed"
    echo "$out" | grep -q "$tmp/p0 -> unavailable" && fail "the healthy backend was excluded"
    ;;
  bench_durable)
    for engine in aio psync; do
      mkdir -p "$tmp/$engine/p0"
      config "$tmp/$engine.yaml" "$engine" "$tmp/$engine/p0"
      echo "durable_commit: true" >>"$tmp/$engine.yaml"
      out=$("$kvchaos" store bench --config "$tmp/$engine.yaml" --block-size 64KiB --blocks 24 --qd 4 --verify 2>&1); rc=$?
      echo "$out"
      [ "$rc" -eq 0 ] || fail "$engine: exit $rc"
      echo "$out" | grep -q "durable_commit on" || fail "$engine: the header does not say durable_commit on"
      echo "$out" | grep -Eq '^  durable commits: [0-9]+ directory fsyncs .* for 24 blocks' || fail "$engine: no durable commits line"
      echo "$out" | grep -q '^verify: 0 of 24 blocks came back different; 24 of 24 intact' || fail "$engine: blocks came back different"
    done
    ;;
  bench_load_only)
    mkdir -p "$tmp/p0"
    config "$tmp/s.yaml" psync "$tmp/p0"
    "$kvchaos" store bench --config "$tmp/s.yaml" --block-size 64KiB --blocks 16 --qd 4 --seed 5 --verify --keep >/dev/null 2>&1 ||
      fail "the --keep run failed"
    files=$(find "$tmp/p0" -type f -name '[0-9a-f]*' | sort)
    [ "$(echo "$files" | wc -l)" -eq 16 ] || fail "the --keep run left $(echo "$files" | wc -l) block files, want 16"
    rm -f $(echo "$files" | sed -n '1p;2p')
    truncate -s 4096 "$(echo "$files" | sed -n '3p')"
    out=$("$kvchaos" store bench --config "$tmp/s.yaml" --block-size 64KiB --blocks 16 --qd 4 --seed 5 --load-only --verify 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "exit $rc, want 1 when blocks are missing"
    echo "$out" | grep -q '^dump:' && fail "--load-only dumped"
    echo "$out" | grep -Eq '^load: [0-9.]+ GB/s .*3 failed, 3 of them missing' || fail "the load line does not count 3 missing blocks"
    echo "$out" | grep -q '^verify: 0 of 13 blocks came back different; 13 of 16 intact' || fail "the verify line is wrong"
    echo "$out" | grep -q '^health transitions: none' || fail "missing and short block files changed a backend's health"
    ;;
  bench_all_fail)
    mkdir -p "$tmp/p0"
    config "$tmp/s.yaml" psync "$tmp/p0"
    out=$("$kvchaos" store bench --config "$tmp/s.yaml" --block-size 64KiB --blocks 8 --qd 2 --load-only 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "exit $rc, want 1 when every block failed"
    echo "$out" | grep -q '^load: every block failed (8 of 8 in [0-9.]* s, 8 of them missing): no throughput' ||
      fail "the load line does not say every block failed"
    echo "$out" | grep -q '^load: [0-9.]* GB/s' && fail "a throughput was printed for a phase where every block failed"
    echo "$out" | grep -q '^first error (load): NotFound' || fail "the first error does not name its phase"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo PASS
