#!/usr/bin/env bash
# Compares `kvchaos store bench` (aio engine, O_DIRECT) with fio doing the same pattern: N files of
# one block each, written then read once, libaio, direct I/O, the same block size and queue depth.
# Prints our GB/s, fio's and the ratio per phase (target: >= 0.9 for dump and for load).
#
#   bench/store_vs_fio.sh [--kvchaos build/default/tools/kvchaos/kvchaos] [--dir /mnt/p0]
#                         [--block-size 4MiB] [--blocks 256] [--qd 16]
#
# --dir is where both write (default: a fresh directory under $TMPDIR); it is cleaned up afterwards.
set -euo pipefail

KVCHAOS=""
DIR=""
BLOCK_SIZE="4MiB"
BLOCKS=256
QD=16
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kvchaos) KVCHAOS="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --block-size) BLOCK_SIZE="$2"; shift 2 ;;
    --blocks) BLOCKS="$2"; shift 2 ;;
    --qd) QD="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "store_vs_fio.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

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
trap 'rm -rf "$work"' EXIT
if [[ -z "$DIR" ]]; then DIR="$work/data"; fi
mkdir -p "$DIR"
fio_dir="$DIR/fio.$$"
mkdir -p "$fio_dir"
trap 'rm -rf "$work" "$fio_dir"' EXIT

case "$BLOCK_SIZE" in
  *GiB) bytes=$(( ${BLOCK_SIZE%GiB} * 1024 * 1024 * 1024 )) ;;
  *MiB) bytes=$(( ${BLOCK_SIZE%MiB} * 1024 * 1024 )) ;;
  *KiB) bytes=$(( ${BLOCK_SIZE%KiB} * 1024 )) ;;
  *) bytes=$BLOCK_SIZE ;;
esac

cat > "$work/store.yaml" <<YAML
storage_backends: "$DIR"
posix_io_engine: aio
io_direct: true
timeout_ms: 0
YAML

echo "== kvchaos store bench ($BLOCKS x $BLOCK_SIZE, qd $QD, aio, O_DIRECT) in $DIR"
KVCHAOS_LOG=warn "$KVCHAOS" store bench --config "$work/store.yaml" --block-size "$BLOCK_SIZE" --blocks "$BLOCKS" \
  --engine aio --qd "$QD" | tee "$work/ours.txt"
ours_dump=$(awk '/^dump:/ {print $2}' "$work/ours.txt")
ours_load=$(awk '/^load:/ {print $2}' "$work/ours.txt")

run_fio() {  # phase rw
  fio --name="$1" --directory="$fio_dir" --rw="$2" --bs="$bytes" --filesize="$bytes" --nrfiles="$BLOCKS" \
    --file_service_type=sequential --openfiles="$QD" --ioengine=libaio --direct=1 --iodepth="$QD" \
    --numjobs=1 --group_reporting --output-format=json >"$work/fio_$1.json"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); job=j["jobs"][0]; print("%.3f" % ((job["write"]["bw_bytes"]+job["read"]["bw_bytes"])/1e9))' "$work/fio_$1.json"
}
echo "== fio (same files, block size, queue depth; libaio, direct=1)"
fio_dump=$(run_fio dump write)
fio_load=$(run_fio load read)
echo "fio dump: $fio_dump GB/s"
echo "fio load: $fio_load GB/s"

echo "== ratio (kvchaos / fio; target >= 0.9)"
python3 - "$ours_dump" "$fio_dump" "$ours_load" "$fio_load" <<'PY'
import sys
od, fd, ol, fl = map(float, sys.argv[1:])
for name, o, f in (("dump", od, fd), ("load", ol, fl)):
    r = o / f if f > 0 else float("nan")
    print(f"{name}: kvchaos {o:.3f} GB/s, fio {f:.3f} GB/s, ratio {r:.2f}{'' if r >= 0.9 else '  (below 0.9)'}")
PY
