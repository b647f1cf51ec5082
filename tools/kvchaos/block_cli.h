// What the commands that move or check blocks (`kvchaos blocks`, `kvchaos integrity verify`) share:
// the list of keys they work on and the lines they print about a block, so a save, a load and a
// scrub name a block the same way.
#pragma once

#include <string>
#include <vector>

#include "core/client/transfer_client.h"
#include "core/common/status.h"
#include "core/store/posix_store.h"

namespace kvchaos::cli {

// One key per line; blank lines and '#' comments skipped, surrounding blanks trimmed.
Result<std::vector<std::string>> ReadKeysFile(const std::string& path);

// "MISMATCH key=... storage=... location=... algo=... expected=... actual=..."
std::string MismatchLine(const client::ChecksumMismatchEvent& event);

// The file that holds `key`'s block: the first of its route's paths where it exists; "" if none.
std::string BlockFileOf(store::PosixStore& store, const std::string& key);

}  // namespace kvchaos::cli
