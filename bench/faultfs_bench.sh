#!/usr/bin/env bash
# faultfs throughput against the raw directory it mirrors, with fio (psync, one job), over a
# tmpfs source: 4 MiB sequential read, 4 MiB sequential write, 4 KiB random read.
#
# Configurations: the raw tmpfs directory; faultfs with no rules; faultfs with 10 rules that
# match nothing — each in the `none` caching mode (every read and write goes through faultfs: the
# honest cost of FUSE) and the default `targeted` mode (files no rule targets use the kernel page
# cache, so repeat reads may never reach faultfs); `none` with --no-splice (pread/pwrite
# through a reused buffer instead of splice), to compare the two data paths; `none` with
# --spin-us 0 (workers block in read() right after each reply instead of polling for the next
# request a moment), to show what the poll gains; and `always` (page
# cache and writeback cache, what libfuse's passthrough_hp does by default). Seven faultfs
# processes mirror the same source at once, and every repetition runs all eight configurations
# back to back, so that load from other processes hits them alike. Reported: the median MiB/s of
# REPS repetitions, and the median of the per-repetition ratios (each faultfs run divided by the
# raw run of the same repetition, which cancels slow drifts of the machine's load).
#
# Page-cache effects are controlled: fio runs with --invalidate=0 (its default fadvise would drop
# the FUSE side's cache but cannot drop tmpfs pages, which skews the ratio); the data file is laid
# out before timing; every write measurement is preceded by a discarded warm-up write run (the
# first run after idle is slow on these VMs).
#
# usage: bench/faultfs_bench.sh [FAULTFS_BINARY]   (env: RUNTIME=3 SIZE=512m REPS=3 THREADS=16)
set -euo pipefail

FAULTFS=${1:-build/default/faultfs/faultfs}
RUNTIME=${RUNTIME:-3}
SIZE=${SIZE:-512m}
REPS=${REPS:-3}
[ -x "$FAULTFS" ] || { echo "faultfs binary not found: $FAULTFS (build the faultfs target)" >&2; exit 2; }
command -v fio >/dev/null || { echo "fio is not installed" >&2; exit 2; }
[ -e /dev/fuse ] || { echo "/dev/fuse is missing" >&2; exit 2; }
FAULTFS=$(realpath "$FAULTFS")

work=$(mktemp -d /dev/shm/faultfs_bench.XXXXXX)   # /dev/shm is tmpfs
mnts=$(mktemp -d /tmp/faultfs_bench_mnt.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for m in "$mnts"/*; do mountpoint -q "$m" && fusermount3 -u -z "$m" || true; done
  rm -rf "$work" "$mnts"
}
trap cleanup EXIT
mkdir -p "$work/raw" "$work/src"

echo "rules:" > "$work/rules10.yaml"
actions=(errno latency flip_read_bits corrupt_write short_read torn_write lost_write errno hang bad_range)
for i in $(seq 0 9); do
  printf '  - id: nomatch-%d\n    path: "no-such-dir-%d/**"\n    action: %s\n' "$i" "$i" "${actions[$i]}" >> "$work/rules10.yaml"
  [ "${actions[$i]}" = latency ] && echo "    latency: 10ms" >> "$work/rules10.yaml"
done

configs=(raw none0 none10 nosplice0 nospin0 targeted0 targeted10 always0)
declare -A DIR=([raw]="$work/raw")
for c in none0 none10 nosplice0 nospin0 targeted0 targeted10 always0; do
  mkdir -p "$mnts/$c"
  opts=(--cache "${c%%[0-9]*}")
  [[ $c == *10 ]] && opts+=(--rules "$work/rules10.yaml")
  [[ $c == nosplice* ]] && opts=(--cache none --no-splice)
  [[ $c == nospin* ]] && opts=(--cache none --spin-us 0)
  "$FAULTFS" "$work/src" "$mnts/$c" -f --threads "${THREADS:-16}" "${opts[@]}" 2>"$work/$c.log" &
  pids+=($!)
  DIR[$c]="$mnts/$c"
done
for c in none0 none10 nosplice0 nospin0 targeted0 targeted10 always0; do
  for _ in $(seq 200); do mountpoint -q "${DIR[$c]}" && break; sleep 0.05; done
  mountpoint -q "${DIR[$c]}" || { echo "faultfs ($c) did not mount: $(cat "$work/$c.log")" >&2; exit 1; }
done

# fio_run DIR RW BS → MiB/s of the job's direction
fio_run() {
  fio --name=job --directory="$1" --filename=bench.dat --size="$SIZE" --rw="$2" --bs="$3" \
      --ioengine=psync --numjobs=1 --invalidate=0 --time_based --runtime="$RUNTIME" \
      --output-format=terse --terse-version=3 2>/dev/null |
    awk -F';' '{ bw = ($7 > 0) ? $7 : $48; printf "%d\n", bw / 1024 }'   # fields 7/48: read/write KiB/s
}
for d in "$work/raw" "$work/src"; do   # lay the data files out, untimed
  fio --name=layout --directory="$d" --filename=bench.dat --size="$SIZE" --rw=write --bs=4m \
      --ioengine=psync --output-format=json >/dev/null 2>&1
done

declare -A V
for rep in $(seq "$REPS"); do
  for c in "${configs[@]}"; do
    V[$c,seqread]+=" $(fio_run "${DIR[$c]}" read 4m)"
    V[$c,randread]+=" $(fio_run "${DIR[$c]}" randread 4k)"
    RUNTIME=1 fio_run "${DIR[$c]}" write 4m >/dev/null   # warm-up, discarded
    V[$c,seqwrite]+=" $(fio_run "${DIR[$c]}" write 4m)"
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }
# per_rep_ratio "A-runs" "B-runs": the median over repetitions of A_i / B_i
per_rep_ratio() {
  paste <(echo "$1" | tr ' ' '\n' | grep -v '^$') <(echo "$2" | tr ' ' '\n' | grep -v '^$') |
    awk '{ if ($2 > 0) printf "%.3f\n", $1 / $2 }' | median
}
declare -A M
for c in "${configs[@]}"; do
  for w in seqread seqwrite randread; do M[$c,$w]=$(echo "${V[$c,$w]}" | median); done
done

echo "faultfs_bench: fio psync, 1 job, file $SIZE, ${RUNTIME}s per run, median of $REPS, tmpfs source; MiB/s"
printf '%-9s %8s | %-8s %8s %8s %7s %6s %7s | %-8s %8s %8s %7s %6s %7s\n' workload raw \
  "" none-0r none-10r ratio bar 10r/0r "" tgt-0r tgt-10r ratio bar 10r/0r
for w in seqread seqwrite randread; do
  case $w in seqread) bar=0.40 ;; seqwrite) bar=0.45 ;; randread) bar=0.045 ;; esac
  line=$(printf '%-9s %8s |' "$w" "${M[raw,$w]}")
  for mode in none targeted; do
    a=${M[${mode}0,$w]}; b=${M[${mode}10,$w]}
    line+=$(printf ' %-8s %8s %8s %7s %6s %7s |' "" "$a" "$b" "$(ratio "$a" "${M[raw,$w]}")" "$bar" "$(ratio "$b" "$a")")
  done
  echo "${line%|}"
done
echo "median of per-repetition ratios to raw (same repetition):"
printf '  %-9s %9s %9s %9s %9s %9s %9s %9s\n' workload none-0r none-10r nosplice nospin tgt-0r tgt-10r always
for w in seqread seqwrite randread; do
  line=$(printf '  %-9s' "$w")
  for c in none0 none10 nosplice0 nospin0 targeted0 targeted10 always0; do
    line+=$(printf ' %9s' "$(per_rep_ratio "${V[$c,$w]}" "${V[raw,$w]}")")
  done
  echo "$line"
done
echo "median of per-repetition ratios 10 rules / no rules (must stay >= 0.95):"
for w in seqread seqwrite randread; do
  printf '  %-9s none %s   targeted %s\n' "$w" "$(per_rep_ratio "${V[none10,$w]}" "${V[none0,$w]}")" \
    "$(per_rep_ratio "${V[targeted10,$w]}" "${V[targeted0,$w]}")"
done
echo "all runs (MiB/s):"
for c in "${configs[@]}"; do
  for w in seqread seqwrite randread; do printf '  %-10s %-8s%s\n' "$c" "$w" "${V[$c,$w]}"; done
done
echo "ratio = faultfs with no rules / raw (bar: the issue's target); 10r/0r = 10 non-matching rules / no rules (must stay >= 0.95)"
