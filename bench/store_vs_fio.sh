#!/usr/bin/env bash
# Compares `kvchaos store bench` (aio engine, O_DIRECT, timeouts off) with fio doing the same
# pattern: N files of one block each, written then read once, libaio, direct I/O, the same block
# size and queue depth, one open and one close per file. The runs are interleaved (rep 1: store
# then fio, rep 2: fio then store, ...) in fresh directories, so load from other processes hits both
# alike; each rep is printed, then the median of the per-rep ratios (target: >= 0.9 for dump and
# for load). Each rep also shows how full the store's engine kept the kernel queue during the dump
# (mean depth of qd while busy, and the share of that time a slot was free while blocks waited to
# be prepared): when depth is ~qd, a gap to fio is not the store's queueing.
#
# Two fio write runs bracket what the store must do for a dump (create the file, allocate its
# space, write it; then the rename commit, which fio cannot do):
#   fio-prealloc  fio's default: every file is created and fallocated *before* fio's clock starts,
#                 so its timed run only overwrites reserved space. fio does less than the store
#                 here; this is the ratio the target applies to.
#   fio-create    --create_on_open=1: fio creates each file inside its timed run, as the store
#                 does, but then extends it with the write, which ext4 completes synchronously
#                 inside io_submit (queue depth one in effect). Printed for reference.
# Loads compare with fio reading fio-prealloc's files (same open/read/close per file).
# Queue depth: fio's iodepth and the store's engine concurrency (I/Os in the kernel) are both --qd;
# the bench keeps `kvchaos store bench`'s default of 4 x qd single-block tasks submitted (--tasks
# overrides), as a server that hands the store whole requests lets the engine create block files
# well ahead of the I/O queue.
#
# --durable compares durable dumps instead (store option durable_commit: each block's data synced
# before its rename, its directory after it, directory fsyncs shared by the blocks committing
# together): the store without and with durable_commit, and fio doing the same writes with the sync
# fio can do (it cannot sync directories or rename): no sync, --fsync=1 (fsync after each file's
# write; fio's libaio engine drains its queue for every sync), --end_fsync=1 (every file synced
# once at the end of the run) and --sync=dsync (O_DSYNC files: each write durable when it
# completes, the queue kept full). Prints the durable/plain ratio of the store and of fio, and the
# durable store against each fio run.
#
#   bench/store_vs_fio.sh [--kvchaos build/store/tools/kvchaos/kvchaos] [--dir /mnt/p0]
#                         [--block-size 4MiB] [--blocks 256] [--qd 16] [--reps 5] [--tasks N] [--durable]
#
# --dir is where both write (default: a fresh directory under $TMPDIR); what they write is removed.
set -euo pipefail

KVCHAOS=""
DIR=""
BLOCK_SIZE="4MiB"
BLOCKS=256
QD=16
REPS="${REPS:-5}"
TASKS=()
DURABLE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kvchaos) KVCHAOS="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --block-size) BLOCK_SIZE="$2"; shift 2 ;;
    --blocks) BLOCKS="$2"; shift 2 ;;
    --qd) QD="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --tasks) TASKS=(--tasks "$2"); shift 2 ;;
    --durable) DURABLE=1; shift ;;
    -h|--help) sed -n '2,39p' "$0"; exit 0 ;;
    *) echo "store_vs_fio.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "store_vs_fio.sh: --reps must be a positive integer, got '$REPS'" >&2; exit 2; }

here="$(cd "$(dirname "$0")/.." && pwd)"
if [[ -z "$KVCHAOS" ]]; then
  for candidate in "$here"/build/default/tools/kvchaos/kvchaos "$here"/build/*/tools/kvchaos/kvchaos; do
    if [[ -x "$candidate" ]]; then KVCHAOS="$candidate"; break; fi
  done
fi
[[ -x "$KVCHAOS" ]] || { echo "store_vs_fio.sh: kvchaos binary not found (build it, or pass --kvchaos)" >&2; exit 2; }
command -v fio >/dev/null || { echo "store_vs_fio.sh: fio is not installed" >&2; exit 2; }
command -v python3 >/dev/null || { echo "store_vs_fio.sh: python3 is needed to read fio's JSON" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/kvchaos_fio.XXXXXX")"
if [[ -z "$DIR" ]]; then DIR="$work/data"; fi
mkdir -p "$DIR"
run_dir="$DIR/store_vs_fio.$$"  # everything the runs write lives under it
trap 'rm -rf "$work" "$run_dir"' EXIT
mkdir -p "$run_dir"

case "$BLOCK_SIZE" in
  *GiB) bytes=$(( ${BLOCK_SIZE%GiB} * 1024 * 1024 * 1024 )) ;;
  *MiB) bytes=$(( ${BLOCK_SIZE%MiB} * 1024 * 1024 )) ;;
  *KiB) bytes=$(( ${BLOCK_SIZE%KiB} * 1024 )) ;;
  *) bytes=$BLOCK_SIZE ;;
esac

run_store() {  # rep [durable_commit] -> sets store_dump, store_load
  local dir="$run_dir/store.$1"
  mkdir -p "$dir"
  cat > "$work/store.yaml" <<YAML
storage_backends: "$dir"
posix_io_engine: aio
io_direct: true
timeout_ms: 0
durable_commit: ${2:-false}
YAML
  KVCHAOS_LOG=warn "$KVCHAOS" store bench --config "$work/store.yaml" --block-size "$BLOCK_SIZE" --blocks "$BLOCKS" \
    --engine aio --qd "$QD" "${TASKS[@]}" >"$work/store.txt" || { cat "$work/store.txt" >&2; exit 1; }
  store_dump=$(awk '/^dump:/ {print $2}' "$work/store.txt")
  store_load=$(awk '/^load:/ {print $2}' "$work/store.txt")
  # The engine's mean queue depth and starved share during the dump (its first "queue:" line).
  store_queue=$(awk '/queue: mean depth/ {print $4 "/" $6 " starved " $12; exit}' "$work/store.txt" | tr -d ';')
  rm -rf "$dir"
}

fio_gbs() {  # dir name rw [extra fio options] -> GB/s of the timed run
  local dir="$1" name="$2" rw="$3"
  shift 3
  fio --name="$name" --directory="$dir" --rw="$rw" --bs="$bytes" --filesize="$bytes" --nrfiles="$BLOCKS" \
    --file_service_type=sequential --openfiles="$QD" --ioengine=libaio --direct=1 --iodepth="$QD" \
    --numjobs=1 --group_reporting --output-format=json "$@" >"$work/fio.json"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); job=j["jobs"][0]; print("%.3f" % ((job["write"]["bw_bytes"]+job["read"]["bw_bytes"])/1e9))' "$work/fio.json"
}

run_fio() {  # rep -> sets fio_dump, fio_load, fio_create
  local dir="$run_dir/fio.$1"
  mkdir -p "$dir/prealloc" "$dir/create"
  fio_dump=$(fio_gbs "$dir/prealloc" blk write)
  fio_load=$(fio_gbs "$dir/prealloc" blk read)
  rm -rf "$dir/prealloc"
  fio_create=$(fio_gbs "$dir/create" blk write --create_on_open=1)
  rm -rf "$dir"
}

if (( DURABLE )); then
  run_fio_durable() {  # rep -> sets fio_plain, fio_fsync, fio_end, fio_dsync (fresh prealloc files each)
    local dir="$run_dir/fio.$1" kind
    for kind in plain fsync end dsync; do mkdir -p "$dir/$kind"; done
    fio_plain=$(fio_gbs "$dir/plain" blk write)
    fio_fsync=$(fio_gbs "$dir/fsync" blk write --fsync=1)
    fio_end=$(fio_gbs "$dir/end" blk write --end_fsync=1)
    fio_dsync=$(fio_gbs "$dir/dsync" blk write --sync=dsync)
    rm -rf "$dir"
  }
  echo "== $REPS reps, interleaved: durable dumps, kvchaos store bench vs fio ($BLOCKS x $BLOCK_SIZE, qd $QD, libaio, O_DIRECT) under $DIR"
  echo "   kvchaos: $KVCHAOS"
  printf '%-4s %-6s %11s %11s %6s | %11s %11s %11s %11s | %s\n' rep order "store" "store-dur" ratio \
    "fio" "fio-fsync" "fio-end" "fio-dsync" "store-dur / fio, fio-fsync, fio-end, fio-dsync"
  : >"$work/reps.txt"
  for rep in $(seq 1 "$REPS"); do
    if (( rep % 2 == 1 )); then
      order="S,F"
      run_store "$rep" false; plain=$store_dump; run_store "$rep" true; durable=$store_dump; run_fio_durable "$rep"
    else
      order="F,S"
      run_fio_durable "$rep"; run_store "$rep" true; durable=$store_dump; run_store "$rep" false; plain=$store_dump
    fi
    echo "$plain $durable $fio_plain $fio_fsync $fio_end $fio_dsync" >>"$work/reps.txt"
    python3 - "$rep" "$order" "$plain" "$durable" "$fio_plain" "$fio_fsync" "$fio_end" "$fio_dsync" <<'PY'
import sys
rep, order = sys.argv[1:3]
sp, sd, fp, ff, fe, fd = map(float, sys.argv[3:9])
r = lambda a, b: a / b if b > 0 else float("nan")
print(f"{rep:<4} {order:<6} {sp:6.3f} GB/s {sd:6.3f} GB/s {r(sd, sp):6.2f} | {fp:6.3f} GB/s {ff:6.3f} GB/s "
      f"{fe:6.3f} GB/s {fd:6.3f} GB/s | {r(sd, fp):.2f} {r(sd, ff):.2f} {r(sd, fe):.2f} {r(sd, fd):.2f}")
PY
  done
  echo "== medians over $REPS reps (of the per-rep ratios)"
  python3 - "$work/reps.txt" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1]) if line.strip()]
med = statistics.median
def ratio(a, b):
    rs = [r[a] / r[b] for r in rows if r[b] > 0]
    return f"{med(rs):.2f} (min {min(rs):.2f}, max {max(rs):.2f})"
names = ["store", "store-durable", "fio", "fio --fsync=1", "fio --end_fsync=1", "fio --sync=dsync"]
print("GB/s: " + ", ".join(f"{n} {med([r[i] for r in rows]):.3f}" for i, n in enumerate(names)))
print(f"store-durable / store: {ratio(1, 0)}   (fio --fsync=1 / fio: {ratio(3, 2)}, --end_fsync=1: {ratio(4, 2)}, "
      f"--sync=dsync: {ratio(5, 2)})")
for i in (2, 3, 4, 5):
    print(f"store-durable / {names[i]}: {ratio(1, i)}")
PY
  exit 0
fi

echo "== $REPS reps, interleaved: kvchaos store bench vs fio ($BLOCKS x $BLOCK_SIZE, qd $QD, libaio, O_DIRECT) under $DIR"
echo "   kvchaos: $KVCHAOS"
printf '%-4s %-6s %13s %13s %8s %13s %8s | %13s %13s %8s | %s\n' rep order "store dump" "fio-prealloc" ratio \
  "fio-create" ratio "store load" "fio load" ratio "store dump queue: depth/qd, starved"
: >"$work/reps.txt"
for rep in $(seq 1 "$REPS"); do
  if (( rep % 2 == 1 )); then order="S,F"; run_store "$rep"; run_fio "$rep"
  else order="F,S"; run_fio "$rep"; run_store "$rep"; fi
  echo "$store_dump $fio_dump $fio_create $store_load $fio_load" >>"$work/reps.txt"
  python3 - "$rep" "$order" "$store_dump" "$fio_dump" "$fio_create" "$store_load" "$fio_load" "${store_queue:--}" <<'PY'
import sys
rep, order = sys.argv[1:3]
sd, fd, fc, sl, fl = map(float, sys.argv[3:8])
r = lambda a, b: a / b if b > 0 else float("nan")
print(f"{rep:<4} {order:<6} {sd:9.3f} GB/s {fd:9.3f} GB/s {r(sd, fd):8.2f} {fc:9.3f} GB/s {r(sd, fc):8.2f} | "
      f"{sl:9.3f} GB/s {fl:9.3f} GB/s {r(sl, fl):8.2f} | {sys.argv[8]}")
PY
done

echo "== medians over $REPS reps (kvchaos / fio; target >= 0.9 against fio-prealloc)"
python3 - "$work/reps.txt" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1]) if line.strip()]
def med(xs): return statistics.median(xs)
def ratios(a, b): return [r[a] / r[b] for r in rows if r[b] > 0]
for name, (o, f), label in (("dump", (0, 1), "fio-prealloc"), ("dump", (0, 2), "fio-create"), ("load", (3, 4), "fio")):
    rs = ratios(o, f)
    flag = "" if label == "fio-create" else ("" if med(rs) >= 0.9 else "  (below 0.9)")
    print(f"{name}: kvchaos {med([r[o] for r in rows]):.3f} GB/s, {label} {med([r[f] for r in rows]):.3f} GB/s, "
          f"median ratio {med(rs):.2f} (min {min(rs):.2f}, max {max(rs):.2f}){flag}")
PY
