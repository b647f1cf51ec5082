#!/usr/bin/env bash
# Checksummed blocks from the command line alone, as README shows it: a node runs; `kvchaos storage
# add` registers a storage with checksums, `storage list` shows it; `kvchaos blocks save` saves
# blocks and prints their files; one byte of one file is flipped; `kvchaos integrity verify` and
# `kvchaos blocks load` name exactly that key (exit 1) while the others verify; bad input exits 2.
# Usage: blocks_cli_test.sh KVCHAOS
set -u
kvchaos=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvchaos_blocks_cli.XXXXXX")
node_pid=""
cleanup() {
  [[ -n "$node_pid" ]] && kill "$node_pid" 2>/dev/null && wait "$node_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
export KVCHAOS_LOG=warn
mkdir -p "$tmp/p0" "$tmp/p1"

# A single node (memory coordination) with a file-backed meta index on free ports.
cat >"$tmp/node.yaml" <<EOF
kvcm:
  service: {meta_http_port: 0, admin_http_port: 0}
  meta: {indexer_uri: "local://$tmp/meta.json"}
EOF
"$kvchaos" node --config "$tmp/node.yaml" >"$tmp/node.out" 2>"$tmp/node.err" &
node_pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(grep -o '"meta_http_port":[0-9]*' "$tmp/node.out" 2>/dev/null | cut -d: -f2)
  [[ -n "$port" ]] && break
  kill -0 "$node_pid" 2>/dev/null || { cat "$tmp/node.err"; fail "the node exited at start"; }
  sleep 0.1
done
[[ -n "$port" ]] || fail "the node printed no up line within 10 s"
endpoint=127.0.0.1:$port

out=$("$kvchaos" storage add --endpoint "$endpoint" --name nfs --checksum crc64_full 2>&1); rc=$?
echo "$out"
[[ $rc == 0 ]] || fail "storage add exited $rc"
echo "$out" | grep -qF "registered storage 'nfs' (posix, checksum crc64_full)" || fail "storage add did not say what it did"
out=$("$kvchaos" storage list --endpoint "$endpoint" 2>&1); rc=$?
[[ $rc == 0 ]] || fail "storage list exited $rc: $out"
echo "$out" | grep -qF '"global_unique_name": "nfs"' || fail "storage list does not show nfs: $out"
echo "$out" | grep -qF '"algo": "crc64_full"' || fail "storage list does not show the checksum: $out"

cat >"$tmp/client.yaml" <<EOF
storage_backends: "$tmp/p0:$tmp/p1"
block_size: 64KiB
shard_size: 64KiB
tensor_size: 64KiB
meta:
  storage: nfs
  nodes: ["$endpoint"]
EOF
printf '# keys\nalpha\nbeta\ngamma\n' >"$tmp/keys.txt"
out=$("$kvchaos" blocks save --config "$tmp/client.yaml" --keys-from "$tmp/keys.txt" 2>&1); rc=$?
echo "$out"
[[ $rc == 0 ]] || fail "blocks save exited $rc"
echo "$out" | grep -qF "saved 3 of 3 keys (0 already cached) to storage 'nfs', checksums crc64_full" || fail "no save summary"
file=$(echo "$out" | grep '^SAVED key=beta ' | grep -o 'file=[^ ]*' | cut -d= -f2)
[[ -f "$file" ]] || fail "blocks save did not name beta's file (got '$file')"
out=$("$kvchaos" blocks save --config "$tmp/client.yaml" --key alpha 2>&1); rc=$?
[[ $rc == 0 ]] && echo "$out" | grep -qF "CACHED key=alpha" || fail "a second save of alpha was not reported as cached: $out"

out=$("$kvchaos" integrity verify --config "$tmp/client.yaml" --keys-from "$tmp/keys.txt" 2>&1); rc=$?
[[ $rc == 0 ]] || fail "a clean verify exited $rc: $out"
echo "$out" | grep -qF "3 verified" || fail "a clean verify did not verify 3 blocks: $out"

printf 'X' | dd of="$file" bs=1 seek=100 conv=notrunc 2>/dev/null
out=$("$kvchaos" integrity verify --config "$tmp/client.yaml" --keys-from "$tmp/keys.txt" 2>&1); rc=$?
echo "$out"
[[ $rc == 1 ]] || fail "verify after the flip exited $rc, want 1"
echo "$out" | grep -q "^MISMATCH key=beta storage=nfs " || fail "verify did not name beta"
echo "$out" | grep -q "^MISMATCH key=alpha\|^MISMATCH key=gamma" && fail "verify named an intact key"
echo "$out" | grep -qF "2 verified, 0 without stored checksum, 1 mismatched" || fail "verify summary wrong"

out=$("$kvchaos" blocks load --config "$tmp/client.yaml" --keys-from "$tmp/keys.txt" --out-dir "$tmp/out" 2>&1); rc=$?
echo "$out"
[[ $rc == 1 ]] || fail "blocks load after the flip exited $rc, want 1"
echo "$out" | grep -q "^MISMATCH key=beta " || fail "load did not name beta"
echo "$out" | grep -q "^OK key=alpha (checksum verified)" || fail "load did not verify alpha"
[[ -f "$tmp/out/alpha" && ! -e "$tmp/out/beta" ]] || fail "the corrupt block was written out, or a good one was not"
[[ $(stat -c %s "$tmp/out/alpha") == 65536 ]] || fail "alpha's loaded block is not 64 KiB"

# Bad input: exit 2 and a message naming what is wrong.
out=$("$kvchaos" storage add --endpoint "$endpoint" --name x --checksum md5 2>&1); rc=$?
[[ $rc == 2 ]] || fail "--checksum md5 exited $rc, want 2: $out"
echo "$out" | grep -qF "checksum 'md5': expected crc64_full, crc32_xor_int64 or off" || fail "bad checksum not named: $out"
out=$("$kvchaos" storage add --endpoint "$endpoint" --name headed --inline-header-version 1 2>&1); rc=$?
[[ $rc == 0 ]] || fail "storage add --inline-header-version 1 exited $rc: $out"
echo "$out" | grep -qF "registered storage 'headed' (posix, checksum crc64_full, inline header v1)" || fail "no header in: $out"
out=$("$kvchaos" storage list --endpoint "$endpoint" 2>&1)
echo "$out" | grep -qF '"enable_inline_header": true' || fail "storage list does not show the inline header: $out"
out=$("$kvchaos" storage add --endpoint "$endpoint" --name y --inline-header-version 7 2>&1); rc=$?
[[ $rc == 2 ]] || fail "--inline-header-version 7 exited $rc, want 2: $out"
echo "$out" | grep -qF -- "--inline-header-version" || fail "a bad header version does not name the flag: $out"
out=$("$kvchaos" blocks save --config "$tmp/client.yaml" 2>&1); rc=$?
[[ $rc == 2 ]] || fail "blocks save without keys exited $rc, want 2: $out"
echo "$out" | grep -qF "no keys: give --key KEY or --keys-from FILE" || fail "missing keys not explained: $out"
mkdir -p "$tmp/data" && head -c 100 /dev/zero >"$tmp/data/short"
out=$("$kvchaos" blocks save --config "$tmp/client.yaml" --key short --data-dir "$tmp/data" 2>&1); rc=$?
[[ $rc == 2 ]] || fail "a short data file exited $rc, want 2: $out"
echo "$out" | grep -qF "holds 100 bytes; a block is 65536 (the store's block_size)" || fail "short data file not explained: $out"
echo "OK"
