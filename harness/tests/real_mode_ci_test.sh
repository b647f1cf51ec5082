#!/usr/bin/env bash
# The real CI scenarios (scenarios/ci, mode real) as CI runs them: fails on any violated
# expectation. Exit 77 (skipped, with the reason) when this machine lacks redis-server or FUSE.
# Usage: real_mode_ci_test.sh KVCHAOS SOURCE_DIR
set -u
kvchaos=$1
src=$2
if ! command -v redis-server >/dev/null && [[ ! -x /usr/bin/redis-server ]]; then
  echo "SKIP: real scenarios need redis-server, which is not installed"; exit 77
fi
if [[ ! -w /dev/fuse ]] || ! command -v fusermount3 >/dev/null; then
  echo "SKIP: real scenarios need FUSE (/dev/fuse and fusermount3), which this machine lacks"; exit 77
fi
out=$(mktemp -d /tmp/kvchaos-ci-real-XXXXXX)
trap 'rm -rf "$out"' EXIT
"$kvchaos" run "$src/scenarios/ci" --mode real --jobs 1 --out "$out"
