#!/usr/bin/env bash
# faultfs throughput against the raw directory it mirrors, with fio (psync, one job), over a
# tmpfs source: 4 MiB sequential read, 4 MiB sequential write, 4 KiB random read.
#
# Columns: the raw tmpfs directory; faultfs with no rules; faultfs with 10 rules that match
# nothing. Both caching modes are measured: `none` (every read and write goes through faultfs,
# the honest cost of FUSE) and `targeted` (the default: files no rule targets use the kernel
# page cache, so repeat reads may never reach faultfs).
#
# Page-cache effects are controlled: fio runs with --invalidate=0 (its default fadvise would drop
# the FUSE side's cache but cannot drop tmpfs pages, which skews the ratio), files are laid out
# before timing, and every write run is done twice with the second one kept (the first run
# after idle is slow on these VMs).
#
# usage: bench/faultfs_bench.sh [FAULTFS_BINARY]   (env: RUNTIME=5 SIZE=1g THREADS=16)
set -euo pipefail

FAULTFS=${1:-build/default/faultfs/faultfs}
RUNTIME=${RUNTIME:-5}
SIZE=${SIZE:-1g}
[ -x "$FAULTFS" ] || { echo "faultfs binary not found: $FAULTFS (build the faultfs target)" >&2; exit 2; }
command -v fio >/dev/null || { echo "fio is not installed" >&2; exit 2; }
[ -e /dev/fuse ] || { echo "/dev/fuse is missing" >&2; exit 2; }
FAULTFS=$(realpath "$FAULTFS")

work=$(mktemp -d /dev/shm/faultfs_bench.XXXXXX)   # /dev/shm is tmpfs
mnt=$(mktemp -d /tmp/faultfs_bench_mnt.XXXXXX)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  mountpoint -q "$mnt" && fusermount3 -u -z "$mnt" || true
  rm -rf "$work" "$mnt"
}
trap cleanup EXIT
mkdir -p "$work/raw" "$work/src"

cat > "$work/rules10.yaml" <<'YAML'
rules:
YAML
actions=(errno latency flip_read_bits corrupt_write short_read torn_write lost_write errno hang bad_range)
for i in $(seq 0 9); do
  a=${actions[$i]}
  extra=""
  [ "$a" = latency ] && extra="    latency: 10ms"
  printf '  - id: nomatch-%d\n    path: "no-such-dir-%d/**"\n    action: %s\n%s\n' "$i" "$i" "$a" "$extra" >> "$work/rules10.yaml"
done

mount_ffs() {  # $1 = cache mode, $2 = rules file or ""
  local rules=()
  [ -n "$2" ] && rules=(--rules "$2")
  "$FAULTFS" "$work/src" "$mnt" -f --cache "$1" --threads "${THREADS:-16}" "${rules[@]}" 2>"$work/faultfs.log" &
  pid=$!
  for _ in $(seq 200); do mountpoint -q "$mnt" && return 0; sleep 0.05; done
  echo "faultfs did not mount: $(cat "$work/faultfs.log")" >&2; exit 1
}
umount_ffs() {
  kill -TERM "$pid"; wait "$pid" || true; pid=""
}

# fio_run DIR RW BS → MiB/s (reads or writes, whichever the job does)
fio_run() {
  local dir=$1 rw=$2 bs=$3
  fio --name=job --directory="$dir" --filename=bench.dat --size="$SIZE" --rw="$rw" --bs="$bs" \
      --ioengine=psync --numjobs=1 --invalidate=0 --time_based --runtime="$RUNTIME" \
      --output-format=json 2>/dev/null |
    jq -r '.jobs[0] | if (.read.bw > 0) then .read.bw else .write.bw end | . / 1024 | floor'
}

layout() {  # write the data file once, untimed
  fio --name=layout --directory="$1" --filename=bench.dat --size="$SIZE" --rw=write --bs=4m \
      --ioengine=psync --output-format=json >/dev/null 2>&1
}

declare -A R
measure() {  # $1 = label, $2 = dir
  local label=$1 dir=$2
  layout "$dir"
  R[$label,seqread]=$(fio_run "$dir" read 4m)
  R[$label,randread]=$(fio_run "$dir" randread 4k)
  fio_run "$dir" write 4m >/dev/null   # warm-up run, discarded
  R[$label,seqwrite]=$(fio_run "$dir" write 4m)
}

measure raw "$work/raw"
for mode in none targeted; do
  mount_ffs "$mode" ""; measure "$mode,0" "$mnt"; umount_ffs
  rm -f "$work/src/bench.dat"
  mount_ffs "$mode" "$work/rules10.yaml"; measure "$mode,10" "$mnt"; umount_ffs
  rm -f "$work/src/bench.dat"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }
echo "faultfs_bench: fio psync, 1 job, size $SIZE, ${RUNTIME}s per run, tmpfs source; MiB/s"
printf '%-10s %9s | %-9s %9s %9s %7s %7s %6s | %-9s %9s %9s %7s %7s %6s\n' \
  workload raw cache none 10rules ratio bar 10r/0r cache targeted 10rules ratio bar 10r/0r
for w in seqread seqwrite randread; do
  case $w in seqread) bar=0.40;; seqwrite) bar=0.45;; randread) bar=0.045;; esac
  line=$(printf '%-10s %9s |' "$w" "${R[raw,$w]}")
  for mode in none targeted; do
    n0=${R[$mode,0,$w]}; n10=${R[$mode,10,$w]}
    line+=$(printf ' %-9s %9s %9s %7s %7s %6s |' "" "$n0" "$n10" "$(ratio "$n0" "${R[raw,$w]}")" "$bar" "$(ratio "$n10" "$n0")")
  done
  echo "${line%|}"
done
echo "ratio = faultfs (no rules) / raw; bar = the issue's target ratio; 10r/0r must stay >= 0.95"
