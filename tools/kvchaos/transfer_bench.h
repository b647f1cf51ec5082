// The end-to-end half of `kvchaos store bench`: --integrity runs saves and loads of batches of
// blocks through the production TransferClient (an in-process meta service keeps the checksums)
// instead of single-block store tasks, so a user sees what integrity costs on their own disks.
//
//   --integrity raw               the same batches and IOVs straight on the store (no meta, no
//                                 checksums): the baseline the others are divided by
//   --integrity off               TransferClient, meta checksums off
//   --integrity crc64_full | crc32_xor_int64
//                                 TransferClient with that checksum, computed at save and verified
//                                 at load (overlapped with the I/O, TransferClient's file comment)
//
// A save is one TransferClient::Save of `batch` blocks (raw: one Dump task of them), a load one
// Load of them (raw: one Load task per block, as the client issues them); each block is `iovs`
// equal IOVs. Prints "save: X GB/s" and "load: X GB/s" (10^9 bytes/s), as bench/transfer_bench.sh
// reads them. --inline-header (with TransferClient) switches the storage's inline block headers on
// (docs/inline-header.md); the GB/s then count the bytes each block takes on the storage, its
// 4096-byte header region included.
#pragma once

#include <cstdint>
#include <string>

#include "core/store/posix_store.h"

namespace kvchaos::cli {

struct TransferBenchOptions {
  std::string integrity;  // raw | off | crc32_xor_int64 | crc64_full
  uint64_t blocks = 0;
  uint64_t batch = 64;
  uint64_t iovs = 1;
  size_t checksum_threads = 0;  // TransferClientOptions::checksum_threads (0: its default)
  bool inline_header = false;   // the storage writes and checks inline block headers
  uint64_t seed = 1;
  bool verify = false;  // also compare every byte loaded with what was saved
  bool keep = false;
};

// Refusals of bad options, before anything runs (InvalidArgument naming the option).
Status CheckTransferBenchOptions(const TransferBenchOptions& options, uint64_t block_size);
// Runs both phases on a set-up store whose block is one shard; the exit code of the command.
int RunTransferBench(store::PosixStore& posix, const TransferBenchOptions& options);

}  // namespace kvchaos::cli
