#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ for a bounded time each (fuzz/README.md lists them).
#   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_targets
#   ci/fuzz.sh [--build DIR] [--seconds N] [target...]      (default build/fuzz, 60 s, every target)
# Per target: first every kept regression input (fuzz/regressions/<target>/, each a crash found
# once and fixed: each must pass), then fuzzing for N seconds from the seeds — fuzz/seeds/<target>/
# plus the repository's own files of that kind (scenario files, configs) — into a corpus kept in the
# build directory, so runs build on each other. A crash stops the script with exit status 1 and
# names the reproducer; rerun it with: build/fuzz/fuzz/fuzz_<target> <file>.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

build=build/fuzz
seconds=60
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(scenario config node_api faultfs_control cache_location coordination_uri redis_reply)
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

# The repository's own inputs of each kind, besides fuzz/seeds/<target>/.
tree_seeds() {
  case "$1" in
    scenario) find scenarios harness/tests/runner_scenarios -name '*.yaml' ;;
    config) find core scenarios/ci -name '*.yaml' ;;
    *) ;;
  esac
}
max_len() {
  case "$1" in
    scenario|config) echo 65536 ;;
    node_api) echo 16384 ;;
    *) echo 4096 ;;
  esac
}

summary=()
failed=0
for t in "${targets[@]}"; do
  bin="$build/fuzz/fuzz_$t"
  if [ ! -x "$bin" ]; then
    echo "fuzz.sh: $bin is not built (cmake --build --preset fuzz --target fuzz_targets)" >&2
    exit 2
  fi
  seeds="$build/fuzz-seeds/$t"
  corpus="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t"
  rm -rf "$seeds"
  mkdir -p "$seeds" "$corpus" "$artifacts"
  [ -d "fuzz/seeds/$t" ] && cp fuzz/seeds/"$t"/* "$seeds"/
  i=0
  while read -r f; do
    [ -n "$f" ] && cp "$f" "$seeds/tree_$((i++))_$(basename "$f")"
  done < <(tree_seeds "$t")

  regressions=()
  if [ -d "fuzz/regressions/$t" ]; then
    while IFS= read -r -d '' f; do regressions+=("$f"); done < <(find "fuzz/regressions/$t" -type f -print0 | sort -z)
  fi
  if [ ${#regressions[@]} -gt 0 ] && ! "$bin" -rss_limit_mb=2048 "${regressions[@]}" > "$artifacts/regressions.log" 2>&1; then
    echo "fuzz.sh: $t: a kept regression input fails again:" >&2
    tail -30 "$artifacts/regressions.log" >&2
    exit 1
  fi

  log="$artifacts/fuzz.log"
  set +e
  "$bin" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$seeds" > "$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -a -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  if [ $rc -ne 0 ]; then
    crash=$(grep -a -o "Test unit written to .*" "$log" | head -1 | sed 's/Test unit written to //')
    echo "fuzz.sh: $t: crash after $runs runs: ${crash:-see $log}" >&2
    grep -a -E "ERROR|SUMMARY|fuzz check failed|==[0-9]+==" "$log" | head -20 >&2
    summary+=("$t: ${seconds}s, $runs runs, ${#regressions[@]} regression inputs: CRASH ${crash}")
    failed=1
    continue
  fi
  summary+=("$t: ${seconds}s, $runs runs, ${#regressions[@]} regression inputs: ok")
done
printf 'fuzz.sh: %s\n' "${summary[@]}"
exit $failed
