// The small-I/O probe shared by the startup check and the recovery probes (upstream's steps): in a
// shard directory of the backend, create a `.tmp` file with a unique name, write 4 KiB of fixed
// content at offset 0 (O_DIRECT when io_direct, otherwise followed by fsync), read it back, compare,
// close and unlink. Any failed step — including a missing data directory — is a failure whose
// message names the backend, the operation, the file and (through the Status errno) the system
// error text, or the first differing byte. Whatever the outcome, the probe removes the file it
// created. Its shard directory (made at setup; made again when missing) is never removed: a peer
// may be writing a block into it at that moment.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.h"
#include "core/store/block_id.h"
#include "core/store/file_ops.h"

namespace kvchaos::store {

// `token` makes the file name unique (the caller mixes in its pid, a counter and its Rng).
// `shard_width` is the layout's data_dir_shard_bytes (block_id.h).
Status RunSmallIoProbe(FileOps& ops, const std::string& backend, bool io_direct, uint64_t token,
                       int shard_width = kDefaultShardWidth);

// The probe's file name for `token`: ".probe_<16 hex>.tmp" in the shard directory its hex names.
std::string ProbeFilePath(const std::string& backend, uint64_t token, int shard_width = kDefaultShardWidth);

}  // namespace kvchaos::store
