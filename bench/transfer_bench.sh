#!/usr/bin/env bash
# What end-to-end integrity costs: `kvchaos store bench --integrity` saves and loads the same blocks
# four ways, in interleaved repetitions (rep r starts with mode r mod 4, so load from other
# processes hits all alike), in fresh store directories:
#   raw         the batches and IOVs TransferClient would send, straight on the store
#   off         TransferClient with an in-process meta service, meta checksums off
#   crc64_full  TransferClient computing crc64_full at save and verifying it at load
#   header      crc64_full with inline block headers on (--inline-header, docs/inline-header.md;
#               its GB/s count the 4096-byte header region of every block)
# on a disk directory (--dir, default under /var/tmp) and on tmpfs (--shm-dir, default /dev/shm),
# with 1 and 64 IOVs per block. Store: aio engine, O_DIRECT (where the file system refuses it,
# buffered, and the header says so), timeouts off, queue depth --qd. For each case it prints every
# rep's GB/s, then the medians (and the range) of the per-rep ratios crc64_full/off (targets:
# >= 0.95 on disk, >= 0.90 on tmpfs), off/raw (target: >= 0.97) and header/crc64_full (target:
# >= 0.98), save and load, and last a
# Markdown table of them all (the README's performance section).
#
#   bench/transfer_bench.sh [--kvchaos build/default/tools/kvchaos/kvchaos] [--dir /var/tmp/x]
#       [--shm-dir /dev/shm/x] [--block-size 4MiB] [--disk-blocks 64] [--shm-blocks 256]
#       [--batch 64] [--qd 16] [--reps 7] [--iovs "1 64"] [--checksum-threads T] [--where "disk shm"]
#
# What it writes is removed. Needs (disk-blocks or shm-blocks) x block size free on each.
set -euo pipefail

KVCHAOS=""
DISK_DIR=""
SHM_DIR=""
BLOCK_SIZE="4MiB"
DISK_BLOCKS=64
SHM_BLOCKS=256
BATCH=64
QD=16
REPS=7
IOVS="1 64"
WHERE="disk shm"
THREADS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kvchaos) KVCHAOS="$2"; shift 2 ;;
    --dir) DISK_DIR="$2"; shift 2 ;;
    --shm-dir) SHM_DIR="$2"; shift 2 ;;
    --block-size) BLOCK_SIZE="$2"; shift 2 ;;
    --disk-blocks) DISK_BLOCKS="$2"; shift 2 ;;
    --shm-blocks) SHM_BLOCKS="$2"; shift 2 ;;
    --batch) BATCH="$2"; shift 2 ;;
    --qd) QD="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --iovs) IOVS="$2"; shift 2 ;;
    --where) WHERE="$2"; shift 2 ;;
    --checksum-threads) THREADS=(--checksum-threads "$2"); shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "transfer_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
HERE="$(cd "$(dirname "$0")" && pwd)"
if [[ -z "$KVCHAOS" ]]; then KVCHAOS="$HERE/../build/default/tools/kvchaos/kvchaos"; fi
if [[ ! -x "$KVCHAOS" ]]; then
  echo "transfer_bench.sh: no kvchaos binary at '$KVCHAOS' (build it, or pass --kvchaos)" >&2
  exit 2
fi
CREATED=()
if [[ -z "$DISK_DIR" ]]; then DISK_DIR="$(mktemp -d /var/tmp/kvchaos-transfer-bench.XXXXXX)"; CREATED+=("$DISK_DIR"); fi
if [[ -z "$SHM_DIR" ]]; then SHM_DIR="$(mktemp -d /dev/shm/kvchaos-transfer-bench.XXXXXX)"; CREATED+=("$SHM_DIR"); fi
mkdir -p "$DISK_DIR" "$SHM_DIR"
cleanup() {
  rm -rf "$DISK_DIR/store" "$SHM_DIR/store" "$DISK_DIR/store.yaml" "$SHM_DIR/store.yaml"
  for d in "${CREATED[@]}"; do rmdir "$d" 2>/dev/null || true; done
}
trap cleanup EXIT

MODES=(raw off crc64_full header)
# The bench arguments of a mode.
mode_args() { if [[ "$1" == header ]]; then echo "crc64_full --inline-header"; else echo "$1"; fi; }
TABLE=()

median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
# "median (min-max)" of the numbers on stdin.
spread() { sort -g | awk '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%.2f (%.2f-%.2f)\n", m, v[1], v[NR]}'; }

# Writes the store config for `dir` (O_DIRECT if the file system takes it) and echoes its path.
store_config() {
  local dir="$1" direct="$2"
  mkdir -p "$dir/store"
  cat >"$dir/store.yaml" <<YAML
storage_backends: "$dir/store"
posix_io_engine: aio
io_direct: $direct
timeout_ms: 0
block_size: $BLOCK_SIZE
shard_size: $BLOCK_SIZE
tensor_size: $BLOCK_SIZE
concurrency: $QD
YAML
  echo "$dir/store.yaml"
}

for where in $WHERE; do
  if [[ "$where" == disk ]]; then dir="$DISK_DIR"; blocks="$DISK_BLOCKS"; else dir="$SHM_DIR"; blocks="$SHM_BLOCKS"; fi
  direct=true
  config="$(store_config "$dir" true)"
  if ! "$KVCHAOS" store check --config "$config" >/dev/null 2>&1; then
    direct=false
    config="$(store_config "$dir" false)"
  fi
  fs="$( (findmnt -no FSTYPE -T "$dir" 2>/dev/null || stat -f -c %T "$dir") | tail -n 1)"
  for iovs in $IOVS; do
    echo "== $where ($dir, $fs), $blocks blocks x $BLOCK_SIZE, $iovs IOV(s) per block, batches of $BATCH, qd $QD, O_DIRECT $direct"
    declare -A save=() load=()
    for ((rep = 0; rep < REPS; rep++)); do
      line="rep $((rep + 1)):"
      for ((k = 0; k < ${#MODES[@]}; k++)); do
        mode="${MODES[$(((rep + k) % ${#MODES[@]}))]}"
        rm -rf "$dir/store" && mkdir -p "$dir/store"
        out="$("$KVCHAOS" store bench --config "$config" --block-size "$BLOCK_SIZE" --blocks "$blocks" --qd "$QD" \
          --integrity $(mode_args "$mode") --batch "$BATCH" --iovs "$iovs" --seed "$((rep + 1))" "${THREADS[@]}" 2>&1)" || {
          echo "$out" >&2
          echo "transfer_bench.sh: kvchaos store bench --integrity $mode failed" >&2
          exit 1
        }
        s="$(awk '/^save:/ {print $2}' <<<"$out")"
        l="$(awk '/^load:/ {print $2}' <<<"$out")"
        save[$mode,$rep]="$s"
        load[$mode,$rep]="$l"
        line+=" $mode save $s load $l;"
      done
      echo "$line"
    done
    ratio() {  # phase num den
      local -n arr="$1"
      for ((rep = 0; rep < REPS; rep++)); do awk -v a="${arr[$2,$rep]}" -v b="${arr[$3,$rep]}" 'BEGIN {printf "%.3f\n", a / b}'; done | spread
    }
    sc="$(ratio save crc64_full off)"; lc="$(ratio load crc64_full off)"
    so="$(ratio save off raw)"; lo="$(ratio load off raw)"
    sh="$(ratio save header crc64_full)"; lh="$(ratio load header crc64_full)"
    sr="$(for ((rep = 0; rep < REPS; rep++)); do echo "${save[raw,$rep]}"; done | median)"
    lr="$(for ((rep = 0; rep < REPS; rep++)); do echo "${load[raw,$rep]}"; done | median)"
    echo "median ratios: save crc64_full/off $sc, load crc64_full/off $lc; off/raw save $so, load $lo; header/crc64_full save $sh, load $lh (raw median: save $sr GB/s, load $lr GB/s)"
    TABLE+=("| $where ($fs), $blocks blocks, $iovs IOV(s) | $sc | $lc | $so / $lo | $sr / $lr | $sh / $lh |")
    unset save load
  done
done

echo
echo "| store on | save crc/off | load crc/off | off/raw (save / load) | raw GB/s (save / load) | header on/off (save / load) |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${TABLE[@]}"
